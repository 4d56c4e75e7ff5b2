"""Where each app keeps its models on this computer, as each documents it.

* LM Studio: `~/.lmstudio/models`, the folder `downloadsFolder` names in
  `~/.lmstudio/settings.json` (a person who moved the models folder), and the older
  `~/.cache/lm-studio/models`; inside, `publisher/repository/` folders.
* The Hugging Face cache that `huggingface_hub` and `mlx_lm` fill: `HF_HUB_CACHE`, else
  `HF_HOME/hub`, else `~/.cache/huggingface/hub`.
* Ollama: `OLLAMA_MODELS`, else `~/.ollama/models` (on Linux services also
  `/usr/share/ollama/.ollama/models`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.discovery.found import Source


@dataclass(frozen=True)
class Location:
    """One folder to scan, read as `source`'s layout."""

    source: Source
    path: Path


def standard_locations(
    home: Path | None = None, environ: Mapping[str, str] | None = None
) -> list[Location]:
    """Every store of the three apps that exists on this computer, each once."""
    home = Path.home() if home is None else home
    env = os.environ if environ is None else environ
    found: list[Location] = []
    for source, paths in (
        (Source.LMSTUDIO, lmstudio_folders(home)),
        (Source.HUGGINGFACE, [huggingface_cache(home, env)]),
        (Source.OLLAMA, ollama_folders(home, env, system=home == Path.home())),
    ):
        for path in paths:
            location = Location(source, path)
            if _is_dir(path) and not any(_same(path, seen.path) for seen in found):
                found.append(location)
    return found


def lmstudio_folders(home: Path) -> list[Path]:
    folders = [home / ".lmstudio" / "models"]
    chosen = _downloads_folder(home / ".lmstudio" / "settings.json")
    if chosen is not None:
        folders.insert(0, chosen)
    folders.append(home / ".cache" / "lm-studio" / "models")
    return folders


def _downloads_folder(settings: Path) -> Path | None:
    try:
        value = json.loads(settings.read_text(encoding="utf-8")).get("downloadsFolder")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None
    return Path(value).expanduser() if isinstance(value, str) and value.strip() else None


def huggingface_cache(home: Path, env: Mapping[str, str]) -> Path:
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else None
    return (base or home / ".cache") / "huggingface" / "hub"


def ollama_folders(home: Path, env: Mapping[str, str], system: bool = False) -> list[Path]:
    """`system`: also the folder of Ollama's Linux service (not for a home given for a test)."""
    if env.get("OLLAMA_MODELS"):
        return [Path(env["OLLAMA_MODELS"]).expanduser()]
    service = [Path("/usr/share/ollama/.ollama/models")] if system else []
    return [home / ".ollama" / "models", *service]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _same(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return False
