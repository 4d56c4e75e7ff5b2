"""Damaged model files for the fuzz tests, and the jobs that run them in child processes.

`header_parts` maps a GGUF header field by field with the `gguf` package's own reader (not the
importer's checks), so a test can cut the file at each field or write a huge value into it.
`outcomes_in_children` runs a job over many cases in one child process, each case's outcome
written to a file as it ends; a child that crashes or hangs on a case is replaced, that case is
recorded as such, and the rest go on in a new child, so no case hides another.
"""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
from gguf import GGUFValueType

from app.library.isolated import run_isolated

# A child imports MLX, mlx-lm and transformers first: seconds, more on a busy machine.
CHILD_START_S = 90.0


@dataclass(frozen=True)
class Part:
    """One field of a GGUF header: where it is, and whether it is a count, length or type id
    (structural: a wrong value there changes how everything after it parses)."""

    what: str
    offset: int
    size: int
    structural: bool


def header_parts(path: Path) -> list[Part]:
    """Every header field of the GGUF at `path`, array elements but the first and last left out
    (a vocabulary has thousands)."""
    reader = gguf.GGUFReader(path)
    parts = [Part("magic", 0, 4, True)]
    for name, field in reader.fields.items():
        roles = _roles(field) if not name.startswith("GGUF.") else [("value", True)]
        parts += _located(name, field.offset, field.parts, roles)
    tensor_roles = [
        ("name length", True),
        ("name", False),
        ("dimension count", True),
        ("shape", True),
        ("type", True),
        ("offset", True),
    ]
    for tensor in reader.tensors:
        parts += _located(
            f"tensor {tensor.name}", tensor.field.offset, tensor.field.parts, tensor_roles
        )
    return parts


def _roles(field: Any) -> list[tuple[str, bool] | None]:
    """(role, structural) for each part of a metadata field; None for array elements other
    than the first and last."""
    roles: list[tuple[str, bool] | None] = [
        ("key length", True),
        ("key", False),
        ("value type", True),
    ]
    kind = GGUFValueType(int(field.parts[2][0]))
    if kind == GGUFValueType.STRING:
        return [*roles, ("value length", True), ("value", False)]
    if kind != GGUFValueType.ARRAY:
        return [*roles, ("value", False)]
    roles += [("element type", True), ("element count", True)]
    strings = GGUFValueType(int(field.parts[3][0])) == GGUFValueType.STRING
    count = len(field.parts[5:]) // (2 if strings else 1)
    for index in range(count):
        kept = index in (0, count - 1)
        if strings:
            roles.append((f"length of element {index}", True) if kept else None)
        roles.append((f"element {index}", False) if kept else None)
    return roles


def _located(
    name: str, offset: int, parts: list[Any], roles: list[tuple[str, bool] | None]
) -> list[Part]:
    located = []
    for part, role in zip(parts, roles, strict=True):
        if role is not None:
            located.append(Part(f"{name}: {role[0]}", offset, part.nbytes, role[1]))
        offset += part.nbytes
    return located


def write_case(base: bytes, folder: Path, name: str, change: Callable[[bytearray], bytes]) -> Path:
    path = folder / f"{name}.gguf"
    path.write_bytes(change(bytearray(base)))
    return path


def overwrite(offset: int, value: bytes) -> Callable[[bytearray], bytes]:
    def change(data: bytearray) -> bytes:
        data[offset : offset + len(value)] = value
        return bytes(data)

    return change


def huge(size: int) -> list[bytes]:
    """Values no honest count or length of `size` bytes has (a shape: its first dimension)."""
    if size >= 8:
        return [struct.pack("<Q", value) for value in (2**64 - 1, 2**47, 2**31)]
    return [struct.pack("<I", value) for value in (2**32 - 1, 2**31 - 1)]


# --- jobs run in the child -----------------------------------------------------------------


def import_each(paths: list[Path], models: Path, log: Path) -> None:
    """Import each GGUF into `models`; log one JSON line per case: its outcome."""
    from inference import ModelLoadError, import_gguf

    for path in paths:
        before = sorted(p.name for p in models.iterdir())
        try:
            folder = import_gguf(path, models)
        except ModelLoadError as error:
            after = sorted(p.name for p in models.iterdir())
            _log(log, "refused" if after == before else "left files behind", str(error))
        except Exception as error:  # an unclear error is a finding, not a test crash
            _log(log, "unclear", f"{type(error).__name__}: {error}")
        else:
            shutil.rmtree(folder)
            _log(log, "imported", folder.name)


def check_each(folders: list[Path], log: Path) -> None:
    """The deep check of each model folder (what importing a folder runs in its child)."""
    from inference import ModelLoadError
    from inference.loading.folder_check import check_model_folder

    for folder in folders:
        before = _snapshot(folder)
        try:
            check_model_folder(folder)
        except ModelLoadError as error:
            changed = _snapshot(folder) != before
            _log(log, "changed the folder" if changed else "refused", str(error))
        except Exception as error:
            _log(log, "unclear", f"{type(error).__name__}: {error}")
        else:
            _log(log, "accepted", folder.name)


def _snapshot(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.iterdir()}


def _log(log: Path, outcome: str, detail: str) -> None:
    with log.open("a", encoding="utf-8") as file:
        file.write(json.dumps([outcome, detail]) + "\n")


# --- the harness ---------------------------------------------------------------------------


class _ChildEnded(Exception):
    pass


def outcomes_in_children(
    job: str, cases: list[Path], *args: Any, log: Path, per_case_s: float
) -> list[tuple[str, str]]:
    """[(outcome, detail)] for each case, from `job(cases, *args, log)` run in child processes.

    A child that dies or runs past its time on a case gives that case the outcome "crashed"
    or "hung" (with the reason), and a fresh child takes the cases after it."""
    outcomes: list[tuple[str, str]] = []
    while len(outcomes) < len(cases):
        log.unlink(missing_ok=True)
        log.touch()
        rest = cases[len(outcomes) :]
        try:
            run_isolated(
                job,
                rest,
                *args,
                log,
                label=rest[0].name,
                failure=_ChildEnded,
                cancelled=_ChildEnded,
                timeout_s=CHILD_START_S + per_case_s * len(rest),
            )
            ended = None
        except _ChildEnded as error:
            ended = str(error)
        done = [tuple(json.loads(line)) for line in log.read_text().splitlines()]
        outcomes += done
        if ended is not None and len(done) < len(rest):
            outcomes.append(("hung" if "longer than" in ended else "crashed", ended))
    return outcomes
