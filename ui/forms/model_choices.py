"""The models a chat can use, as items of a combo box: the library's usable models by their
readable names, then models on connected servers; each item's data is the chat model id (a
library model's folder name, or `remote:<connection>/<model>`), its tooltip the full name. Shared
by the chat's settings dialog and the model picker beside the composer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.remote.connections import is_remote, parse_remote
from ui.text.plain_text import literal

if TYPE_CHECKING:
    from app.library.entries import ModelInfo


def fill_models(
    box: QComboBox, models: Sequence[ModelInfo], current: str | None, by_entry: bool = False
) -> None:
    """Fill `box` with the usable library models and select `current`; a current model the
    library does not hold is listed too (said so), so the choice never shows blank. With
    `by_entry`, each item's data is the library entry's id (what Preferences keeps for the
    default model) rather than the chat model id."""
    box.clear()
    for info in models:
        if info.problem is None:
            _add(
                box,
                info.name,
                info.id if by_entry else info.path.name,
                f"{info.name} · {info.architecture} · {info.quantization}",
            )
    if current is not None and box.findData(current) < 0:
        if is_remote(current):
            add_remote_models(box, [current])
        else:
            _add(
                box,
                f"{current} (not in the library)",
                current,
                f"{current}: loaded from its folder, not from the library",
            )
    box.setCurrentIndex(box.findData(current) if current is not None else -1)


def add_remote_models(box: QComboBox, model_ids: Sequence[str]) -> None:
    """Offer models on connected servers after the library's; the selection stays."""
    for model_id in model_ids:
        if box.findData(model_id) < 0:
            remote = parse_remote(model_id)
            _add(
                box,
                f"{remote.model} · on {remote.connection}",
                model_id,
                f"{remote.model}, a model on the server “{remote.connection}” (File › Connections)",
            )


def _add(box: QComboBox, text: str, model_id: str, tooltip: str) -> None:
    box.addItem(text, model_id)
    box.setItemData(box.count() - 1, literal(tooltip), Qt.ItemDataRole.ToolTipRole)
