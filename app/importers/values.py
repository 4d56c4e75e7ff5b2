"""Typed reads of untrusted JSON values for the readers: each either returns the value in the
shape asked for or refuses with the field's place (`ImportRefusedError`); times become UTC
seconds, text loses lone surrogates. `Fallbacks` reads the fields the tree does not need
(times, titles, model labels, metadata): a value it cannot read is left out with a warning, so
it never costs the person a conversation."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from app.importers.errors import ImportRefusedError

# Above this a number is a time in milliseconds (1e11 s is the year 5138; 1e11 ms is 1973).
MS_THRESHOLD = 1e11
_CITATION = re.compile("\ue200[^\ue201]*\ue201|【\\d+(?::\\d+)?†[^】]*】")
_T = TypeVar("_T")


def obj(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportRefusedError(f"{where} must be an object, not {_kind(value)}.")
    return value


def opt_obj(value: object, where: str) -> dict[str, Any]:
    """An object, or {} for a missing (null) one."""
    return {} if value is None else obj(value, where)


def arr(value: object, where: str) -> list[Any]:
    """A list, or [] for a missing (null) one."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImportRefusedError(f"{where} must be a list, not {_kind(value)}.")
    return value


def text(value: object, where: str) -> str:
    """Text ("" for nothing); lone surrogates become U+FFFD."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ImportRefusedError(f"{where} must be text, not {_kind(value)}.")
    return clean(value)


def opt_text(value: object, where: str) -> str | None:
    return None if value is None else text(value, where)


def ident(value: object, where: str) -> str | None:
    """A source id: text or a whole number, as text (None when missing or empty)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    found = opt_text(value, where)
    return found or None


def flag(value: object, where: str, default: bool = False) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ImportRefusedError(f"{where} must be true or false, not {_kind(value)}.")
    return value


def index(value: object, where: str, default: int = 0) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ImportRefusedError(f"{where} must be a whole number, not {_kind(value)}.")
    return value


def clean(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def utc(value: object, where: str) -> float | None:
    """UTC seconds from epoch seconds or milliseconds (told apart by size) or an ISO 8601 text
    (a text without a zone is taken as UTC); None when missing or unreadable text."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ImportRefusedError(f"{where} must be a time, not {_kind(value)}.")
    if isinstance(value, int | float):
        seconds = float(value) / 1000 if abs(value) > MS_THRESHOLD else float(value)
        return seconds if math.isfinite(seconds) and abs(seconds) < 1e11 else None
    if isinstance(value, str):
        stripped = value.strip()
        try:
            return utc(float(stripped), where)
        except ValueError:
            pass
        try:
            parsed = datetime.fromisoformat(stripped.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    raise ImportRefusedError(f"{where} must be a time, not {_kind(value)}.")


def local_time(value: str, shapes: tuple[str, ...]) -> float | None:
    """UTC seconds of a text in one of the `strptime` shapes, read in this computer's zone
    (the apps that write them keep no zone); None when no shape fits."""
    for shape in shapes:
        try:
            return datetime.strptime(value.strip(), shape).timestamp()
        except ValueError:
            continue
    return None


@dataclass(slots=True)
class Fallbacks:
    """Reads of one conversation's optional fields: what cannot be read falls back (no time,
    no text, no object) and adds a warning to `warnings`, the conversation's own list."""

    warnings: list[str]

    def time(self, value: object, where: str, local: tuple[str, ...] = ()) -> float | None:
        """UTC seconds as `utc` reads them, or a local text in one of the `local` shapes."""
        if isinstance(value, str) and local:
            found = local_time(value, local)
            if found is not None:
                return found
        try:
            seconds = utc(value, where)
        except ImportRefusedError:
            seconds = None
        if seconds is None and value not in (None, ""):
            self._left_out(f"{where} is not a time that can be read ({_sample(value)})")
        return seconds

    def text(self, value: object, where: str) -> str:
        return self._read(text, value, where, "")

    def opt_text(self, value: object, where: str) -> str | None:
        return self._read(opt_text, value, where, None)

    def obj(self, value: object, where: str) -> dict[str, Any]:
        return self._read(opt_obj, value, where, {})

    def arr(self, value: object, where: str) -> list[Any]:
        return self._read(arr, value, where, [])

    def index(self, value: object, where: str) -> int:
        return self._read(index, value, where, 0)

    def message_left_out(self, label: str, error: ImportRefusedError) -> None:
        """One message that cannot be read (a null entry, a field of the wrong type): the rest
        of the conversation is imported without it."""
        self._left_out(f"{label} could not be read ({str(error).removesuffix('.')})")

    def _read(
        self, read: Callable[[object, str], _T], value: object, where: str, fallback: _T
    ) -> _T:
        try:
            return read(value, where)
        except ImportRefusedError as exc:
            self._left_out(str(exc).removesuffix("."))
            return fallback

    def _left_out(self, reason: str) -> None:
        self.warnings.append(f"{reason}; it was left out.")


def strip_citations(answer: str) -> str:
    """ChatGPT's citation markers (private-use `\\ue200cite…\\ue201` and `【12†source】`)."""
    return _CITATION.sub("", answer) if ("\ue200" in answer or "【" in answer) else answer


def _sample(value: object) -> str:
    shown = repr(value) if isinstance(value, str) else _kind(value)
    return shown if len(shown) <= 40 else f"{shown[:37]}..."


def _kind(value: object) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"
