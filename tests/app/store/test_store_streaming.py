"""A streaming reply reaches the disk at least once a second and on stop, error and close, but
never once per token."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from app.store.conversations import InvalidInputError, Message, Store
from app.store.reply_writer import ReplyWriter


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "conversations.sqlite3"


@pytest.fixture
def store(path: Path) -> Iterator[Store]:
    with Store.open(path) as store:
        yield store


def _on_disk(path: Path, message_id: int) -> tuple[str, str]:
    """What another process (or the app after a crash) would read right now."""
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT content, status FROM messages WHERE id = ?", (message_id,)
        ).fetchone()


def _reply(store: Store) -> Message:
    conversation = store.create_conversation()
    question = store.append_message(conversation.id, None, "user", "count to a hundred")
    return store.begin_reply(conversation.id, question.id, "model", {"temperature": 0.0})


def test_tokens_are_written_about_once_a_second(store: Store, path: Path) -> None:
    clock = FakeClock()
    writer = ReplyWriter(store, _reply(store), clock=clock)
    on_disk = []
    for token in range(100):  # 100 tokens at 25 per second: four seconds of streaming
        clock.now = 100 + token / 25
        writer.append(f"{token} ")
        on_disk.append(_on_disk(path, writer.message_id)[0])
    writes = [now for before, now in zip(["", *on_disk], on_disk, strict=False) if before != now]
    assert [len(w.split()) for w in writes] == [26, 51, 76]  # at 1 s, 2 s and 3 s
    # At no moment do more than a second's worth of tokens wait in memory only.
    assert max(i + 1 - len(text.split()) for i, text in enumerate(on_disk)) == 25

    done = writer.finish("complete", stats={"generation_tokens": 100})
    assert done.content == " ".join(str(t) for t in range(100)) + " "
    assert _on_disk(path, done.id) == (done.content, "complete")
    assert done.stats == {"generation_tokens": 100}


@pytest.mark.parametrize(("status", "error"), [("stopped", None), ("error", "model crashed")])
def test_stop_and_error_write_everything_at_once(
    store: Store, path: Path, status: str, error: str | None
) -> None:
    writer = ReplyWriter(store, _reply(store), clock=FakeClock())
    writer.append("partial ")
    writer.append("answer")
    assert _on_disk(path, writer.message_id) == ("", "streaming")
    message = writer.finish(status, error=error)  # type: ignore[arg-type]
    assert _on_disk(path, message.id) == ("partial answer", status)
    assert message.error == error
    with pytest.raises(InvalidInputError, match="already finished"):
        writer.append("more")


def test_flush_writes_pending_text(store: Store, path: Path) -> None:
    writer = store.reply_writer(_reply(store).id)
    writer.append("soon")
    writer.flush()
    assert _on_disk(path, writer.message_id) == ("soon", "streaming")


def test_close_finishes_an_open_writer_as_interrupted(path: Path) -> None:
    store = Store.open(path)
    writer = store.reply_writer(_reply(store).id)
    writer.append("the window closed while I was")
    store.close()
    assert writer.done
    assert _on_disk(path, writer.message_id) == ("the window closed while I was", "interrupted")


def test_writer_needs_a_streaming_reply(store: Store) -> None:
    reply = _reply(store)
    store.finish_reply(reply.id, "done", "complete")
    with pytest.raises(InvalidInputError, match="not a reply being written"):
        store.reply_writer(reply.id)


def test_close_leaves_alone_a_reply_finished_or_deleted_without_its_writer(path: Path) -> None:
    store = Store.open(path)
    finished = store.reply_writer(_reply(store).id)
    finished.append("written by the writer")
    store.finish_reply(finished.message_id, "finished elsewhere", "stopped")
    deleted = store.reply_writer(_reply(store).id)
    deleted.append("gone")
    store.delete_message(deleted.message_id)
    store.close()
    assert _on_disk(path, finished.message_id) == ("finished elsewhere", "stopped")
