"""Starting the real app for window tests: `ui.main.launch` on a temporary data folder, the real
inference worker, and either a tiny real model or a scripted engine whose replies a test picks
(a random-weight model cannot be made to write a given text, e.g. a `<script>` tag)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from app.generation.worker import InferenceWorker
from app.generation.worker_events import ModelLoaded
from tests.cacheless_engine import CachelessEngine
from tests.tiny_models import NO_EOS
from ui.main import Launched, launch, parse_args

# The offscreen platform says so for every top-level window; nothing is wrong.
OFFSCREEN_NOISE = ("does not support propagateSizeHints", "does not support raise")

# End-of-sequence is banned, so a reply runs to max_tokens (or until stopped) on any random model.
SHORT = {"temperature": 0.0, "max_tokens": 6, "seed": 0, "logit_bias": NO_EOS}
ENDLESS = {"temperature": 0.0, "max_tokens": 4000, "seed": 0, "logit_bias": NO_EOS}


def start_app(
    qtbot: Any,
    data_dir: Path,
    model: Path | None,
    worker: InferenceWorker | None = None,
    wait_ready: bool = True,
) -> Launched:
    argv = ["--data-dir", str(data_dir)] + (["--model", str(model)] if model else [])
    launched = launch(parse_args(argv), worker=worker)
    assert launched is not None
    qtbot.addWidget(launched.window)  # closed (and the worker joined) at teardown
    # Shortcuts (Esc, Alt+Left, the menu keys) only fire in the active window.
    launched.window.activateWindow()
    qtbot.waitUntil(launched.window.isActiveWindow, timeout=5000)
    if wait_ready:
        wait_ready_model(qtbot, launched)
    return launched


def wait_ready_model(qtbot: Any, launched: Launched, timeout_ms: int = 60000) -> None:
    qtbot.waitUntil(lambda: launched.controller.model_state == "ready", timeout=timeout_ms)


@contextmanager
def running_app(
    qtbot: Any, data_dir: Path, model: Path | None, worker: InferenceWorker | None = None
) -> Iterator[Launched]:
    launched = start_app(qtbot, data_dir, model, worker)
    try:
        yield launched
    finally:
        launched.window.close()


def set_params(launched: Launched, params: dict[str, Any]) -> int:
    window = launched.window
    cid = window.current_conversation_id
    assert cid is not None
    launched.controller.update_settings(cid, params=params)
    return cid


def send_and_wait(qtbot: Any, launched: Launched, text: str, timeout_ms: int = 30000) -> None:
    """Type into the composer and press Enter, as a person would; wait for the reply's end."""
    composer = launched.window.composer
    composer.edit.setFocus()
    qtbot.keyClicks(composer.edit, text)
    with qtbot.waitSignal(
        launched.controller.busyChanged, timeout=timeout_ms, check_params_cb=lambda busy: not busy
    ):
        qtbot.keyClick(composer.edit, "\r")


def click_in_next_message_box(button_text: str) -> None:
    """Answer the next modal QMessageBox (it blocks in exec) by clicking `button_text`."""

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, answer)
            return
        for button in box.findChildren(QPushButton):
            if button.text().replace("&", "") == button_text:
                button.click()
                return
        raise AssertionError(f"no {button_text!r} button in {box.text()!r}")

    QTimer.singleShot(0, answer)


@dataclass
class ScriptedResult:
    text: str
    finish_reason: str
    stats: dict[str, Any]
    dropped_messages: tuple[int, ...] = ()


class ScriptedEngine(CachelessEngine):
    """Streams the replies a test queued, a few characters at a time, honouring cancel."""

    context_length = 4096
    cache_budget_bytes = 0

    def __init__(self, replies: list[str], chars_per_step: int = 6, step_s: float = 0.004):
        self.replies = list(replies)
        self.chars_per_step = chars_per_step
        self.step_s = step_s
        self.prompts: list[list[dict]] = []

    def generate(
        self,
        messages: list[dict],
        params: Any,
        *,
        on_token: Any = None,
        cancel: threading.Event | None = None,
        **_kwargs: Any,
    ) -> ScriptedResult:
        self.prompts.append(list(messages))
        reply = self.replies.pop(0) if self.replies else "(no more scripted replies)"
        started = time.perf_counter()
        sent = 0
        reason = "stop"
        while sent < len(reply):
            if cancel is not None and cancel.is_set():
                reason = "cancelled"
                break
            piece = reply[sent : sent + self.chars_per_step]
            sent += len(piece)
            if on_token is not None:
                on_token(piece)
            time.sleep(self.step_s)
        elapsed = max(time.perf_counter() - started, 1e-6)
        steps = max(1, sent // self.chars_per_step)
        stats = {
            "prompt_tokens": 10,
            "cached_tokens": 4,
            "prefill_tokens": 6,
            "generated_tokens": steps,
            "ttft_s": self.step_s,
            "prefill_tps": 1000.0,
            "decode_tps": steps / elapsed,
        }
        return ScriptedResult(reply[:sent], reason, stats)

    def count_prompt_tokens(self, messages: list[dict], template_kwargs: Any = None) -> int:
        return sum(len(m["content"]) // 4 + 4 for m in messages)


class _TagTokenizer:
    """What the worker's reply splitter reads of a tokenizer: a template writing <think> tags,
    and a prompt that leaves no block open."""

    chat_template = "{{ '<think>' }}{{ '</think>' }}"

    def get_vocab(self) -> dict[str, int]:
        return {}

    def apply_chat_template(self, messages: list[dict], **_kwargs: Any) -> str:
        return "<|im_start|>assistant\n"


class ReasoningEngine(ScriptedEngine):
    """Scripted replies through the real reasoning split; records each request's switches."""

    model = SimpleNamespace(tokenizer=_TagTokenizer())

    def __init__(self, replies: list[str], **kwargs: Any) -> None:
        super().__init__(replies, **kwargs)
        self.template_kwargs: list[dict] = []

    def generate(self, messages: list[dict], params: Any, **kwargs: Any) -> Any:
        self.template_kwargs.append(dict(kwargs.get("template_kwargs") or {}))
        return super().generate(messages, params, **kwargs)


def scripted_worker(engine: ScriptedEngine, **info: Any) -> InferenceWorker:
    """A worker whose model is `engine`; `info` sets more of the model info it reports (e.g.
    the template's `think_switch`)."""

    def factory(path: Path, progress: Any) -> tuple[ScriptedEngine, ModelLoaded]:
        facts: dict[str, Any] = {
            "model_id": "scripted",
            "model_type": "scripted",
            "weights_bytes": 1_000_000,
            **info,
        }
        return engine, ModelLoaded(path=str(path), context_length=engine.context_length, **facts)

    return InferenceWorker(engine_factory=factory)
