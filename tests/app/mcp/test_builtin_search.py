"""The built-in `search_conversations` tool on a real store: every branch is searched, the
results are short text naming the chat, and bad arguments are an error result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.mcp.builtin_search import SEARCH_TOOL, search_conversations
from app.mcp.results import ToolFailure
from app.mcp.servers import argument_problem
from app.store.conversations import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as opened:
        trip = opened.create_conversation("Trip to Lisbon")
        question = opened.append_message(trip.id, None, "user", "Where should we eat?")
        first = opened.append_message(
            trip.id, question.id, "assistant", "Try the pastéis de nata in Belém."
        )
        # A regenerated reply: the first one is now on an inactive branch.
        opened.edit_message(first.id, "Time Out Market has a bit of everything.")
        other = opened.create_conversation("Sourdough")
        opened.append_message(other.id, None, "user", "My starter smells of acetone.")
        deleted = opened.create_conversation("Old secret")
        opened.append_message(deleted.id, None, "user", "the acetone notes I deleted")
        opened.delete_conversation(deleted.id)
        yield opened


def test_a_match_on_an_inactive_branch_is_found(store: Store) -> None:
    result = search_conversations(store, {"query": "pastéis"})
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines[0] == "1 match for 'pastéis':"
    assert lines[1].startswith('1. "Trip to Lisbon" (chat 1, message 2): ')
    assert "pastéis de nata in Belém" in lines[1]


def test_titles_match_and_deleted_chats_are_left_out(store: Store) -> None:
    assert "the title matches" in search_conversations(store, {"query": "sourdough"}).text
    acetone = search_conversations(store, {"query": "acetone"}).text
    assert "Sourdough" in acetone and "Old secret" not in acetone


def test_the_limit_and_no_match(store: Store) -> None:
    limited = search_conversations(store, {"query": "the", "limit": 1}).text
    assert limited.startswith("1 match") and len(limited.splitlines()) == 2
    assert search_conversations(store, {"query": "zeppelin"}).text == (
        "No conversation mentions 'zeppelin'."
    )


@pytest.mark.parametrize(
    "arguments",
    [{}, {"query": "  "}, {"query": 3}, {"query": "x", "limit": 0}, {"query": "x", "limit": True}],
)
def test_bad_arguments_are_an_error_result(store: Store, arguments: dict) -> None:
    result = search_conversations(store, arguments)
    assert result.failure is ToolFailure.BAD_ARGUMENTS


def test_its_schema_is_what_a_chat_template_takes() -> None:
    schema = SEARCH_TOOL.openai_schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "search_conversations"
    assert schema["function"]["parameters"]["required"] == ["query"]
    assert argument_problem(SEARCH_TOOL, {"query": "x", "limit": 50}) is not None
    assert argument_problem(SEARCH_TOOL, {"query": "x"}) is None
