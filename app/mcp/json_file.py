"""The small JSON files the tools features keep in the data folder (servers, approvals): read
them without ever losing one that cannot be read, and write them so a crash mid-write leaves the
old file whole."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


class JsonFileError(ValueError):
    """A JSON file that is missing its shape or cannot be parsed; the message says where."""


def read_object(path: Path, what: str) -> dict[str, Any] | None:
    """The JSON object in `path`; None when there is no file. Raises JsonFileError, naming
    `what` and the place of the fault, for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise JsonFileError(f"{what} ({path}) could not be read: {exc}.") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(
            f"{what} ({path}) is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}."
        ) from exc
    except RecursionError as exc:
        raise JsonFileError(f"{what} ({path}) is nested too deeply to read.") from exc
    if not isinstance(data, dict):
        raise JsonFileError(f"{what} ({path}) must hold a JSON object, not {_kind(data)}.")
    return data


def set_aside(path: Path) -> Path:
    """Rename an unreadable file out of the way (never delete it) and return its new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.unreadable-{stamp}")
    counter = 2
    while target.exists():
        target = path.with_name(f"{path.name}.unreadable-{stamp}-{counter}")
        counter += 1
    path.rename(target)
    return target


def write_object(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as indented JSON through a temporary file renamed over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _kind(value: object) -> str:
    return {list: "a list", str: "text", bool: "true or false", type(None): "null"}.get(
        type(value), "a number"
    )
