"""Streamed text handed on at a pace the GUI can show: text deltas collected and emitted at most
`MAX_UPDATES_PER_SECOND` times a second, however fast tokens arrive (the worker's replies,
Regenerate xN, a remote server's replies).
"""

from __future__ import annotations

import time
from collections.abc import Callable

# The GUI sees at most this many token updates a second, however fast tokens arrive.
MAX_UPDATES_PER_SECOND = 60
_UPDATE_INTERVAL_S = 1.0 / MAX_UPDATES_PER_SECOND


class TokenCoalescer:
    """Collects text deltas — one stream, or several side by side (a reply's reasoning and its
    answer) — and hands them on at most MAX_UPDATES_PER_SECOND times a second, as
    `emit(*joined)`, one joined string per stream."""

    def __init__(self, emit: Callable[..., None]) -> None:
        self._emit = emit
        self._pending: list[tuple[str, ...]] = []
        self._last = 0.0

    def add(self, *deltas: str) -> None:
        self._pending.append(deltas)
        now = time.monotonic()
        if now - self._last >= _UPDATE_INTERVAL_S:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        joined = ["".join(stream) for stream in zip(*self._pending, strict=True)]
        if any(joined):
            self._emit(*joined)
        self._pending.clear()
        self._last = time.monotonic() if now is None else now
