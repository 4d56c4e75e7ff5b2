"""Fake model stores in the layouts of LM Studio, the Hugging Face cache and Ollama, built in a
temporary home with small real files: the tiny llama MLX folder (tests/tiny_models.py), the
tiny Gemma 3 GGUF (tests/data/gguf), links where the apps link, and the bad cases the issue
names: a half-downloaded snapshot, a manifest naming a missing blob, a dangling link, a GGUF of
an unknown family, a vision projector."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.tiny_gguf import write_bare_gguf
from tests.tiny_gguf_families import DATA

GEMMA = DATA / "tiny-gemma3.gguf"
OLLAMA_PARAMS = {
    "stop": ["<end_of_turn>"],
    "temperature": 0.3,
    "repeat_penalty": 1.1,
    "num_ctx": 4096,
}
OLLAMA_SYSTEM = "You are a terse assistant."
OLLAMA_TEMPLATE = "{{ if .System }}{{ .System }}{{ end }}{{ .Prompt }}"


@dataclass(frozen=True)
class FakeHome:
    home: Path
    env: dict[str, str]

    @property
    def lmstudio(self) -> Path:
        return self.home / ".lmstudio" / "models"

    @property
    def hf_cache(self) -> Path:
        return self.home / "hf" / "hub"

    @property
    def ollama(self) -> Path:
        return self.home / "ollama-store"


def build_home(root: Path, mlx_folder: Path) -> FakeHome:
    home = root / "home"
    fake = FakeHome(
        home, {"HF_HOME": str(home / "hf"), "OLLAMA_MODELS": str(home / "ollama-store")}
    )
    _lmstudio(fake, mlx_folder)
    _hf_cache(fake.hf_cache, mlx_folder)
    _ollama(fake.ollama)
    return fake


def _lmstudio(fake: FakeHome, mlx_folder: Path) -> None:
    shutil.copytree(mlx_folder, fake.lmstudio / "mlx-community" / "tiny-llama-4bit")
    gguf_repo = fake.lmstudio / "lmstudio-community" / "tiny-gemma-GGUF"
    gguf_repo.mkdir(parents=True)
    shutil.copyfile(GEMMA, gguf_repo / "tiny-gemma3-F32.gguf")
    write_bare_gguf(gguf_repo / "mmproj-tiny-gemma3.gguf", "clip")
    write_bare_gguf(fake.lmstudio / "someone" / "encoder-GGUF" / "encoder.gguf", "bert")
    # A folder named by `downloadsFolder` in LM Studio's settings.
    moved = fake.home / "Models elsewhere"
    shutil.copyfile(GEMMA, _mkdir(moved / "me" / "repo") / "moved-gemma.gguf")
    (fake.home / ".lmstudio" / "settings.json").write_text(
        json.dumps({"downloadsFolder": str(moved)})
    )


def _hf_cache(hub: Path, mlx_folder: Path) -> None:
    repo = hub / "models--mlx-community--tiny-llama"
    _snapshot(repo, "rev1", {p.name: p.read_bytes() for p in mlx_folder.iterdir() if p.is_file()})
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("rev1")
    # Half downloaded: a shard is still partial and the index names one the snapshot lacks.
    half = hub / "models--org--half-done"
    files = {
        p.name: p.read_bytes()
        for p in mlx_folder.iterdir()
        if p.is_file() and p.suffix != ".safetensors"
    }
    files["model-00001-of-00002.safetensors"] = (mlx_folder / "model.safetensors").read_bytes()
    files["model.safetensors.index.json"] = json.dumps(
        {
            "weight_map": {
                "a": "model-00001-of-00002.safetensors",
                "b": "model-00002-of-00002.safetensors",
            }
        }
    ).encode()
    _snapshot(half, "rev2", files)
    (half / "blobs" / "0123abcd.incomplete").write_bytes(b"\0" * 64)
    # A link whose blob was removed.
    gone = hub / "models--org--blob-gone"
    _snapshot(gone, "rev3", {p.name: p.read_bytes() for p in mlx_folder.iterdir() if p.is_file()})
    target = (gone / "snapshots" / "rev3" / "model.safetensors").resolve()
    target.unlink()
    # Not a model: a dataset.
    _mkdir(hub / "datasets--org--some-data" / "snapshots" / "rev4")


def _snapshot(repo: Path, revision: str, files: dict[str, bytes]) -> None:
    blobs, snapshot = _mkdir(repo / "blobs"), _mkdir(repo / "snapshots" / revision)
    for name, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        (snapshot / name).symlink_to(Path("..") / ".." / "blobs" / digest)


def _ollama(store: Path) -> None:
    blobs = _mkdir(store / "blobs")
    model = _blob(blobs, GEMMA.read_bytes())
    template = _blob(blobs, OLLAMA_TEMPLATE.encode())
    system = _blob(blobs, OLLAMA_SYSTEM.encode())
    params = _blob(blobs, json.dumps(OLLAMA_PARAMS).encode())
    layers = [
        _layer("model", model),
        _layer("template", template),
        _layer("system", system),
        _layer("params", params),
    ]
    library = store / "manifests" / "registry.ollama.ai" / "library"
    _manifest(library / "tinygemma" / "latest", layers)
    missing = "sha256:" + "f" * 64
    _manifest(
        library / "broken" / "7b",
        [{"mediaType": "application/vnd.ollama.image.model", "digest": missing, "size": 1}],
    )


def _blob(blobs: Path, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    (blobs / f"sha256-{digest}").write_bytes(data)
    return f"sha256:{digest}"


def _layer(kind: str, digest: str) -> dict[str, object]:
    return {"mediaType": f"application/vnd.ollama.image.{kind}", "digest": digest, "size": 1}


def _manifest(path: Path, layers: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
