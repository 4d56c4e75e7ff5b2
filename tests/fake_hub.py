"""A local stand-in for the Hugging Face hub: just the endpoints huggingface_hub's downloads use.

* `GET /api/models/{repo}` and `/api/models/{repo}/revision/{rev}`: repository info with its
  files (`siblings`, sizes, LFS sha256 for weights), commit (`sha`) and the `config` summary
  (`architectures`, `model_type`), and `gated` for the repositories in `gated`.
* `GET /api/models/{repo}/tree/{rev}`: the file list `snapshot_download` reads (one page).
* `HEAD`/`GET /{repo}/resolve/{rev}/{file}`: the file, with `ETag`, `X-Repo-Commit` and
  `Content-Length`, honouring `Range: bytes=N-` with 206 and `Content-Range`.
* Unknown repositories, revisions and files get 404 with the hub's `X-Error-Code`.

Every request is logged (method, path, Range), and `drop_after[file] = n` makes the next GET of
that file send n bytes and then close the connection, as a flaky network would.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from huggingface_hub import constants

COMMIT = "4e8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f70"
# The repository the download tests serve, and the files a download of it fetches.
REPO = "test-org/tiny-llama"
MODEL_FILES = [
    "config.json",
    "model.safetensors",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
]


def isolate_hub_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub online, with no telemetry, no stored token and an empty cache of its own."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf-token"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_OIDC_RESOURCE", raising=False)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    range: str | None


class FakeHub:
    """Serves each `repos[repo_id]` folder's top-level files as that repository at COMMIT."""

    def __init__(self, repos: dict[str, Path]) -> None:
        self.repos = repos
        self.requests: list[Request] = []
        self.drop_after: dict[str, int] = {}
        self.gated: set[str] = set()  # repositories whose info says they are gated
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.hub = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def gets(self, file: str) -> list[Request]:
        """The GET requests made for `file`, in order."""
        return [r for r in self.requests if r.method == "GET" and r.path.endswith(f"/{file}")]

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def log(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def take_drop(self, file: str) -> int | None:
        with self._lock:
            return self.drop_after.pop(file, None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    @property
    def hub(self) -> FakeHub:
        return self.server.hub  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the request log is `hub.requests`."""

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _serve(self, body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        self.hub.log(Request(self.command, path, self.headers.get("Range")))
        if path.startswith("/api/models/"):
            self._model_info(path.removeprefix("/api/models/"))
        elif "/resolve/" in path:
            repo, _, rest = path.strip("/").partition("/resolve/")
            revision, _, file = rest.partition("/")
            self._file(repo, revision, file, body)
        else:
            self._error(404, "EntryNotFound")

    def _model_info(self, rest: str) -> None:
        repo, tree, tree_revision = rest.partition("/tree/")
        repo, _, revision = repo.partition("/revision/")
        revision = tree_revision if tree else revision
        if repo not in self.hub.repos:
            return self._error(404, "RepoNotFound")
        if revision not in ("", "main", COMMIT):
            return self._error(404, "RevisionNotFound")
        files = []  # as the tree endpoint lists them
        for file in sorted(self.hub.repos[repo].iterdir()):
            data = file.read_bytes()
            entry = {"type": "file", "path": file.name, "size": len(data), "oid": _git_sha(data)}
            if file.suffix == ".safetensors":
                sha256 = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"oid": sha256, "size": len(data), "pointerSize": 134}
            files.append(entry)
        siblings = [_sibling(entry) for entry in files]
        info = {"id": repo, "modelId": repo, "sha": COMMIT, "private": False, "siblings": siblings}
        if repo in self.hub.gated:
            info["gated"] = "manual"
        config = self.hub.repos[repo] / "config.json"
        if config.is_file():  # the hub's summary of it
            fields = json.loads(config.read_text())
            info["config"] = {k: fields[k] for k in ("architectures", "model_type") if k in fields}
        body = files if tree else info
        self._send(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def _file(self, repo: str, revision: str, name: str, body: bool) -> None:
        if repo not in self.hub.repos:
            return self._error(404, "RepoNotFound")
        if revision not in ("main", COMMIT):
            return self._error(404, "RevisionNotFound")
        file = self.hub.repos[repo] / name
        if "/" in name or not file.is_file():
            return self._error(404, "EntryNotFound")
        data = file.read_bytes()
        lfs = file.suffix == ".safetensors"
        headers = {
            "ETag": f'"{hashlib.sha256(data).hexdigest() if lfs else _git_sha(data)}"',
            "X-Repo-Commit": COMMIT,
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        start, status = 0, 200
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
            first, _, last = wanted.removeprefix("bytes=").partition("-")
            start, end = int(first), int(last) + 1 if last else len(data)
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
            data, status = data[start:end], 206
        cut = self.hub.take_drop(name) if body else None
        self._send(status, data if body else b"", headers, length=len(data), cut=cut)

    def _error(self, status: int, code: str) -> None:
        message = json.dumps({"error": code}).encode()
        self._send(status, message, {"X-Error-Code": code, "Content-Type": "application/json"})

    def _send(
        self,
        status: int,
        data: bytes,
        headers: dict[str, str],
        length: int | None = None,
        cut: int | None = None,
    ) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        if cut is not None:
            # Announce the whole file, send part of it, hang up: an interrupted transfer.
            self.wfile.write(data[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data)


def _sibling(file: dict[str, Any]) -> dict[str, Any]:
    """A tree entry as repository info's `siblings` spell it."""
    sibling = {"rfilename": file["path"], "size": file["size"], "blobId": file["oid"]}
    if "lfs" in file:
        lfs = file["lfs"]
        sibling["lfs"] = {"sha256": lfs["oid"], "size": lfs["size"], "pointerSize": 134}
    return sibling


def _git_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
