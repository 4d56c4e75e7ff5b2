"""Audio files dropped on the window or attached: the person is asked whether to transcribe
them into the message (an audio file is not something a chat model reads); each is then decoded
in turn and handed on as 16 kHz PCM."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from ui.voice.audio_files import AudioFileDecoder, DecodedAudio


def ask_to_transcribe(parent: QWidget, paths: list[str]) -> bool:
    names = ", ".join(Path(p).name for p in paths)
    files = "this audio file" if len(paths) == 1 else f"these {len(paths)} audio files"
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Transcribe audio?",
        f"Transcribe {files} into the message? ({names})",
        QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setInformativeText(
        "The words are put in the message box for you to edit; nothing is sent, and the audio "
        "stays on this computer."
    )
    transcribe = box.addButton("Transcribe", QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(transcribe)
    box.exec()
    return box.clickedButton() is transcribe


class FileQueue(QObject):
    """Decodes the files one after another: `next()` decodes the next one, which arrives
    through `decoded` (or `failed`, with why); `empty` says when none is left."""

    decoded = Signal(DecodedAudio)
    failed = Signal(str)

    def __init__(self, paths: list[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._paths = deque(paths)
        self._decoder = AudioFileDecoder(self)
        self._decoder.decoded.connect(self.decoded)
        self._decoder.failed.connect(self._on_failed)

    @property
    def empty(self) -> bool:
        return not self._paths

    def next(self) -> bool:
        if not self._paths:
            return False
        self._decoder.start(self._paths.popleft())
        return True

    def cancel(self) -> None:
        self._paths.clear()
        self._decoder.cancel()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message)
        self.next()
