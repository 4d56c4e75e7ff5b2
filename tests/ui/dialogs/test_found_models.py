"""Find Models on This Computer (issue 45, item 1): the scan runs off the GUI thread and lists
each model with its app, format, size, architecture and whether it can run (or why not); Add
links a folder in place, and the row then says it is in the library. Screenshots of the list,
light and dark (found-models-*)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from app.discovery.locations import standard_locations
from tests.fake_stores import FakeHome, build_home
from tests.ui.screenshots.test_screenshots import _save, settle
from tests.ui.window_harness import OFFSCREEN_NOISE
from ui.dialogs.found_models import FoundModelsDialog
from ui.dialogs.found_rows import COLUMNS
from ui.widgets.theme import apply_theme

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


class ThreadWorker:
    """Runs each job on a thread of its own, as the inference worker runs it on its thread."""

    def call(self, fn: Callable[[Any], Any]) -> None:
        threading.Thread(target=fn, args=(None,), daemon=True).start()


@pytest.fixture
def fake(tmp_path: Path, llama_path: Path) -> FakeHome:
    return build_home(tmp_path, llama_path)


def _rows(dialog: FoundModelsDialog) -> dict[str, list[str]]:
    table = dialog.table
    return {
        table.item(row, 0).text(): [table.item(row, c).text() for c in range(len(COLUMNS))]
        for row in range(table.rowCount())
    }


def test_the_scan_lists_models_and_add_links_one_in_place(
    qtbot, fake: FakeHome, tmp_path: Path
) -> None:
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]  # as the app runs
    models = tmp_path / "models"
    models.mkdir()
    dialog = FoundModelsDialog(
        models, ThreadWorker(), locations=standard_locations(fake.home, fake.env)
    )
    qtbot.addWidget(dialog)
    dialog.start_scan(dialog._locations)  # pyright: ignore[reportPrivateUsage]
    assert dialog.state.text().startswith("Looking for models")  # the window goes on meanwhile
    qtbot.waitUntil(lambda: dialog.table.rowCount() > 0, timeout=60000)
    rows = _rows(dialog)
    assert rows["mlx-community/tiny-llama"][1:3] == ["Hugging Face cache", "MLX"]
    assert rows["mlx-community/tiny-llama"][4:] == ["llama", "Yes"]
    assert rows["tinygemma:latest"][1:3] == ["Ollama", "GGUF"]
    assert rows["broken:7b"][5].startswith("No: its model file")
    assert rows["encoder"][5].startswith("No: its architecture 'bert'")
    assert "can be added" in dialog.state.text()
    dialog.resize(max(dialog.width(), 960), max(dialog.height(), 440))
    for theme in ("light", "dark"):  # what it found, each runnable or why not
        apply_theme(QApplication.instance(), theme)  # type: ignore[arg-type]
        settle()
        _save(dialog, f"found-models-{theme}")
    apply_theme(QApplication.instance(), "light")  # type: ignore[arg-type]

    names = list(rows)
    # Why a model cannot run is read whole: its cell wraps onto more lines, no ellipsis.
    table = dialog.table
    reason = table.item(names.index("encoder"), len(COLUMNS) - 1)
    width = table.columnWidth(len(COLUMNS) - 1)
    assert table.fontMetrics().horizontalAdvance(reason.text()) > width, "a long reason here"
    assert table.wordWrap() and table.rowHeight(reason.row()) >= table.sizeHintForRow(reason.row())
    dialog.table.selectRow(names.index("broken:7b"))
    assert not dialog.add_button.isEnabled()  # nothing to add in a broken find
    dialog.table.selectRow(names.index("mlx-community/tiny-llama"))
    assert dialog.add_button.isEnabled()
    (task,) = dialog.add_selected()  # a folder: no disk to confirm, linked where it lies
    qtbot.waitUntil(
        lambda: _rows(dialog)["mlx-community/tiny-llama"][5] == "In the library", timeout=60000
    )
    assert task.error is None
    assert not dialog.add_button.isEnabled()
    entry = next(p for p in models.iterdir() if not p.name.startswith("."))
    assert [p.name for p in entry.iterdir()] == ["branchwise.json"]


def test_the_first_start_offers_what_it_found_once(
    qtbot, fake: FakeHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.settings import Preferences
    from ui.chat.notice_banner import NoticeBanner
    from ui.window.found_models_offer import offer_found_models

    monkeypatch.setenv("HOME", str(fake.home))
    for name, value in fake.env.items():
        monkeypatch.setenv(name, value)
    preferences = Preferences(tmp_path / "settings.ini")
    banner = NoticeBanner()
    qtbot.addWidget(banner)
    shown: list[bool] = []
    models = tmp_path / "models"
    assert offer_found_models(banner, models, preferences, banner, lambda: shown.append(True), 0)
    qtbot.waitUntil(lambda: preferences.found_models_offered, timeout=60000)
    assert banner.label.text().startswith("Branchwise found 5 models on this computer")
    assert "LM Studio" in banner.label.text() and "Ollama" in banner.label.text()
    banner.action_button.click()
    assert shown == [True]
    # Offered once: the next start does not look again.
    assert not offer_found_models(banner, models, preferences, banner, lambda: None, 0)
