"""The download dialog looks before it downloads (issue 18, item 8): against a local stand-in for
the Hugging Face hub it lists the files with their sizes and the total, says whether the weights
fit in memory and the disk has room, words errors plainly, and enables Download only after a
successful check; Download then goes through the library's progress dialog."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from app.library import download_fit
from app.sizes import format_bytes
from tests.fake_hub import MODEL_FILES, REPO, FakeHub, isolate_hub_client
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app
from ui.dialogs.download_dialog import DownloadDialog

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

CHECK_TIMEOUT_MS = 20000


@pytest.fixture(autouse=True)
def isolated_hub_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_hub_client(tmp_path, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path, llama_path: Path) -> Path:
    folder = tmp_path / "repo"
    shutil.copytree(llama_path, folder)
    config = json.loads((llama_path / "config.json").read_text())
    config["architectures"] = ["LlamaForCausalLM"]
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "README.md").write_text("# tiny llama\n")
    (folder / "pytorch_model.bin").write_bytes(b"\0" * 2048)
    return folder


@pytest.fixture
def hub(repo: Path) -> Iterator[FakeHub]:
    with FakeHub({REPO: repo}) as server:
        yield server


def _dialog(qtbot, hub: FakeHub, tmp_path: Path) -> DownloadDialog:
    dialog = DownloadDialog(tmp_path / "models", hub.endpoint)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _check(qtbot, dialog: DownloadDialog, repo_id: str) -> None:
    """Type the id and press Enter, as a person would; wait for the answer."""
    dialog.repo_edit.clear()
    qtbot.keyClicks(dialog.repo_edit, repo_id)
    qtbot.keyClick(dialog.repo_edit, Qt.Key.Key_Return)
    assert not dialog.check_button.isEnabled()  # asked, off the GUI thread
    qtbot.waitUntil(dialog.check_button.isEnabled, timeout=CHECK_TIMEOUT_MS)


def _shown_files(dialog: DownloadDialog) -> list[tuple[str, str]]:
    table = dialog.files
    return [(table.item(r, 0).text(), table.item(r, 1).text()) for r in range(table.rowCount())]


def test_a_check_lists_the_files_and_the_total_and_says_the_model_fits(
    qtbot, hub: FakeHub, repo: Path, tmp_path: Path
) -> None:
    dialog = _dialog(qtbot, hub, tmp_path)
    assert not dialog.download_button.isEnabled()  # nothing checked yet

    _check(qtbot, dialog, REPO)

    sizes = {name: (repo / name).stat().st_size for name in MODEL_FILES}
    assert _shown_files(dialog) == [(name, format_bytes(sizes[name])) for name in MODEL_FILES]
    assert dialog.files.isVisible()
    total = sum(sizes.values())
    assert dialog.total.text() == f"5 files, {format_bytes(total)} in all"
    assert dialog.model.text() == "Model: LlamaForCausalLM (llama)"
    weights = format_bytes(sizes["model.safetensors"])
    assert dialog.memory.text().startswith(f"Fits in memory: {weights} of weights, ")
    assert dialog.memory.property("kind") == ""
    assert dialog.disk.text().startswith(f"Disk: {format_bytes(total)} to download, ")
    assert not dialog.gated.isVisible()
    assert dialog.download_button.isEnabled()
    assert [r.method for r in hub.requests] == ["GET"]  # the listing only: nothing downloaded
    assert [r.path for r in hub.requests] == [f"/api/models/{REPO}"]

    hub.gated.add(REPO)
    _check(qtbot, dialog, REPO)
    assert dialog.gated.isVisible() and "gated" in dialog.gated.text()
    assert dialog.gated.property("kind") == "warning"

    # Another id in the box: the check shown is not about it, so Download waits for a new one.
    qtbot.keyClicks(dialog.repo_edit, "-4bit")
    assert not dialog.download_button.isEnabled()
    assert not dialog.files.isVisible() and not dialog.total.isVisible()


def test_an_answer_about_an_id_edited_meanwhile_is_not_offered(
    qtbot, hub: FakeHub, tmp_path: Path
) -> None:
    dialog = _dialog(qtbot, hub, tmp_path)
    qtbot.keyClicks(dialog.repo_edit, REPO)
    qtbot.keyClick(dialog.repo_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(dialog.repo_edit, "-8bit")  # before the answer comes back
    assert dialog.check_button.isEnabled() and dialog.status.text() == ""
    qtbot.waitUntil(lambda: len(hub.requests) == 1, timeout=CHECK_TIMEOUT_MS)
    qtbot.wait(500)  # the answer reaches the GUI thread
    assert dialog.checked_repo is None
    assert not dialog.files.isVisible() and not dialog.download_button.isEnabled()


def test_weights_too_big_for_the_memory_or_the_disk_are_said_plainly(
    qtbot, hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = _dialog(qtbot, hub, tmp_path)
    memory = SimpleNamespace(total=100_000)  # less than the tiny model's weights
    monkeypatch.setattr(download_fit.psutil, "virtual_memory", lambda: memory)

    _check(qtbot, dialog, REPO)
    assert dialog.memory.text().startswith("Too big for this machine: ")
    assert dialog.memory.property("kind") == "danger"
    assert dialog.download_button.isEnabled()  # the person may still want the files

    memory.total = 600_000  # the weights take 82 % of it
    _check(qtbot, dialog, REPO)
    assert "Tight fit:" in dialog.memory.text() and " 82 % of the " in dialog.memory.text()
    assert dialog.memory.property("kind") == "warning"

    monkeypatch.setattr(download_fit.shutil, "disk_usage", lambda _: SimpleNamespace(free=999))
    _check(qtbot, dialog, REPO)
    assert dialog.disk.text().startswith("Not enough disk space: ")
    assert "and only 999 B free." in dialog.disk.text()
    assert not dialog.download_button.isEnabled()


@pytest.mark.parametrize(
    ("repo_id", "message"),
    [
        ("test-org/no-such-model", "There is no model 'test-org/no-such-model' on Hugging Face"),
        ("no good!", "'no good!' is not a repository id; it looks like owner/name."),
    ],
)
def test_a_repository_that_cannot_be_checked_says_why_and_offers_no_download(
    qtbot, hub: FakeHub, tmp_path: Path, repo_id: str, message: str
) -> None:
    dialog = _dialog(qtbot, hub, tmp_path)
    _check(qtbot, dialog, REPO)  # a good check first: an error must clear it
    _check(qtbot, dialog, repo_id)
    assert dialog.status.text().startswith(message)
    assert "Traceback" not in dialog.status.text()
    assert dialog.status.property("kind") == "danger"
    assert not dialog.files.isVisible() and not dialog.memory.isVisible()
    assert not dialog.download_button.isEnabled()


def test_download_from_the_library_goes_through_the_check_and_the_progress_dialog(
    qtbot, hub: FakeHub, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        library = app.window.open_library()
        library.hub_endpoint = hub.endpoint
        dialog = library.ask_download()
        assert isinstance(dialog, DownloadDialog) and dialog.isVisible()
        _check(qtbot, dialog, REPO)
        with qtbot.waitSignal(library.libraryChanged, timeout=60000):
            dialog.download_button.click()
            assert [d.task.description for d in library.tasks] == [f"Downloading {REPO}"]
        assert [m.name for m in library.models()] == ["tiny-llama"]
