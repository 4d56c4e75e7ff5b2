"""Chats on remote models, through the chat controller, against real servers started here on
loopback: `mlx_lm.server` on the tiny llama, and the same server over two processes with
`mlx.launch --backend ring` (tensor parallel). The client runs on a qasync loop, as in the app.

What a person would notice: replies stream into the store and keep the tree (send, regenerate,
edit, switch back, export), stats carry the server's cached tokens, Stop keeps the text, a server
that dies mid-reply leaves the partial reply marked interrupted with a reason, a wrong key or an
unreachable address is said plainly, a slow first token shows progress and can be cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.async_tasks import NO_LOOP
from app.chat.controller import ChatController
from app.generation.reply_events import ReplyPrefill
from app.generation.worker import InferenceWorker
from app.remote.backend import WAITING
from app.remote.client import RemoteError, list_models
from app.remote.connections import Connection, Connections, FileKeys, RemoteModel
from app.settings import Preferences
from app.store.conversations import Store
from tests.remote_servers import (
    KeyProxy,
    RecordingProxy,
    Served,
    SlowProxy,
    free_port,
    play,
    served_by_mlx_lm,
    served_by_ring,
    until,
)
from tests.tiny_models import NO_EOS
from ui.chat.reply_stats import format_stats

SYSTEM = "You are brief."
# End-of-sequence is banned, so every reply runs to max_tokens (or until stopped).
GREEDY = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}
LONG = {**GREEDY, "max_tokens": 3000}


class Chat:
    """A controller with one connection, "lab", and a conversation on its model."""

    def __init__(self, folder: Path, base_url: str, model: str, key: str | None = None) -> None:
        self.connections = Connections(folder, keys=FileKeys(folder / "keys.json"))
        self.connections.save(Connection("lab", base_url), key)
        self.ctl = ChatController(
            Store.open(folder / "chat.sqlite3"),
            InferenceWorker(),
            Preferences(folder / "settings.ini"),
            connections=self.connections,
        )
        self.model_id = RemoteModel("lab", model).model_id
        self.cid = self.ctl.new_conversation()
        self.ctl.update_settings(
            self.cid, model_id=self.model_id, params=GREEDY, system_prompt=SYSTEM
        )
        self.notices: list[str] = []
        self.events: list[tuple[str, Any]] = []
        self.ctl.notice.connect(self.notices.append)
        self.ctl.prefillProgress.connect(lambda p: self.events.append(("progress", p)))
        self.ctl.streamUpdated.connect(lambda p: self.events.append(("text", p.text)))

    async def reply(self, action: Callable[[], bool]) -> None:
        """Start a reply and wait for it to end."""
        assert action()
        await until(lambda: not self.ctl.is_busy())

    def path(self) -> list[Any]:
        return self.ctl.store.active_path(self.cid)

    def close(self) -> None:
        self.ctl.shutdown()


@pytest.fixture
def chat_on(tmp_path: Path, qt_asyncio_loop) -> Iterator[Callable[..., Chat]]:
    made: list[Chat] = []

    def make(base_url: str, model: str, key: str | None = None) -> Chat:
        chat = Chat(tmp_path, base_url, model, key)
        made.append(chat)
        return chat

    yield make
    for chat in made:
        chat.close()


async def _branching_conversation(chat: Chat, proxy: RecordingProxy) -> None:
    ctl = chat.ctl
    await chat.reply(lambda: ctl.send(chat.cid, "Hello there"))
    user1, reply1 = chat.path()
    assert (reply1.status, reply1.model_id) == ("complete", chat.model_id)
    assert reply1.content and reply1.stats["generated_tokens"] == GREEDY["max_tokens"]
    assert reply1.stats["prompt_tokens"] > 0 and "cached_tokens" in reply1.stats

    await chat.reply(lambda: ctl.send(chat.cid, "Tell me more"))
    user2, reply2 = chat.path()[2:]
    # The shared history goes out byte for byte, so the server's prefix cache finds it...
    assert proxy.requests[-1]["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": reply1.content},
        {"role": "user", "content": "Tell me more"},
    ]
    # ...and says so in the stats line.
    assert reply2.status == "complete"
    assert 0 < reply2.stats["cached_tokens"] < reply2.stats["prompt_tokens"]
    assert f"{int(reply2.stats['cached_tokens']):,} reused from cache" in format_stats(reply2.stats)

    await chat.reply(lambda: ctl.regenerate(reply2.id))
    siblings, index = ctl.store.siblings(chat.path()[-1].id)
    assert siblings[0].id == reply2.id and index == 1
    assert chat.path()[-1].content == reply2.content  # greedy: the same words again

    await chat.reply(lambda: ctl.edit(user1.id, "Hello again"))
    edited, reply3 = chat.path()
    assert (edited.content, reply3.status) == ("Hello again", "complete")
    assert proxy.requests[-1]["messages"][1:] == [{"role": "user", "content": "Hello again"}]

    ctl.switch_sibling(edited.id, -1)  # ‹ : back to the first branch, at its last leaf
    assert [m.id for m in chat.path()] == [user1.id, reply1.id, user2.id, siblings[1].id]

    exported = ctl.store.export_json(chat.cid)
    replies = [m for m in exported["messages"] if m["role"] == "assistant"]
    assert len(replies) == 4 and {m["model_id"] for m in replies} == {chat.model_id}


def test_a_branched_conversation_on_mlx_lm_server(
    qt_asyncio_loop, chat_on, mlx_lm_server: Served
) -> None:
    async def scenario() -> None:
        proxy = RecordingProxy(mlx_lm_server.base_url)
        chat = chat_on(await proxy.start(), mlx_lm_server.model)
        await _branching_conversation(chat, proxy)
        assert not chat.notices
        await proxy.stop()

    play(qt_asyncio_loop, scenario())


def test_a_branched_conversation_on_mlx_distributed_over_two_processes(
    qt_asyncio_loop, chat_on, llama_path: Path, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with served_by_ring(llama_path, tmp_path / "ring") as served:
            # Two ranks of one ring, each holding half of every layer.
            ranks = [
                p.environ().get("MLX_RANK")
                for p in psutil.Process(served.process.pid).children(recursive=True)
                if p.cmdline()[1:2] and p.cmdline()[1].endswith("mlx_lm.server")
            ]
            assert sorted(ranks) == ["0", "1"]
            proxy = RecordingProxy(served.base_url)
            chat = chat_on(await proxy.start(), served.model)
            await _branching_conversation(chat, proxy)
            assert not chat.notices
            await proxy.stop()

    play(qt_asyncio_loop, scenario())


def test_stop_keeps_the_text_and_the_server_serves_the_next_reply(
    qt_asyncio_loop, chat_on, mlx_lm_server: Served
) -> None:
    async def scenario() -> None:
        chat = chat_on(mlx_lm_server.base_url, mlx_lm_server.model)
        chat.ctl.update_settings(chat.cid, params=LONG)
        assert chat.ctl.send(chat.cid, "Go on and on")
        await until(lambda: any(kind == "text" for kind, _ in chat.events))
        chat.ctl.stop()
        # A bound for liveness, not a speed check: Stop ends the reply at once.
        await until(lambda: not chat.ctl.is_busy(), timeout_s=5)
        reply = chat.path()[-1]
        assert reply.status == "stopped" and reply.content
        assert reply.content.startswith(next(text for kind, text in chat.events if kind == "text"))

        chat.ctl.update_settings(chat.cid, params=GREEDY)
        await chat.reply(lambda: chat.ctl.send(chat.cid, "Short now"))
        assert chat.path()[-1].status == "complete"

    play(qt_asyncio_loop, scenario())


def test_a_server_that_dies_mid_reply_leaves_the_partial_reply_marked_interrupted(
    qt_asyncio_loop, chat_on, llama_path: Path, tmp_path: Path
) -> None:
    async def scenario() -> None:
        with served_by_mlx_lm(llama_path, tmp_path / "doomed") as served:
            chat = chat_on(served.base_url, served.model)
            chat.ctl.update_settings(chat.cid, params=LONG)
            chat.ctl.streamUpdated.connect(lambda _payload: served.kill())
            await chat.reply(lambda: chat.ctl.send(chat.cid, "Keep talking"))
        reply = chat.path()[-1]
        streamed = [text for kind, text in chat.events if kind == "text"]
        assert reply.status == "interrupted"
        assert reply.content == streamed[-1] and reply.content
        assert (
            reply.error == f"The server at {served.base_url} closed the connection before the "
            "reply was finished."
        )
        assert chat.notices == [reply.error]
        # Nothing was lost: the partial reply is on disk.
        reopened = Store.open(tmp_path / "chat.sqlite3")
        assert reopened.get_message(reply.id).content == reply.content
        reopened.close()

    play(qt_asyncio_loop, scenario())


def test_a_wrong_key_is_said_plainly_and_the_right_one_works(
    qt_asyncio_loop, chat_on, mlx_lm_server: Served
) -> None:
    async def scenario() -> None:
        proxy = KeyProxy(mlx_lm_server.base_url, "sesame")
        url = await proxy.start()
        chat = chat_on(url, mlx_lm_server.model, key="wrong")
        await chat.reply(lambda: chat.ctl.send(chat.cid, "Hello"))
        reply = chat.path()[-1]
        assert (reply.status, reply.content) == ("error", "")
        assert reply.error is not None and "refused the API key (401 Unauthorized)" in reply.error
        assert chat.notices == [reply.error]
        with pytest.raises(RemoteError, match="401"):
            await list_models(url, "wrong")

        chat.connections.save(Connection("lab", url), "sesame", replacing="lab")
        assert await list_models(url, "sesame") == [mlx_lm_server.model]
        await chat.reply(lambda: chat.ctl.regenerate(reply.id))
        assert chat.path()[-1].status == "complete"
        await proxy.stop()

    play(qt_asyncio_loop, scenario())


def test_an_unreachable_address_is_said_plainly(qt_asyncio_loop, chat_on) -> None:
    async def scenario() -> None:
        url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
        chat = chat_on(url, "any-model")
        await chat.reply(lambda: chat.ctl.send(chat.cid, "Hello?"))
        reply = chat.path()[-1]
        assert reply.status == "error"
        assert reply.error is not None
        assert reply.error.startswith(f"Branchwise could not reach {url}")
        assert "Is the server running?" in reply.error

    play(qt_asyncio_loop, scenario())


def test_without_a_running_event_loop_the_reply_says_so(qtbot, tmp_path: Path) -> None:
    chat = Chat(tmp_path, "http://127.0.0.1:9/v1", "any-model")
    try:
        assert chat.ctl.send(chat.cid, "Hello?")
        qtbot.waitUntil(lambda: not chat.ctl.is_busy(), timeout=5000)
        reply = chat.path()[-1]
        assert (reply.status, reply.error) == ("error", NO_LOOP)
        assert chat.notices == [NO_LOOP]
    finally:
        chat.close()


def test_a_slow_first_token_shows_progress_and_can_be_cancelled(
    qt_asyncio_loop, chat_on, mlx_lm_server: Served
) -> None:
    async def scenario() -> None:
        proxy = SlowProxy(mlx_lm_server.base_url, delay_s=30.0)
        chat = chat_on(await proxy.start(), mlx_lm_server.model)
        assert chat.ctl.send(chat.cid, "Anyone there?")
        reply_id = chat.ctl.streaming_message_id()
        await until(lambda: bool(chat.events), timeout_s=10)
        assert chat.events == [("progress", ReplyPrefill(reply_id, 0, WAITING))]
        await until(lambda: bool(proxy.requests), timeout_s=10)
        chat.ctl.stop()
        # A bound for liveness, not a speed check: Stop ends the reply at once.
        await until(lambda: not chat.ctl.is_busy(), timeout_s=5)
        # Stopped before any text: no empty reply is kept, the question waits for an answer.
        assert [m.role for m in chat.path()] == ["user"]
        question = chat.path()[-1]

        proxy.delay_s = 1.0  # slow, but it comes: progress first, then the text
        chat.events.clear()
        await chat.reply(lambda: chat.ctl.edit(question.id, question.content))  # ask again
        assert chat.events[0][0] == "progress" and chat.events[-1][0] == "text"
        assert chat.path()[-1].status == "complete"
        await proxy.stop()

    play(qt_asyncio_loop, scenario())
