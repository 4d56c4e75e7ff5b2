"""bench/knowledge.py on a tiny corpus: every indexing row beside the raw read of the same
files, and the query latencies beside BM25 alone."""

from __future__ import annotations

import pytest

from bench import knowledge


def test_the_knowledge_bench_prints_each_figure_beside_its_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    knowledge.main(
        ["--megabytes", "0.05", "--pdfs", "1", "--chunks", "300", "--queries", "5", "--runs", "1"]
    )
    output = capsys.readouterr().out
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in output.splitlines()
        if line.startswith("|") and not line.startswith("|-")
    ]
    names = [row[0] for row in rows]
    assert "Markdown: raw read (the baseline)" in names and "PDF: index (BM25)" in names
    assert [row[-1] for row in rows if row[0].endswith("(the baseline)")] == ["1x", "1x"]
    bm25 = next(row for row in rows if row[0] == "BM25 alone")
    assert bm25[1] == "300" and bm25[-1] == "1.00x"
    assert "retrieval, 3,000-token budget" in names
