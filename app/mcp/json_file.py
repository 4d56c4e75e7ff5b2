"""The small JSON files the tools features keep in the data folder (servers, approvals): read
them without ever losing one that cannot be read, and write them so a crash mid-write leaves the
old file whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.kept_files import replace_atomically


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


def write_object(path: Path, data: dict[str, Any]) -> None:
    """Write `data` as indented JSON, atomically."""
    replace_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _kind(value: object) -> str:
    return {list: "a list", str: "text", bool: "true or false", type(None): "null"}.get(
        type(value), "a number"
    )
