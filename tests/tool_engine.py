"""A scripted engine whose model takes tools (Qwen's Hermes format), for the controller's and the
window's tool flows: each queued reply is streamed as written, call markup included, and read
back as the real engine reads a reply offered tools (its calls with ids, its answer without
them, finish reason "tool_calls")."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from inference.toolcalls.formats import parse_reply
from tests.ui.window_harness import ScriptedEngine, ScriptedResult, scripted_worker

TOOL_FORMAT = "hermes"


def call_markup(name: str, **arguments: Any) -> str:
    """A call as a Qwen model writes it."""
    body = json.dumps({"name": name, "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call>"


@dataclass
class ToolResultStub(ScriptedResult):
    tool_calls: tuple[dict[str, Any], ...] = ()
    content: str | None = None


class ToolScriptedEngine(ScriptedEngine):
    """Records the tools each request offered (`offered`) beside its messages (`prompts`)."""

    def __init__(self, replies: list[str], **kwargs: Any) -> None:
        super().__init__(replies, **kwargs)
        self.offered: list[list[dict[str, Any]]] = []
        self._ids = itertools.count(1)

    def generate(self, messages: list[dict], params: Any, **kwargs: Any) -> Any:
        tools = list(kwargs.get("tools") or [])
        self.offered.append(tools)
        result = super().generate(messages, params, **kwargs)
        if not tools or result.finish_reason == "cancelled":
            return result
        parsed = parse_reply(result.text, TOOL_FORMAT)
        calls = tuple(
            {"id": f"call_{next(self._ids)}", "name": c.name, "arguments": c.arguments}
            for c in parsed.tool_calls
        )
        reason = "tool_calls" if calls else result.finish_reason
        return ToolResultStub(result.text, reason, result.stats, (), calls, parsed.content or "")

    def count_prompt_tokens(
        self, messages: list[dict], template_kwargs: Any = None, tools: Any = None
    ) -> int:
        return sum(len(str(m.get("content") or "")) // 4 + 4 for m in messages)


def tool_worker(engine: ToolScriptedEngine) -> Any:
    """A worker whose model is `engine`, reporting a template that takes tools."""
    return scripted_worker(engine, tool_format=TOOL_FORMAT)
