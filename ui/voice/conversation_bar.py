"""The bar above the composer during a voice conversation: where the conversation stands
(listening, working out the words, the model thinking, speaking), the microphone's level, Mute
and End."""

from __future__ import annotations

from enum import Enum

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from ui.voice.mic_button import LevelMeter
from ui.widgets.icons import themed_icon
from ui.widgets.theme import em


class Stage(Enum):
    LISTENING = "Listening… speak, then pause"
    TRANSCRIBING = "Working out your words…"
    THINKING = "Waiting for the reply…"
    SPEAKING = "Reading the reply (the microphone is off meanwhile)"
    MUTED = "Muted: the microphone is off"


class ConversationBar(QFrame):
    muteToggled = Signal(bool)
    endRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ConversationBar")
        self.setAccessibleName("Voice conversation")
        icon = QLabel()
        icon.setPixmap(themed_icon("audio-lines").pixmap(em(self, 1.2), em(self, 1.2)))
        self.stage_label = QLabel()
        self.stage_label.setObjectName("ConversationStage")
        self.stage_label.setAccessibleName("Conversation state")
        self.meter = LevelMeter()
        self.mute_button = QPushButton("Mute")
        self.mute_button.setCheckable(True)
        self.mute_button.setAccessibleName("Mute the microphone")
        self.mute_button.setToolTip("Stop listening for a while; the conversation goes on after")
        self.end_button = QPushButton("End")
        self.end_button.setAccessibleName("End the voice conversation")
        row = QHBoxLayout(self)
        row.setContentsMargins(em(self, 0.6), em(self, 0.3), em(self, 0.3), em(self, 0.3))
        row.addWidget(icon)
        row.addWidget(self.stage_label, 1)
        row.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.mute_button)
        row.addWidget(self.end_button)
        self.mute_button.toggled.connect(self.muteToggled)
        self.end_button.clicked.connect(self.endRequested)
        self.show_stage(Stage.LISTENING)

    def show_stage(self, stage: Stage) -> None:
        self.stage_label.setText(stage.value)
        self.meter.setVisible(stage is Stage.LISTENING)
        self.mute_button.setEnabled(stage in (Stage.LISTENING, Stage.MUTED))
