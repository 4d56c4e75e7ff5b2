"""Whether a model folder is a Whisper speech model, from its config.json and file names alone:
no MLX, so the library can tell a speech model from a chat model while it lists them.

mlx-community's Whisper folders (`mlx-community/whisper-*`) hold `config.json` with the model's
dimensions (`n_mels`, `n_audio_ctx`...; most also say `"model_type": "whisper"`) and their
weights in one of three files: `weights.safetensors` (large-v3-turbo and later conversions),
`model.safetensors` (the newest, quantized ones among them) or `weights.npz` (the older
conversions), which Branchwise does not read: only safetensors. The tokenizer comes with
mlx-whisper itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPEECH_WEIGHTS = "weights.safetensors"
SPEECH_WEIGHT_FILES = (SPEECH_WEIGHTS, "model.safetensors")  # in the order mlx-whisper's main reads
# What mlx-whisper's ModelDimensions needs, each a whole number.
DIMENSION_KEYS = (
    "n_mels",
    "n_audio_ctx",
    "n_audio_state",
    "n_audio_head",
    "n_audio_layer",
    "n_vocab",
    "n_text_ctx",
    "n_text_state",
    "n_text_head",
    "n_text_layer",
)
# Larger than any Whisper (large-v3: 1280 wide, 32 layers, 51866 tokens, 448 text positions).
_LIMITS = {
    "n_mels": 256,
    "n_audio_ctx": 1500,
    "n_audio_state": 8192,
    "n_audio_head": 128,
    "n_audio_layer": 128,
    "n_vocab": 60_000,
    "n_text_ctx": 4096,
    "n_text_state": 8192,
    "n_text_head": 128,
    "n_text_layer": 128,
}
# Whisper's mel front end makes 3000 frames per 30 s window, which its two convolutions halve.
AUDIO_CONTEXT = 1500


def is_speech_config(config: dict[str, Any]) -> bool:
    """A Whisper config: it says so, or it has Whisper's dimensions and no other model type."""
    model_type = config.get("model_type")
    if model_type == "whisper":
        return True
    return model_type in (None, "") and all(key in config for key in DIMENSION_KEYS)


def speech_config_problem(config: dict[str, Any]) -> str | None:
    """Why a Whisper config cannot be loaded (a missing or impossible dimension), or None."""
    for key in DIMENSION_KEYS:
        value = config.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            return f"its config.json has no whole number for {key}, so it is no Whisper model."
        if not 1 <= value <= _LIMITS[key]:
            return f"its config.json sets {key} to {value}, outside any Whisper model's range."
    if config["n_audio_ctx"] != AUDIO_CONTEXT:
        return f"its config.json sets n_audio_ctx to {config['n_audio_ctx']}; Whisper's is 1500."
    if config["n_audio_state"] % config["n_audio_head"] or (
        config["n_text_state"] % config["n_text_head"]
    ):
        return "its config.json gives attention heads that do not divide the model's width."
    return None


def speech_weights(folder: Path) -> Path | None:
    """The folder's Whisper weights file, if it has one Branchwise reads."""
    return next((folder / n for n in SPEECH_WEIGHT_FILES if (folder / n).is_file()), None)


def speech_weights_problem(folder: Path) -> str | None:
    """Why the folder's weights cannot be read (none, or only a NumPy archive), or None."""
    if speech_weights(folder) is not None:
        return None
    if (folder / "weights.npz").is_file():
        return (
            "its weights are a NumPy archive (weights.npz); Branchwise reads only safetensors. "
            "Download a Whisper folder with safetensors weights (e.g. "
            "mlx-community/whisper-large-v3-turbo)."
        )
    return f"it has no weights ({' or '.join(SPEECH_WEIGHT_FILES)})."


def is_multilingual(config: dict[str, Any]) -> bool:
    """English-only Whisper models have 51864 tokens; the multilingual ones more."""
    return int(config.get("n_vocab", 0)) >= 51865
