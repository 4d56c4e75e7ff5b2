"""bench/engine.py runs its sections on the tiny llama and prints their tables, with speculation's
replies identical to plain decoding's; an unknown section is refused by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import engine
from bench.sections import draft


def _table_rows(output: str, section: str) -> list[list[str]]:
    """The body rows of `section`'s printed table, split into cells."""
    block = output.split(f"## {section}\n\n", 1)[1].split("\n\n", 1)[0]
    lines = [line for line in block.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_every_fast_section_prints_its_table_with_identical_tokens(
    llama_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(draft, "WORKDIR", tmp_path)
    engine.main(
        [
            "--model",
            str(llama_path),
            "--only",
            "prefill,lookup,draft,passes",
            "--runs",
            "1",
            "--prefill-tokens",
            "1500",
            "--cancel-after",
            "0.1",
            "--rewrite-tokens",
            "40",
            "--question-tokens",
            "8",
            "--draft-tokens",
            "16",
            "--pass-repeats",
            "1",
        ]
    )
    output = capsys.readouterr().out
    prefill = _table_rows(output, "prefill")
    assert prefill[0][0].startswith("prefill tokens/s") and float(prefill[0][3]) > 0
    lookup = _table_rows(output, "lookup")
    assert [row[0].split(",")[0] for row in lookup] == ["rewrite", "open question"]
    assert all(row[-1] == "yes" for row in lookup)
    drafts = _table_rows(output, "draft")
    assert len(drafts) == 2 and all(row[-1] == "yes" for row in drafts)
    assert drafts[1][2].endswith("(100%)")  # a model drafting for itself is always right
    assert [row[0] for row in _table_rows(output, "passes")] == ["1", "2", "4", "8", "16"]


def test_an_unknown_section_is_refused_with_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        engine.main(["--only", "lookup,speed"])
    error = capsys.readouterr().err
    assert "unknown section speed" in error and "caching, prefill, lookup, draft, passes" in error


def test_the_tools_section_computes_only_the_tool_turn_after_a_result(
    llama_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine.main(
        [
            "--model",
            str(llama_path),
            "--only",
            "tools",
            "--runs",
            "2",
            "--tool-history-tokens",
            "120",
        ]
    )
    computed, ttft, cold = _table_rows(capsys.readouterr().out, "tools")
    prompt, turn = map(int, re.findall(r"\d+", computed[0]))
    # Only the result's turn is computed, with the ends around it (which this tiny vocabulary
    # spells in more tokens than a real one: the target of 8 is for real tokenizers).
    assert turn < int(computed[1]) <= turn + 12 < prompt // 4
    assert float(ttft[1]) > 0 and float(ttft[2]) > 0
    assert float(cold[1]) > 0


def test_the_vision_section_reuses_the_image_and_matches_mlx_vlm(
    llama_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.sections import vision

    monkeypatch.setattr(vision, "WORKDIR", tmp_path)
    engine.main(["--model", str(llama_path), "--only", "vision", "--runs", "1"])
    rows = _table_rows(capsys.readouterr().out, "vision")
    follow_up, calls = rows[0], rows[1]
    assert follow_up[3].endswith("x") and "DIFFER" not in follow_up[3]
    assert float(follow_up[3].rstrip("x")) < 1.0  # the cached follow-up beats from scratch
    assert calls[1] == "0 0 0"


def test_the_knowledge_section_reads_each_turn_once_and_matches_mlx_lm(
    llama_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.sections import knowledge

    monkeypatch.setattr(knowledge, "WORKDIR", tmp_path)
    monkeypatch.setattr(knowledge, "TOPIC_LIMIT", 12)
    engine.main(
        [
            *("--model", str(llama_path), "--only", "knowledge", "--runs", "1"),
            *("--knowledge-budget", "400", "--knowledge-turns", "3"),
        ]
    )
    follow_up, _waited, tokens = _table_rows(capsys.readouterr().out, "knowledge")
    assert follow_up[3].endswith("x") and "DIFFER" not in follow_up[3]
    assert float(follow_up[3].rstrip("x")) < 1.0  # the cached follow-up beats from scratch
    computed, prompt = map(int, re.findall(r"\d+", tokens[1]))
    excerpts = int(re.findall(r"\d+", tokens[2])[1])
    # Every turn read excerpts, and the follow-up computed only what follows the cached turns.
    assert excerpts > 3 * 100 and computed < prompt - excerpts // 2
