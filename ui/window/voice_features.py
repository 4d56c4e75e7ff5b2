"""Voice in the window: the composer's microphone (dictation: record, transcribe on the worker,
insert the words at the cursor for editing, never send), audio files dropped or attached
(offered for transcription into the message), each reply's speaker button and reading new
replies aloud as they stream, Preferences › Voice, and the Chat menu's Dictate and Voice
Conversation (`ui.window.voice_conversation`).

QtMultimedia is imported when voice is first used (`ui.voice.recorder`, `ui.voice.read_aloud`),
never while the window starts; the microphone's state is looked at once the window shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from app.operations.operation import Failure, FailureKind, Operation
from app.voice.transcription import transcription
from app.voice.voice_settings import VoiceSettings
from ui.voice.mic_button import Dictation, MicButton
from ui.voice.microphone import (
    MicState,
    ask_for_microphone,
    microphone_state,
    open_privacy_settings,
    state_text,
)
from ui.window.voice_reading import ReadingHost, VoiceReading
from ui.window.window_host import MenuWindow

if TYPE_CHECKING:
    from pathlib import Path

    from app.library.entries import ModelInfo
    from app.voice.transcription import Transcript
    from ui.voice.recorder import Recorder, RecordingLevel
    from ui.voice.voice_page import VoicePage
    from ui.window.composer_extras import ComposerExtras
    from ui.window.models import WindowModels
    from ui.window.voice_conversation import VoiceConversation

DICTATE_KEYS = "Ctrl+Shift+D"
CONVERSATION_KEYS = "Ctrl+Alt+V"
MIN_RECORDING_S = 0.3
IN_CONVERSATION = "A voice conversation is listening: end it to dictate into the message box."
SAMPLE_TEXT = "Hello! This is how replies will sound when Branchwise reads them aloud."


class VoiceHost(ReadingHost, MenuWindow, Protocol):
    models: WindowModels
    composer_extras: ComposerExtras

    def send(self, text: str) -> bool: ...


class VoiceFeatures(QObject):
    def __init__(self, window: VoiceHost, models_dir: Path) -> None:
        super().__init__(window.window())
        self._window = window
        self._models_dir = models_dir
        self._preferences = window.controller.preferences
        self.settings = VoiceSettings.of(self._preferences)
        self._recorder: Recorder | None = None
        self._transcribing: Operation[Transcript, None] | None = None
        self.conversation: VoiceConversation | None = None
        self.mic = MicButton()
        self.mic.set_shortcut_hint(
            QKeySequence(DICTATE_KEYS).toString(QKeySequence.SequenceFormat.NativeText)
        )
        window.composer.add_beside_send(self.mic)
        self.mic.startRequested.connect(self.start_dictation)
        self.mic.stopRequested.connect(self.stop_dictation)
        self.mic.blockedClicked.connect(self._on_blocked)
        window.composer.edit.escapePressed.connect(self.cancel_dictation)
        self.reading = VoiceReading(
            window, lambda: self.settings, self.set_speed, self._reads_new_replies
        )
        window.models.speechModelChosen.connect(self._use_speech_model)
        window.composer_extras.audioFilesChosen.connect(self.offer_transcription)
        self._add_actions()
        QTimer.singleShot(0, self.refresh_microphone)  # after the window shows: QtMultimedia

    def _add_actions(self) -> None:
        window = self._window
        parent = window.window()
        self.dictate_action = QAction("&Dictate", parent)
        self.dictate_action.setShortcut(QKeySequence(DICTATE_KEYS))
        self.dictate_action.setStatusTip("Start or stop dictating into the message box")
        self.dictate_action.triggered.connect(self.toggle_dictation)
        self.conversation_action = QAction("&Voice Conversation", parent)
        self.conversation_action.setShortcut(QKeySequence(CONVERSATION_KEYS))
        self.conversation_action.setCheckable(True)
        self.conversation_action.setStatusTip(
            "Talk with the model hands-free: it listens, sends after a pause, reads the reply"
        )
        self.conversation_action.toggled.connect(self._toggle_conversation)
        self.read_last_action = QAction("&Read Last Reply Aloud", parent)
        self.read_last_action.triggered.connect(self.reading.read_last_reply)
        for action in (self.dictate_action, self.conversation_action, self.read_last_action):
            window.addAction(action)
        menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
        chat = menus.get("Chat")
        if isinstance(chat, QMenu):
            chat.addSeparator()
            chat.addActions([self.dictate_action, self.conversation_action, self.read_last_action])

    # -- the microphone --------------------------------------------------------------------------

    @Slot()
    def refresh_microphone(self) -> MicState:
        state = microphone_state()
        if self.mic.state in (Dictation.RECORDING, Dictation.TRANSCRIBING):
            return state
        if self.conversation is not None:
            self.mic.set_state(Dictation.BLOCKED, IN_CONVERSATION)
            return state
        if state in (MicState.READY, MicState.UNDETERMINED):
            self.mic.set_state(Dictation.IDLE)
        else:
            self.mic.set_state(Dictation.BLOCKED, state_text(state))
        return state

    @Slot()
    def _on_blocked(self) -> None:
        if self.conversation is not None:
            self._window.show_notice(IN_CONVERSATION)
            return
        state = self.refresh_microphone()
        if state is MicState.DENIED:
            if not open_privacy_settings():
                self._window.show_notice(state_text(state))
        elif state is not MicState.READY:
            self._window.show_notice(state_text(state))

    def recorder(self) -> Recorder:
        if self._recorder is None:
            from ui.voice.recorder import Recorder  # QtMultimedia: when first used

            self._recorder = Recorder(self)
            self._recorder.levelChanged.connect(self._on_level)
            self._recorder.failed.connect(self._on_record_failed)
        return self._recorder

    def speech_model(self) -> ModelInfo | None:
        """The model dictation will use, or None after telling the person how to get one."""
        from app.voice.speech_models import NO_SPEECH_MODEL, chosen_speech_model  # file work

        info = chosen_speech_model(self._models_dir, self.settings.speech_model)
        if info is None:
            self._window.show_notice(NO_SPEECH_MODEL)
        return info

    # -- dictation -------------------------------------------------------------------------------

    @Slot()
    def toggle_dictation(self) -> None:
        if self.mic.state is Dictation.RECORDING:
            self.stop_dictation()
        elif self.mic.state is Dictation.IDLE:
            self.start_dictation()
        elif self.mic.state is Dictation.BLOCKED:
            self._on_blocked()

    @Slot()
    def start_dictation(self) -> None:
        if self.conversation is not None or self.speech_model() is None:
            return
        state = self.refresh_microphone()
        if state is MicState.UNDETERMINED:
            ask_for_microphone(lambda answer: self._answered(answer))
            return
        if state is not MicState.READY:
            self._on_blocked()
            return
        problem = self.recorder().start()
        if problem is not None:
            self.mic.set_state(Dictation.BLOCKED, problem)
            self._window.show_notice(problem)
            return
        self.mic.set_state(Dictation.RECORDING)

    def _answered(self, state: MicState) -> None:
        self.refresh_microphone()
        if state is MicState.READY:
            self.start_dictation()
        else:
            self._on_blocked()

    @Slot()
    def stop_dictation(self) -> None:
        if self.mic.state is not Dictation.RECORDING:
            return
        recorder = self.recorder()
        seconds = recorder.seconds()
        pcm = recorder.stop()
        if seconds < MIN_RECORDING_S:
            self.mic.set_state(Dictation.IDLE)
            self._window.statusBar().showMessage("Too short: hold the button while you talk.", 4000)
            return
        self.transcribe(pcm)

    @Slot()
    def cancel_dictation(self) -> None:
        if self.mic.state is Dictation.RECORDING:
            self.recorder().cancel()
            self.mic.set_state(Dictation.IDLE)
            self._window.statusBar().showMessage("Dictation discarded.", 3000)
        elif self._transcribing is not None:
            self._transcribing.cancel()

    def transcribe(self, pcm: bytes, done: Callable[[str], object] | None = None) -> bool:
        """Transcribe 16 kHz PCM on the worker into the composer (or `done(text)`)."""
        info = self.speech_model()
        if info is None:
            self.mic.set_state(Dictation.IDLE)
            return False
        self.mic.set_state(Dictation.TRANSCRIBING)
        operation = transcription(
            self, self._window.controller.worker, info.path, pcm, self.settings.language or None
        )
        self._transcribing = operation
        insert = done or self.insert_text
        operation.on_success(lambda t: self._transcribed(t, insert)).on_failure(self._failed)
        operation.start()
        return True

    def _transcribed(self, transcript: Transcript, insert: Callable[[str], object]) -> None:
        self._transcribing = None
        self.mic.set_state(Dictation.IDLE)
        if not transcript.text:
            self._window.statusBar().showMessage("No words were heard.", 4000)
        insert(transcript.text)

    def _failed(self, failure: Failure) -> None:
        self._transcribing = None
        self.mic.set_state(Dictation.IDLE)
        if failure.kind is not FailureKind.CANCELLED:
            self._window.show_notice(f"The words could not be worked out: {failure.message}")
        if self.conversation is not None:
            self.conversation.transcription_failed()

    def insert_text(self, text: str) -> None:
        """Put dictated words at the composer's cursor, spaced from what is around them."""
        if not text:
            return
        edit = self._window.composer.edit
        cursor = edit.textCursor()
        cursor.removeSelectedText()  # dictating over a selection replaces it, as typing does
        draft, at = edit.toPlainText(), cursor.position()
        before = " " if at and not draft[at - 1].isspace() else ""
        after = " " if at < len(draft) and not draft[at].isspace() else ""
        cursor.insertText(before + text + after)
        edit.setTextCursor(cursor)
        edit.setFocus()

    @Slot(object)
    def _on_level(self, level: RecordingLevel) -> None:
        if self.conversation is not None:
            self.conversation.on_level(level)
        else:
            self.mic.show_level(level.level_db, level.seconds)

    @Slot(str)
    def _on_record_failed(self, message: str) -> None:
        self.mic.set_state(Dictation.IDLE)
        self._window.show_notice(message)
        self.refresh_microphone()

    @Slot(str)
    def _use_speech_model(self, model_id: str) -> None:
        self.apply_settings(replace(self.settings, speech_model=model_id))
        info = self.speech_model()
        if info is not None:
            self._window.statusBar().showMessage(f"Dictation uses {info.name} now.", 4000)

    # -- audio files -----------------------------------------------------------------------------

    @Slot(list)
    def offer_transcription(self, paths: list[str]) -> None:
        from ui.voice.file_transcription import FileQueue, ask_to_transcribe

        if self.mic.state is not Dictation.IDLE or self.conversation is not None:
            self._window.show_notice("Finish dictating first, then add the audio again.")
            return
        if self.speech_model() is None or not ask_to_transcribe(self._window.window(), paths):
            return
        files = FileQueue(paths, self)
        files.decoded.connect(lambda audio: self.transcribe(audio.pcm, done=next_file))
        files.failed.connect(self._window.show_notice)

        def next_file(text: str) -> None:
            self.insert_text(text)
            if not files.next():
                files.deleteLater()

        self.mic.set_state(Dictation.TRANSCRIBING)
        files.next()

    # -- settings --------------------------------------------------------------------------------

    def apply_settings(self, settings: VoiceSettings) -> None:
        self.settings = settings
        settings.save_to(self._preferences)
        self.reading.settings_changed(settings)

    def preferences_page(self) -> VoicePage:
        from app.voice.natural_voice import natural_voices
        from app.voice.speech_models import speech_models
        from ui.voice.voice_page import VoicePage

        system_voices, problem = self._system_voices()
        page = VoicePage(
            self.settings, speech_models(self._models_dir), natural_voices(), system_voices, problem
        )
        page.tryRequested.connect(lambda: self._try_voice(page))
        return page

    def _system_voices(self) -> tuple[list[str], str | None]:
        from ui.voice.microphone import multimedia_problem

        problem = multimedia_problem()
        if problem is not None:
            return [], problem
        from ui.voice.system_voice import SystemVoice

        probe = SystemVoice(parent=self)
        voices, problem = probe.voices(), probe.problem()
        probe.deleteLater()
        return voices, problem

    def _try_voice(self, page: VoicePage) -> None:
        self.reading.say(SAMPLE_TEXT, page.settings())

    def set_speed(self, speed: float) -> None:
        self.apply_settings(replace(self.settings, speed=speed))

    def _reads_new_replies(self) -> bool:
        return self.settings.read_new_replies or self.conversation is not None

    def apply_page(self, page: VoicePage) -> None:
        self.apply_settings(page.settings())

    # -- hands-free -------------------------------------------------------------------------

    @Slot(bool)
    def _toggle_conversation(self, on: bool) -> None:
        if on and self.conversation is None:
            from ui.window.voice_conversation import VoiceConversation

            if self.speech_model() is None or self.refresh_microphone() is not MicState.READY:
                self.conversation_action.setChecked(False)
                if self.mic.state is Dictation.BLOCKED:
                    self._window.show_notice(self.mic.reason)
                return
            self.cancel_dictation()
            self.conversation = VoiceConversation(self, self._window, self)
            self.conversation.ended.connect(self._conversation_ended)
            self.mic.set_state(Dictation.BLOCKED, IN_CONVERSATION)
            self.conversation.start()
        elif not on and self.conversation is not None:
            self.conversation.end()

    @Slot()
    def _conversation_ended(self) -> None:
        self.conversation = None
        self.conversation_action.setChecked(False)
        self.mic.set_state(Dictation.IDLE)  # what the microphone allows now, next
        self.refresh_microphone()

    def shutdown(self) -> None:
        if self.conversation is not None:
            self.conversation.end()
        if self._recorder is not None:
            self._recorder.cancel()
        self.reading.shutdown()
