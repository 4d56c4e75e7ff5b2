"""Hugging Face downloads (issue 4, items 5 and 7), against a local server that speaks the hub's
protocol: a full download, one interrupted and resumed, one cancelled, unknown repositories, a
full disk."""

from __future__ import annotations

import errno
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import huggingface_hub.file_download
import mlx_lm
import pytest
from huggingface_hub import constants

import app.library.downloads as downloads
from app.library import entries as library
from app.library.downloads import DownloadCancelled, DownloadError, download_model
from app.library.entry_metadata import METADATA_FILE
from app.library.install import import_folder
from tests.fake_hub import REPO, FakeHub, isolate_hub_client


@pytest.fixture(autouse=True)
def isolated_hub_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_hub_client(tmp_path, monkeypatch)


@pytest.fixture(scope="module")
def repo_folder(tmp_path_factory: pytest.TempPathFactory, llama_path: Path) -> Path:
    """The tiny llama as a hub repository, with files a model does not need."""
    folder = tmp_path_factory.mktemp("repo") / "tiny-llama"
    shutil.copytree(llama_path, folder)
    (folder / "README.md").write_text("# tiny llama\n")
    (folder / "pytorch_model.bin").write_bytes(b"\0" * 2048)
    (folder / "consolidated.safetensors").write_bytes(b"\0" * 2048)
    return folder


@pytest.fixture
def hub(repo_folder: Path, tmp_path: Path, llama_path: Path) -> Iterator[FakeHub]:
    no_weights = tmp_path / "pickles"
    no_weights.mkdir()
    shutil.copy(llama_path / "config.json", no_weights)
    (no_weights / "pytorch_model.bin").write_bytes(b"\0" * 2048)
    exotic = tmp_path / "exotic"
    shutil.copytree(llama_path, exotic)
    (exotic / "config.json").write_text(json.dumps({"model_type": "bert"}))
    tiktoken = tmp_path / "tiktoken"
    shutil.copytree(llama_path, tiktoken)
    (tiktoken / "tiktoken.model").write_bytes(b"aGVsbG8= 0\n")
    (tiktoken / "o200k_base.tiktoken").write_bytes(b"d29ybGQ= 1\n")
    repos = {
        REPO: repo_folder,
        "test-org/pickles": no_weights,
        "test-org/exotic": exotic,
        "test-org/tiktoken": tiktoken,
    }
    with FakeHub(repos) as server:
        yield server


@pytest.fixture
def models(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    return folder


NEEDED = [
    "config.json",
    "model.safetensors",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
]


def _same_files(entry: Path, repo_folder: Path) -> bool:
    return all((entry / n).read_bytes() == (repo_folder / n).read_bytes() for n in NEEDED)


def test_a_full_download_adds_a_model_that_loads(
    hub: FakeHub, models: Path, repo_folder: Path
) -> None:
    seen: list[tuple[int, int]] = []
    entry = download_model(REPO, models, lambda *step: seen.append(step), endpoint=hub.endpoint)

    assert sorted(p.name for p in entry.iterdir()) == sorted([*NEEDED, METADATA_FILE])
    assert _same_files(entry, repo_folder)
    total = sum((repo_folder / n).stat().st_size for n in NEEDED)
    assert seen[-1] == (total, total)
    (info,) = library.list_models(models)
    assert (info.name, info.source, info.path) == ("tiny-llama", f"Hugging Face: {REPO}", entry)
    _, tokenizer = mlx_lm.load(str(entry))
    assert tokenizer.eos_token_ids == {2}


def test_a_tiktoken_tokenizer_is_downloaded_with_the_model(hub: FakeHub, models: Path) -> None:
    entry = download_model("test-org/tiktoken", models, endpoint=hub.endpoint)
    assert (entry / "tiktoken.model").read_bytes() == b"aGVsbG8= 0\n"
    assert (entry / "o200k_base.tiktoken").read_bytes() == b"d29ybGQ= 1\n"
    assert sorted(p.name for p in entry.iterdir()) == sorted(
        [*NEEDED, "o200k_base.tiktoken", "tiktoken.model", METADATA_FILE]
    )


def test_a_dropped_connection_resumes_where_it_stopped(
    hub: FakeHub, models: Path, repo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small chunks, so the bytes before the drop are kept and the retry asks only for the rest.
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)
    hub.drop_after["model.safetensors"] = 200_000

    entry = download_model(REPO, models, endpoint=hub.endpoint)

    first, retry = hub.gets("model.safetensors")
    assert first.range is None
    assert retry.range is not None and retry.range.startswith("bytes=")
    assert 0 < int(retry.range.removeprefix("bytes=").rstrip("-")) <= 200_000
    assert _same_files(entry, repo_folder)


def test_a_cancelled_download_adds_nothing_and_the_next_try_resumes(
    hub: FakeHub, models: Path, repo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 64 * 1024)
    cancel = threading.Event()

    def cancel_in_the_weights(done: int, total: int) -> None:
        if done > 100_000:  # past the small files, inside model.safetensors
            cancel.set()

    with pytest.raises(DownloadCancelled):
        download_model(REPO, models, cancel_in_the_weights, cancel, endpoint=hub.endpoint)
    assert library.list_models(models) == []
    assert len(hub.gets("model.safetensors")) == 1

    entry = download_model(REPO, models, endpoint=hub.endpoint)
    assert _same_files(entry, repo_folder)
    for small_file in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        assert len(hub.gets(small_file)) == 1, f"{small_file} was downloaded again"
    assert [p.name for p in models.iterdir()] == ["tiny-llama"]


@pytest.mark.parametrize(
    ("repo_id", "message"),
    [
        ("test-org/no-such-model", "There is no model 'test-org/no-such-model' on Hugging Face"),
        ("not a repo id!", "'not a repo id!' is not a repository id"),
        ("test-org/pickles", "test-org/pickles has no safetensors weights"),
        ("test-org/exotic", "model type 'bert' is not supported by mlx-lm"),
    ],
)
def test_a_repository_that_cannot_be_used_gets_a_clear_message(
    hub: FakeHub, models: Path, repo_id: str, message: str
) -> None:
    with pytest.raises(DownloadError, match=message):
        download_model(repo_id, models, endpoint=hub.endpoint)
    assert list(models.iterdir()) == []
    assert not any(r.path.endswith(".safetensors") and r.method == "GET" for r in hub.requests)


def test_too_little_disk_space_is_refused_before_downloading(
    hub: FakeHub, models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(downloads.shutil, "disk_usage", lambda _: SimpleNamespace(free=10_000))
    with pytest.raises(DownloadError, match="Not enough disk space for test-org/tiny-llama"):
        download_model(REPO, models, endpoint=hub.endpoint)
    assert [r.method for r in hub.requests] == ["GET"]  # only the repository info
    assert library.list_models(models) == []


def test_a_disk_that_fills_up_mid_download_leaves_the_library_intact(
    hub: FakeHub, models: Path, llama_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    existing = import_folder(llama_path, models)

    def no_space(url: str, temp_file: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(huggingface_hub.file_download, "http_get", no_space)
    with pytest.raises(DownloadError, match="The disk is full"):
        download_model(REPO, models, endpoint=hub.endpoint)
    assert [info.path for info in library.list_models(models)] == [existing]
