"""Voice in the window, headless, with the tiny llama, a random-weight Whisper in the library
and the virtual microphone (tests.virtual_mic): dictation from the composer's microphone puts
the words in the message box and sends nothing; an audio file added to the message is offered
for transcription; a reply's speaker reads it aloud with the built-in voice and gives the
button back; Preferences › Voice keeps what was chosen; a voice conversation ends the person's
turn after a pause, sends, reads the reply with the microphone closed, and listens again.
Screenshots of the microphone recording, its level and time beside it (dictation-*)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from app.library.install import import_folder
from app.paths import AppPaths
from app.voice.voice_settings import VoiceSettings
from tests.tiny_whisper import spoken
from tests.ui.screenshots.test_screenshots import _save_light_and_dark
from tests.ui.window_harness import (
    SHORT,
    click_in_next_message_box,
    running_app,
    send_and_wait,
    set_params,
)
from tests.virtual_mic import play, write_wav
from ui.chat.message_toolbar import SPEAK_BUTTON
from ui.voice.conversation_bar import Stage
from ui.voice.mic_button import Dictation
from ui.voice.read_aloud import Reading
from ui.window.voice_conversation import StageShown

TIMEOUT_MS = 20_000


def _with_speech_model(data_dir: Path, whisper: Path) -> None:
    import_folder(whisper, AppPaths.resolve(data_dir).models_dir, link=True)


def _spy_on_insertions(voice) -> list[str]:
    inserted: list[str] = []
    insert = voice.insert_text

    def spy(text: str) -> None:
        inserted.append(text)
        insert(text)

    voice.insert_text = spy
    return inserted


def test_dictation_puts_the_words_in_the_message_box_and_sends_nothing(
    qtbot, tmp_path: Path, llama_path: Path, tiny_whisper_path: Path, virtual_mic: dict[str, str]
) -> None:
    _with_speech_model(tmp_path / "data", tiny_whisper_path)
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        window, voice = app.window, app.window.voice
        qtbot.waitUntil(lambda: voice.mic.state is Dictation.IDLE, timeout=TIMEOUT_MS)
        window.composer.set_text("Note:")  # the cursor after it, as typing leaves it
        inserted = _spy_on_insertions(voice)
        qtbot.mouseClick(voice.mic.button, Qt.MouseButton.LeftButton)  # a click: it stays on
        assert voice.mic.state is Dictation.RECORDING
        assert voice.mic.meter.isVisible() and voice.mic.time_label.isVisible()
        shown: list[float] = []  # the meter as each level reached it
        voice.recorder().levelChanged.connect(lambda _level: shown.append(voice.mic.meter.fraction))
        wav = write_wav(tmp_path / "said.wav", spoken("Testing."))
        player = play(virtual_mic, wav)
        window.resize(1100, 760)  # the microphone recording, its level and time beside it
        qtbot.waitUntil(lambda: voice.mic.meter.fraction > 0.3, timeout=TIMEOUT_MS)
        _save_light_and_dark(window, {"dictation": window})
        qtbot.waitUntil(lambda: player.poll() is not None, timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: voice.recorder().seconds() > 2.0, timeout=TIMEOUT_MS)
        assert voice.mic.time_label.text() == "0:02" and max(shown) > 0.3
        voice.dictate_action.trigger()  # Chat › Dictate (Ctrl+Shift+D) stops it
        assert voice.mic.state is Dictation.TRANSCRIBING
        qtbot.waitUntil(lambda: voice.mic.state is Dictation.IDLE, timeout=TIMEOUT_MS)
        [text] = inserted
        assert text and window.composer.text() == f"Note: {text}"
        assert app.controller.store.active_path(window.current_conversation_id) == []
        # Esc while recording discards the recording: nothing is transcribed.
        voice.start_dictation()
        assert voice.mic.state is Dictation.RECORDING
        qtbot.keyClick(window.composer.edit, Qt.Key.Key_Escape)
        assert voice.mic.state is Dictation.IDLE and inserted == [text]


def test_an_audio_file_is_offered_for_transcription_not_attached(
    qtbot, tmp_path: Path, llama_path: Path, tiny_whisper_path: Path
) -> None:
    _with_speech_model(tmp_path / "data", tiny_whisper_path)
    wav = write_wav(tmp_path / "memo.wav", spoken("A short memo."), rate=16_000)
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        window, voice = app.window, app.window.voice
        inserted = _spy_on_insertions(voice)
        click_in_next_message_box("Transcribe")
        window.composer_extras.attach([str(wav)])
        qtbot.waitUntil(lambda: bool(inserted), timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: voice.mic.state is not Dictation.TRANSCRIBING, timeout=TIMEOUT_MS)
        assert window.composer.text() == inserted[0]
        assert window.composer.attachments() == []  # no chip: the words are the message


def test_a_replys_speaker_reads_it_aloud_and_preferences_keep_the_voice(
    qtbot, tmp_path: Path, llama_path: Path, virtual_mic: dict[str, str]
) -> None:
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        window, voice = app.window, app.window.voice
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Hello")
        reply = [v for v in window.branches.path_views() if v.role == "assistant"][-1]
        widget = window.chat_view.message_widget(reply.id)
        assert widget is not None
        speaker = next(b for b in widget.findChildren(QToolButton) if b.property(SPEAK_BUTTON))
        assert speaker.isVisible() and speaker.toolTip() == "Read aloud"
        reader = voice.reading.reader()
        sounds: list[float] = []
        reader.firstSound.connect(sounds.append)
        with qtbot.waitSignal(reader.finished, timeout=TIMEOUT_MS):
            speaker.click()
            assert reader.state is Reading.PREPARING
            qtbot.waitUntil(lambda: reader.state is Reading.SPEAKING, timeout=TIMEOUT_MS)
            assert speaker.toolTip() == "Pause reading"
        assert sounds and speaker.toolTip() == "Read aloud"

        dialog = window.open_preferences()
        tabs = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
        assert "Voice" in tabs
        page = dialog.voice_page
        page.speed.setValue(1.5)
        page.read_new.setChecked(True)
        dialog.accept()
        assert VoiceSettings.of(app.controller.preferences).speed == 1.5
        assert voice.settings.read_new_replies


def test_a_voice_conversation_listens_sends_reads_and_listens_again(
    qtbot, tmp_path: Path, llama_path: Path, tiny_whisper_path: Path, virtual_mic: dict[str, str]
) -> None:
    _with_speech_model(tmp_path / "data", tiny_whisper_path)
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        window, voice = app.window, app.window.voice
        set_params(app, SHORT)
        qtbot.waitUntil(lambda: voice.mic.state is Dictation.IDLE, timeout=TIMEOUT_MS)
        voice.apply_settings(replace(voice.settings, silence_s=0.8))  # the shortest pause
        voice.conversation_action.trigger()
        conversation = voice.conversation
        assert conversation is not None and conversation.stage is Stage.LISTENING
        recorder = voice.recorder()
        assert recorder.recording and conversation.bar.isVisible()
        assert voice.mic.state is Dictation.BLOCKED  # dictation waits, saying why
        stages: list[Stage] = []
        recording_while: dict[Stage, bool] = {}

        def watch(shown: StageShown) -> None:
            stages.append(shown.stage)
            recording_while[shown.stage] = recorder.recording

        conversation.stageChanged.connect(watch)
        qtbot.wait(400)  # the room first: the turn detector learns its floor
        player = play(virtual_mic, write_wav(tmp_path / "q.wav", spoken("What time is it?")))
        qtbot.waitUntil(lambda: Stage.SPEAKING in stages, timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: stages[-1] is Stage.LISTENING, timeout=TIMEOUT_MS)
        assert player.poll() == 0
        assert stages[:3] == [Stage.TRANSCRIBING, Stage.THINKING, Stage.SPEAKING]
        assert not recording_while[Stage.SPEAKING]  # the reply is never heard as the person
        assert recorder.recording
        path = app.controller.store.active_path(window.current_conversation_id)
        assert [m.role for m in path] == ["user", "assistant"]
        conversation.bar.mute_button.click()
        assert conversation.stage is Stage.MUTED
        conversation.bar.end_button.click()
        assert voice.conversation is None and not voice.conversation_action.isChecked()
        assert voice.mic.state is Dictation.IDLE
        assert not recorder.recording and not conversation.bar.isVisible()
