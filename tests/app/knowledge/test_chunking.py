"""Chunks follow headings, pages and paragraphs, stay a few hundred tokens long, overlap where a
cut falls inside a paragraph, and are exact spans of the extracted text that cover all of it."""

from __future__ import annotations

import itertools
import random

from app.knowledge.chunking import MAX_CHARS, MIN_CHARS, Chunker
from app.knowledge.parsing.blocks import Block

_WORDS = ["the", "cache", "keeps", "every", "branch", "exact.", "a", "reply", "streams!", "and"]


def _paragraph(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)) + "\n\n"


def _blocks(seed: int) -> list[Block]:
    rng = random.Random(seed)
    blocks = []
    for number in range(40):
        page = 1 + number // 10
        heading = f"Part {number // 7}"
        text = rng.choice(["", "\n\n", _paragraph(rng, rng.randint(1, 900))])
        blocks.append(Block(text, page=page, heading=heading, section=number % 7 == 0))
    return blocks


def test_chunks_are_exact_spans_that_cover_the_whole_text_in_order() -> None:
    for seed in range(30):
        blocks = _blocks(seed)
        text = "".join(block.text for block in blocks)
        chunker = Chunker()
        chunks = list(chunker.chunks(blocks))
        assert chunker.length == len(text)
        assert [chunk.seq for chunk in chunks] == list(range(len(chunks)))
        assert chunks[0].start == 0 and chunks[-1].end == len(text)
        for chunk in chunks:
            assert text[chunk.start : chunk.end] == chunk.text
            assert chunk.text.strip(), "no chunk of white space alone"
            assert len(chunk.text.strip()) <= MAX_CHARS
        for before, after in itertools.pairwise(chunks):
            assert before.start < after.start <= before.end < after.end


def test_a_chunk_never_spans_a_heading_or_a_page() -> None:
    for seed in range(10):
        blocks = _blocks(seed)
        starts, offset = [], 0
        for block in blocks:
            if block.section or (starts and block.page != blocks[len(starts) - 1].page):
                starts.append(offset)
            else:
                starts.append(None)
            offset += len(block.text)
        boundaries = {at for at in starts if at}
        for chunk in Chunker().chunks(blocks):
            inside = [at for at in boundaries if chunk.start < at < chunk.end]
            # Only white space of the part before may run over (it goes to the chunk before).
            text = "".join(b.text for b in blocks)
            assert all(not text[at : chunk.end].strip() for at in inside), (seed, chunk.seq)


def test_a_long_paragraph_is_cut_at_sentence_ends_with_overlap() -> None:
    sentence = "Branch caches stay exact when a person edits an old message. "
    text = sentence * 200 + "\n"
    chunks = list(Chunker().chunks([Block(text, heading="Caches")]))
    assert len(chunks) > 5
    for before, after in itertools.pairwise(chunks):
        assert before.text.endswith(". "), "cut after a sentence"
        overlap = before.end - after.start
        assert 0 < overlap < MIN_CHARS, "the next chunk repeats the end of the one before"
        assert after.text.startswith(before.text[-overlap:])
    assert {chunk.heading for chunk in chunks} == {"Caches"}


def test_short_paragraphs_gather_into_one_chunk_and_white_space_never_makes_one() -> None:
    blocks = [Block("\n\n"), Block("One.\n\n"), Block("Two.\n\n"), Block("\n \n")]
    chunks = list(Chunker().chunks(blocks))
    assert [(c.start, c.end, c.text) for c in chunks] == [(0, 17, "\n\nOne.\n\nTwo.\n\n\n \n")]
    assert list(Chunker().chunks([Block("   \n\n"), Block("\n")])) == []
