"""Search across every conversation: ranked, highlighted, and safe for whatever a person types."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store import search as store_search
from app.store.conversations import InvalidInputError, Store
from app.store.search import fts_query


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _highlighted(spans: tuple[tuple[str, bool], ...]) -> list[str]:
    return [text for text, is_match in spans if is_match]


def test_finds_messages_and_titles_with_highlights(store: Store) -> None:
    soup = store.create_conversation("Tomato soup recipe")
    question = store.append_message(soup.id, None, "user", "How long do I simmer the soup?")
    store.append_message(soup.id, question.id, "assistant", "Simmer it for twenty minutes.")
    other = store.create_conversation("Taxes")
    store.append_message(other.id, None, "user", "Nothing about cooking here.")

    hits = store.search("simmer")
    assert {(h.conversation_id, h.message_id) for h in hits} == {
        (soup.id, question.id),
        (soup.id, question.id + 1),
    }
    hit = next(h for h in hits if h.message_id == question.id)
    assert hit.title == "Tomato soup recipe"
    assert hit.snippet == "How long do I simmer the soup?"
    assert _highlighted(hit.spans) == ["simmer"]

    (title_hit,) = [h for h in store.search("tomato") if h.message_id is None]
    assert title_hit.conversation_id == soup.id
    assert _highlighted(title_hit.spans) == ["Tomato"]


def test_ranking_prefers_the_better_match(store: Store) -> None:
    conversation = store.create_conversation("Notes")
    weak = store.append_message(
        conversation.id,
        None,
        "user",
        "A long note that mentions kettle once among many other words",
    )
    strong = store.append_message(conversation.id, weak.id, "assistant", "kettle kettle kettle")
    hits = store.search("kettle")
    assert [h.message_id for h in hits] == [strong.id, weak.id]
    assert hits[0].rank < hits[1].rank
    assert [h.message_id for h in store.search("kettle", limit=1)] == [strong.id]


def test_all_words_must_match_and_the_last_is_a_prefix(store: Store) -> None:
    conversation = store.create_conversation("x")
    both = store.append_message(conversation.id, None, "user", "Paris in springtime")
    store.append_message(conversation.id, both.id, "assistant", "Paris is lovely")
    assert [h.message_id for h in store.search("paris spring")] == [both.id]
    assert [h.message_id for h in store.search("springtime par")] == [both.id]
    assert store.search("paris spring ") == []  # a finished word is matched whole
    assert len(store.search("PARIS")) == 2


def test_a_short_last_word_is_matched_whole(store: Store) -> None:
    conversation = store.create_conversation("x")
    message = store.append_message(conversation.id, None, "user", "springtime in sp")
    assert [h.snippet for h in store.search("sp")] == ["springtime in sp"]
    assert store.search("spr ") == []
    assert [h.message_id for h in store.search("spr")] == [message.id]


def test_a_word_found_everywhere_is_ranked_among_the_latest_matches(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_search, "RANKED_WINDOW", 3)
    conversation = store.create_conversation("x")
    oldest = store.append_message(conversation.id, None, "user", "tea tea tea tea")
    parent = oldest.id
    newer = []
    for text in ("tea with milk and sugar", "a tea", "iced tea, lemon, mint and honey"):
        parent = store.append_message(conversation.id, parent, "user", text).id
        newer.append(parent)
    hits = store.search("tea ")
    assert sorted(h.message_id for h in hits) == newer
    assert hits[0].message_id == newer[1]  # the best of those: shortest text with the word
    monkeypatch.setattr(store_search, "RANKED_WINDOW", 4)
    assert store.search("tea ")[0].message_id == oldest.id


def test_accents_and_case_do_not_matter(store: Store) -> None:
    conversation = store.create_conversation("x")
    message = store.append_message(conversation.id, None, "user", "Un café à Zürich")
    assert [h.message_id for h in store.search("cafe zurich")] == [message.id]
    assert [h.message_id for h in store.search("CAFÉ")] == [message.id]


def test_archived_conversations_are_searched(store: Store) -> None:
    conversation = store.create_conversation("old")
    message = store.append_message(conversation.id, None, "user", "archived needle")
    store.set_archived(conversation.id, True)
    assert [h.message_id for h in store.search("needle")] == [message.id]


def test_edits_deletions_and_renames_update_the_index(store: Store) -> None:
    conversation = store.create_conversation("first title")
    message = store.append_message(conversation.id, None, "user", "original wording")
    store.edit_message(message.id, "changed wording")
    assert {h.snippet for h in store.search("wording")} == {"original wording", "changed wording"}
    store.delete_message(message.id)
    assert [h.snippet for h in store.search("wording")] == ["changed wording"]
    store.rename(conversation.id, "second title")
    assert store.search("first") == []
    assert [h.conversation_id for h in store.search("second")] == [conversation.id]
    store._db().execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
    store._db().execute("INSERT INTO title_search(title_search) VALUES ('integrity-check')")


@pytest.mark.parametrize(
    "query",
    ['"', '"""', 'a"b', "*", "-", "a -b", "AND", "a AND", "OR NOT", "NEAR(a b)", "(", ")",
     "content:word", "^start", "a+b", "{x y}", "\x00", "", "   ", "🙂", "'; DROP TABLE x; --"],
)  # fmt: skip
def test_typed_queries_are_never_fts_syntax(store: Store, query: str) -> None:
    conversation = store.create_conversation("AND OR NOT")
    store.append_message(conversation.id, None, "user", 'a"b a -b AND NEAR(a b) content word')
    hits = store.search(query)
    assert all(h.conversation_id == conversation.id for h in hits)


def test_operators_are_searched_as_words(store: Store) -> None:
    conversation = store.create_conversation("x")
    message = store.append_message(conversation.id, None, "user", "rock and roll")
    assert [h.message_id for h in store.search("rock AND")] == [message.id]
    assert fts_query('say "hi" -now') == '"say" """hi""" "-now"*'
    assert fts_query("  * - ") is None


def test_bad_limit_is_refused(store: Store) -> None:
    with pytest.raises(InvalidInputError, match="at least 1"):
        store.search("x", limit=0)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text())
def test_any_text_is_a_valid_query(store: Store, query: str) -> None:
    if not store.list_conversations():
        conversation = store.create_conversation("hello world")
        store.append_message(conversation.id, None, "user", "some text to search: hello")
    for hit in store.search(query):
        assert hit.snippet
