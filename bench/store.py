"""Conversation store at scale (issue 5 item 8): 1,000 conversations and 100,000 messages, then
the time to read a deep conversation's active path, to list and to search, median of several
runs, each beside a bare `sqlite3` baseline measured in the same run.

    .venv/bin/python bench/store.py [--conversations N] [--messages N] [--runs N]

`fill` writes straight into a database that `Store.open` created, in one transaction with the
store's own schema and indexes: a hundred thousand `append_message` calls would measure
Python, not the reads this benchmark is about. Wall time is what a person waits;
CPU time is shown beside it because other programs on a busy machine inflate the wall time.

A figure alone cannot tell the store from the machine, so each comes with its baseline on a
plain connection to the same file: the same rows read by one bare query (active path, list),
and for a search the naive FTS5 query (every match ranked by bm25, snippets for the best 50).
The ratio, store over baseline, is what carries from one machine to another.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `app` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.store.conversations import Store
from app.store.search import fts_query
from bench.cli import description

DEEP_MESSAGES = 500
VOCABULARY = 20_000
# What a person might type: a word in ~1 % of the messages, the same with a prefix still being
# typed, a word in ~10 % (typed, so also a prefix), and words found almost everywhere.
QUERIES = {
    "rare word": "w2500",
    "rare word + prefix": "w2500 w25",
    "common word, typed": "w100",
    "very common word": "w1 ",
    "two very common words": "w1 w2 ",
}
_INDEX_TRIGGER = "message_search_insert"  # app/store_schema.py
REPLY_PARAMS = json.dumps({"max_tokens": 1024, "seed": 7, "temperature": 0.7, "top_p": 0.95})


def _word_stream(rng: random.Random, length: int) -> list[str]:
    """Words in which word k occurs about 1/k as often as the first (Zipf, like real text)."""
    cum_weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(VOCABULARY)))
    return rng.choices([f"w{i}" for i in range(VOCABULARY)], cum_weights=cum_weights, k=length)


def _conversation_rows(
    rng: random.Random,
    conversation_id: int,
    first_id: int,
    count: int,
    words: Callable[[int], str],
    regenerate: bool,
) -> Iterator[tuple[object, ...]]:
    """Alternating turns, the last message being the active leaf. With `regenerate`, every
    tenth message is a second reply to the same question, and the talk goes on under it."""
    parent_of: dict[int, int | None] = {}
    for offset in range(count):
        message_id = first_id + offset
        role = "assistant" if offset % 2 else "user"
        parent = message_id - 1 if offset else None
        if regenerate and offset % 10 == 9:
            parent = parent_of[message_id - 2]
        parent_of[message_id] = parent
        stats = {
            "decode_tps": round(rng.uniform(20, 90), 1),
            "generation_tokens": 110,
            "prompt_tokens": 40 * offset,
            "ttft_s": round(rng.uniform(0.05, 0.6), 3),
        }
        yield (
            message_id,
            conversation_id,
            parent,
            role,
            words(80 if role == "assistant" else 15),
            1.7e9 + message_id,
            "complete",
            "bench-model" if role == "assistant" else None,
            REPLY_PARAMS if role == "assistant" else "{}",
            json.dumps(stats, sort_keys=True) if role == "assistant" else "{}",
            message_id,
        )


def fill(path: Path, conversations: int, messages: int, seed: int = 0) -> int:
    """Create a store at `path` holding `conversations` conversations and `messages` messages;
    returns the id of the deep one: the first, DEEP_MESSAGES messages in one line."""
    Store.open(path).close()
    rng = random.Random(seed)
    stream = _word_stream(rng, 300_000)

    def words(k: int) -> str:
        # A random stretch of one long stream: drawing each word anew would take most of
        # the fill time.
        start = rng.randrange(len(stream) - k)
        return " ".join(stream[start : start + k])

    rest = messages - DEEP_MESSAGES
    sizes = [DEEP_MESSAGES] + [
        rest // (conversations - 1) + (i < rest % (conversations - 1))
        for i in range(conversations - 1)
    ]
    with closing(sqlite3.connect(path, autocommit=True)) as db:
        # One transaction bigger than the default 2 MB page cache would spill to the log and
        # read back again, over and over.
        db.execute("PRAGMA cache_size = -262144")
        db.execute("BEGIN")
        # The search index is built once at the end ('rebuild' reads every message), twice as
        # fast as the store's per-row trigger; the trigger is back before the commit.
        (index_trigger,) = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (_INDEX_TRIGGER,)
        ).fetchone()
        db.execute(f"DROP TRIGGER {_INDEX_TRIGGER}")
        first_id = 1
        for conversation_id, size in enumerate(sizes, start=1):
            db.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at, model_id,"
                " active_leaf_id, visit_clock) VALUES (?, ?, ?, ?, 'bench-model', NULL, ?)",
                (conversation_id, f"conversation {conversation_id}: {words(3)}", 1.7e9,
                 1.7e9 + first_id + size, first_id + size),
            )  # fmt: skip
            db.executemany(
                "INSERT INTO messages (id, conversation_id, parent_id, role, content, created_at,"
                " status, model_id, params, stats, visit)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _conversation_rows(
                    rng, conversation_id, first_id, size, words, regenerate=conversation_id > 1
                ),
            )
            db.execute(
                "UPDATE conversations SET active_leaf_id = ? WHERE id = ?",
                (first_id + size - 1, conversation_id),
            )
            first_id += size
        db.execute(index_trigger)
        db.execute("INSERT INTO message_search(message_search) VALUES ('rebuild')")
        db.execute("COMMIT")
    return 1


def median_ms(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of `runs` calls."""
    wall, cpu = [], []
    for _ in range(runs):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        call()
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start_wall) * 1000)
    return statistics.median(wall), statistics.median(cpu)


