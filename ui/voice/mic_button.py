"""The composer's microphone: click to start and click again to stop, or hold it and talk
(releasing ends the recording); while recording a level meter and the time so far show beside
it, and while the words are being worked out it says so. A microphone that cannot be used (none
connected, permission denied, Qt's audio missing) is a state of the button with its reason,
never a silent failure.

The button only says what the person did (`startRequested`, `stopRequested`,
`blockedClicked`); the window records and transcribes, and tells the button what happens.
"""

from __future__ import annotations

import time
from enum import Enum

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget

from ui.text.plain_text import literal
from ui.widgets.icons import ColorRole, themed_icon
from ui.widgets.theme import em, scale_font

HOLD_S = 0.6  # held at least this long, the press was push-to-talk: releasing stops
METER_FLOOR_DB = -60.0


class Dictation(Enum):
    IDLE = "idle"
    RECORDING = "recording"
    TRANSCRIBING = "transcribing"
    BLOCKED = "blocked"  # no microphone, no permission, no audio: `reason` says which


def elapsed_text(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


class LevelMeter(QWidget):
    """A small bar for the microphone's level (dBFS, from METER_FLOOR_DB to 0)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("LevelMeter")
        self.setAccessibleName("Microphone level")
        self._fraction = 0.0
        self.setFixedSize(em(self, 3.2), em(self, 0.45))

    @property
    def fraction(self) -> float:
        return self._fraction

    def set_level(self, level_db: float) -> None:
        span = -METER_FLOOR_DB
        self._fraction = min(1.0, max(0.0, (max(level_db, METER_FLOOR_DB) + span) / span))
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        rect = QRectF(self.rect())
        radius = rect.height() / 2
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(palette.mid())
        painter.drawRoundedRect(rect, radius, radius)
        painter.setBrush(palette.highlight())
        painter.drawRoundedRect(
            QRectF(rect.x(), rect.y(), rect.width() * self._fraction, rect.height()),
            radius,
            radius,
        )


class MicButton(QWidget):
    startRequested = Signal()
    stopRequested = Signal()
    blockedClicked = Signal()  # pressed while the microphone cannot be used

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MicButton")
        self._state = Dictation.IDLE
        self._reason = ""
        self._pressed_at: float | None = None
        self._stop_on_release = False

        self.button = QToolButton()
        self.button.setObjectName("MicToolButton")
        self.button.setAutoRaise(True)
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        size = em(self, 2.0)
        self.button.setFixedSize(size, size)
        self.button.setIconSize(self.button.size() * 0.55)
        self.button.pressed.connect(self._on_pressed)
        self.button.released.connect(self._on_released)
        self.meter = LevelMeter()
        self.time_label = QLabel("0:00")
        self.time_label.setObjectName("DictationTime")
        self.time_label.setAccessibleName("Recording time")
        scale_font(self.time_label, 0.85)
        self.status = QLabel()
        self.status.setObjectName("DictationStatus")
        scale_font(self.status, 0.85)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(em(self, 0.3))
        row.addWidget(self.status)
        row.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.time_label)
        row.addWidget(self.button)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self._icons = {
            "mic": themed_icon("mic"),
            "recording": themed_icon("mic", ColorRole.Highlight, ColorRole.Highlight),
            "blocked": themed_icon("mic-off"),
        }
        self.shortcut_hint = ""
        self._show()

    # -- told by the window ---------------------------------------------------------------

    @property
    def state(self) -> Dictation:
        return self._state

    @property
    def reason(self) -> str:
        return self._reason

    def set_state(self, state: Dictation, reason: str = "") -> None:
        self._state, self._reason = state, reason
        if state is not Dictation.RECORDING:
            self.meter.set_level(METER_FLOOR_DB)
            self.time_label.setText("0:00")
        self._show()

    def show_level(self, level_db: float, seconds: float) -> None:
        self.meter.set_level(level_db)
        self.time_label.setText(elapsed_text(seconds))

    # -- what the person does -------------------------------------------------------------

    def _on_pressed(self) -> None:
        self._pressed_at = time.monotonic()
        self._stop_on_release = self._state is Dictation.RECORDING
        if self._state is Dictation.IDLE:
            self.startRequested.emit()
        elif self._state is Dictation.BLOCKED:
            self.blockedClicked.emit()

    def _on_released(self) -> None:
        held = time.monotonic() - self._pressed_at if self._pressed_at is not None else 0.0
        self._pressed_at = None
        if self._state is not Dictation.RECORDING:
            return
        if self._stop_on_release or held >= HOLD_S:
            self.stopRequested.emit()

    # -- presentation ---------------------------------------------------------------------

    def _show(self) -> None:
        state = self._state
        recording = state is Dictation.RECORDING
        self.meter.setVisible(recording)
        self.time_label.setVisible(recording)
        self.status.setVisible(state is Dictation.TRANSCRIBING or bool(recording))
        self.status.setText("Transcribing…" if state is Dictation.TRANSCRIBING else "Listening")
        self.button.setEnabled(state is not Dictation.TRANSCRIBING)
        self.button.setChecked(recording)
        icon = "recording" if recording else "blocked" if state is Dictation.BLOCKED else "mic"
        self.button.setIcon(self._icons[icon])
        self.button.setProperty("recording", recording)
        self.button.style().unpolish(self.button)
        self.button.style().polish(self.button)
        hint = f" ({self.shortcut_hint})" if self.shortcut_hint else ""
        tip = {
            Dictation.IDLE: f"Dictate: click to start and stop, or hold and talk{hint}",
            Dictation.RECORDING: f"Stop and insert the words (click{hint}); Esc discards",
            Dictation.TRANSCRIBING: "Working out the words… (Esc cancels)",
            Dictation.BLOCKED: self._reason,
        }[state]
        self.button.setToolTip(literal(tip))
        self.button.setAccessibleName(
            {
                Dictation.IDLE: "Dictate",
                Dictation.RECORDING: "Stop dictating",
                Dictation.TRANSCRIBING: "Transcribing",
                Dictation.BLOCKED: "Microphone unavailable",
            }[state]
        )
        self.button.setAccessibleDescription(self._reason if state is Dictation.BLOCKED else "")

    def set_shortcut_hint(self, hint: str) -> None:
        self.shortcut_hint = hint
        self._show()
