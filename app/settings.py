"""App preferences that are not per conversation: cache budget, theme, window state.

Stored with QSettings in an INI file inside the data folder, so `--data-dir` isolates them too.
"""

from __future__ import annotations

from pathlib import Path

import psutil
from PySide6.QtCore import QByteArray, QSettings

THEMES = ("system", "light", "dark")


def default_cache_budget_bytes() -> int:
    """A quarter of the machine's RAM: room for the weights and the rest of the system."""
    return int(psutil.virtual_memory().total // 4)


class Preferences:
    def __init__(self, path: Path) -> None:
        self._qs = QSettings(str(path), QSettings.Format.IniFormat)

    @property
    def cache_budget_bytes(self) -> int:
        value = self._qs.value("cache/budget_bytes", default_cache_budget_bytes())
        try:
            return max(0, int(value))
        except (TypeError, ValueError):
            return default_cache_budget_bytes()

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        self._qs.setValue("cache/budget_bytes", int(value))

    @property
    def theme(self) -> str:
        value = str(self._qs.value("ui/theme", "system"))
        return value if value in THEMES else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        if value not in THEMES:
            raise ValueError(f"Unknown theme {value!r}; choose one of {', '.join(THEMES)}.")
        self._qs.setValue("ui/theme", value)

    @property
    def model_id(self) -> str | None:
        value = self._qs.value("models/last", None)
        return str(value) if value else None

    @model_id.setter
    def model_id(self, value: str | None) -> None:
        self._qs.setValue("models/last", value or "")

    @property
    def last_conversation_id(self) -> int | None:
        value = self._qs.value("ui/last_conversation", None)
        try:
            return int(value) if value not in (None, "") else None
        except (TypeError, ValueError):
            return None

    @last_conversation_id.setter
    def last_conversation_id(self, value: int | None) -> None:
        self._qs.setValue("ui/last_conversation", "" if value is None else int(value))

    @property
    def export_folder(self) -> Path:
        """Where the last export went (the home folder until then, or once it is gone)."""
        folder = Path(str(self._qs.value("files/export_folder", "") or Path.home()))
        return folder if folder.is_dir() else Path.home()

    @export_folder.setter
    def export_folder(self, value: Path) -> None:
        self._qs.setValue("files/export_folder", str(value))

    def window_state(self, key: str) -> QByteArray | None:
        value = self._qs.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_window_state(self, key: str, value: QByteArray) -> None:
        self._qs.setValue(f"window/{key}", value)

    def sync(self) -> None:
        self._qs.sync()
