"""A Markdown table of benchmark rows, columns padded to line up in a terminal."""

from __future__ import annotations


def table(rows: list[tuple[str, ...]]) -> str:
    """`rows[0]` is the header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
