"""How a stdio server is started: the PATH it gets, where its command is found, and the command
line shown to the person before it first runs (with `env` and header values masked).

An app started from the Finder gets a minimal PATH (`/usr/bin:/bin:/usr/sbin:/sbin`), so `npx`
and `uvx` from Homebrew, nvm or `~/.local/bin` would not be found. The person's login shell knows
the real one: it is asked once, under a time limit, and the answer is kept for the session.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from app.mcp.config import ServerSpec

SHELL_TIMEOUT_S = 5.0
MASK = "•••"
# Where installers put `npx`/`uvx` when the login shell does not say (or cannot be asked).
_USUAL_DIRS = ("/opt/homebrew/bin", "/usr/local/bin", "~/.local/bin", "~/.cargo/bin")
_MARK = "__branchwise_path__"
_lock = threading.Lock()
_cached: str | None = None


class CommandNotFoundError(RuntimeError):
    """The server's command is on none of the PATH's folders; the message says what to do."""


def shell_path(shell: str | None = None, timeout_s: float = SHELL_TIMEOUT_S) -> str | None:
    """The PATH of the person's interactive login shell, or None when it cannot be learned in
    time. Blocks (up to `timeout_s`): call it off the GUI thread."""
    shell = shell or os.environ.get("SHELL") or "/bin/sh"
    # Markers around the value: an interactive shell may print a greeting or set a title.
    script = f"printf '{_MARK}%s{_MARK}' \"$PATH\""
    try:
        shell_process = subprocess.Popen(
            [shell, "-ilc", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = shell_process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        # The whole group: what the shell's startup files started must not linger either.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell_process.pid, signal.SIGKILL)
        shell_process.communicate()
        return None
    parts = out.decode("utf-8", "replace").split(_MARK)
    return parts[1] if len(parts) >= 3 and parts[1].strip() else None


def search_path(shell: str | None = None) -> str:
    """The PATH stdio servers get: the login shell's, then this process's, then the usual
    install folders that exist, without repeats. Learned once and kept."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = merge_paths(shell_path(shell), os.environ.get("PATH"))
        return _cached


def merge_paths(*paths: str | None) -> str:
    folders: list[str] = []
    for path in paths:
        folders += [p for p in (path or "").split(os.pathsep) if p]
    folders += [str(Path(d).expanduser()) for d in _USUAL_DIRS if Path(d).expanduser().is_dir()]
    return os.pathsep.join(dict.fromkeys(folders))


def resolve_command(command: str, path: str) -> str:
    """The executable `command` names: itself when it is a path, else the first match on
    `path`. Raises CommandNotFoundError with advice."""
    if os.sep in command:
        if not os.access(command, os.X_OK):
            raise CommandNotFoundError(f"{command} does not exist or cannot be run.")
        return command
    found = shutil.which(command, path=path)
    if found is None:
        raise CommandNotFoundError(_advice(command))
    return found


def _advice(command: str) -> str:
    hint = {
        "npx": "Install Node.js",
        "node": "Install Node.js",
        "uvx": "Install uv",
        "uv": "Install uv",
        "docker": "Install Docker",
    }.get(Path(command).name)
    where = f"/opt/homebrew/bin/{command}"
    return (
        f"`{command}` was not found on your PATH. "
        + (f"{hint}, or give" if hint else "Give")
        + f" the full path of the command (for example {where})."
    )


def display_command(spec: ServerSpec) -> str:
    """The server as it will be started, for the person to check: the command line with its
    environment (values masked), or the URL with its headers (values masked)."""
    if spec.url:
        headers = " ".join(f"{shlex.quote(k + ': ' + MASK)}" for k in spec.headers)
        return f"{spec.url} {headers}".strip()
    env = " ".join(f"{k}={MASK}" for k in spec.env)
    line = shlex.join([spec.command or "", *spec.args])
    cwd = f"(in {spec.cwd}) " if spec.cwd else ""
    return f"{cwd}{env} {line}".strip() if env else f"{cwd}{line}"
