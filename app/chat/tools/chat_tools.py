"""Tool use as the chat controller composes it: the MCP servers and approvals (`ToolSession`),
the tool loop (`ToolFlow`) fed by replies that end with calls, and the tool schemas a reply is
offered: the chat's allowed tools, for a remote model (its server reads the calls) or a local
model whose chat template takes tools (the worker reports its tool-call format with the model's
info). A remote model's calls come back as a local one's do, so the loop is the same for both."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from app.chat.tools import turns as tool_turns
from app.chat.tools.choice import chat_tools
from app.chat.tools.flow import ToolFlow
from app.chat.tools.runs import ToolRunner, app_loop
from app.chat.tools.session import ToolSession
from app.mcp.tool_info import ToolLabel
from app.remote.connections import is_remote
from app.settings import Preferences, chat_context_length
from app.store.conversations import Store, StoreError
from app.store.records import Message

if TYPE_CHECKING:
    from app.chat.knowledge.tools import KnowledgeTools
    from app.generation.worker_events import ModelLoaded


class ChatTools(QObject):
    def __init__(
        self,
        store: Store,
        preferences: Preferences,
        model_info: Callable[[], ModelLoaded | None],
        continue_reply: Callable[[int, int], bool],
        data_dir: Path,
        loop: Callable[[], asyncio.AbstractEventLoop | None] = app_loop,
        knowledge: KnowledgeTools | None = None,
        parent: QObject | None = None,
    ) -> None:
        """`continue_reply(conversation_id, parent_id)` starts the model's reply below the last
        result of a round of calls; `knowledge` adds the knowledge tools."""
        super().__init__(parent)
        self._store = store
        self._preferences = preferences
        self._model_info = model_info
        self.session = ToolSession(
            data_dir,
            loop,
            lambda: preferences.started_tool_servers,
            preferences.mark_tool_server_started,
            parent=self,
        )
        self.flow = ToolFlow(
            store,
            ToolRunner(store, lambda: self.session.running_servers, loop, knowledge),
            self.session.approvals,
            continue_reply,
            max_calls=lambda: preferences.max_tool_calls,
            context_tokens=self._context_tokens,
            default_servers=lambda: preferences.default_tool_servers,
            parent=self,
        )

    def schemas(self, conversation_id: int, remote: bool) -> list[dict[str, Any]]:
        """The tools offered to the model for a reply in this chat (OpenAI-style schemas);
        none for a local model whose template takes no tools."""
        info = self._model_info()
        if not remote and (info is None or info.tool_format is None):
            return []
        try:
            params = self._store.get_conversation(conversation_id).params
        except StoreError:
            return []
        available = self.flow.runner.available()
        tools = chat_tools(available, params, self._preferences.default_tool_servers)
        return [tool.openai_schema() for tool in tools]

    def end_loop(self, conversation_id: int) -> None:
        """A new reply starts: a call still asked about (or the limit's question) is dropped;
        one running finishes and keeps its result."""
        if not self.flow.is_running(conversation_id):
            self.flow.stop(conversation_id)

    def label(self, conversation_id: int, model_name: str) -> ToolLabel:
        """The tool a model calls `model_name` in this chat, as the person is shown it."""
        try:
            tool = self.flow.tool_for(conversation_id, model_name)
        except StoreError:
            tool = None
        return tool.label if tool is not None else ToolLabel("", model_name)

    def call_labels(self, conversation_id: int, path: list[Message]) -> dict[str, ToolLabel]:
        """Every call on `path` by id, as the person is shown it: the tool its result says ran,
        else the chat's tool of that name."""
        ran = tool_turns.result_labels(path)
        return {
            call["id"]: ran.get(call["id"]) or self.label(conversation_id, call["name"])
            for message in path
            for call in message.tool_calls
        }

    def _context_tokens(self, conversation_id: int) -> int | None:
        """The chat's context, which sizes a result's cap: a remote model's is not known here
        (only the chat's own limit counts), the local model's is."""
        try:
            conversation = self._store.get_conversation(conversation_id)
        except StoreError:
            return None  # the chat is gone: the cap that no context narrows
        local = None if is_remote(conversation.model_id) else self._model_info()
        return chat_context_length(local.context_length if local else None, conversation.params)
