"""Turn a Dhara checkpoint in its published layout into an MLX model folder `load_model` reads.

The published folder (Hugging Face transformers style: config.json with `model_type: "dhara"`
and an `auto_map` pointing at its own Python code, safetensors weights, a tokenizer) is read as
data only; its code is never run. The new folder gets:

* config.json: the published config without `auto_map`, with the variant the weights show
  recorded (`canon_d_input` from canon D's width, `tie_word_embeddings` from whether there is an
  `lm_head`), and the logit soft cap under the one key `inference.models.dhara` reads;
* model.safetensors: the tensors renamed and the convolution weights transposed to MLX's layout
  by `inference.models.dhara.Model.sanitize`, then checked against the model, name by name and
  shape by shape;
* the tokenizer files, copied (without any `auto_map` in tokenizer_config.json).

Like the GGUF import it is atomic: it is written into a hidden folder in `models_dir` and
renamed into place only when complete; any failure raises ModelLoadError and leaves nothing.
"""

from __future__ import annotations

import errno
import json
import shutil
import threading
from pathlib import Path
from typing import Any, cast

import mlx.core as mx
from mlx.utils import tree_flatten

from inference.errors import ModelLoadError
from inference.importing.model_folder import Progress, reporter, write_model_folder
from inference.loading.model_files import read_json_object
from inference.models.dhara import Model, ModelArgs

# Tokenizer and chat files copied as they are; everything else in the folder is left behind.
_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "generation_config.json",
    "chat_template.jinja",
    "chat_template.json",
)
# Spellings of the logit soft cap in configs, mapped onto the one ModelArgs reads.
_SOFTCAP_KEYS = ("final_logit_softcapping", "logit_softcapping", "logit_soft_cap", "logit_softcap")
_CODE_KEYS = ("auto_map", "model_file")


def import_dhara(
    hf_folder: str | Path,
    models_dir: str | Path,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Convert the Dhara checkpoint in `hf_folder` into a new folder in `models_dir`; return it.

    `progress(done, total)` counts steps; setting `cancel` stops at the next one with
    ImportCancelled. Raises ModelLoadError (nothing is left behind) when the folder is not a
    Dhara checkpoint, has no safetensors weights, weights of shapes the model does not have, or
    the disk is full.
    """
    source = Path(hf_folder).expanduser()
    report = reporter(progress, cancel)
    return write_model_folder(
        models_dir, source.name, source.name, lambda folder: _write_folder(source, folder, report)
    )


def _write_folder(source: Path, folder: Path, report: Progress) -> None:
    config = _read_json(source / "config.json")
    if config is None or config.get("model_type") != "dhara":
        raise ModelLoadError(f"{source} is not a Dhara checkpoint (config.json model_type).")
    files = sorted(source.glob("*.safetensors"))
    if not files:
        raise ModelLoadError(
            f"{source} has no .safetensors weights; Branchwise never reads pickle weights."
        )
    total = len(files) + 3
    report(0, total)
    weights: dict[str, mx.array] = {}
    for done, file in enumerate(files, 1):
        try:
            # A .safetensors file loads as name -> array (mlx's stub has one type for all).
            weights.update(cast("dict[str, mx.array]", mx.load(str(file))))
        except (RuntimeError, ValueError) as error:
            raise ModelLoadError(f"{file.name} in {source} cannot be read: {error}") from error
        report(done, total)
    config = mlx_config(config, weights)
    model = Model(ModelArgs.from_dict(config))
    weights = model.sanitize(weights)
    _check_shapes(model, weights, source)
    report(total - 2, total)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    try:
        mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})  # pyright: ignore[reportUnknownMemberType]  # mlx stub: no return type
    except RuntimeError as error:  # MLX reports a failed write without an errno
        raise OSError(errno.EIO, f"the weights could not be written ({error})") from error
    report(total - 1, total)
    _copy_tokenizer(source, folder)
    report(total, total)


def mlx_config(published: dict[str, Any], weights: dict[str, mx.array]) -> dict[str, Any]:
    """The MLX folder's config.json: `published` less its code pointers, with the variant the
    weights show (canon D's input, tied embeddings) and the soft cap under one key."""
    config = {k: v for k, v in published.items() if k not in _CODE_KEYS}
    config["tie_word_embeddings"] = "lm_head.weight" not in weights
    cap = next((config.pop(k) for k in _SOFTCAP_KEYS if config.get(k) is not None), None)
    for key in _SOFTCAP_KEYS:
        config.pop(key, None)
    if cap is not None:
        config["final_logit_softcapping"] = cap
    hidden = config.get("intermediate_size")
    d_widths = {v.shape[0] for k, v in weights.items() if _is_canon_d_weight(k)}
    if d_widths and isinstance(hidden, int):
        if d_widths == {hidden}:
            config["canon_d_input"] = "product"
        elif d_widths == {2 * hidden}:
            config["canon_d_input"] = "gate_up"
        else:
            raise ModelLoadError(
                f"Canon D has {sorted(d_widths)} channels; a Dhara model with an MLP of {hidden} "
                f"has {hidden} (on the gated product) or {2 * hidden} (on gate and up)."
            )
    return config


def _is_canon_d_weight(name: str) -> bool:
    return name.endswith(("canonD.weight", "canon_d.weight"))


def _check_shapes(model: Model, weights: dict[str, mx.array], source: Path) -> None:
    expected = {name: p.shape for name, p in tree_flatten(model.parameters())}
    missing = sorted(set(expected) - set(weights))
    extra = sorted(set(weights) - set(expected))
    wrong = sorted(n for n in set(expected) & set(weights) if weights[n].shape != expected[n])
    if missing or extra or wrong:
        details = [
            f"{label}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
            for label, names in (("missing", missing), ("unexpected", extra), ("shape", wrong))
            if names
        ]
        raise ModelLoadError(
            f"The weights in {source} do not fit a Dhara model of its config ("
            + "; ".join(details)
            + ")."
        )


def _copy_tokenizer(source: Path, folder: Path) -> None:
    for name in _TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, folder / name)
    tokenizer_config = _read_json(source / "tokenizer_config.json")
    if tokenizer_config is not None:
        clean = {k: v for k, v in tokenizer_config.items() if k not in _CODE_KEYS}
        if "auto_map" in tokenizer_config and (folder / "tokenizer.json").is_file():
            # The custom class only wrapped tokenizer.json; the standard fast tokenizer reads it.
            clean["tokenizer_class"] = "PreTrainedTokenizerFast"
        (folder / "tokenizer_config.json").write_text(json.dumps(clean, indent=2))


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return read_json_object(path)
    except ValueError as error:
        raise ModelLoadError(str(error)) from error
