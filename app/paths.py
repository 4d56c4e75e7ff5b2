"""Where Branchwise keeps its files: one data folder (platformdirs, or --data-dir)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "Branchwise"


@dataclass(frozen=True)
class AppPaths:
    """Every file location derives from one data folder, so a test or a second profile can point
    the whole app somewhere else with `--data-dir`."""

    data_dir: Path

    @classmethod
    def resolve(cls, data_dir: str | Path | None = None) -> AppPaths:
        root = Path(data_dir) if data_dir else Path(platformdirs.user_data_dir(APP_NAME, False))
        root = root.expanduser().resolve()
        root.mkdir(parents=True, exist_ok=True)
        return cls(root)

    @property
    def database(self) -> Path:
        return self.data_dir / "conversations.sqlite3"

    @property
    def knowledge_database(self) -> Path:
        """The index of knowledge folders (app.knowledge): made again from the files if lost."""
        return self.data_dir / "knowledge.db"

    @property
    def models_dir(self) -> Path:
        path = self.data_dir / "models"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def caches_dir(self) -> Path:
        """Saved layer caches (the engine makes and manages the folder)."""
        return self.data_dir / "caches"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def lock_file(self) -> Path:
        return self.data_dir / "branchwise.lock"

    @property
    def settings_file(self) -> Path:
        return self.data_dir / "settings.ini"
