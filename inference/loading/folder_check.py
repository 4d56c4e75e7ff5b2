"""The deep check of an MLX model folder before it joins the library.

Beyond the quick checks the library makes when listing (app/library.py: config present, model
type known, weights and tokenizer present), this reads what a load would read, in the order
that refuses bad files cheapest first: side-file sizes, config values, every safetensors header
(in Python), then mlx-lm builds the model lazily from the folder (nothing is computed) and the
tokenizer's chat template renders a sample conversation under a time limit. The native steps
can still crash on a file the Python checks miss, so the app runs this in a child process
(app/isolated.py); it is importable on its own for that reason.
"""

from __future__ import annotations

from pathlib import Path

from inference.errors import ModelLoadError
from inference.loading.file_limits import check_file_sizes, read_config
from inference.loading.safetensors_check import check_safetensors
from inference.prompt.template_check import check_folder_template


def check_model_folder(path: str | Path) -> int:
    """Check everything a load of the folder at `path` would read; return its weights' bytes.

    Raises ModelLoadError naming the first file that is damaged, too large or hostile."""
    folder = Path(path)
    weights_bytes = check_before_load(folder)
    check_builds(folder, folder.name)
    check_folder_template(folder)
    return weights_bytes


def check_before_load(folder: Path) -> int:
    """The checks in plain Python (sizes, config values, safetensors headers): cheap enough for
    every load. Returns the bytes the weights take, from their checked headers."""
    check_file_sizes(folder)
    read_config(folder)
    return sum(check_safetensors(f) for f in sorted(folder.glob("model*.safetensors")))


def check_builds(folder: Path, name: str) -> None:
    """Build the model from the folder with mlx-lm (lazily: nothing is computed), so a mismatch
    between config and weights is caught here rather than when the person first loads it."""
    from mlx_lm.utils import load_model

    try:
        load_model(folder, lazy=True)
    except Exception as error:  # mlx, mlx-lm and the model classes raise many kinds
        raise ModelLoadError(f"{name} does not make a model mlx-lm can load: {error}") from error
