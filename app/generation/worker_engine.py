"""The engine as the inference worker sees it: what the worker needs of one (`EngineLike`) and
how it builds one from a model folder on its own thread (`default_engine_factory`).

`inference` is imported inside the factory only, on the worker thread: importing `app` must not
load MLX.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.generation.worker_events import ModelLoaded

if TYPE_CHECKING:
    from collections.abc import Sequence


_log = logging.getLogger(__name__)

class EngineLike(Protocol):
    """What the worker needs of an engine; `inference.Engine` is the real one."""

    context_length: int
    cache_budget_bytes: int
    disk_budget_bytes: int

    def generate(self, messages: Sequence[dict], params: Any, **kwargs: Any) -> Any: ...
    def complete(self, prompt: str | Sequence[int], params: Any, **kwargs: Any) -> Any: ...
    def count_prompt_tokens(
        self, messages: Sequence[dict], template_kwargs: dict | None = None
    ) -> int: ...
    def cache_bytes(self) -> int: ...
    def disk_bytes(self) -> int: ...
    def clear_cache(self) -> None: ...
    def forget(self, conversation_id: object, keep_saved: bool = False) -> None: ...
    def save_pending(self, seconds: float) -> bool: ...
    def clear_saved_caches(self) -> None: ...
    def set_draft_model(self, draft: Any) -> None: ...

    @property
    def disk_error(self) -> str | None: ...


EngineFactory = Callable[[Path, Callable[[str, int, int], None]], tuple[EngineLike, ModelLoaded]]


def default_engine_factory(
    path: Path,
    progress: Callable[[str, int, int], None],
    cache_dir: Path | None = None,
    cpu_float32: Callable[[], str] | None = None,
) -> tuple[EngineLike, ModelLoaded]:
    """Load an MLX model folder and build an Engine (runs on the worker thread); with
    `cache_dir`, its caches are saved there and found again after a restart. `cpu_float32`
    reads the preference for float32 weights on the CPU at each load ("auto" without it)."""
    from inference import Engine, load_model
    from inference.cpu.fast_blas import in_use, outcome, report_once
    from inference.loading.identity import model_identity
    from inference.prompt.reasoning import ReasoningFormat
    from inference.prompt.template_switches import template_switches
    from inference.toolcalls.detect import tool_format_for

    progress("Loading weights", 0, 1)
    policy = cpu_float32() if cpu_float32 else "auto"
    model = load_model(path, policy)
    progress("Loading weights", 1, 1)
    report_once(_log)
    engine = Engine(model, cache_dir=cache_dir)
    switches = template_switches(model.tokenizer.chat_template)
    info = ModelLoaded(
        model_id=model.model_id,
        path=str(path),
        context_length=engine.context_length,
        model_type=model.model_type,
        weights_bytes=model.weights_bytes,
        weights_form=model.weights_form,
        cpu_float32=policy,
        blas=outcome().describe(),
        blas_in_use=in_use(),
        reasons=ReasoningFormat.of(model.tokenizer) is not None,
        think_switch=switches.think,
        effort_switch=switches.effort,
        effort_levels=switches.effort_levels,
        tool_format=tool_format_for(model.tokenizer.chat_template),
        vision=model.vision is not None,
        text_only_reason=model.text_only_reason,
        identity=model_identity(model),
    )
    return engine, info
