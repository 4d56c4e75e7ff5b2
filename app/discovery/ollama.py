"""Models in Ollama's store: each manifest (`manifests/HOST/NAMESPACE/NAME/TAG`, JSON) names its
layers by media type and digest, the layers lying in `blobs/sha256-HEX`: the GGUF (`model`),
Ollama's chat template (`template`), system prompt (`system`), parameters (`params`, JSON:
stop words, temperature...) and licence. The GGUF is imported like any other; the system
prompt, stop words and parameters become the model's defaults.

Ollama's template is a Go template (`{{ .System }}`, `{{ range .Messages }}`), which neither
Branchwise nor transformers runs. The GGUF Ollama ships almost always carries the model's own
Jinja template (`tokenizer.chat_template`, written by llama.cpp's converter), and that is the
one used; the Go template is kept with the entry for reference only. A GGUF without a Jinja
template is added as a base model: plain completions, no chat template invented for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from app.discovery.describe import describe_gguf, unreadable
from app.discovery.found import Format, FoundModel, OllamaLayers, Source

DEFAULT_HOST = "registry.ollama.ai"
_MEDIA = "application/vnd.ollama.image."
# Manifests and text layers are a few KB; anything far larger is not one.
_MAX_SMALL_FILE = 1024 * 1024


def scan_store(root: Path, stop: Callable[[], bool] = lambda: False) -> Iterator[FoundModel]:
    manifests = root / "manifests"
    try:
        files = sorted(p for p in manifests.rglob("*") if p.is_file())
    except OSError as error:
        yield unreadable(manifests, Source.OLLAMA, f"Ollama's manifests cannot be read: {error}")
        return
    for manifest in files:
        if stop():
            return
        yield read_manifest(root, manifest)


def model_name(root: Path, manifest: Path) -> str:
    """Ollama's own name for a manifest: `gemma3:270m`, `user/model:tag`, `host/ns/model:tag`."""
    parts = manifest.relative_to(root / "manifests").parts
    *where, name, tag = parts if len(parts) >= 2 else ("", *parts)
    if where[:2] == [DEFAULT_HOST, "library"]:
        where = []
    elif where[:1] == [DEFAULT_HOST]:
        where = where[1:]
    return "/".join([*where, f"{name}:{tag}"])


def read_manifest(root: Path, manifest: Path) -> FoundModel:
    name = model_name(root, manifest)
    try:
        layers = _layers(manifest)
    except (OSError, ValueError) as error:
        return _refused(manifest, name, f"its manifest cannot be read: {error}")
    by_kind = {layer["mediaType"].removeprefix(_MEDIA): layer for layer in layers}
    model = by_kind.get("model")
    if model is None:
        return _refused(manifest, name, "it holds no GGUF model layer (not a GGUF-based model)")
    blob = blob_path(root, str(model.get("digest", "")))
    if blob is None:
        return _refused(
            manifest, name, f"its model file (blob {model.get('digest')}) is missing from the store"
        )
    if "adapter" in by_kind:
        return _refused(manifest, name, "it applies a LoRA adapter, which Branchwise does not load")
    extras = OllamaLayers(
        system=_text(root, by_kind.get("system")),
        params=_params(root, by_kind.get("params")),
        template=_text(root, by_kind.get("template")),
    )
    return describe_gguf(blob, Source.OLLAMA, name, extras)


def blob_path(root: Path, digest: str) -> Path | None:
    """The blob of `sha256:HEX` (files are `sha256-HEX`; old stores used `sha256:HEX`)."""
    algorithm, _, hexdigest = digest.partition(":")
    if not hexdigest.isalnum() or not algorithm.isalnum():
        return None
    for candidate in (f"{algorithm}-{hexdigest}", f"{algorithm}:{hexdigest}"):
        path = root / "blobs" / candidate
        if path.is_file():
            return path
    return None


def _layers(manifest: Path) -> list[dict[str, Any]]:
    data = json.loads(_small(manifest))
    layers = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(layers, list):
        raise ValueError("it lists no layers")
    return [
        layer
        for layer in layers
        if isinstance(layer, dict) and str(layer.get("mediaType", "")).startswith(_MEDIA)
    ]


def _small(path: Path) -> str:
    if path.stat().st_size > _MAX_SMALL_FILE:
        raise ValueError(f"{path.name} is too large to be what it claims")
    return path.read_text(encoding="utf-8")


def _text(root: Path, layer: dict[str, Any] | None) -> str:
    blob = blob_path(root, str(layer.get("digest", ""))) if layer else None
    try:
        return _small(blob) if blob is not None else ""
    except (OSError, ValueError, UnicodeDecodeError):
        return ""


def _params(root: Path, layer: dict[str, Any] | None) -> dict[str, Any]:
    text = _text(root, layer)
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _refused(manifest: Path, name: str, reason: str) -> FoundModel:
    return FoundModel(
        path=str(manifest),
        source=Source.OLLAMA,
        format=Format.GGUF,
        name=name,
        architecture="unknown",
        bytes=0,
        runnable=False,
        reason=reason,
    )
