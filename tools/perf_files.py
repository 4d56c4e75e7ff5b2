"""The test files that hold perf tests (marked `perf`), for `make test`'s second, timed step.

    python tools/perf_files.py        # one path per line, relative to the checkout

Naming only these files, the timed step collects about ten files instead of the whole suite
(which took it some 12 of its 30 seconds on the 2-core VM). `tests/conftest.py` checks on every run
that no perf test lives in a file this does not find, since the first step leaves them out.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PERF_MARK = re.compile(r"\bmark\.perf\b")


def perf_files(root: Path = ROOT) -> list[str]:
    """Every test file under `root/tests` that mentions the `perf` mark, sorted."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if _PERF_MARK.search(path.read_text(encoding="utf-8"))
    )


if __name__ == "__main__":
    print("\n".join(perf_files()))
