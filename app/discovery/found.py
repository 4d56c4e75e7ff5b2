"""What a scan finds: one record per model (or per thing that looked like one and could not be
read), with its source app, format, size, architecture and whether Branchwise can run it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Source(StrEnum):
    """Which app's store a model was found in (the value is what `branchwise models scan
    --json` prints)."""

    LMSTUDIO = "lmstudio"
    HUGGINGFACE = "huggingface"
    OLLAMA = "ollama"
    FOLDER = "folder"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Source.LMSTUDIO: "LM Studio",
    Source.HUGGINGFACE: "Hugging Face cache",
    Source.OLLAMA: "Ollama",
    Source.FOLDER: "Folder",
}


class Format(StrEnum):
    MLX = "mlx"  # a folder of config.json, safetensors and a tokenizer, used where it lies
    GGUF = "gguf"  # one file, imported into an MLX folder
    UNKNOWN = "unknown"  # something that could not be read (no access): its reason says so


@dataclass(frozen=True)
class OllamaLayers:
    """What an Ollama manifest adds to its GGUF: Ollama's own defaults for the model."""

    system: str = ""
    params: dict[str, Any] = field(default_factory=dict[str, Any])
    # Ollama's template is a Go template: kept for reference, never run (see app.discovery.ollama).
    template: str = ""


@dataclass(frozen=True)
class FoundModel:
    """One model found on this computer."""

    path: str  # the MLX folder, the GGUF file (an Ollama blob), or what could not be read
    source: Source
    format: Format
    name: str
    architecture: str
    bytes: int  # what it takes where it lies
    runnable: bool
    reason: str | None  # why Branchwise cannot run it, in one line; None when it can
    # What adding it takes on the library's disk: 0 for a folder used in place.
    disk_needed: int = 0
    chat_template: bool | None = None  # False: a base model (plain completions only)
    origin: str = ""  # the same model found twice has the same origin (app.discovery.identity)
    in_library: str | None = None  # the library entry's id when it was added already
    ollama: OllamaLayers | None = None

    def as_json(self) -> dict[str, Any]:
        """The record `branchwise models scan --json` prints: the issue's keys first."""
        record = asdict(self)
        record.pop("ollama")
        record.pop("origin")
        record["source"], record["format"] = str(self.source), str(self.format)
        return record
