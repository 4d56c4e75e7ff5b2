"""bench/knowledge_quality.py's own parts: the inverse-cloze queries are taken out of their
documents where they say, every hand-written question's answer is in this Python's documents,
and a chunk counts as relevant exactly when it covers the query's place (or holds its phrase)."""

from __future__ import annotations

from bench.knowledge_quality import ChunkRow, Query, cloze, corpus, questions, relevant


def test_cloze_sentences_leave_their_documents_and_questions_have_answers() -> None:
    docs = corpus()
    assert len(docs) > 300 and "topics/for" in docs and "heapq.py" in docs
    edited, queries = cloze(docs, 50, seed=3)
    assert len(queries) == 50 and len({q.document for q in queries}) == 50
    for query in queries:
        original, left = docs[query.document], edited[query.document]
        removed = original[query.offset : query.offset + len(original) - len(left)]
        assert " ".join(removed.split()) == query.text
        assert left == original[: query.offset] + original[query.offset + len(removed) :]
        assert 8 <= len(query.text.split()) <= 40
    untouched = set(docs) - {q.document for q in queries}
    assert all(edited[name] == docs[name] for name in untouched)
    asked = questions(docs)
    assert len(asked) >= 50 and all(q.phrase in docs[q.document] for q in asked if q.phrase)


def test_relevance_is_the_place_or_the_phrase_in_the_right_document() -> None:
    place = Query("a sentence", "topics/for", offset=100)
    assert relevant(ChunkRow("topics/for", 0, 100, "..."), place)
    assert relevant(ChunkRow("topics/for", 100, 900, "..."), place)
    assert not relevant(ChunkRow("topics/for", 101, 900, "..."), place)
    assert not relevant(ChunkRow("topics/while", 0, 900, "..."), place)
    phrase = Query("how do I?", "heapq.py", phrase="heappop")
    assert relevant(ChunkRow("heapq.py", 5000, 6000, "use heappop() to"), phrase)
    assert not relevant(ChunkRow("heapq.py", 0, 900, "heappush only"), phrase)
