"""Preferences › Voice: the speech model dictation uses and its language; the voice replies are
read with (the built-in natural voice, or the system's), its speed, reading new replies aloud
as they stream, and how long a pause ends a turn in a voice conversation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.library.entries import ModelInfo
from app.voice.languages import LANGUAGES
from app.voice.natural_voice import NaturalVoiceInfo
from app.voice.speech_models import NO_SPEECH_MODEL
from app.voice.voice_settings import (
    MAX_SILENCE_S,
    MAX_SPEED,
    MIN_SILENCE_S,
    MIN_SPEED,
    VoiceEngine,
    VoiceSettings,
)


class VoicePage(QWidget):
    """Filled with the settings and what can be chosen; `settings()` reads the choices back.
    `tryRequested` asks the window to say a sample with the voice chosen on the page."""

    tryRequested = Signal()

    def __init__(
        self,
        settings: VoiceSettings,
        speech_models: Sequence[ModelInfo],
        natural_voices: Sequence[NaturalVoiceInfo],
        system_voices: Sequence[str],
        system_problem: str | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("VoicePage")
        self._settings = settings

        self.speech_model = QComboBox()
        self.speech_model.setAccessibleName("Speech model")
        for info in speech_models:
            if info.problem is None:
                self.speech_model.addItem(info.name, info.id)
        self.speech_model.setCurrentIndex(max(0, self.speech_model.findData(settings.speech_model)))
        self.no_model = QLabel(NO_SPEECH_MODEL)
        self.no_model.setObjectName("PreferencesHint")
        self.no_model.setWordWrap(True)
        self.no_model.setVisible(self.speech_model.count() == 0)
        self.speech_model.setVisible(self.speech_model.count() > 0)
        self.language = QComboBox()
        self.language.setAccessibleName("Dictation language")
        for code, name in LANGUAGES.items():
            self.language.addItem(name, code)
        self.language.setCurrentIndex(max(0, self.language.findData(settings.language)))
        self.language.setToolTip("English-only models (*.en) always hear English")
        dictation = QGroupBox("Dictation")
        form = QFormLayout(dictation)
        form.addRow("Speech model", self.speech_model)
        form.addRow("", self.no_model)
        form.addRow("Language", self.language)

        self.engine = QComboBox()
        self.engine.setAccessibleName("Voice")
        self.engine.addItem(
            "Built-in natural voice (works offline everywhere)", VoiceEngine.NATURAL
        )
        self.engine.addItem("System voices", VoiceEngine.SYSTEM)
        self.engine.setCurrentIndex(max(0, self.engine.findData(settings.engine)))
        self.natural_voice = QComboBox()
        self.natural_voice.setAccessibleName("Built-in voice")
        for voice in natural_voices:
            self.natural_voice.addItem(f"{voice.name.title()} — {voice.description}", voice.name)
        self.natural_voice.setCurrentIndex(
            max(0, self.natural_voice.findData(settings.natural_voice))
        )
        self.system_voice = QComboBox()
        self.system_voice.setAccessibleName("System voice")
        self.system_voice.addItem("The system's default", "")
        for name in system_voices:
            self.system_voice.addItem(name, name)
        self.system_voice.setCurrentIndex(max(0, self.system_voice.findData(settings.system_voice)))
        self.system_problem = QLabel(system_problem or "")
        self.system_problem.setObjectName("PreferencesHint")
        self.system_problem.setWordWrap(True)
        self.system_problem.setVisible(bool(system_problem))
        self.speed = QDoubleSpinBox()
        self.speed.setAccessibleName("Reading speed")
        self.speed.setRange(MIN_SPEED, MAX_SPEED)
        self.speed.setSingleStep(0.25)
        self.speed.setDecimals(2)
        self.speed.setSuffix("×")
        self.speed.setValue(settings.speed)
        self.read_new = QCheckBox("Read new replies aloud as they are written")
        self.read_new.setChecked(settings.read_new_replies)
        self.try_button = QPushButton("Try the Voice")
        self.try_button.setAccessibleName("Try the voice")
        self.try_button.clicked.connect(self.tryRequested)
        reading = QGroupBox("Reading replies aloud")
        form = QFormLayout(reading)
        form.addRow("Voice", self.engine)
        form.addRow("Built-in voice", self.natural_voice)
        form.addRow("System voice", self.system_voice)
        form.addRow("", self.system_problem)
        form.addRow("Speed", self.speed)
        form.addRow("", self.read_new)
        form.addRow("", self.try_button)

        self.silence = QDoubleSpinBox()
        self.silence.setAccessibleName("Pause that ends your turn")
        self.silence.setRange(MIN_SILENCE_S, MAX_SILENCE_S)
        self.silence.setSingleStep(0.25)
        self.silence.setSuffix(" s")
        self.silence.setValue(settings.silence_s)
        self.silence.setToolTip("How long you pause before a voice conversation sends your words")
        conversation = QGroupBox("Voice conversation (Chat › Voice Conversation)")
        form = QFormLayout(conversation)
        form.addRow("A pause of", self.silence)

        layout = QVBoxLayout(self)
        layout.addWidget(dictation)
        layout.addWidget(reading)
        layout.addWidget(conversation)
        layout.addStretch(1)
        self.engine.currentIndexChanged.connect(self._show_engine)
        self._show_engine()

    def _show_engine(self) -> None:
        natural = self.engine.currentData() == VoiceEngine.NATURAL
        self.natural_voice.setEnabled(natural)
        self.system_voice.setEnabled(not natural and self.system_voice.count() > 1)

    def settings(self) -> VoiceSettings:
        return replace(
            self._settings,
            speech_model=self.speech_model.currentData() or self._settings.speech_model,
            language=self.language.currentData(),
            engine=VoiceEngine(self.engine.currentData()),
            natural_voice=self.natural_voice.currentData() or self._settings.natural_voice,
            system_voice=self.system_voice.currentData() or "",
            speed=self.speed.value(),
            read_new_replies=self.read_new.isChecked(),
            silence_s=self.silence.value(),
        )
