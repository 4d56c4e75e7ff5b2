"""Text for the knowledge benchmarks, from what every Python install carries: the 79 topics of
CPython's `pydoc_data` (about 0.5 MB of English reference prose), written out as Markdown and
PDF files, or drawn from word by word (at the topics' own word frequencies) for synthetic
chunks; and an embedder of random unit vectors (what the index does with vectors costs the same
whatever model made them)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
from numpy.typing import NDArray

from tests.app.knowledge.documents import pdf_bytes

PDF_PAGE_LINES = 40
PDF_LINE_CHARS = 90


def topic_texts() -> list[tuple[str, str]]:
    return sorted(topics.items())


def write_markdown(folder: Path, megabytes: float) -> int:
    """Markdown files of the topics, again and again (numbered) to `megabytes`; their count."""
    folder.mkdir(parents=True, exist_ok=True)
    written, count = 0, 0
    while written < megabytes * 1e6:
        for name, text in topic_texts():
            data = f"# {name}\n\n{text}".encode()
            (folder / f"{count:05d}-{name}.md").write_bytes(data)
            written += len(data)
            count += 1
            if written >= megabytes * 1e6:
                break
    return count


def write_pdfs(folder: Path, pages: int, files: int) -> None:
    """`files` PDFs of `pages` pages each, set in lines from the topics."""
    folder.mkdir(parents=True, exist_ok=True)
    words = " ".join(text for _, text in topic_texts()).split()
    lines, line = [], ""
    for word in words:
        if len(line) + len(word) >= PDF_LINE_CHARS:
            lines.append(line)
            line = ""
        line += word + " "
    per_file = pages * PDF_PAGE_LINES
    for number in range(files):
        start = number * per_file % max(1, len(lines) - per_file)
        body = lines[start : start + per_file]
        texts = [
            "\n".join(body[p : p + PDF_PAGE_LINES]) for p in range(0, per_file, PDF_PAGE_LINES)
        ]
        (folder / f"paper-{number:03d}.pdf").write_bytes(pdf_bytes(texts))


class Vocabulary:
    """Words of the topics with their counts: synthetic text that reads like them to BM25."""

    def __init__(self, seed: int = 7) -> None:
        counts = Counter(re.findall(r"[a-z]+", " ".join(t for _, t in topic_texts()).lower()))
        self.words = list(counts)
        self.weights = list(counts.values())
        self._rng = random.Random(seed)

    def text(self, words: int) -> str:
        drawn = self._rng.choices(self.words, self.weights, k=words)
        sentences = [" ".join(drawn[i : i + 12]).capitalize() + "." for i in range(0, words, 12)]
        return " ".join(sentences)


class RandomEmbedder:
    """Random unit vectors: the index's share of the cost, no model's."""

    def __init__(self, dimensions: int = 256, seed: int = 11) -> None:
        self.model_id = f"random-{dimensions}"
        self.dimensions = dimensions
        self._rng = np.random.default_rng(seed)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        vectors = self._rng.standard_normal((len(texts), self.dimensions)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.embed_documents([text])[0]
