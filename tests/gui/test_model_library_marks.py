"""The model library marks the loaded model and gives every full name in a tooltip (issue 18
item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gui.window_harness import OFFSCREEN_NOISE, running_app

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def test_the_loaded_model_is_marked_in_the_library(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        library = app.window.open_library()
        with qtbot.waitSignal(library.libraryChanged, timeout=10000):
            library.import_folder(llama_path, link=True)
        with qtbot.waitSignal(library.libraryChanged, timeout=10000):
            library.import_folder(llama_path, link=False)
        library = app.window.open_library()  # reopened: it knows which model is loaded
        names = [m.name for m in library.models()]
        loaded = library.table.item(names.index("llama"), 0)
        other = library.table.item(names.index("llama-2"), 0)
        assert not loaded.icon().isNull() and loaded.font().bold()
        assert loaded.toolTip().startswith("llama\nLoaded now\n")
        assert other.icon().isNull() and "Loaded now" not in other.toolTip()
        assert other.toolTip().startswith("llama-2\n")
