"""Scripted engines for the reply-state tests and screenshots: a long prompt read slowly, and a
reply cut off at its length limit."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from tests.ui.window_harness import ScriptedEngine, ScriptedResult

PROMPT_TOKENS = 2000


class LongPromptEngine(ScriptedEngine):
    """Reads a 2,000-token prompt in 100-token steps of 0.1 s before streaming its reply, and
    sees a cancel only between steps, like the real engine between prefill chunks."""

    def generate(
        self,
        messages: list[dict],
        params: Any,
        *,
        on_progress: Any = None,
        cancel: threading.Event | None = None,
        **kwargs: Any,
    ) -> ScriptedResult:
        for done in range(0, PROMPT_TOKENS, 100):
            if on_progress is not None:
                on_progress(done, PROMPT_TOKENS)
            time.sleep(0.1)
            if cancel is not None and cancel.is_set():
                stats = {"prompt_tokens": PROMPT_TOKENS, "generated_tokens": 0}
                return ScriptedResult("", "cancelled", stats)
        if on_progress is not None:
            on_progress(PROMPT_TOKENS, PROMPT_TOKENS)
        return super().generate(messages, params, cancel=cancel, **kwargs)


class CutOffEngine(ScriptedEngine):
    """Its first reply ends at the length limit; records how each reply was asked for."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.continued: list[bool] = []

    def generate(
        self, messages: list[dict], params: Any, *, continue_reply: bool = False, **kwargs: Any
    ) -> ScriptedResult:
        self.continued.append(continue_reply)
        result = super().generate(messages, params, **kwargs)
        return (
            result
            if len(self.continued) > 1
            else dataclasses.replace(result, finish_reason="length")
        )
