"""Issue 5 item 8: with 1,000 conversations and 100,000 messages, reading a conversation's
active path and searching each take under 50 ms (the figures themselves: bench/store.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.store.conversations import Store
from bench.store import DEEP_MESSAGES, QUERIES, fill, measure

BUDGET_MS = 50.0
# The machine running the suite is shared: waiting for a core can stretch wall time well past
# the work done. CPU time holds the 50 ms line; wall time gets room for the wait, still
# catching a query that blocks (I/O, locks) rather than computes.
WALL_SLACK = 3.0


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, int]]:
    path = tmp_path_factory.mktemp("scale") / "conversations.sqlite3"
    deep_id = fill(path, conversations=1000, messages=100_000)
    with Store.open(path) as store:
        yield store, deep_id


def test_the_store_holds_the_scale(big_store: tuple[Store, int]) -> None:
    store, deep_id = big_store
    conversations = store.list_conversations()
    assert len(conversations) == 1000
    assert sum(len(store.all_messages(c.id)) for c in conversations[:10]) > 900
    path = store.active_path(deep_id)
    assert len(path) == DEEP_MESSAGES
    assert [m.role for m in path[:2]] == ["user", "assistant"]
    assert all(len(store.search(query)) == 50 for query in QUERIES.values())


def test_reading_and_searching_stay_under_50_ms(big_store: tuple[Store, int]) -> None:
    store, deep_id = big_store
    figures = measure(store, deep_id, runs=5)
    slow = {
        name: (round(wall, 1), round(cpu, 1))
        for name, (wall, cpu) in figures.items()
        if cpu >= BUDGET_MS or wall >= BUDGET_MS * WALL_SLACK
    }
    assert not slow, f"over budget (wall ms, cpu ms): {slow}"
