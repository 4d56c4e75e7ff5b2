"""How many recorded real-model replies `parse_reply` reads as the servers' own test suites say
they read, per family and overall (the corpus: `tests/inference/toolcalls/recorded/*.json`, each
case citing where it was recorded).

A case holds the reply's `text`, the `format` Branchwise reads it as, and what reading it right
means: `calls` (name and arguments, in order; [] for a reply that calls nothing), and
`malformed: true` where a call in it is cut or broken (its text listed as malformed and left in
the answer, the other calls read); optionally the `content` left once the calls are out, the
`tools` the model was given (they type values written as text) and `thinking` (the prompt opened
the reasoning).

    python -m bench.toolcall_reading          # the table
    python -m bench.toolcall_reading --misses # and each case read otherwise, with what was read
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cli import description
from bench.table import table
from inference import parse_reply

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "inference" / "toolcalls" / "recorded"


@dataclass(frozen=True)
class Case:
    family: str
    source: str
    format: str
    text: str
    expected: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    case: Case
    read: bool
    got: dict[str, Any]


def cases(corpus: Path = CORPUS) -> list[Case]:
    found = []
    for path in sorted(corpus.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data["cases"]:
            expected = {k: item[k] for k in ("calls", "malformed", "content") if k in item}
            expected.update({k: item[k] for k in ("tools", "thinking") if k in item})
            family, source = data["family"], item["source"]
            found.append(Case(family, source, item["format"], item["text"], expected))
    return found


def outcome(case: Case) -> Outcome:
    expected = case.expected
    reply = parse_reply(
        case.text, case.format, expected.get("thinking", False), expected.get("tools")
    )
    calls = [[c.name, c.arguments] for c in reply.tool_calls]
    got = {"calls": calls, "content": reply.content, "malformed": reply.malformed}
    read = calls == expected["calls"]
    if expected.get("malformed"):
        # Cut or broken: that call's text stays in the answer, listed.
        read = read and bool(reply.malformed)
        read = read and all(raw in (reply.content or "") for raw in reply.malformed)
    else:
        read = read and not reply.malformed
    if "content" in expected:
        read = read and reply.content == expected["content"]
    return Outcome(case, read, got)


def rates(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    """family -> (read, total), with "overall" last."""
    by_family: dict[str, tuple[int, int]] = {}
    for o in outcomes:
        read, total = by_family.get(o.case.family, (0, 0))
        by_family[o.case.family] = (read + o.read, total + 1)
    by_family["overall"] = (sum(o.read for o in outcomes), len(outcomes))
    return by_family


def report(outcomes: list[Outcome]) -> str:
    rows = [("family", "read", "cases", "rate")]
    for family, (read, total) in rates(outcomes).items():
        rows.append((family, str(read), str(total), f"{100 * read / total:.1f} %"))
    return table(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--misses", action="store_true", help="list each case read otherwise")
    args = parser.parse_args()
    outcomes = [outcome(case) for case in cases()]
    print(report(outcomes))
    for o in outcomes if args.misses else ():
        if not o.read:
            print(f"\n{o.case.family}: {o.case.source}\n  text: {o.case.text!r}\n  got: {o.got}")


if __name__ == "__main__":
    main()
