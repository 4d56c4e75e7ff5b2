"""Knowledge index speed (issue 43 item 10): indexing in chunks per second, each figure beside
the time it takes to read the same files raw, and query latency (p50/p95) at 10,000 and 100,000
chunks for BM25 alone, vectors alone, the two fused, and a whole retrieval within a budget.

    .venv/bin/python bench/knowledge.py [--only index,query] [--megabytes N] [--pdfs N]
                                        [--chunks 10000,100000] [--queries N] [--runs N]

Indexing reads CPython's `pydoc_data` topics written out as Markdown files and as PDFs
(`bench/knowledge_corpus.py`): the raw read of the same bytes is the baseline, then parsing and
chunking alone, then the index run into a new `knowledge.db` (BM25), then the same with 256-d
random vectors stored per chunk. The query section fills an index straight through SQL (the
index's own schema and triggers) with synthetic chunks drawn from the topics' words and random
vectors, then times known-item queries (four consecutive words of a random chunk). Wall time is
what a person waits; CPU time beside it, since other programs inflate the wall time here.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.knowledge.chunking import Chunker
from app.knowledge.database import open_knowledge_database
from app.knowledge.embedder import to_blob
from app.knowledge.index import KnowledgeIndex
from app.knowledge.parsing.formats import document_blocks, format_of
from app.knowledge.search import vector_ranked
from bench.cli import description
from bench.importers import best_s
from bench.knowledge_corpus import RandomEmbedder, Vocabulary, write_markdown, write_pdfs
from bench.table import table

INDEX_HEADER: tuple[str, ...] = (
    "files (best of runs)",
    "MB",
    "chunks",
    "wall s",
    "cpu s",
    "chunks/s (cpu)",
    "over raw read (cpu)",
)
QUERY_HEADER: tuple[str, ...] = (
    "query",
    "chunks",
    "p50 ms",
    "p95 ms",
    "p50 cpu ms",
    "p95 cpu ms",
    "cpu p50 over BM25",
)
CHUNK_WORDS = 90  # about 600 characters, as the chunker's chunks of prose run


def index_rows(folder: Path, label: str, runs: int) -> list[tuple[str, ...]]:
    files = sorted(p for p in folder.iterdir() if p.is_file())
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    chunks = [0]
    runs_done = iter(range(1000))

    def raw() -> None:
        for path in files:
            path.read_bytes()

    def parse() -> None:
        chunks[0] = 0
        for path in files:
            kind = format_of(path)
            assert kind is not None
            chunks[0] += sum(1 for _ in Chunker().chunks(document_blocks(path, kind)))

    def index(embedder: RandomEmbedder | None) -> Callable[[], None]:
        def run() -> None:
            database = folder.parent / f"index-{label}-{next(runs_done)}" / "knowledge.db"
            with KnowledgeIndex.open(database) as opened:
                opened.add("bench", folder)
                report = opened.sync("bench", embedder=embedder)
            assert report.chunks_written == chunks[0] and not report.failed

        return run

    figures = {
        "raw read (the baseline)": best_s(raw, runs),
        "parse and chunk": best_s(parse, runs),
        "index (BM25)": best_s(index(None), runs),
        "index with 256-d vectors": best_s(index(RandomEmbedder()), runs),
    }
    _, baseline = figures["raw read (the baseline)"]
    return [
        (
            f"{label}: {name}",
            f"{megabytes:.1f}",
            f"{chunks[0]:,}",
            f"{wall:.3g}",
            f"{cpu:.3g}",
            "" if name.startswith("raw") else f"{chunks[0] / cpu:,.0f}",
            f"{cpu / baseline:.0f}x",
        )
        for name, (wall, cpu) in figures.items()
    ]


def fill(database: Path, chunks: int, embedder: RandomEmbedder) -> list[str]:
    """An index of `chunks` synthetic chunks (20 to a document) with vectors; their texts."""
    vocabulary = Vocabulary()
    texts = [vocabulary.text(CHUNK_WORDS) for _ in range(chunks)]
    with closing(open_knowledge_database(database)) as conn:
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO collections (name, root, created_at, embedding_model, state)"
            " VALUES ('bench', '/bench', 0, ?, 'ready')",
            (embedder.model_id,),
        )
        for start in range(0, chunks, 20):
            (document,) = conn.execute(
                "INSERT INTO documents (collection, path, format, size, mtime_ns, sha256, state,"
                " text_sha256, chars, indexed_at) VALUES (1, ?, 'text', 0, 0, '', 'indexed', '',"
                " ?, 0) RETURNING id",
                (f"/bench/{start // 20:06d}.txt", 20 * 700),
            ).fetchone()
            rows = [(document, n, n * 700, n * 700 + len(texts[start + n]), texts[start + n])
                    for n in range(min(20, chunks - start))]  # fmt: skip
            ids = [
                conn.execute(
                    "INSERT INTO chunks (document, seq, heading, span_start, span_end, text)"
                    " VALUES (?, ?, '', ?, ?, ?) RETURNING id",
                    row,
                ).fetchone()[0]
                for row in rows
            ]
            vectors = embedder.embed_documents([row[4] for row in rows])
            conn.executemany(
                "INSERT INTO vectors (chunk, model, collection, vector) VALUES (?, ?, 1, ?)",
                [(i, embedder.model_id, to_blob(v)) for i, v in zip(ids, vectors, strict=True)],
            )
        conn.execute("COMMIT")
    return texts


def percentiles_ms(call: Callable[[str], object], queries: list[str]) -> tuple[float, ...]:
    """p50 and p95 of each query's wall time, then of its CPU time, in milliseconds."""
    wall, cpu = [], []
    for query in queries:
        start_wall, start_cpu = time.perf_counter(), time.thread_time()
        call(query)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start_wall) * 1000)
    return (*_p50_p95(wall), *_p50_p95(cpu))


