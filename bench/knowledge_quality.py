"""Retrieval quality of knowledge folders, offline: recall@10 and MRR@10 of BM25 alone, vectors
alone and the two fused, each measured by the app's own index and search on the same folders.

    .venv/bin/python bench/knowledge_quality.py [--cloze N] [--seed N] [--model FOLDER]

The documents are text already on every machine with Python: the 79 `pydoc_data` topics (the
language reference as `help()` shows it) and the standard library's docstrings (each module's
docstrings of 200 characters or more, under their names), written as text files into a folder
that the app indexes with its own parser and chunker, vectors by the built-in embedding model
(or the MLX embedding model folder `--model`). Two sets of queries:

- inverse cloze: a sentence taken out of a document (8 to 40 words, from a different document
  each time), the document indexed without it, the sentence as the query; relevant are the
  chunks around where it was. Quoting a document's own words favours BM25, which matches them.
- questions (bench/knowledge_questions.py): written by hand as a person asks, in other words
  than the answer's; relevant is a chunk of the answering document holding a given phrase.

Each row is one method on one set; beside fused and vectors alone, the difference from BM25 on
the same queries with a 95% interval (a paired bootstrap over the queries). The app fuses
vectors with BM25 by default only if the fusion beats BM25 alone on the questions, the set
that stands for what a chat asks (`app.knowledge.embedder_choice.DEFAULT_CHOICE`).
"""

from __future__ import annotations

import argparse
import ast
import platform
import random
import re
import sqlite3
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pydoc_data.topics

from app.knowledge import catalog, search
from app.knowledge.builtin_embedder import load_builtin_embedder
from app.knowledge.database import open_knowledge_database
from app.knowledge.embedder import Embedder
from app.knowledge.index import KnowledgeIndex
from bench.cli import description, positive_int
from bench.knowledge_questions import QUESTIONS
from bench.table import table

K = 10
MIN_DOCSTRING = 200
_SENTENCE = re.compile(r"[A-Z][^.!?\n]*(?:\n[^.!?\n]+)*[.!?](?=\s)")
_BOOTSTRAP = 2000
METHODS = ("BM25 alone", "vectors alone", "fused (RRF)")
HEADER = ("query set", "method", "recall@10", "MRR@10", "recall vs BM25", "MRR vs BM25")


@dataclass(frozen=True)
class Query:
    text: str
    document: str
    # Relevance: a chunk of `document` that holds `phrase`, or (phrase None) covers `offset`.
    phrase: str | None = None
    offset: int = 0


@dataclass(frozen=True)
class ChunkRow:
    document: str
    start: int
    end: int
    text: str


def corpus() -> dict[str, str]:
    """Document name -> text: "topics/NAME" for pydoc topics, a module's path for the rest."""
    docs = {f"topics/{name}": text for name, text in sorted(pydoc_data.topics.topics.items())}
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted([*root.glob("*.py"), *root.glob("*/*.py"), *root.glob("*/*/*.py")]):
        name = path.relative_to(root).as_posix()
        if name.split("/")[0] in ("test", "idlelib", "site-packages", "lib2to3"):
            continue
        text = _docstrings(path)
        if text:
            docs[name] = text
    return docs


def _docstrings(path: Path) -> str:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return ""
    parts: list[str] = []
    module = ast.get_docstring(tree)
    if module and len(module) >= MIN_DOCSTRING:
        parts.append(module)

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(child)
                if doc and len(doc) >= MIN_DOCSTRING:
                    parts.append(f"{prefix}{child.name}\n\n{doc}")
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return "\n\n".join(parts)


def cloze(docs: dict[str, str], count: int, seed: int) -> tuple[dict[str, str], list[Query]]:
    """The documents with one sentence taken out of `count` of them, and those sentences as
    queries (relevant: the chunks covering where each was)."""
    found: list[tuple[str, int, str]] = []
    for name, text in docs.items():
        for match in _SENTENCE.finditer(text):
            sentence = match.group()
            words = sentence.split()
            letters = sum(ch.isalpha() for ch in sentence)
            if 8 <= len(words) <= 40 and letters > 0.7 * len(sentence):
                found.append((name, match.start(), sentence))
    random.Random(seed).shuffle(found)
    edited = dict(docs)
    queries: list[Query] = []
    for name, start, sentence in found:
        if name in {q.document for q in queries}:
            continue
        text = edited[name]
        edited[name] = text[:start] + text[start + len(sentence) :]
        queries.append(Query(" ".join(sentence.split()), name, offset=start))
        if len(queries) == count:
            break
    return edited, queries


def questions(docs: dict[str, str]) -> list[Query]:
    for _question, document, phrase in QUESTIONS:
        if phrase not in docs.get(document, ""):
            raise SystemExit(f"{document} of this Python does not hold {phrase!r}")
    return [Query(q, document, phrase=phrase) for q, document, phrase in QUESTIONS]


def write_folder(root: Path, docs: dict[str, str]) -> dict[str, str]:
    """Each document as `root/<name>.txt`; returns absolute path -> document name."""
    paths: dict[str, str] = {}
    for name, text in docs.items():
        path = root / f"{name}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths[str(path.resolve())] = name
    return paths


def chunk_rows(conn: sqlite3.Connection, names: dict[str, str]) -> dict[int, ChunkRow]:
    rows = conn.execute(
        "SELECT c.id, d.path, c.span_start, c.span_end, c.text FROM chunks AS c"
        " JOIN documents AS d ON d.id = c.document"
    ).fetchall()
    return {cid: ChunkRow(names[str(path)], a, b, text) for cid, path, a, b, text in rows}


