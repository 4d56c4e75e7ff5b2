"""Bringing MCP servers over from other apps' config files: Claude Desktop
(`claude_desktop_config.json`), LM Studio (`~/.lmstudio/mcp.json`) and Cursor
(`~/.cursor/mcp.json`), all in the same `mcpServers` format.

Importing never replaces a server already set up: a name that is taken by a different entry is
reported as a clash and left alone, so the person decides.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from app.mcp.config import McpConfig, McpConfigError, parse_entry, server_entries
from app.mcp.json_file import JsonFileError, read_object


@dataclass(frozen=True)
class ImportSource:
    app: str  # the app's name, as shown to the person
    path: Path


@dataclass
class ImportReport:
    """What an import did, by server name."""

    source: Path
    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # the same entry is already there
    clashes: list[str] = field(default_factory=list)  # the name is taken by another entry
    skipped: dict[str, str] = field(default_factory=dict)  # unusable entries, with the reason

    def summary(self) -> str:
        parts = [f"{len(self.added)} added"]
        if self.unchanged:
            parts.append(f"{len(self.unchanged)} already set up")
        if self.clashes:
            parts.append("kept yours for " + ", ".join(self.clashes) + " (same name)")
        if self.skipped:
            parts.append("skipped " + ", ".join(f"{n} ({why})" for n, why in self.skipped.items()))
        return f"From {self.source}: " + "; ".join(parts) + "."


def candidate_sources(
    home: Path | None = None, platform: str = sys.platform, appdata: str | None = None
) -> list[ImportSource]:
    """Where each app keeps its servers on this kind of machine (the files may not exist)."""
    home = home or Path.home()
    if platform == "darwin":
        claude = home / "Library" / "Application Support" / "Claude"
    elif platform == "win32":
        claude = Path(appdata or os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Claude"
    else:
        claude = home / ".config" / "Claude"
    return [
        ImportSource("Claude Desktop", claude / "claude_desktop_config.json"),
        ImportSource("LM Studio", home / ".lmstudio" / "mcp.json"),
        ImportSource("Cursor", home / ".cursor" / "mcp.json"),
    ]


def available_sources(home: Path | None = None, platform: str = sys.platform) -> list[ImportSource]:
    """The other apps' config files found on this machine."""
    return [s for s in candidate_sources(home, platform) if s.path.is_file()]


def merge_servers(config: McpConfig, source: Path) -> ImportReport:
    """Add the servers of the config file `source` to `config` (in place). Raises
    McpConfigError when `source` cannot be read; the file itself is never changed."""
    what = f"The config file {source}"
    try:
        data = read_object(source, what)
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc
    if data is None:
        raise McpConfigError(f"{what} does not exist.")
    report = ImportReport(source)
    for raw_name, entry in server_entries(data, what).items():
        name = str(raw_name)
        spec = parse_entry(name, entry)
        if spec.problem is not None:
            report.skipped[name] = spec.problem
        elif name not in config.servers:
            config.servers[name] = spec
            report.added.append(name)
        elif config.servers[name] == spec:
            report.unchanged.append(name)
        else:
            report.clashes.append(name)
    return report
