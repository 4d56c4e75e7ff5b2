"""bench/importers.py on a small export: the dry run and the import, each in messages per second
and as a multiple of `json.load` of the same file, which it prints first as the baseline."""

from __future__ import annotations

import pytest

from bench import importers


def test_the_importer_bench_prints_each_figure_over_json_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    importers.main(["--megabytes", "0.5", "--runs", "1"])
    output = capsys.readouterr().out
    held = next(line for line in output.splitlines() if line.startswith("ChatGPT export: "))
    assert " conversations, " in held and held.endswith(" messages")
    lines = [line for line in output.splitlines() if line.startswith("|")][2:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    assert [row[0] for row in rows] == [
        "json.load of the file (the baseline)",
        "read and convert (dry run)",
        "import into a new store",
    ]
    assert rows[0][-1] == "1.0x"
    for row in rows:
        assert float(row[2]) > 0 and int(row[3].replace(",", "")) > 0
        assert row[-1].endswith("x") and float(row[-1][:-1]) > 0
