"""Bad input is refused with a clear message; any real text, up to 1 MB, comes back exactly."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store.conversations import InvalidInputError, Store
from app.store.records import MAX_CONTENT_CHARS

NASTY_TEXTS = [
    "\x00",
    "before\x00after",
    "\x01\x02\x03\x07\x08\x1b[31mred\x1b[0m\x7f",
    "line one\r\nline two\rthree\n\ttabbed\r\n",
    "👩‍👩‍👧‍👦 🇫🇷 🏳️‍🌈 😀",
    "שלום עולם مرحبا بالعالم",
    "\u202eright-to-left override\u202c and \u200f marks \u200e",
    "e\u0301 vs é, Å vs A\u030a",
    "\ufeffbyte order mark",
    "\U0010fffd private plane, \uffff noncharacter",
    "'; DROP TABLE messages; --",
    '"quoted" and *starred* AND NOT NEAR(x)',
]

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as store:
        yield store


def _megabyte_of_mixed_text() -> str:
    """Over 1 MB of UTF-8 drawn from controls, Latin, emoji, Hebrew, Arabic and CJK."""
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(0x250)] + list("😀🇫🇷שלוםمرحبا漢字\u202e\u200d")
    chunk = "".join(rng.choices(alphabet, k=20_000))
    return "x" + chunk * (1_000_000 // len(chunk.encode("utf-8")) + 1)


@pytest.mark.parametrize("content", ["", " ", "\n\t  \u3000\u2003", "\r\n"])
def test_empty_or_blank_messages_are_refused(store: Store, content: str) -> None:
    conversation = store.create_conversation()
    first = store.append_message(conversation.id, None, "user", "real")
    with pytest.raises(InvalidInputError, match="empty"):
        store.append_message(conversation.id, first.id, "user", content)
    with pytest.raises(InvalidInputError, match="empty"):
        store.edit_message(first.id, content)
    with pytest.raises(InvalidInputError, match="empty"):
        store.create_conversation(title=content)
    assert store.all_messages(conversation.id) == [first]


def test_wrong_kinds_of_input_are_refused(store: Store) -> None:
    conversation = store.create_conversation()
    with pytest.raises(InvalidInputError, match="must be text"):
        store.append_message(conversation.id, None, "user", b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="role"):
        store.append_message(conversation.id, None, "wizard", "hi")
    with pytest.raises(InvalidInputError, match="status"):
        store.append_message(conversation.id, None, "user", "hi", status="done")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="unpaired surrogate"):
        store.append_message(conversation.id, None, "user", "broken \ud800 text")
    with pytest.raises(InvalidInputError, match="too long"):
        store.append_message(conversation.id, None, "user", "x" * (MAX_CONTENT_CHARS + 1))
    with pytest.raises(InvalidInputError, match="load back unchanged"):
        store.append_message(conversation.id, None, "user", "hi", params={1: "int key"})  # type: ignore[dict-item]
    with pytest.raises(InvalidInputError, match="cannot be saved"):
        store.create_conversation(params={"x": object()})
    assert store.all_messages(conversation.id) == []


@pytest.mark.parametrize("content", [*NASTY_TEXTS, "MB"])
def test_any_unicode_round_trips_exactly(store: Store, content: str) -> None:
    if content == "MB":
        content = _megabyte_of_mixed_text()
        assert len(content.encode("utf-8")) > 1_000_000
    conversation = store.create_conversation(title=content, system_prompt=content)
    question = store.append_message(conversation.id, None, "user", content)
    reply = store.begin_reply(conversation.id, question.id)
    store.update_streaming(reply.id, content)
    assert store.get_message(reply.id).content == content
    store.finish_reply(reply.id, content + content[:3], "stopped", error=content)

    again = store.get_conversation(conversation.id)
    assert (again.title, again.system_prompt) == (content, content)
    question_again, reply_again = store.active_path(conversation.id)
    assert question_again.content == content
    assert (reply_again.content, reply_again.error) == (content + content[:3], content)

    imported = store.import_json(store.export_json(conversation.id))
    assert imported.title == content
    assert [m.content for m in store.active_path(imported.id)] == [content, content + content[:3]]


@SETTINGS
@given(content=st.text(min_size=1).filter(str.strip))
def test_generated_text_round_trips(store: Store, content: str) -> None:
    conversation = store.create_conversation()
    message = store.append_message(conversation.id, None, "user", content)
    assert store.get_message(message.id).content == content
    assert store.edit_message(message.id, content + "!").content == content + "!"
    exported = store.export_json(conversation.id)
    imported = store.import_json(exported)
    assert [m.content for m in store.all_messages(imported.id)] == [content, content + "!"]
