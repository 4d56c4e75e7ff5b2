"""Search and retrieval: BM25 fused with vectors by reciprocal rank, a few chunks per file,
neighbouring chunks merged into one excerpt, a small file given whole, everything within a
budget counted by the caller's tokenizer, and the previous user message searched with the new
one."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from app.knowledge.index import KnowledgeIndex
from app.knowledge.search import fuse
from tests.app.knowledge.documents import HashEmbedder, write


def _words(text: str) -> int:
    return len(text.split())


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = dict(fuse([[1, 2, 3], [3, 4]]))
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[1] == pytest.approx(1 / 61)
    assert [chunk for chunk, _ in fuse([[1, 2, 3], [3, 4]])] == [3, 1, 2, 4]


def test_vectors_find_what_the_words_miss_and_both_are_fused(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kb"
    write(folder / "bees.txt", "Honeybees dance to tell the hive where the flowers are.")
    write(folder / "ants.txt", "Ants leave scent trails from the nest to food.")
    embedder = HashEmbedder()
    index.add("kb", folder)
    index.sync("kb", embedder=embedder)
    assert index.search(["kb"], "insect navigation") == [], "no word of the query occurs"
    ants = embedder.embed_documents(["Ants leave scent trails from the nest to food."])[0]
    monkeypatch.setattr(embedder, "embed_query", lambda text: ants)  # meant as the ants are
    hits = index.search(["kb"], "insect navigation", embedder=embedder)
    assert Path(hits[0].path).name == "ants.txt"
    both = index.search(["kb"], "where do honeybees dance", embedder=embedder)
    assert Path(both[0].path).name == "bees.txt", "ranked first by words, found by vectors too"
    assert both[0].score > hits[0].score


def test_search_takes_at_most_a_few_chunks_per_file(tmp_path: Path, index: KnowledgeIndex) -> None:
    folder = tmp_path / "kb"
    write(folder / "long.md", "".join(f"# Tide {n}\n\nThe tide table {n}.\n\n" for n in range(8)))
    write(folder / "short.txt", "A tide pool.")
    index.add("kb", folder)
    index.sync("kb")
    assert len(index.search(["kb"], "tide", k=20)) == 9
    hits = index.search(["kb"], "tide", k=20, per_document=2)
    assert sorted(Path(h.path).name for h in hits) == ["long.md", "long.md", "short.txt"]


def test_retrieval_fits_the_budget_merges_neighbours_and_gives_small_files_whole(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = tmp_path / "kb"
    sections = [f"# Section {n}\n\n" + f"Filler sentence number {n} here. " * 40 for n in range(12)]
    sections[4] += "The lighthouse keeper logs every ship."
    sections[5] = sections[5].replace("Filler", "Lighthouse keeper filler", 1)
    write(folder / "manual.md", "\n\n".join(sections))
    write(folder / "memo.txt", "Memo: the lighthouse keeper retires in June.")
    index.add("kb", folder)
    index.sync("kb")

    retrieval = index.retrieve(
        ["kb"], "lighthouse keeper", previous=None, count_tokens=_words, budget_tokens=500
    )
    assert retrieval.used_tokens <= retrieval.budget_tokens == 500
    assert retrieval.collections == ("kb",)
    by_name = {Path(e.path).name: e for e in retrieval.excerpts}
    memo = by_name["memo.txt"]
    assert memo.whole_document and memo.text == "Memo: the lighthouse keeper retires in June."
    manual = by_name["manual.md"]
    assert not manual.whole_document
    assert manual.text == index.read_document("kb", manual.path, manual.start, manual.end)
    assert "Section 4" in manual.text and "Section 5" in manual.text, "neighbours merged"
    full = index.read_document("kb", manual.path)
    assert manual.document_sha256 == hashlib.sha256(full.encode()).hexdigest()
    current = index.document("kb", manual.path)
    assert current is not None and current.text_sha256 == manual.document_sha256
    assert index.document("kb", str(folder / "nothing.md")) is None
    assert full == (folder / "manual.md").read_text(), "the chunks give the text back"

    tight = index.retrieve(
        ["kb"], "lighthouse keeper", previous=None, count_tokens=_words, budget_tokens=12
    )
    assert [Path(e.path).name for e in tight.excerpts] == ["memo.txt"]
    assert tight.used_tokens == 7, "the manual's chunks do not fit: passed over"


def test_a_follow_up_is_searched_with_the_message_before_it(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = tmp_path / "kb"
    write(folder / "jupiter.txt", "Jupiter is a gas giant. " * 10 + "Its moons: Io, Europa.")
    write(folder / "saturn.txt", "Saturn has rings and storms. " * 10 + "Its moons: Titan.")
    index.add("kb", folder)
    index.sync("kb")
    follow_up = index.retrieve(
        ["kb"],
        "and its moons?",
        previous="Tell me about Jupiter",
        count_tokens=_words,
        budget_tokens=200,
    )
    assert follow_up.query == "Tell me about Jupiter\nand its moons?"
    first, second = follow_up.excerpts
    assert Path(first.path).name == "jupiter.txt" and first.score > second.score
    assert first.whole_document and second.whole_document


def test_a_new_embedder_embeds_again_while_search_goes_on(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kb"
    for n in range(3):
        write(folder / f"{n}.txt", f"Document {n} about kelp forests.")
    index.add("kb", folder)
    old, new = HashEmbedder(model_id="old"), HashEmbedder(32, model_id="new")
    index.sync("kb", embedder=old)
    failing = HashEmbedder(32, model_id="new")
    broken = np.zeros((1, 5), np.float32)  # a model that answers with the wrong shape
    monkeypatch.setattr(failing, "embed_documents", lambda texts: broken)
    with pytest.raises(Exception, match="Search uses the text index"):
        index.sync("kb", embedder=failing)
    assert index.search(["kb"], "kelp", embedder=new), "BM25 meanwhile"
    index.sync("kb", embedder=new)
    status = index.status("kb")
    assert status.collection.embedding_model == "new" and status.embedded_chunks == 3
    with closing(sqlite3.connect(index.path)) as conn:
        models = {row[0] for row in conn.execute("SELECT DISTINCT model FROM vectors")}
    assert models == {"new"}, "the old model's vectors are dropped once the new ones are all in"


def test_the_vectors_in_memory_follow_the_index(
    tmp_path: Path, index: KnowledgeIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kb"
    write(folder / "old.txt", "Otters float on their backs.")
    embedder = HashEmbedder()
    index.add("kb", folder)
    index.sync("kb", embedder=embedder)
    assert Path(index.search(["kb"], "zzz", embedder=embedder)[0].path).name == "old.txt"
    write(folder / "new.txt", "Puffins nest in burrows.")
    (folder / "old.txt").unlink()
    index.sync("kb", embedder=embedder)
    puffins = embedder.embed_documents(["Puffins nest in burrows."])[0]
    monkeypatch.setattr(embedder, "embed_query", lambda text: puffins)
    hits = index.search(["kb"], "zzz", embedder=embedder)
    assert [Path(hit.path).name for hit in hits] == ["new.txt"], "added read, removed dropped"
