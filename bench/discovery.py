"""How long finding the models other apps hold takes: a fake store of hundreds of models, each
the size real ones are (sparse files: gigabytes on paper, nothing on the disk), scanned as the
app scans them (headers and small files only). Prints the time per model.

    .venv/bin/python bench/discovery.py --models 300

A third are GGUF files in LM Studio's layout (a 150,000-token vocabulary in the header, 1-4 GB
of tensors), a third Hugging Face cache snapshots of MLX folders (links to 2 GB blobs), a third
Ollama manifests naming GGUF blobs. The scan never reads tensor data, so the time per model is
the header's vocabulary walk and a few stats, not the gigabytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import gguf
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.discovery.locations import standard_locations
from app.discovery.scan import scan
from bench.cli import description, positive_int

_VOCABULARY = 150_000
_GB = 1024**3


def write_gguf(path: Path, tensor_bytes: int) -> None:
    """A llama GGUF whose header is a real one's size and whose tensor is `tensor_bytes` of
    zeros, left sparse."""
    writer = gguf.GGUFWriter(path, "llama")
    for key in ("block_count", "context_length", "embedding_length", "feed_forward_length"):
        getattr(writer, f"add_{key}")(32)
    writer.add_head_count(4)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list([f"token{i}" for i in range(_VOCABULARY)])
    writer.add_token_types([1] * _VOCABULARY)
    rows = tensor_bytes // (256 * 4)
    writer.add_tensor_info("token_embd.weight", (rows, 256), np.dtype(np.float32), rows * 256 * 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    with path.open("r+b") as file:  # the data section, aligned, left as a hole
        end = file.seek(0, os.SEEK_END)
        file.truncate(-(-end // 32) * 32 + rows * 256 * 4)


def sparse_copy(template: Path, target: Path, identity: int) -> None:
    """The template's header, then a hole as long as its tensors, then `identity` (each file's
    last bytes differ, as real models' do): nothing of the gigabytes is written."""
    size = template.stat().st_size
    with template.open("rb") as source:
        header = source.read(64 * 1024 * 1024)
    header = header.rstrip(b"\0")
    with target.open("wb") as file:
        file.write(header)
        file.truncate(size)
        file.seek(size - 8)
        file.write(identity.to_bytes(8, "little"))


def build(root: Path, count: int) -> dict[str, str]:
    template = root / "template.gguf"
    write_gguf(template, 2 * _GB)
    third = max(1, count // 3)
    for i in range(third):  # LM Studio
        folder = root / "home" / ".lmstudio" / "models" / f"pub{i % 10}" / f"repo{i}-GGUF"
        folder.mkdir(parents=True)
        sparse_copy(template, folder / f"model{i}.Q4_K_M.gguf", i)
    hub = root / "hub"
    for i in range(third):  # the Hugging Face cache
        repo = hub / f"models--org--model{i}"
        blobs, snapshot = repo / "blobs", repo / "snapshots" / "rev"
        blobs.mkdir(parents=True)
        snapshot.mkdir(parents=True)
        files = {
            "config.json": json.dumps({"model_type": "llama"}).encode(),
            "tokenizer.json": b"{}",
        }
        for name, data in files.items():
            digest = hashlib.sha256(data + bytes([i % 256])).hexdigest()
            (blobs / digest).write_bytes(data)
            (snapshot / name).symlink_to(Path("../..") / "blobs" / digest)
        weights = blobs / f"weights{i}"
        with weights.open("wb") as file:
            file.truncate(2 * _GB)
        (snapshot / "model.safetensors").symlink_to(Path("../..") / "blobs" / weights.name)
    store = root / "ollama"
    for i in range(count - 2 * third):  # Ollama
        blob = store / "blobs" / f"sha256-{i:064x}"
        blob.parent.mkdir(parents=True, exist_ok=True)
        sparse_copy(template, blob, 10_000 + i)
        manifest = store / "manifests" / "registry.ollama.ai" / "library" / f"model{i}" / "latest"
        manifest.parent.mkdir(parents=True)
        layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{i:064x}"}
        manifest.write_text(json.dumps({"layers": [layer]}))
    return {"HF_HUB_CACHE": str(hub), "OLLAMA_MODELS": str(store)}


def main() -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--models", type=positive_int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        env = build(root, args.models)
        paper = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        locations = standard_locations(root / "home", env)
        cpu, wall = time.process_time(), time.perf_counter()
        found = scan(locations, check_types=False)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        assert len(found) == args.models, len(found)
        typed = time.perf_counter()
        scan(locations[1:2], check_types=True)  # the one child that asks mlx-lm, once a scan
        typed = time.perf_counter() - typed
    print(f"{len(found)} models, {paper / 1e12:.2f} TB on paper")
    print(f"scan: {wall:.2f} s wall, {cpu:.2f} s CPU; {1000 * wall / len(found):.1f} ms a model")
    print(f"the MLX folders' type check (one child process a scan): {typed:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
