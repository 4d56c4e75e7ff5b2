"""Tool use in the message tree: a tool result stored under the call it answers, and a reply's
calls edited (a sibling reply, so the original calls and what followed them stay).

A reply's parallel calls are answered in a chain: the first result under the reply, the next
under that result, and the model's continuation under the last, so the active path reads as
the prompt does.
"""

from __future__ import annotations

from typing import Any

from app.store.records import (
    InvalidInputError,
    Message,
    Status,
    check_status,
    check_text,
)
from app.store.tree import MessageTree

_RESULT_STATUSES = frozenset({"complete", "error"})


class ToolMessages(MessageTree):
    """The tool operations of `Store`."""

    def add_tool_result(
        self,
        parent_id: int,
        tool_call_id: str,
        tool_name: str,
        content: str,
        status: Status = "complete",
        stats: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> Message:
        """A `tool` message answering call `tool_call_id` of the nearest reply at or above
        `parent_id`, made the active leaf. `status` "error": the call failed (timed out, the
        server crashed, the person denied it); `content` says so to the model."""
        check_text(content, "The tool result", allow_empty=True)
        check_status(status, _RESULT_STATUSES)
        reply = self._calling_reply(parent_id)
        if not any(call["id"] == tool_call_id for call in reply.tool_calls):
            raise InvalidInputError(
                f"Message {reply.id} made no tool call with id {tool_call_id!r}."
            )
        return self._add_message(
            reply.conversation_id,
            parent_id,
            "tool",
            content,
            status,
            None,
            None,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            stats=stats,
            error=error,
        )

    def edit_tool_calls(self, message_id: int, tool_calls: list[dict[str, Any]]) -> Message:
        """A sibling of reply `message_id` with the same text and these calls (arguments edited
        by the person), made active; the original and what followed it stay."""
        original = self.get_message(message_id)
        if original.role != "assistant" or not original.tool_calls:
            raise InvalidInputError(f"Message {message_id} made no tool calls to edit.")
        if not tool_calls:
            raise InvalidInputError("An edited reply keeps at least one tool call.")
        return self._add_message(
            original.conversation_id,
            original.parent_id,
            "assistant",
            original.content,
            "complete",
            original.model_id,
            original.params,
            tool_calls=tool_calls,
            stats={**original.stats, "calls_edited": True},
            reasoning=original.reasoning,
        )

    def _calling_reply(self, message_id: int) -> Message:
        """The reply whose calls the tool messages at and below `message_id` answer."""
        for message in reversed(self._path_to(message_id)):
            if message.role == "assistant":
                return message
            if message.role == "user":
                break
        raise InvalidInputError(f"No reply with tool calls leads to message {message_id}.")
