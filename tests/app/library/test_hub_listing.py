"""What a download would fetch, asked of the hub before downloading (issue 18, item 8): the files
and their sizes, what the model is, whether it fits the memory and the disk, and plain-worded
errors; and the download fetches exactly the files listed."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.library import download_fit
from app.library.download_fit import (
    DownloadFit,
    MemoryFit,
    assess_fit,
    bytes_to_fetch,
    free_disk_bytes,
)
from app.library.downloads import download_model, partial_folder
from app.library.hub_listing import DownloadError, list_repository
from tests.fake_hub import MODEL_FILES, REPO, FakeHub, isolate_hub_client


@pytest.fixture(autouse=True)
def isolated_hub_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_hub_client(tmp_path, monkeypatch)


@pytest.fixture
def hub(tmp_path: Path, llama_path: Path) -> Iterator[FakeHub]:
    repo = tmp_path / "tiny-llama"
    shutil.copytree(llama_path, repo)
    config = json.loads((llama_path / "config.json").read_text())
    (repo / "config.json").write_text(json.dumps({**config, "architectures": ["LlamaForCausalLM"]}))
    (repo / "README.md").write_text("# tiny llama\n")
    (repo / "pytorch_model.bin").write_bytes(b"\0" * 2048)
    no_config = tmp_path / "no-config"
    no_config.mkdir()
    shutil.copy(llama_path / "model.safetensors", no_config)
    with FakeHub({REPO: repo, "test-org/no-config": no_config}) as server:
        yield server


def test_the_listing_names_the_files_a_download_fetches_with_their_sizes(
    hub: FakeHub, tmp_path: Path
) -> None:
    listing = list_repository(f"  {REPO} ", endpoint=hub.endpoint)

    assert listing.repo_id == REPO
    assert list(listing.files) == MODEL_FILES  # no README, no PyTorch pickle
    repo = hub.repos[REPO]
    sizes = {name: (repo / name).stat().st_size for name in MODEL_FILES}
    assert listing.files == sizes
    assert listing.total_bytes == sum(sizes.values())
    assert listing.weights_bytes == sizes["model.safetensors"]
    assert (listing.model_type, listing.architecture) == ("llama", "LlamaForCausalLM")
    assert not listing.gated
    assert [r.method for r in hub.requests] == ["GET"]  # one question, no file fetched

    models = tmp_path / "models"
    entry = download_model(REPO, models, endpoint=hub.endpoint)
    assert sorted(p.name for p in entry.iterdir() if p.name in listing.files) == MODEL_FILES
    assert not (entry / "README.md").exists()


def test_a_gated_repository_is_listed_as_gated(hub: FakeHub) -> None:
    hub.gated.add(REPO)
    assert list_repository(REPO, endpoint=hub.endpoint).gated


@pytest.mark.parametrize(
    ("repo_id", "message"),
    [
        ("test-org/no-such-model", "There is no model 'test-org/no-such-model' on Hugging Face"),
        ("not a repo id!", "'not a repo id!' is not a repository id"),
        ("test-org/no-config", "test-org/no-config has no config.json"),
    ],
)
def test_a_repository_that_cannot_be_used_is_refused_in_words(
    hub: FakeHub, repo_id: str, message: str
) -> None:
    with pytest.raises(DownloadError, match=message):
        list_repository(repo_id, endpoint=hub.endpoint)


def test_an_unreachable_hub_says_to_check_the_connection() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match=r"Could not ask Hugging Face about a/b .*network"):
        list_repository("a/b", endpoint=f"http://127.0.0.1:{port}")


GB = 1_000_000_000


@pytest.mark.parametrize(
    ("weights", "memory", "verdict"),
    [
        (1 * GB, 24 * GB, MemoryFit.FITS),
        (18 * GB, 24 * GB, MemoryFit.FITS),  # exactly 75 %
        (19 * GB, 24 * GB, MemoryFit.TIGHT),
        (24 * GB, 24 * GB, MemoryFit.TIGHT),
        (25 * GB, 24 * GB, MemoryFit.TOO_BIG),
    ],
)
def test_weights_are_compared_with_the_memory(
    weights: int, memory: int, verdict: MemoryFit
) -> None:
    fit = DownloadFit(weights_bytes=weights, memory_bytes=memory, fetch_bytes=0, free_bytes=0)
    assert fit.memory is verdict


def test_the_disk_must_hold_what_is_still_to_fetch(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = list_repository(REPO, endpoint=hub.endpoint)
    models = tmp_path / "models"
    folder = partial_folder(REPO, models)
    monkeypatch.setattr(download_fit.psutil, "virtual_memory", lambda: SimpleNamespace(total=GB))
    monkeypatch.setattr(download_fit.shutil, "disk_usage", lambda _: SimpleNamespace(free=20_000))

    fit = assess_fit(listing, folder, models)  # the models folder does not exist yet
    assert (fit.weights_bytes, fit.memory_bytes) == (listing.weights_bytes, GB)
    assert fit.fetch_bytes == listing.total_bytes > 20_000
    assert not fit.fits_disk

    # A cancelled download kept its complete weights: only the rest is still to fetch.
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"\0" * listing.files["model.safetensors"])
    assert bytes_to_fetch(listing.files, folder) == listing.total_bytes - listing.weights_bytes
    assert assess_fit(listing, folder, models).fits_disk


def test_free_disk_is_read_where_the_models_folder_will_be(tmp_path: Path) -> None:
    assert free_disk_bytes(tmp_path / "not" / "yet") == shutil.disk_usage(tmp_path).free
