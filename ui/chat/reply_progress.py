"""The line on a reply that has no text yet: how far the model has read the prompt, and how long
the rest should take ("Reading the prompt… 512 / 1,847 tokens · about 6 s left")."""

from __future__ import annotations

import time
from collections.abc import Callable

STOPPING = "Stopping…"
# Progress reports can reach the window in bursts (the worker's queue): the speed is measured
# over at least this long before the time left is guessed.
MIN_MEASURED_S = 0.5


def reading_note(done: int, total: int, seconds_left: float | None) -> str:
    """The prompt-reading line; the estimate only once there is one."""
    note = f"Reading the prompt… {done:,} / {total:,} tokens"
    if seconds_left is None:
        return note
    if seconds_left < 1:
        return f"{note} · under a second left"
    if seconds_left < 90:
        return f"{note} · about {round(seconds_left)} s left"
    return f"{note} · about {round(seconds_left / 60)} min left"


class PrefillEstimate:
    """Times one prompt's reading from its progress reports and estimates what is left."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._first: tuple[float, int] | None = None

    def note(self, done: int, total: int) -> str:
        """The line to show for `done` of `total` tokens read; "" once the prompt is read."""
        now = self._clock()
        if done >= total:
            self._first = None
            return ""
        if self._first is None or done < self._first[1]:
            self._first = (now, done)  # a new prompt
            return reading_note(done, total, None)
        started, done_then = self._first
        if done == done_then or now - started < MIN_MEASURED_S:
            return reading_note(done, total, None)
        rate = (done - done_then) / (now - started)
        return reading_note(done, total, (total - done) / rate)
