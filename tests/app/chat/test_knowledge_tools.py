"""The knowledge tools: offered to a tool-capable model only in a chat that reads knowledge, run
on the worker after the person's Run like any tool, their results stored as `tool` messages in
the tree; and what they answer: excerpts numbered with their sources, the list of documents
(every one, for "how many…" questions), a document read whole part by part, overlaps once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.chat.controller import ChatController
from app.chat.knowledge.tools import PART_CHARS, document_list, document_part, whole_text
from app.generation.knowledge_retrieval import DocumentInfo
from app.knowledge.excerpts import Excerpt
from app.settings import Preferences
from app.store.conversations import Store
from tests.app.chat.test_controller_tools import _next
from tests.knowledge_fakes import FakeKnowledge
from tests.tool_engine import ToolScriptedEngine, call_markup, tool_worker

GUIDE = "/docs/guide.md"
NOTES = {GUIDE: "The Seine runs through Paris.\n\nParis is in France.", "/docs/rome.md": "Rome."}


def _chunk(page: int | None, start: int, text: str) -> Excerpt:
    return Excerpt("Notes", GUIDE, page, "", start, start + len(text), text, 0.0, "0" * 64)


def test_a_document_read_whole_takes_overlaps_once_and_marks_pages() -> None:
    chunks = [
        _chunk(2, 0, "Second page."),
        _chunk(1, 0, "The river runs"),
        _chunk(1, 10, "runs through Paris."),  # overlaps the chunk before by five characters
        _chunk(1, 40, "Later."),
    ]
    assert whole_text(chunks) == (
        "[page 1]\nThe river runs through Paris.\n\nLater.\n\n[page 2]\nSecond page."
    )
    info = DocumentInfo("Notes", GUIDE, "0" * 64, 2)
    long = "x" * (PART_CHARS + 10)
    first, second = document_part(info, long, 1), document_part(info, long, 2)
    assert first.text.startswith("guide.md (Notes), part 1 of 2; ask for part 2 for more:")
    assert second.text.endswith("\n\n" + "x" * 10)
    assert document_part(info, long, 3).is_error
    twins = [info, DocumentInfo("Other", "/else/guide.md", "1" * 64)]
    assert document_list(twins) == (
        "2 documents:\n- /docs/guide.md (Notes, 2 pages)\n- /else/guide.md (Other)"
    )


@pytest.fixture
def chat(tmp_path: Path, qt_asyncio_loop) -> Iterator[tuple[ChatController, ToolScriptedEngine]]:
    engine = ToolScriptedEngine(
        [
            call_markup("search_knowledge", query="Seine river"),
            call_markup("read_document"),
            "It runs through Paris [1].",
        ]
    )
    worker = tool_worker(engine)
    ctl = ChatController(
        Store.open(tmp_path / "chat.sqlite3"),
        worker,
        Preferences(tmp_path / "settings.ini"),
        lambda _progress: tmp_path / "model",
    )
    ctl.knowledge.set_base(FakeKnowledge({"Notes": NOTES}))
    qt_asyncio_loop.run_until_complete(_next(qt_asyncio_loop, worker.modelLoaded, ctl.start))
    yield ctl, engine
    ctl.shutdown()


def test_the_tools_run_on_approval_and_their_results_join_the_tree(chat, qt_asyncio_loop) -> None:
    ctl, engine = chat
    plain = ctl.new_conversation()
    cid = ctl.new_conversation()
    ctl.change_params(cid, {"knowledge": ["Notes"]})
    flow = ctl.tool_flow

    async def scenario() -> None:
        await _next(qt_asyncio_loop, flow.approvalNeeded, lambda: ctl.send(cid, "Which river?"))
        await _next(qt_asyncio_loop, flow.approvalNeeded, lambda: flow.approve(cid))
        await _next(
            qt_asyncio_loop,
            ctl.worker.generationFinished,
            lambda: flow.approve(cid),
            lambda finished: not finished.tool_calls,
        )

    qt_asyncio_loop.run_until_complete(scenario())
    offered = {t["function"]["name"] for t in engine.offered[0]}
    assert {"search_knowledge", "read_document", "search_conversations"} <= offered
    _user, _call, found, _again, listed, answer = ctl.store.active_path(cid)
    assert (found.role, found.tool_name) == ("tool", "search_knowledge")
    assert found.content == (
        "1 excerpt for 'Seine river':\n\n[1] Collection: Notes · File: guide.md\n"
        "```\nThe Seine runs through Paris.\n```"
    )
    assert listed.content == "2 documents:\n- guide.md (Notes)\n- rome.md (Notes)"
    assert answer.content == "It runs through Paris [1]."

    engine.replies.append("Plain.")
    qt_asyncio_loop.run_until_complete(
        _next(qt_asyncio_loop, ctl.worker.generationFinished, lambda: ctl.send(plain, "hi"))
    )
    offered = {t["function"]["name"] for t in engine.offered[-1]}
    assert "search_conversations" in offered and not offered & {"search_knowledge"}
