"""The preset picker by the composer: which preset this chat started from (and whether it has
drifted from it), and a menu to give the chat another one, save its settings as a new preset,
update its preset from it, or manage the presets. Preset names are whatever the person typed:
shown as plain text (menu text escapes `&`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from ui.text.plain_text import literal, menu_text
from ui.widgets.icons import themed_icon

NO_PRESET = -1


@dataclass(frozen=True)
class PresetPick:
    """What the picker shows: the presets (id, name), the chat's (NO_PRESET: none), how it
    drifted from it (one phrase a setting), and the one new chats start from."""

    presets: tuple[tuple[int, str], ...] = ()
    current: int = NO_PRESET
    drift: tuple[str, ...] = ()
    default: int = NO_PRESET


class PresetButton(QToolButton):
    presetChosen = Signal(int)  # a preset's id, or NO_PRESET
    saveRequested = Signal()  # save this chat's settings as a new preset
    updateRequested = Signal(int)  # make this preset what the chat is now
    manageRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PresetButton")
        self.setAccessibleName("Preset")
        self.setIcon(themed_icon("tag"))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._menu = QMenu(self)
        self._menu.setObjectName("PresetMenu")
        self.setMenu(self._menu)
        self.pick = PresetPick()
        self.show_pick(self.pick)

    def show_pick(self, pick: PresetPick) -> None:
        self.pick = pick
        names = dict(pick.presets)
        name = names.get(pick.current)
        drifted = name is not None and bool(pick.drift)
        self.setText("No preset" if name is None else name + (" (changed)" if drifted else ""))
        if name is None:
            tip = "This chat's settings are its own. Choose a preset, or save them as one."
        elif drifted:
            tip = f"Started from the preset “{name}”; changed since: " + "; ".join(pick.drift)
        else:
            tip = f"This chat's settings are the preset “{name}”."
        self.setToolTip(literal(tip))
        self.setAccessibleDescription(tip)
        self._fill(pick, name)

    def _fill(self, pick: PresetPick, name: str | None) -> None:
        menu = self._menu
        menu.clear()
        group = QActionGroup(menu)
        choices = [(NO_PRESET, "No preset"), *pick.presets]
        for preset_id, label in choices:
            shown = label + ("  · new chats" if preset_id == pick.default != NO_PRESET else "")
            action = menu.addAction(menu_text(shown))
            action.setCheckable(True)
            action.setChecked(preset_id == pick.current)
            action.triggered.connect(lambda _on=False, p=preset_id: self.presetChosen.emit(p))
            group.addAction(action)
        menu.addSeparator()
        menu.addAction("Save Current Settings as Preset…", self.saveRequested.emit)
        if name is not None and pick.drift:
            menu.addAction(
                menu_text(f"Update “{name}” from This Chat"),
                lambda: self.updateRequested.emit(pick.current),
            )
        menu.addAction("Manage Presets…", self.manageRequested.emit)


def pick_of(
    presets: Sequence[tuple[int, str]],
    current: int | None,
    drift: Sequence[str],
    default: int | None,
) -> PresetPick:
    return PresetPick(
        tuple(presets),
        NO_PRESET if current is None else current,
        tuple(drift),
        NO_PRESET if default is None else default,
    )
