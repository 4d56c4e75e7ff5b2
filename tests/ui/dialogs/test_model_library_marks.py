"""The model library marks the loaded model and the default one, and gives every full name in a
tooltip (issue 18 item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.window_harness import OFFSCREEN_NOISE, running_app
from ui.dialogs.library_rows import DEFAULT_ROLE
from ui.dialogs.model_library import ModelLibraryDialog
from ui.main import Launched

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _with_two_models(qtbot, app: Launched, llama_path: Path) -> ModelLibraryDialog:
    """The library with the loaded model linked as "llama" and a copy of it as "llama-2"."""
    library = app.window.open_library()
    with qtbot.waitSignal(library.libraryChanged, timeout=10000):
        library.import_folder(llama_path, link=True)
    with qtbot.waitSignal(library.libraryChanged, timeout=10000):
        library.import_folder(llama_path, link=False)
    return library


def test_the_loaded_model_is_marked_in_the_library(qtbot, tmp_path: Path, llama_path: Path) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        library = _with_two_models(qtbot, app, llama_path)
        library = app.window.open_library()  # reopened: it knows which model is loaded
        names = [m.name for m in library.models()]
        loaded = library.table.item(names.index("llama"), 0)
        other = library.table.item(names.index("llama-2"), 0)
        assert not loaded.icon().isNull() and loaded.font().bold()
        assert loaded.toolTip().startswith("llama\nLoaded now\n")
        assert other.icon().isNull() and "Loaded now" not in other.toolTip()
        assert other.toolTip().startswith("llama-2\n")


def test_make_default_marks_the_model_and_new_chats_start_with_it(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        library = _with_two_models(qtbot, app, llama_path)
        names = [m.name for m in library.models()]
        assert not any(library.table.item(row, 0).data(DEFAULT_ROLE) for row in range(2))

        other = library.models()[names.index("llama-2")]
        library.select(other.id)
        assert library.default_button.isEnabled()
        library.default_button.click()
        assert app.controller.preferences.default_model_id == other.id
        assert not library.default_button.isEnabled()  # it is the default already

        library = app.window.open_library()  # reopened: the mark comes from the preferences
        marked = library.table.item(names.index("llama-2"), 0)
        loaded = library.table.item(names.index("llama"), 0)
        assert marked.data(DEFAULT_ROLE) and not loaded.data(DEFAULT_ROLE)
        assert marked.toolTip().startswith("llama-2\nDefault for new chats\n")
        assert "Default" not in loaded.toolTip()
        assert loaded.toolTip().startswith("llama\nLoaded now\n")

        # The badge is painted: the name cell differs from the same cell without it.
        rect = library.table.visualItemRect(marked)
        with_badge = library.table.viewport().grab(rect).toImage()
        library.table.blockSignals(True)  # not a rename
        marked.setData(DEFAULT_ROLE, False)
        library.table.blockSignals(False)
        assert library.table.item(names.index("llama-2"), 0).data(DEFAULT_ROLE) is False
        without = library.table.viewport().grab(rect).toImage()
        assert with_badge != without
