"""mlx-whisper, brought in without the parts Branchwise never runs, and a Whisper folder loaded
after the same checks a chat model's folder gets.

`mlx_whisper.transcribe` imports `mlx_whisper.timing` at its top for word timestamps, and that
module imports numba (LLVM, ~200 MB installed) and scipy (~140 MB) at its own top. Branchwise
never asks for word timestamps, so a stand-in module takes its place in `sys.modules` before
mlx-whisper is imported: transcription runs exactly as it does with the real one (the module is
only called when `word_timestamps=True`), and asking for them says why they are missing.
"""

from __future__ import annotations

import sys
import types
from functools import cache
from pathlib import Path
from typing import Any

from inference.errors import ModelLoadError
from inference.loading.file_limits import read_config
from inference.loading.safetensors_check import check_safetensors
from inference.speech.support import (
    is_multilingual,
    speech_config_problem,
    speech_weights,
    speech_weights_problem,
)

_TIMING = "mlx_whisper.timing"


def _no_word_timestamps(*_args: object, **_kwargs: object) -> None:
    raise NotImplementedError(
        "Word timestamps are not included in Branchwise (they need numba and scipy)."
    )


@cache
def mlx_whisper() -> types.ModuleType:
    """The `mlx_whisper` package, imported once with the word-timestamp stand-in in place."""
    if _TIMING not in sys.modules:
        stand_in = types.ModuleType(
            _TIMING, "Word timestamps: not included (see inference.speech)."
        )
        stand_in.__dict__["add_word_timestamps"] = _no_word_timestamps
        sys.modules[_TIMING] = stand_in
    import mlx_whisper as package  # after the stand-in: its transcribe module imports timing

    return package


class SpeechModel:
    """A Whisper model loaded on the inference worker, with what its folder said."""

    def __init__(self, folder: Path, model: Any, multilingual: bool, fp16: bool) -> None:
        self.folder = folder
        self.model = model  # mlx_whisper.whisper.Whisper
        self.multilingual = multilingual
        self.fp16 = fp16  # the dtype mlx-whisper's transcribe is told (its `fp16` option)


def uses_fp16() -> bool:
    """float16 on a GPU (mlx-whisper's default); float32 on MLX's CPU backend, where float32
    products go to the fast BLAS and float16 ones do not (a short clip: 5 s against 34 s)."""
    import mlx.core as mx

    return mx.default_device().type != mx.cpu


def check_speech_folder(folder: Path) -> dict[str, Any]:
    """The folder's config once it and the weights' header are checked; ModelLoadError naming
    what is wrong otherwise. Nothing native reads the folder before this."""
    if not folder.is_dir():
        raise ModelLoadError(f"The speech model {folder} is not a folder (was it removed?).")
    config = read_config(folder)
    problem = speech_config_problem(config) or speech_weights_problem(folder)
    if problem is not None:
        raise ModelLoadError(f"{folder.name} cannot be used for speech: {problem}")
    weights = speech_weights(folder)
    assert weights is not None  # speech_weights_problem said so otherwise
    check_safetensors(weights)
    return config


def load_speech_model(folder: str | Path) -> SpeechModel:
    """Load a Whisper folder (checked first) in the dtype `uses_fp16` picks, as mlx-whisper's
    `load_model` does, from whichever of the weights files the folder has. Worker thread."""
    path = Path(folder)
    config = check_speech_folder(path)
    package = mlx_whisper()
    fp16 = uses_fp16()
    try:
        model = _load(package, path, config, fp16)
    except (ValueError, KeyError, TypeError, RuntimeError) as error:
        raise ModelLoadError(
            f"{path.name} could not be loaded as a Whisper model: {error}"
        ) from error
    return SpeechModel(path, model, is_multilingual(config), fp16)


def _load(package: Any, folder: Path, config: dict[str, Any], fp16: bool) -> Any:
    """mlx-whisper's `load_models.load_model`, step for step with its own modules, reading
    `speech_weights(folder)`: 0.4.3 reads only weights.safetensors (or .npz), while
    mlx-community's newest folders hold model.safetensors."""
    steps = package.load_models  # its mx, nn, tree_unflatten and whisper
    mx, nn = steps.mx, steps.nn
    dimensions = {k: v for k, v in config.items() if k not in ("model_type", "quantization")}
    model = steps.whisper.Whisper(
        steps.whisper.ModelDimensions(**dimensions), mx.float16 if fp16 else mx.float32
    )
    weights_file = speech_weights(folder)
    assert weights_file is not None  # checked before
    weights: dict[str, Any] = mx.load(str(weights_file))
    quantization = config.get("quantization")
    if isinstance(quantization, dict):

        def quantized(path: str, module: Any) -> bool:
            return isinstance(module, nn.Linear | nn.Embedding) and f"{path}.scales" in weights

        nn.quantize(model, **quantization, class_predicate=quantized)
    model.update(steps.tree_unflatten(list(weights.items())))
    mx.eval(model.parameters())
    return model
