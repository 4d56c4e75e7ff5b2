"""The MCP servers a person added, in `<data folder>/mcp.json`, in the `mcpServers` format
Claude Desktop, Cursor and LM Studio use:

    {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"},
                 "enabled": false, "timeout": 120}}}

`command`/`args`/`env`/`cwd` start a server over stdio; `url`/`headers` reach one over Streamable
HTTP. Branchwise adds `enabled` (true by default) and `timeout` (seconds, 60 by default), for
starting and for each call. An entry that cannot be used is kept as written, with the reason,
and is never started; keys Branchwise does not know are written back unchanged.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.kept_files import set_aside
from app.mcp.json_file import JsonFileError, read_object, write_object

CONFIG_NAME = "mcp.json"
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 24 * 3600.0
# The server name the built-in tools are listed under; no entry may take it.
BUILTIN_SERVER = "branchwise"
_WHAT = "The MCP servers file"
_HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp"}


class McpConfigError(ValueError):
    """A servers file that cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class ServerSpec:
    """One server entry. `problem` says why it cannot be used (then it is never started)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    problem: str | None = None
    raw: Any = field(default_factory=dict, compare=False, repr=False)

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def with_enabled(self, enabled: bool) -> ServerSpec:
        return replace(self, enabled=enabled)

    def to_entry(self) -> Any:
        """The entry as it is written back: as read, with Branchwise's own keys brought up to
        date. An unusable entry is written back exactly as read."""
        if self.problem is not None or not isinstance(self.raw, dict):
            return copy.deepcopy(self.raw)
        entry = copy.deepcopy(self.raw)
        entry.pop("disabled", None)
        if self.enabled:
            entry.pop("enabled", None)
        else:
            entry["enabled"] = False
        if self.timeout_s == DEFAULT_TIMEOUT_S:
            entry.pop("timeout", None)
        elif entry.get("timeout") != self.timeout_s:
            whole = self.timeout_s.is_integer()
            entry["timeout"] = int(self.timeout_s) if whole else self.timeout_s
        return entry


@dataclass
class McpConfig:
    """Every entry in the file's order, plus the file's other top-level keys, kept as they are."""

    servers: dict[str, ServerSpec] = field(default_factory=dict)
    other: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        entries = {name: spec.to_entry() for name, spec in self.servers.items()}
        return {**self.other, "mcpServers": entries}


def server_entries(data: dict[str, Any], what: str) -> dict[str, Any]:
    """The name → entry map of a parsed config file: its `mcpServers` (or VS Code's `servers`)."""
    key = "mcpServers" if "mcpServers" in data else "servers"
    entries = data.get(key, {})
    if not isinstance(entries, dict):
        raise McpConfigError(f'{what}: "{key}" must be an object of servers by name.')
    return entries


def parse_config(data: dict[str, Any], what: str = _WHAT) -> McpConfig:
    entries = server_entries(data, what)
    other = {k: v for k, v in data.items() if k not in ("mcpServers", "servers")}
    return McpConfig({str(name): parse_entry(str(name), e) for name, e in entries.items()}, other)


def read_config(path: Path) -> McpConfig:
    """The servers in `path` (none when there is no file). Never changes the file; raises
    McpConfigError when it cannot be read."""
    try:
        data = read_object(path, _WHAT)
    except JsonFileError as exc:
        raise McpConfigError(str(exc)) from exc
    return McpConfig() if data is None else parse_config(data, f"{_WHAT} ({path})")


def load_config(path: Path) -> tuple[McpConfig, str | None]:
    """The app's servers, and a notice for the person when the file could not be read: then it
    is set aside under a new name (never lost) and the app starts with no servers."""
    try:
        return read_config(path), None
    except McpConfigError as exc:
        try:
            aside = set_aside(path)
        except OSError as move_error:
            return McpConfig(), f"{exc} It could not be set aside either: {move_error}."
        return McpConfig(), f"{exc} It was kept as {aside.name}; no servers are set up now."


def save_config(path: Path, config: McpConfig) -> None:
    """Write the servers; a file there that cannot be read is set aside first, not overwritten."""
    try:
        read_object(path, _WHAT)
    except JsonFileError:
        set_aside(path)
    write_object(path, config.to_json())


def parse_entry(name: str, entry: object) -> ServerSpec:
    """The entry as a ServerSpec; one that cannot be used carries the reason in `problem`."""
    try:
        return _parse(name, entry)
    except _Unusable as exc:
        return ServerSpec(name, enabled=False, problem=str(exc), raw=copy.deepcopy(entry))


class _Unusable(Exception):
    pass


def _parse(name: str, entry: object) -> ServerSpec:
    if not name.strip():
        raise _Unusable("A server needs a name.")
    if name == BUILTIN_SERVER:
        raise _Unusable(f'The name "{BUILTIN_SERVER}" is kept for Branchwise\'s built-in tools.')
    if not isinstance(entry, dict):
        raise _Unusable('The entry must be an object with a "command" or a "url".')
    kind = entry.get("type")
    if kind == "sse":
        raise _Unusable("SSE servers are not supported; use the server's Streamable HTTP URL.")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise _Unusable('The entry needs either a "command" (stdio) or a "url" (HTTP).')
    if kind is not None and kind != "stdio" and kind not in _HTTP_TYPES:
        raise _Unusable(f'Unknown server type {kind!r}: use "stdio" or "http".')
    if (kind == "stdio" and has_url) or (kind in _HTTP_TYPES and has_command):
        raise _Unusable(
            f"A server of type {kind!r} cannot have a " + ('"url".' if has_url else '"command".')
        )
    common = {"enabled": _enabled(entry), "timeout_s": _timeout(entry), "raw": copy.deepcopy(entry)}
    if has_url:
        url = _text(entry, "url")
        if not url.startswith(("http://", "https://")):
            raise _Unusable(f"The url must start with http:// or https://, not {url[:40]!r}.")
        return ServerSpec(name, url=url, headers=_strings(entry, "headers"), **common)
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Unusable('"args" must be a list of text arguments.')
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _Unusable('"cwd" must be a folder path.')
    command = _text(entry, "command")
    return ServerSpec(
        name, command=command, args=tuple(args), env=_strings(entry, "env"), cwd=cwd, **common
    )


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _Unusable(f'"{key}" must be non-empty text.')
    return value.strip()


def _strings(entry: dict[str, Any], key: str) -> dict[str, str]:
    """An object of text values; numbers are taken as their text, as other apps do."""
    value = entry.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Unusable(f'"{key}" must be an object of names and values.')
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise _Unusable(f'"{key}" → {k!r} must be text.')
        out[str(k)] = str(v)
    return out


def _enabled(entry: dict[str, Any]) -> bool:
    if "enabled" in entry:
        value = entry["enabled"]
        if not isinstance(value, bool):
            raise _Unusable('"enabled" must be true or false.')
        return value
    disabled = entry.get("disabled", False)  # Claude Code's and Cline's spelling
    if not isinstance(disabled, bool):
        raise _Unusable('"disabled" must be true or false.')
    return not disabled


def _timeout(entry: dict[str, Any]) -> float:
    value = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Unusable('"timeout" must be a number of seconds.')
    if not 0 < value <= MAX_TIMEOUT_S:
        raise _Unusable(f'"timeout" must be between 0 and {int(MAX_TIMEOUT_S)} seconds.')
    return float(value)