def _p50_p95(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def query_rows(folder: Path, chunks: int, count: int) -> list[tuple[str, ...]]:
    database = folder / f"query-{chunks}" / "knowledge.db"
    embedder = RandomEmbedder()
    texts = fill(database, chunks, embedder)
    rng = random.Random(3)
    queries = []
    for _ in range(count):
        words = rng.choice(texts).split()
        at = rng.randrange(0, len(words) - 4)
        queries.append(" ".join(words[at : at + 4]))
    with KnowledgeIndex.open(database) as index:
        collection = index.collection("bench")
        conn = index._db()  # the bench times the vector step by itself
        started = time.perf_counter()
        vector_ranked(conn, str(database), [collection], embedder, queries[0], 50)
        load_ms = (time.perf_counter() - started) * 1000

        def tokens(text: str) -> int:
            return len(text.split())

        figures = {
            "BM25 alone": percentiles_ms(lambda q: index.search(["bench"], q, 10), queries),
            "vectors alone": percentiles_ms(
                lambda q: vector_ranked(conn, str(database), [collection], embedder, q, 50),
                queries,
            ),
            "BM25 + vectors, fused": percentiles_ms(
                lambda q: index.search(["bench"], q, 10, embedder=embedder), queries
            ),
            "retrieval, 3,000-token budget": percentiles_ms(
                lambda q: index.retrieve(
                    ["bench"],
                    q,
                    previous=None,
                    count_tokens=tokens,
                    budget_tokens=3000,
                    embedder=embedder,
                ),
                queries,
            ),
        }
    bm25 = figures["BM25 alone"][2]
    rows = [
        (name, f"{chunks:,}", *(f"{ms:.1f}" for ms in times), f"{times[2] / bm25:.2f}x")
        for name, times in figures.items()
    ]
    rows.append(("vector matrix read (first query)", f"{chunks:,}", f"{load_ms:.0f}", *[""] * 4))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--only", default="index,query", help="index, query or both")
    parser.add_argument("--megabytes", type=float, default=8.0, help="Markdown to index")
    parser.add_argument("--pdfs", type=int, default=10, help="PDFs of 20 pages to index")
    parser.add_argument("--chunks", default="10000,100000", help="index sizes for queries")
    parser.add_argument("--queries", type=int, default=200, help="queries per figure")
    parser.add_argument("--runs", type=int, default=2, help="best of this many for indexing")
    args = parser.parse_args(argv)
    sections = set(args.only.split(","))
    threading.current_thread().name = "bench"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        if "index" in sections:
            write_markdown(root / "markdown", args.megabytes)
            write_pdfs(root / "pdf", pages=20, files=args.pdfs)
            rows = [INDEX_HEADER]
            rows += index_rows(root / "markdown", "Markdown", args.runs)
            rows += index_rows(root / "pdf", "PDF", args.runs)
            print(f"## knowledge: indexing\n\n{table(rows)}\n", flush=True)
        if "query" in sections:
            rows = [QUERY_HEADER]
            for chunks in (int(n) for n in args.chunks.split(",")):
                rows += query_rows(root, chunks, args.queries)
            print(f"## knowledge: queries\n\n{table(rows)}\n", flush=True)


if __name__ == "__main__":
    main()