Figure = tuple[tuple[float, float], tuple[float, float]]  # (wall, cpu) ms: store, baseline


def measure(store: Store, bare: sqlite3.Connection, deep_id: int, runs: int) -> dict[str, Figure]:
    """Each read through `store` and its baseline on `bare`, a plain connection to the same
    database. The deep conversation is one chain, so its rows in id order are its path."""
    figures = {
        f"active path ({DEEP_MESSAGES} messages)": (
            median_ms(lambda: store.active_path(deep_id), runs),
            median_ms(
                lambda: bare.execute(
                    "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (deep_id,)
                ).fetchall(),
                runs,
            ),
        ),
        "list conversations": (
            median_ms(store.list_conversations, runs),
            median_ms(
                lambda: bare.execute(
                    "SELECT * FROM conversations WHERE deleted_at IS NULL AND archived = 0"
                    " ORDER BY pinned DESC, updated_at DESC, id DESC"
                ).fetchall(),
                runs,
            ),
        ),
    }
    for label, query in QUERIES.items():
        figures[f"search {query.strip()!r} ({label})"] = (
            median_ms(lambda query=query: store.search(query), runs),
            median_ms(
                lambda query=query: bare.execute(
                    "SELECT rowid, snippet(message_search, 0, '[', ']', '…', 16)"
                    " FROM message_search WHERE message_search MATCH ? ORDER BY rank LIMIT 50",
                    (fts_query(query),),
                ).fetchall(),
                runs,
            ),
        )
    return figures


def ratio(figure: Figure) -> float:
    """Store over baseline, in CPU time (what the work costs, whoever else runs)."""
    (_, store_cpu), (_, bare_cpu) = figure
    return store_cpu / max(bare_cpu, 1e-3)


def main() -> None:
    parser = argparse.ArgumentParser(description=description(__doc__).splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "conversations.sqlite3"
        start = time.perf_counter()
        deep_id = fill(path, args.conversations, args.messages)
        fill_s = time.perf_counter() - start
        size_mb = path.stat().st_size / 1e6
        open_ms = median_ms(lambda: Store.open(path).close(), 3)[0]
        with Store.open(path) as store, closing(sqlite3.connect(path)) as bare:
            figures = measure(store, bare, deep_id, args.runs)
    print(
        f"store: {args.conversations:,} conversations, {args.messages:,} messages, "
        f"{size_mb:.0f} MB, filled in {fill_s:.1f} s; open {open_ms:.1f} ms"
    )
    print(
        f"  {'median of ' + str(args.runs):<52} {'wall':>8} {'cpu':>8}"
        f" {'bare sqlite3 cpu':>17} {'store / bare':>13}"
    )
    for name, figure in figures.items():
        (wall, cpu), (_, bare_cpu) = figure
        print(
            f"  {name:<52} {wall:6.1f} ms {cpu:5.1f} ms {bare_cpu:14.1f} ms {ratio(figure):12.2f}x"
        )


if __name__ == "__main__":
    main()