def relevant(chunk: ChunkRow, query: Query) -> bool:
    if chunk.document != query.document:
        return False
    if query.phrase is not None:
        return query.phrase in chunk.text
    return chunk.start <= query.offset <= chunk.end


def ranked(
    conn: sqlite3.Connection, database: str, name: str, embedder: Embedder
) -> dict[str, Callable[[str], list[int]]]:
    """Each method's top chunk ids for a query, through the app's search code."""
    collection = catalog.collection(conn, name)

    def bm25(query: str) -> list[int]:
        hits = search.search_chunks(conn, database, [collection], query, K)
        return [hit.chunk_id for hit in hits]

    def vectors(query: str) -> list[int]:
        return search.vector_ranked(conn, database, [collection], embedder, query, K)

    def fused(query: str) -> list[int]:
        hits = search.search_chunks(conn, database, [collection], query, K, embedder)
        return [hit.chunk_id for hit in hits]

    return dict(zip(METHODS, (bm25, vectors, fused), strict=True))


def reciprocal_ranks(
    method: Callable[[str], list[int]], queries: Sequence[Query], chunks: dict[int, ChunkRow]
) -> list[float]:
    """Per query: 1 / the rank of the first relevant chunk in the top K, 0 if none."""
    found = []
    for query in queries:
        ranks = [
            r for r, cid in enumerate(method(query.text)[:K], 1) if relevant(chunks[cid], query)
        ]
        found.append(1.0 / ranks[0] if ranks else 0.0)
    return found


def paired_interval(ours: list[float], base: list[float], hit: bool, seed: int) -> str:
    """The mean difference (ours - base) of recall (`hit`) or reciprocal rank, with a 95%
    paired-bootstrap interval over the queries."""
    a = [float(x > 0) if hit else x for x in ours]
    b = [float(x > 0) if hit else x for x in base]
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(_BOOTSTRAP))
    low, high = means[int(0.025 * _BOOTSTRAP)], means[int(0.975 * _BOOTSTRAP) - 1]
    return f"{sum(diffs) / len(diffs):+.3f} [{low:+.3f}, {high:+.3f}]"


def set_rows(
    label: str,
    methods: dict[str, Callable[[str], list[int]]],
    queries: list[Query],
    chunks: dict[int, ChunkRow],
    seed: int,
) -> tuple[list[tuple[str, ...]], dict[str, tuple[float, float]]]:
    per_method = {m: reciprocal_ranks(fn, queries, chunks) for m, fn in methods.items()}
    base = per_method[METHODS[0]]
    rows: list[tuple[str, ...]] = []
    means: dict[str, tuple[float, float]] = {}
    for method, rr in per_method.items():
        recall, mrr = sum(x > 0 for x in rr) / len(rr), sum(rr) / len(rr)
        means[method] = (recall, mrr)
        versus = (
            ("", "")
            if rr is base
            else (paired_interval(rr, base, True, seed), paired_interval(rr, base, False, seed))
        )
        rows.append((f"{label} ({len(queries)})", method, f"{recall:.3f}", f"{mrr:.3f}", *versus))
    return rows, means


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _embedder(model: Path | None) -> Embedder:
    if model is None:
        return load_builtin_embedder()
    from inference.embedding.encoder import load_embedder  # MLX: only for --model

    return load_embedder(model)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--cloze", type=positive_int, default=300, help="inverse-cloze queries")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", type=Path, help="an MLX embedding model folder")
    args = parser.parse_args(argv)
    docs = corpus()
    edited, cloze_queries = cloze(docs, args.cloze, args.seed)
    asked = questions(docs)
    embedder = _embedder(args.model)
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        database = root / "knowledge.db"
        names: dict[str, str] = {}
        started = time.perf_counter()
        with KnowledgeIndex.open(database) as index:
            for name, texts in (("cloze", edited), ("questions", docs)):
                names |= write_folder(root / name, texts)
                index.add(name, root / name)
                index.sync(name, embedder=embedder)
        indexed_s = time.perf_counter() - started
        conn = open_knowledge_database(database)
        try:
            chunks = chunk_rows(conn, names)
            rows: list[tuple[str, ...]] = [HEADER]
            verdict: dict[str, dict[str, tuple[float, float]]] = {}
            for label, name, queries in (
                ("inverse cloze", "cloze", cloze_queries),
                ("questions", "questions", asked),
            ):
                methods = ranked(conn, str(database), name, embedder)
                found, verdict[label] = set_rows(label, methods, queries, chunks, args.seed)
                rows += found
        finally:
            conn.close()
    print(
        f"{len(docs)} documents ({sum(map(len, docs.values())):,} characters, Python "
        f"{platform.python_version()}), {len(chunks):,} chunks in both folders, indexed and "
        f"embedded in {indexed_s:.1f} s; embedder {embedder.model_id}; CPU: {cpu_name()}"
    )
    print(table(rows))
    bm25, fused = verdict["questions"][METHODS[0]], verdict["questions"][METHODS[2]]
    wins = fused[0] > bm25[0] and fused[1] > bm25[1]
    print(f"fusion {'beats' if wins else 'does not beat'} BM25 alone on the questions")


if __name__ == "__main__":
    main()
