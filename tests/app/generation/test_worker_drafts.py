"""The worker's draft model loads under its main model's float32 policy: with "never" a 4-bit
draft stays 4-bit (the memory the person kept), with "always" it runs as float32 like its main
model; a new main model's policy applies to the next draft."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.generation.worker_drafts import WorkerDrafts
from inference import load_model


class Engine:
    def __init__(self) -> None:
        self.draft: Any = None

    def set_draft_model(self, loaded: Any) -> None:
        self.draft = loaded


def test_a_draft_loads_under_the_main_model_s_policy(quantized_models_dir: Path) -> None:
    draft = quantized_models_dir / "llama"
    drafts, engine = WorkerDrafts(load_model), Engine()
    drafts.follow("never")
    assert drafts.prepare(engine, "main", draft) == (True, None)
    assert engine.draft.weights_form == "4-bit"
    kept = drafts.weights_bytes
    drafts.reset()  # another main model, loaded with "always"
    drafts.follow("always")
    assert drafts.prepare(engine, "main", draft) == (True, None)
    assert engine.draft.weights_form == "float32 (from 4-bit)"
    assert drafts.weights_bytes > kept
