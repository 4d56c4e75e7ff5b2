"""Writing a streaming reply to the store as it grows, without one write per token.

Tokens arrive tens of times a second; the text goes to disk at most once per interval (one
second by default) and always on finish. A crash therefore loses at most the text of the last
interval, and `Store.close()` finishes any writer still open as "interrupted".

A final write that fails (a full disk) is remembered: the writer takes no more text, keeps the
whole of it, and `retry_finish()` (called each second by the app, and by `Store.close()`) writes
it with the status it was given. The store holds every writer strongly until that succeeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from app.store.records import InvalidInputError, Message, Status


class ReplySink(Protocol):
    """What a writer needs of the store (`StreamingReplies`): it is given the store, and never
    imports it, since the store makes the writers."""

    def update_streaming(self, message_id: int, content: str, reasoning: str = "") -> None: ...

    def finish_reply(
        self,
        message_id: int,
        content: str,
        status: Status = "complete",
        stats: dict[str, Any] | None = None,
        error: str | None = None,
        reasoning: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> Message: ...


class ReplyWriter:
    """Get one from `Store.reply_writer(message_id)` after `Store.begin_reply`."""

    def __init__(
        self,
        store: ReplySink,
        message: Message,
        *,
        interval_s: float = 1.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._store = store
        self.message = message  # the reply as begun: where it belongs, if it must be re-created
        self.message_id = message.id
        self._parts = [message.content]
        self._reasoning_parts = [message.reasoning]
        self._dirty = False
        self._done = False
        self._final: tuple[Status, dict[str, Any] | None, str | None] | None = None
        self._tool_calls: list[dict[str, Any]] | None = None
        self._provenance: dict[str, Any] | None = None
        self._interval_s = interval_s
        self._clock = clock or time.monotonic
        self._last_write = self._clock()

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0]

    @property
    def reasoning(self) -> str:
        if len(self._reasoning_parts) > 1:
            self._reasoning_parts = ["".join(self._reasoning_parts)]
        return self._reasoning_parts[0]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The calls given to `finish` (none before it)."""
        return list(self._tool_calls or [])

    @property
    def provenance(self) -> dict[str, Any]:
        """The provenance given to `finish` (none before it)."""
        return dict(self._provenance or {})

    @property
    def done(self) -> bool:
        return self._done

    @property
    def final(self) -> tuple[Status, dict[str, Any] | None, str | None] | None:
        """(status, stats, error) once `finish` was called, even if its write failed."""
        return self._final

    def append(self, text: str, reasoning: str = "") -> None:
        """Add decoded answer text and reasoning; written now only if the last write is an
        interval old."""
        if self._final is not None:
            raise InvalidInputError(f"Reply {self.message_id} is already finished.")
        if not text and not reasoning:
            return
        self._parts.append(text)
        self._reasoning_parts.append(reasoning)
        self._dirty = True
        if self._clock() - self._last_write >= self._interval_s:
            self.flush()

    def flush(self) -> None:
        """Write what has not been written yet (cheap when nothing is pending)."""
        if self._dirty and self._final is None:
            # Set first: a failed write (a full disk) is retried an interval later, not per token.
            self._last_write = self._clock()
            self._store.update_streaming(self.message_id, self.text, self.reasoning)
            self._dirty = False

    def finish(
        self,
        status: Status = "complete",
        stats: dict[str, Any] | None = None,
        error: str | None = None,
        reasoning: str | None = None,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> Message:
        """Write the whole text with its final status ("complete", "stopped", "error",
        "interrupted"); the writer takes no more text, even when the write fails (StoreError):
        `retry_finish` then tries again. `reasoning`, when given, is the final form of the
        streamed reasoning (trimmed once the reply ended); `content`, the final form of the
        answer (a reply that called tools, without the calls' markup) and `tool_calls` its
        calls; `provenance`, where the reply came from (app.store.provenance)."""
        if reasoning is not None:
            self._reasoning_parts = [reasoning]
        if content is not None:
            self._parts = [content]
        if self._final is None:
            self._final = (status, stats, error)
            self._tool_calls = tool_calls
            self._provenance = provenance
        return self.retry_finish()

    def retry_finish(self) -> Message:
        """Write the whole text with the status given to `finish` (raises StoreError again if
        the store still refuses)."""
        if self._final is None:
            raise InvalidInputError(f"Reply {self.message_id} was never finished.")
        status, stats, error = self._final
        message = self._store.finish_reply(
            self.message_id,
            self.text,
            status,
            stats,
            error,
            self.reasoning,
            self._tool_calls,
            self._provenance,
        )
        self._done = True
        return message
