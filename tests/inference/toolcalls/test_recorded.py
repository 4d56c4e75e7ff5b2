"""Recorded replies of real models, as vLLM's, SGLang's and llama.cpp's tool-parser test suites
and bug reports collect them (`recorded/*.json`, each case citing its source), read as those
servers read them: at least 95 % overall and 90 % in every family. The cases not read are listed,
with the reason, in docs/tool-calls.md; this test also holds that list to the corpus, so a case
read later (or a new miss) shows up there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.toolcall_reading import cases, outcome, rates

OUTCOMES = [outcome(case) for case in cases()]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "tool-calls.md"


def test_the_corpus_covers_nine_families_each_with_its_sources() -> None:
    families = {o.case.family for o in OUTCOMES}
    assert len(families) == 9
    for o in OUTCOMES:
        assert re.match(r"[\w.-]+/[\w.-]+ ", o.case.source), o.case.source


@pytest.mark.parametrize("family", sorted({o.case.family for o in OUTCOMES}))
def test_each_family_reads_at_least_90_percent(family: str) -> None:
    read, total = rates(OUTCOMES)[family]
    assert read / total >= 0.90, f"{family}: {read} of {total}"


def test_overall_at_least_95_percent() -> None:
    read, total = rates(OUTCOMES)["overall"]
    assert read / total >= 0.95, f"{read} of {total}"


def test_the_unread_cases_are_the_ones_documented() -> None:
    documented = set(re.findall(r"^- `([^`]+)`", DOCS.read_text(encoding="utf-8"), re.MULTILINE))
    unread = {o.case.source for o in OUTCOMES if not o.read}
    assert unread == documented
