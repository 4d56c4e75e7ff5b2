"""`branchwise models scan [--json] [--in DIR --source NAME]`, `branchwise models add
PATH_OR_OLLAMA_NAME` and `branchwise models list [--json]`, each with `--data-dir DIR`: the
model library from a terminal (no window, no Qt).

`scan` reads LM Studio's, the Hugging Face cache's and Ollama's stores (or one folder, `--in`,
read as `--source`'s layout) and prints each model found; `add` adds one (an MLX folder in
place, a GGUF imported, an Ollama model by its name, `gemma3:270m`) and prints its library
name; `list` prints the library. Exit status: 0 done, 1 nothing added (the reason on stderr),
2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from app.discovery.describe import describe_folder, describe_gguf
from app.discovery.found import Format, FoundModel, Source
from app.discovery.locations import Location, ollama_folders, standard_locations
from app.discovery.ollama import read_manifest
from app.discovery.scan import scan
from app.paths import AppPaths
from app.sizes import format_bytes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="branchwise models")
    commands = parser.add_subparsers(dest="command", required=True)
    scanning = commands.add_parser("scan", help="list the models other apps hold")
    scanning.add_argument("--json", action="store_true", help="print the list as JSON")
    scanning.add_argument("--in", dest="folder", help="scan this folder only")
    scanning.add_argument(
        "--source",
        choices=[str(s) for s in Source],
        default=str(Source.FOLDER),
        help="the layout of the --in folder (default: folder)",
    )
    adding = commands.add_parser("add", help="add a model folder, GGUF file or Ollama model")
    adding.add_argument("model", help="a folder, a .gguf file, or an Ollama name (gemma3:270m)")
    listing = commands.add_parser("list", help="list the library")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    for command in (scanning, adding, listing):
        command.add_argument("--data-dir", help="the app's data folder (default: the usual one)")
    args = parser.parse_args(argv)
    models_dir = AppPaths.resolve(args.data_dir).models_dir
    if args.command == "scan":
        return _scan(models_dir, args.folder, Source(args.source), args.json)
    if args.command == "add":
        return _add(models_dir, args.model)
    return _list(models_dir, args.json)


def _scan(models_dir: Path, folder: str | None, source: Source, as_json: bool) -> int:
    locations = [Location(source, Path(folder).expanduser())] if folder else standard_locations()
    found = scan(locations, models_dir)
    if as_json:
        print(json.dumps([model.as_json() for model in found], ensure_ascii=False, indent=1))
        return 0
    for model in found:
        state = "runnable" if model.runnable else f"not runnable: {model.reason}"
        added = f", in the library as {model.in_library}" if model.in_library else ""
        print(
            f"{model.name}  [{model.source.label}, {model.format}, {model.architecture}, "
            f"{format_bytes(model.bytes)}] {state}{added}\n    {model.path}"
        )
    if not found:
        print("No models found.", file=sys.stderr)
    return 0


def _add(models_dir: Path, given: str) -> int:
    from app.discovery.adding import add_found
    from app.library.entries import find_model
    from app.library.model_check import LibraryError
    from inference.errors import InferenceError

    found = resolve(given)
    if found is None:
        print(f"branchwise models add: {given} is no folder, file or Ollama model", file=sys.stderr)
        return 1
    if found.format == Format.GGUF and found.runnable:  # the disk it takes, said first
        size = format_bytes(found.disk_needed)
        print(f"Importing {found.name}: about {size} in {models_dir}…", file=sys.stderr)
    try:
        folder = add_found(found, models_dir)
    except (LibraryError, InferenceError, OSError) as error:
        print(f"branchwise models add: {error}", file=sys.stderr)
        return 1
    print(find_model(models_dir, folder.name).name)
    return 0


def resolve(given: str) -> FoundModel | None:
    """A path (a folder, a GGUF, a Hugging Face snapshot) or an Ollama name, as a find."""
    path = Path(given).expanduser()
    if path.is_dir():
        repo = _hf_repository(path)
        source, name = (Source.HUGGINGFACE, repo) if repo else (Source.FOLDER, path.name)
        return describe_folder(path, source, name)
    if path.is_file():
        return describe_gguf(path, Source.FOLDER, path.name.removesuffix(".gguf"))
    name, _, tag = given.partition(":")
    for root in ollama_folders(Path.home(), os.environ, system=True):
        manifest = root / "manifests" / "registry.ollama.ai" / _namespaced(name) / (tag or "latest")
        if manifest.is_file():
            return read_manifest(root, manifest)
    return None


def _namespaced(name: str) -> Path:
    return Path(name) if "/" in name else Path("library") / name


def _hf_repository(folder: Path) -> str | None:
    """`org/name` when `folder` is a snapshot of the Hugging Face cache."""
    parts = folder.resolve().parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return "/".join(parts[-3].removeprefix("models--").split("--"))
    return None


def _list(models_dir: Path, as_json: bool) -> int:
    from app.library.entries import list_models

    models = list_models(models_dir)
    if as_json:
        records = [
            {
                "id": info.id,
                "name": info.name,
                "path": str(info.path),
                "architecture": info.architecture,
                "bytes": info.size_bytes,
                "source": info.source,
                "linked": info.linked,
                "missing": info.missing,
                "chat_template": info.chat_template,
                "problem": info.problem,
            }
            for info in models
        ]
        print(json.dumps(records, ensure_ascii=False, indent=1))
        return 0
    for info in models:
        state = f"  ({info.problem})" if info.problem else ""
        print(f"{info.name}  [{info.architecture}, {format_bytes(info.size_bytes)}]{state}")
    return 0
