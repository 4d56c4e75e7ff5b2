"""Screenshots of Regenerate ×3 side by side and of the Branch Map (light and dark), saved into
tests/screenshots/ for a person to look at; each must be a real picture."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from inference.engine.cache_state import CacheTier, PathCacheState
from tests.ui.screenshots.test_screenshots import REPLIES, _save
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    ScriptedResult,
    running_app,
    scripted_worker,
    send_and_wait,
    set_params,
)

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

VARIANTS = [
    "Open the file in a `with` block and loop over it: Python reads one line at a time, so "
    "even a huge file uses little memory.",
    "Loop over the file object itself. Each pass gives the next line, newline included; "
    "`rstrip()` removes it.",
    "Use `for line in open(path)`, but prefer a `with` block so the file is closed even when "
    "an error stops the loop.",
]
TIERS: list[CacheTier] = ["memory", "memory", "disk", "none"]


class ScriptedVariantsEngine(ScriptedEngine):
    """Also streams scripted versions side by side and reports scripted cache states."""

    def generate_variants(
        self,
        messages: list[dict],
        params: Any,
        seeds: list[int],
        on_token: Any = None,
        cancel: Any = None,
        **_kwargs: Any,
    ) -> list[ScriptedResult]:
        texts = [VARIANTS[i % len(VARIANTS)] for i in range(len(seeds))]
        sent = [0] * len(texts)
        while any(s < len(t) for s, t in zip(sent, texts, strict=True)):
            for i, text in enumerate(texts):
                piece = text[sent[i] : sent[i] + self.chars_per_step + i]
                sent[i] += len(piece)
                if piece and on_token is not None:
                    on_token(i, piece)
            time.sleep(self.step_s)
        stats = {
            "prompt_tokens": 40,
            "cached_tokens": 39,
            "prefill_tokens": 1,
            "generated_tokens": 30,
            "ttft_s": 0.04,
            "prefill_tps": 25.0,
            "decode_tps": 48.5,
        }
        return [ScriptedResult(t, "stop", dict(stats)) for t in texts]

    def cache_state(self, prompts: list[list[dict]]) -> list[PathCacheState]:
        states = []
        for i, prompt in enumerate(prompts):
            tokens = sum(len(m["content"]) // 4 + 4 for m in prompt)
            tier = TIERS[i % len(TIERS)]
            memory = tokens - 1 if tier == "memory" else 0
            disk = tokens - 1 if tier == "disk" else 0
            uncached = tokens - memory - disk
            states.append(PathCacheState(tokens, memory, disk, uncached, disk * 4096, tier))
        return states


def test_screenshots_of_variants_and_branch_map(qtbot, tmp_path: Path) -> None:
    engine = ScriptedVariantsEngine(list(REPLIES), chars_per_step=3, step_s=0.01)
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window, ctl = app.window, app.controller
        window.resize(1100, 760)
        window.set_theme("light")
        window.new_chat()
        set_params(app, {"seed": 1})
        send_and_wait(qtbot, app, "How do I read a file line by line in Python?")
        features = window.compare
        with qtbot.waitSignal(ctl.variants.ended, timeout=20000):
            features.regenerate_last(3)
            qtbot.waitUntil(
                lambda: (
                    features.view is not None
                    and all(c.text.toPlainText() for c in features.view.columns)
                ),
                timeout=10000,
            )
            features.view.resize(1000, 480)
            _save(features.view, "variants-streaming")
        _save(features.view, "variants")
        features.view.columns[1].keep.click()
        send_and_wait(qtbot, app, "Thanks! And for a binary file?")
        # Rates as a real machine measures them (the scripted engine computes nothing).
        features.source.rates.prefill_tps = 850.0
        features.source.rates.restore_tps = 20000.0
        features.map_action.trigger()
        tree = features.dock.tree
        qtbot.waitUntil(
            lambda: tree.topLevelItemCount() > 0 and tree.topLevelItem(0).text(2) not in ("", "–"),
            timeout=10000,
        )
        window.resizeDocks([features.dock], [560], Qt.Orientation.Horizontal)
        _save(window, "branch-map")
        window.set_theme("dark")
        _save(window, "branch-map-dark")
        window.set_theme("light")
