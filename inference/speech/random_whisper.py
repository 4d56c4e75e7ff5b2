"""A Whisper with random weights, built from mlx-whisper's own `ModelDimensions` (one layer
each side, 64 wide, the real 1500-frame audio context, the multilingual vocabulary) and saved
as mlx-community's folders are. It says nothing useful; it proves the whole path runs (the mel
filters and tokenizer files mlx-whisper ships, the model code, the decoding): the frozen app's
`--self-test` and the tests' plumbing use it.
"""

from __future__ import annotations

import json
from pathlib import Path

from inference.speech.whisper import mlx_whisper

TINY_DIMENSIONS = {
    "n_mels": 80,
    "n_audio_ctx": 1500,
    "n_audio_state": 64,
    "n_audio_head": 2,
    "n_audio_layer": 1,
    "n_vocab": 51865,
    "n_text_ctx": 64,
    "n_text_state": 64,
    "n_text_head": 2,
    "n_text_layer": 1,
}


def build_random_whisper(folder: Path, seed: int = 0) -> Path:
    """Save a random-weight Whisper in `folder`, in float16 (mlx-whisper's dtype on a GPU); the
    alignment heads, no weight, are left out as mlx-community's folders leave them."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    package = mlx_whisper()
    mx.random.seed(seed)
    dimensions = package.whisper.ModelDimensions(**TINY_DIMENSIONS)
    model = package.whisper.Whisper(dimensions, mx.float16)
    weights = {
        name: value.astype(mx.float16)
        for name, value in tree_flatten(model.parameters())
        if name != "alignment_heads"
    }
    folder.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(str(folder / "weights.safetensors"), weights)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: no return type
    (folder / "config.json").write_text(json.dumps({**TINY_DIMENSIONS, "model_type": "whisper"}))
    return folder
