"""Load an MLX-format model folder with mlx-lm, refusing anything that would run its own code.

Only `model*.safetensors` weights are read (never pickles), and `trust_remote_code` is never
passed: a config that points at Python code in the folder (`auto_map`, `model_file`) is refused.
The architecture comes from Branchwise's registry (`inference.models`), which knows mlx-lm's
models through its public names and our own. Loading runs on the inference worker thread, which
then owns the model's arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlx.utils import tree_flatten
from mlx_lm.utils import load_model as load_mlx_model
from mlx_lm.utils import load_tokenizer

from inference.cpu.float32_weights import DEFAULT_POLICY, POLICIES, apply_policy
from inference.cpu.layout_choice import MEASURE_HERE, NOT_APPLICABLE, LayoutChoice, LayoutRequest
from inference.errors import ModelLoadError
from inference.loading.folder_check import check_before_load
from inference.loading.model_files import (
    WEIGHTS_PATTERN,
    context_length,
    has_tokenizer,
    needs_remote_code,
    read_json_object,
)
from inference.models.registry import get_model_classes
from inference.prompt.template_check import check_template
from inference.vision.loading import VisionSupport, load_vision
from inference.vision.support import is_vision_config, text_only_reason

if TYPE_CHECKING:
    import mlx.nn as nn
    from mlx_lm.tokenizer_utils import TokenizerWrapper


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A model ready for the engine, with the facts the app shows about it."""

    model: nn.Module = field(repr=False)
    tokenizer: TokenizerWrapper = field(repr=False)
    config: dict[str, Any] = field(repr=False)
    path: Path
    model_type: str
    context_length: int | None
    weights_bytes: int
    # How the weights run: "float32 (from 4-bit)", "4-bit", "bfloat16"... (inference.cpu).
    weights_form: str = ""
    # How its float32 matrices lie on the CPU, and why (inference.cpu.layout_choice).
    matrix_layout: LayoutChoice = NOT_APPLICABLE
    # The vision parts when the model reads images (inference.vision), else None; a vision
    # model loaded as text only says why in `text_only_reason`.
    vision: VisionSupport | None = field(default=None, repr=False)
    text_only_reason: str = ""

    @property
    def model_id(self) -> str:
        """A short name for the model: its folder's name."""
        return self.path.name


def unsupported_message(model_type: str) -> str:
    """The refusal for a model type neither mlx-lm nor Branchwise has code for."""
    return f"The model type '{model_type}' is not supported by mlx-lm {metadata.version('mlx-lm')}."


def load_model(
    path: str | Path, cpu_float32: str = DEFAULT_POLICY, layout: LayoutRequest = MEASURE_HERE
) -> LoadedModel:
    """Load the MLX model folder at `path` (config.json, safetensors, tokenizer).

    `cpu_float32` ("auto", "always", "never") says when the weights become float32 on MLX's
    CPU backend (inference.cpu.float32_weights); `layout` how their matrices are laid out there
    (measured, remembered or forced: inference.cpu.layout_choice).

    Raises ModelLoadError with a message for the person using the app when the folder is
    missing, incomplete, corrupt, of a type mlx-lm does not know, or needs remote code.
    """
    if cpu_float32 not in POLICIES:
        raise ValueError(f"Unknown weights policy {cpu_float32!r}; choose one of {POLICIES}.")
    folder = Path(path).expanduser()
    config = _read_json(folder / "config.json", folder)
    if config is None:
        raise ModelLoadError(f"{folder} has no config.json, so it is not an MLX model folder.")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ModelLoadError(f"config.json in {folder} does not say which model type it is.")
    if needs_remote_code(config, _read_json(folder / "tokenizer_config.json", folder) or {}):
        raise ModelLoadError(
            f"The model type '{model_type}' needs Python code shipped in the model folder "
            "(trust_remote_code); Branchwise never runs such code."
        )
    reason = text_only_reason(folder, config) if is_vision_config(config) else None
    sees = is_vision_config(config) and reason is None
    if not sees:
        try:
            get_model_classes(config)
        except ValueError as error:
            message = unsupported_message(model_type)
            raise ModelLoadError(f"{message} {reason}" if reason else message) from error
    if not list(folder.glob(WEIGHTS_PATTERN)):
        raise ModelLoadError(f"{folder} has no {WEIGHTS_PATTERN} weight files.")
    if not has_tokenizer(folder):
        raise ModelLoadError(f"{folder} has no tokenizer (tokenizer.json or tokenizer.model).")
    vision = None
    try:
        check_before_load(folder)
        tokenizer = load_tokenizer(folder, eos_token_ids=config.get("eos_token_id"))
        if sees:
            model, vision = load_vision(folder, config, tokenizer)
            _adopt_processor_template(tokenizer, folder)
        else:
            model, config = load_mlx_model(folder, get_model_classes=get_model_classes)
        form, matrix_layout = apply_policy(model, config, cpu_float32, layout)
    except Exception as error:  # mlx, safetensors and transformers raise many kinds.
        raise ModelLoadError(f"The model in {folder} could not be loaded: {error}") from error
    check_template(tokenizer, f"The chat template of {folder.name}")
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        config=config,
        path=folder,
        model_type=model_type,
        context_length=context_length(config),
        weights_bytes=sum(a.nbytes for _, a in tree_flatten(model.parameters())),
        weights_form=form,
        matrix_layout=matrix_layout,
        vision=vision,
        text_only_reason=reason or "",
    )


def _adopt_processor_template(tokenizer: TokenizerWrapper, folder: Path) -> None:
    """A vision model's chat template is the processor's (chat_template.json or .jinja) when
    the folder has one, as mlx-vlm reads it: that is the template that places images."""
    stored = read_json_object(folder / "chat_template.json") or {}
    template = stored.get("chat_template")
    jinja = folder / "chat_template.jinja"
    if not isinstance(template, str) and jinja.is_file():
        template = jinja.read_text(encoding="utf-8")
    if isinstance(template, str):
        tokenizer._tokenizer.chat_template = template


def _read_json(file: Path, folder: Path) -> dict[str, Any] | None:
    if not folder.is_dir():
        raise ModelLoadError(f"There is no model folder at {folder}.")
    try:
        return read_json_object(file)
    except ValueError as error:
        raise ModelLoadError(str(error)) from error
