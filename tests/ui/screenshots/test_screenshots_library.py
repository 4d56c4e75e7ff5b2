"""Screenshots of the model library (the loaded model and the default marked, a long name
elided) and of the download dialog after a check, light and dark, saved into tests/screenshots/
for a person to look at; each must be a real picture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.library.entries import rename_model
from tests.fake_hub import FakeHub, isolate_hub_client
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

NAMES = [
    "Llama 3.2 1B Instruct (4-bit)",
    "SmolLM2 135M Instruct",
    "Qwen2.5 Coder 7B Instruct, abliterated and converted from GGUF Q4_K_M with an imatrix",
]
REPO = "mlx-community/Qwen3-0.6B-4bit"


def test_screenshots_of_the_library_and_the_download_dialog(
    qtbot, tmp_path: Path, llama_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_hub_client(tmp_path, monkeypatch)
    repo = tmp_path / "repo"
    shutil.copytree(llama_path, repo)
    config = json.loads((llama_path / "config.json").read_text())
    config.update(architectures=["Qwen3ForCausalLM"], model_type="qwen3")  # only listed
    (repo / "config.json").write_text(json.dumps(config))
    with running_app(qtbot, tmp_path / "data", llama_path) as app, FakeHub({REPO: repo}) as hub:
        window = app.window
        window.resize(1100, 760)
        library = window.open_library()
        for link in (True, False, False):  # the first is the folder loaded now
            with qtbot.waitSignal(library.libraryChanged, timeout=10000):
                library.import_folder(llama_path, link=link)
        entries = [m.id for m in library.models()]
        for model_id, name in zip(entries, NAMES, strict=True):
            rename_model(library.models_dir, model_id, name)
        library = window.open_library()
        library.select(next(m.id for m in library.models() if m.name == NAMES[1]))
        library.default_button.click()
        library.select(entries[2])
        library.resize(900, 420)

        library.hub_endpoint = hub.endpoint
        download = library.ask_download()
        download.resize(640, 440)
        qtbot.keyClicks(download.repo_edit, REPO)
        qtbot.keyClick(download.repo_edit, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: download.checked_repo == REPO, timeout=20000)

        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(library, f"library-{theme}")
            _save(download, f"download-{theme}")
        download.reject()
        window.set_theme("light")
