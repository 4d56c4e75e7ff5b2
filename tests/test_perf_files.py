"""`make test` runs perf tests only in the files tools/perf_files.py finds: a perf test anywhere
else must stop the run instead of never running."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import _check_perf_files
from tests.repo_tools import load_tool


@dataclass
class _Item:
    nodeid: str
    perf: bool

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "perf" and self.perf else None


def test_the_tool_finds_the_files_that_hold_perf_tests() -> None:
    found = load_tool("perf_files").perf_files()
    assert "tests/ui/window/test_window_start.py" in found
    assert "tests/test_perf_files.py" not in found  # mentions perf tests, marks none


def test_a_perf_test_in_a_file_the_tool_misses_stops_the_run() -> None:
    listed = _Item("tests/ui/window/test_window_start.py::test_x", perf=True)
    stray = _Item("tests/app/test_elsewhere.py::test_y", perf=True)
    plain = _Item("tests/app/test_other.py::test_z", perf=False)
    _check_perf_files([listed, plain])
    with pytest.raises(pytest.UsageError, match=r"tests/app/test_elsewhere\.py"):
        _check_perf_files([listed, stray, plain])
