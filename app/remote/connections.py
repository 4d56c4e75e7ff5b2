"""Saved connections to OpenAI-compatible servers (vLLM, llama.cpp, Ollama, mlx_lm.server...).

A connection is a name and a base URL, kept in `connections.json` in the data folder. Its API key
never goes in that file: it goes to the system keyring when one is usable, otherwise to
`connection-keys.json`, a file only the person can read (mode 0600) beside it.

A chat on a remote model records the model id `remote:<connection>/<model>`; the model part may
itself hold slashes (mlx_lm.server names its model by its folder path).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from app.kept_files import replace_atomically

REMOTE_PREFIX = "remote:"
KEYRING_SERVICE = "Branchwise connections"
_NAME = re.compile(r"^[^/\s][^/]{0,63}$")


class ConnectionSettingsError(ValueError):
    """A connection that cannot be saved as given; the message is for the person."""


@dataclass(frozen=True)
class Connection:
    name: str
    base_url: str


@dataclass(frozen=True)
class RemoteModel:
    """A model on a connection, as a chat names it."""

    connection: str
    model: str

    @property
    def model_id(self) -> str:
        return f"{REMOTE_PREFIX}{self.connection}/{self.model}"


def is_remote(model_id: str | None) -> bool:
    return bool(model_id) and model_id.startswith(REMOTE_PREFIX)


def parse_remote(model_id: str) -> RemoteModel:
    """`remote:<connection>/<model>` split in two; raises ConnectionSettingsError otherwise."""
    if not is_remote(model_id) or "/" not in model_id:
        raise ConnectionSettingsError(f"{model_id!r} is not a remote model.")
    connection, model = model_id[len(REMOTE_PREFIX) :].split("/", 1)
    if not connection or not model:
        raise ConnectionSettingsError(f"{model_id!r} is not a remote model.")
    return RemoteModel(connection, model)


def check_base_url(url: str) -> str:
    """The URL without trailing slashes; refuses what no OpenAI client could reach."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConnectionSettingsError(
            f"“{url}” is not a server address: give one like http://127.0.0.1:8000/v1."
        )
    return url


class KeyStore(Protocol):
    def get(self, name: str) -> str | None: ...
    def set(self, name: str, key: str | None) -> None: ...
    @property
    def where(self) -> str: ...


class KeyringKeys:
    """API keys in the system keyring (macOS Keychain, Secret Service, Windows Credentials)."""

    where = "the system keyring"

    def get(self, name: str) -> str | None:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, name)

    def set(self, name: str, key: str | None) -> None:
        import keyring
        from keyring.errors import PasswordDeleteError

        if key:
            keyring.set_password(KEYRING_SERVICE, name, key)
        else:
            with contextlib.suppress(PasswordDeleteError):
                keyring.delete_password(KEYRING_SERVICE, name)


class FileKeys:
    """API keys in a JSON file only its owner can read or write (0600), for systems without a
    keyring (a headless Linux box)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def where(self) -> str:
        return f"{self.path} (readable only by you)"

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, key: str | None) -> None:
        keys = self._read()
        if key:
            keys[name] = key
        else:
            keys.pop(name, None)
        replace_atomically(self.path, json.dumps(keys, indent=2))

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConnectionSettingsError(
                f"The API keys in {self.path} cannot be read: {exc}"
            ) from exc
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def default_key_store(data_dir: Path) -> KeyStore:
    """The keyring when a real one is installed (priority above 0), else the private file."""
    try:
        import keyring

        usable = keyring.get_keyring().priority > 0
    except Exception:  # a broken keyring set-up must not stop the app: the file still works
        usable = False
    return KeyringKeys() if usable else FileKeys(data_dir / "connection-keys.json")


class Connections:
    """The saved connections of one data folder."""

    def __init__(self, data_dir: Path, keys: KeyStore | None = None) -> None:
        self.path = data_dir / "connections.json"
        self._data_dir = data_dir
        self._keys = keys

    @property
    def keys(self) -> KeyStore:
        # Chosen on first use: importing keyring and probing its backends is not free, and
        # the window comes first.
        if self._keys is None:
            self._keys = default_key_store(self._data_dir)
        return self._keys

    def all(self) -> list[Connection]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise ConnectionSettingsError(
                f"The connections in {self.path} cannot be read: {exc}"
            ) from exc
        return [
            Connection(str(item["name"]), str(item["base_url"]))
            for item in data
            if isinstance(item, dict) and "name" in item and "base_url" in item
        ]

    def get(self, name: str) -> Connection | None:
        return next((c for c in self.all() if c.name == name), None)

    def api_key(self, name: str) -> str | None:
        return self.keys.get(name)

    def save(
        self, connection: Connection, api_key: str | None, *, replacing: str | None = None
    ) -> Connection:
        """Add a connection, or replace the one named `replacing` (a rename moves its key).
        `api_key` None keeps the stored key; "" removes it."""
        name = connection.name.strip()
        if not _NAME.match(name):
            raise ConnectionSettingsError(
                "A connection needs a name of up to 64 characters, without “/”."
            )
        saved = Connection(name, check_base_url(connection.base_url))
        others = [c for c in self.all() if c.name not in (name, replacing)]
        if replacing != name and any(c.name == name for c in self.all()):
            raise ConnectionSettingsError(f"There is already a connection named “{name}”.")
        if api_key is None and replacing and replacing != name:
            api_key = self.keys.get(replacing) or ""
        if api_key is not None:
            self.keys.set(name, api_key)
        if replacing and replacing != name:
            self.keys.set(replacing, None)
        self._write([*others, saved])
        return saved

    def remove(self, name: str) -> None:
        self._write([c for c in self.all() if c.name != name])
        self.keys.set(name, None)

    def _write(self, connections: list[Connection]) -> None:
        data = [{"name": c.name, "base_url": c.base_url} for c in connections]
        replace_atomically(self.path, json.dumps(data, indent=2))
