"""What the bench scripts' command lines share: the --help description read from a script's
docstring, and a count that must be at least one."""

from __future__ import annotations

import argparse


def description(doc: str | None) -> str:
    """The first paragraph of a bench script's docstring (`__doc__`), for its --help."""
    if doc is None:
        # `python -OO` strips docstrings, and with them the asserts the benches check results by.
        raise SystemExit("the benchmarks need their docstrings and asserts: run them without -OO")
    return doc.split("\n\n")[0]


def positive_int(text: str) -> int:
    """An argparse type: a whole number, 1 or more (a figure needs at least one run)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value
