"""Saved connections: where their keys go (the keyring, else a file only the person can read),
what is refused with a clear message, and how a chat names a remote model."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends.fail import Keyring as FailKeyring
from keyring.errors import PasswordDeleteError

from app.remote.client import request_params
from app.remote.connections import (
    KEYRING_SERVICE,
    Connection,
    Connections,
    ConnectionSettingsError,
    FileKeys,
    KeyringKeys,
    RemoteModel,
    default_key_store,
    is_remote,
    parse_remote,
)


class MemoryKeyring(KeyringBackend):
    """A keyring backend as a desktop has one (priority above 0), in memory."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.saved.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.saved[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.saved:
            raise PasswordDeleteError(username)
        del self.saved[(service, username)]


@pytest.fixture
def desktop_keyring() -> Iterator[MemoryKeyring]:
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """A headless box: keyring finds no backend (its "fail" one, priority 0)."""
    before = keyring.get_keyring()
    keyring.set_keyring(FailKeyring())
    yield
    keyring.set_keyring(before)


def test_keys_go_to_the_keyring_when_there_is_one(tmp_path: Path, desktop_keyring) -> None:
    connections = Connections(tmp_path)
    assert isinstance(connections.keys, KeyringKeys)
    connections.save(Connection("Studio", "http://10.0.0.2:8000/v1"), "s3cret")
    assert desktop_keyring.saved == {(KEYRING_SERVICE, "Studio"): "s3cret"}
    assert "s3cret" not in (tmp_path / "connections.json").read_text()
    assert not (tmp_path / "connection-keys.json").exists()

    connections.save(Connection("Lab", "http://10.0.0.2:8000/v1"), None, replacing="Studio")
    assert desktop_keyring.saved == {(KEYRING_SERVICE, "Lab"): "s3cret"}  # the key moved along
    connections.remove("Lab")
    assert desktop_keyring.saved == {} and connections.all() == []


def test_without_a_keyring_keys_go_to_a_file_only_the_owner_reads(
    tmp_path: Path, no_keyring
) -> None:
    keys = default_key_store(tmp_path)
    assert isinstance(keys, FileKeys)
    connections = Connections(tmp_path, keys=keys)
    connections.save(Connection("Studio", " http://127.0.0.1:8080/v1/ "), "s3cret")
    path = tmp_path / "connection-keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "connections.json").stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"Studio": "s3cret"}
    assert connections.all() == [Connection("Studio", "http://127.0.0.1:8080/v1")]
    assert Connections(tmp_path, keys=FileKeys(path)).api_key("Studio") == "s3cret"

    connections.save(Connection("Studio", "http://127.0.0.1:8080/v1"), None, replacing="Studio")
    assert connections.api_key("Studio") == "s3cret"  # an empty key field keeps the key
    connections.save(Connection("Studio", "http://127.0.0.1:8080/v1"), "", replacing="Studio")
    assert connections.api_key("Studio") is None


@pytest.mark.parametrize(
    ("name", "url", "message"),
    [
        ("", "http://127.0.0.1:8000/v1", "needs a name"),
        ("a/b", "http://127.0.0.1:8000/v1", "without “/”"),
        ("Studio", "127.0.0.1:8000", "is not a server address"),
        ("Studio", "ftp://host/v1", "is not a server address"),
    ],
)
def test_a_connection_that_cannot_work_is_refused_plainly(
    tmp_path: Path, name: str, url: str, message: str
) -> None:
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    with pytest.raises(ConnectionSettingsError, match=message):
        connections.save(Connection(name, url), None)
    assert connections.all() == []


def test_two_connections_cannot_share_a_name(tmp_path: Path) -> None:
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    connections.save(Connection("Studio", "http://a:1/v1"), "one")
    connections.save(Connection("Lab", "http://b:2/v1"), "two")
    with pytest.raises(ConnectionSettingsError, match="already a connection named “Studio”"):
        connections.save(Connection("Studio", "http://b:2/v1"), None, replacing="Lab")
    assert connections.api_key("Studio") == "one" and connections.api_key("Lab") == "two"


def test_a_damaged_connections_file_is_reported_not_lost(tmp_path: Path) -> None:
    (tmp_path / "connections.json").write_text("{not json")
    connections = Connections(tmp_path, keys=FileKeys(tmp_path / "keys.json"))
    with pytest.raises(ConnectionSettingsError, match="cannot be read"):
        connections.all()
    assert (tmp_path / "connections.json").read_text() == "{not json"


def test_remote_model_ids_keep_slashes_in_the_model_name() -> None:
    model = RemoteModel("Studio", "/models/Qwen3-8B")
    assert model.model_id == "remote:Studio//models/Qwen3-8B"
    assert parse_remote(model.model_id) == model
    assert is_remote(model.model_id) and not is_remote("Qwen3-8B-4bit") and not is_remote(None)
    with pytest.raises(ConnectionSettingsError):
        parse_remote("remote:Studio")


def test_sampling_parameters_go_out_as_servers_take_them() -> None:
    params = {"temperature": 0.7, "top_p": 0.95, "top_k": 0, "min_p": 0.0,
              "repetition_penalty": 1.0, "max_tokens": 64, "seed": None}  # fmt: skip
    assert request_params(params) == {"temperature": 0.7, "top_p": 0.95, "max_tokens": 64}
    tuned = {**params, "top_k": 40, "repetition_penalty": 1.1, "seed": 7, "logit_bias": {"2": -5}}
    assert request_params(tuned) == {
        "temperature": 0.7, "top_p": 0.95, "max_tokens": 64, "seed": 7,
        "logit_bias": {"2": -5}, "extra_body": {"top_k": 40, "repetition_penalty": 1.1},
    }  # fmt: skip
