"""Issue 5 item 8: with 1,000 conversations and 100,000 messages, reading a conversation's
active path, listing and searching each cost no more than a small multiple of a bare `sqlite3`
query doing the same reading on the same file, measured in the same process (the figures
themselves: bench/store.py). A fixed time limit would fail on any machine slower than the one
it was tuned on; the ratio holds on each."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from app.store.conversations import Store
from bench.store import DEEP_MESSAGES, QUERIES, fill, measure, ratio

# Store over bare sqlite3, CPU time. Measured (bench/store.py): path 3x, list 2x, a rare word
# 4-7x (the store also searches titles and leaves deleted chats out); each limit is about 3x
# that, room for a busy machine, still far below what a per-row query or a lost index costs.
MAX_RATIO = {"active path": 10.0, "list conversations": 6.0, "search": 20.0}
# The store ranks a word found almost everywhere among the latest matches only: it beats the
# naive query that ranks them all (measured 0.06-0.17x), which is what the window is for.
WINDOWED_SEARCHES = ("very common word", "two very common words")


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, int, Path]]:
    path = tmp_path_factory.mktemp("scale") / "conversations.sqlite3"
    deep_id = fill(path, conversations=1000, messages=100_000)
    with Store.open(path) as store:
        yield store, deep_id, path


def test_the_store_holds_the_scale(big_store: tuple[Store, int, Path]) -> None:
    store, deep_id, _ = big_store
    conversations = store.list_conversations()
    assert len(conversations) == 1000
    assert sum(len(store.all_messages(c.id)) for c in conversations[:10]) > 900
    path = store.active_path(deep_id)
    assert len(path) == DEEP_MESSAGES
    assert [m.role for m in path[:2]] == ["user", "assistant"]
    assert all(len(store.search(query)) == 50 for query in QUERIES.values())


def test_reading_and_searching_cost_a_small_multiple_of_bare_sqlite3(
    big_store: tuple[Store, int, Path],
) -> None:
    store, deep_id, path = big_store
    with closing(sqlite3.connect(path)) as bare:
        figures = measure(store, bare, deep_id, runs=5)
    ratios = {name: round(ratio(figure), 2) for name, figure in figures.items()}
    slow = {
        name: r
        for name, r in ratios.items()
        if r > next(limit for key, limit in MAX_RATIO.items() if name.startswith(key))
    }
    assert not slow, f"store / bare sqlite3 over the limit: {slow} (all: {ratios})"
    windowed = tuple(f"({label})" for label in WINDOWED_SEARCHES)
    unwindowed = {name: r for name, r in ratios.items() if name.endswith(windowed) and r >= 0.5}
    assert not unwindowed, f"common words no faster than ranking every match: {unwindowed}"
