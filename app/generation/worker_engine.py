"""The engine as the inference worker sees it: what the worker needs of one (`EngineLike`) and
how it builds one from a model folder on its own thread (`default_engine_factory`).

`inference` is imported inside the factory only, on the worker thread: importing `app` must not
load MLX (the protocol's types are imported for the type checker alone).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.generation.worker_events import ModelLoaded

if TYPE_CHECKING:
    import threading
    from collections.abc import Hashable, Mapping, Sequence

    from inference import GenerationResult, LoadedModel, SamplingParams
    from inference.prompt.context_fit import Overflow


_log = logging.getLogger(__name__)
# In the caches folder: the matrix layout measured for each CPU, BLAS and model shape.
LAYOUT_MEMORY = "cpu-layout.json"


class EngineLike(Protocol):
    """What the worker and the jobs it runs need of an engine; `inference.Engine` is the real
    one (its methods say what each does)."""

    @property
    def model(self) -> LoadedModel: ...

    @property
    def context_length(self) -> int | None: ...

    @property
    def cache_budget_bytes(self) -> int: ...
    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None: ...

    @property
    def disk_budget_bytes(self) -> int: ...
    @disk_budget_bytes.setter
    def disk_budget_bytes(self, value: int) -> None: ...

    @property
    def disk_error(self) -> str | None: ...

    def generate(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None = None,
        conversation_id: Hashable = None,
        on_token: Callable[[str], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
        overflow: Overflow = "truncate_middle",
        template_kwargs: Mapping[str, Any] | None = None,
        continue_reply: bool = False,
        context_limit: int | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> GenerationResult: ...
    def complete(
        self,
        prompt: str | Sequence[int],
        params: SamplingParams | None = None,
        conversation_id: Hashable = None,
        on_token: Callable[[str], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationResult: ...
    def generate_variants(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None = None,
        seeds: Sequence[int | None] = (),
        conversation_id: Hashable = None,
        on_token: Callable[[int, str], None] | None = None,
        cancel: threading.Event | Sequence[threading.Event] | None = None,
        overflow: Overflow = "truncate_middle",
        context_limit: int | None = None,
    ) -> list[GenerationResult]: ...
    def count_prompt_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int: ...
    def cache_bytes(self) -> int: ...
    def disk_bytes(self) -> int: ...
    def clear_cache(self) -> None: ...
    def forget(self, conversation_id: Hashable, keep_saved: bool = False) -> None: ...
    def save_pending(self, seconds: float = 0.05) -> bool: ...
    def clear_saved_caches(self) -> None: ...
    def set_draft_model(self, draft: LoadedModel | None) -> None: ...


EngineFactory = Callable[[Path, Callable[[str, int, int], None]], tuple[EngineLike, ModelLoaded]]


def default_engine_factory(
    path: Path,
    progress: Callable[[str, int, int], None],
    cache_dir: Path | None = None,
    cpu_float32: Callable[[], str] | None = None,
    layout: str = "auto",
    layout_forced_by: str = "",
) -> tuple[EngineLike, ModelLoaded]:
    """Load an MLX model folder and build an Engine (runs on the worker thread); with
    `cache_dir`, its caches are saved there and found again after a restart, and the matrix
    layout measured for this machine is remembered beside them (`LAYOUT_MEMORY`). `cpu_float32`
    reads the preference for float32 weights on the CPU at each load ("auto" without it);
    `layout` ("auto", "transposed", "stored") forces a matrix layout, `layout_forced_by` saying
    who asks for it."""
    from inference import Engine, load_model
    from inference.cpu.fast_blas import in_use, outcome, report_once
    from inference.cpu.layout_choice import LayoutRequest
    from inference.loading.identity import model_identity
    from inference.prompt.reasoning import ReasoningFormat
    from inference.prompt.template_switches import template_switches
    from inference.toolcalls.detect import tool_format_for

    progress("Loading weights", 0, 1)
    policy = cpu_float32() if cpu_float32 else "auto"
    memory = cache_dir / LAYOUT_MEMORY if cache_dir is not None else None
    model = load_model(path, policy, LayoutRequest(layout, memory, layout_forced_by))
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
        matrix_layout=model.matrix_layout.describe(),
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
