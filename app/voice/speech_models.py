"""Which Whisper model dictation uses: the one chosen in Preferences › Voice (or with "Use for
Dictation" in the library), else the library's first usable speech model. Plain file work."""

from __future__ import annotations

from pathlib import Path

from app.library.entries import ModelInfo, ModelKind, list_models
from app.library.model_check import LibraryError

NO_SPEECH_MODEL = (
    "No speech model yet: download a Whisper model in the Model Library (for example "
    "mlx-community/whisper-large-v3-turbo) or import a Whisper folder."
)


def speech_models(models_dir: Path) -> list[ModelInfo]:
    return list_models(models_dir, kind=ModelKind.SPEECH)


def chosen_speech_model(models_dir: Path, chosen: str | None) -> ModelInfo | None:
    """The usable speech model named `chosen` (an entry id), else the first usable one."""
    usable = [m for m in speech_models(models_dir) if m.problem is None]
    return next((m for m in usable if m.id == chosen), usable[0] if usable else None)


def resolve_speech_model(models_dir: Path, name: str | None, chosen: str | None) -> Path:
    """The folder `branchwise transcribe --model NAME` means: a folder path, a library entry's
    id or display name; without a name, the chosen one. LibraryError says what is missing."""
    if name is None:
        info = chosen_speech_model(models_dir, chosen)
        if info is None:
            raise LibraryError(NO_SPEECH_MODEL)
        return info.path
    folder = Path(name).expanduser()
    if folder.is_dir():
        return folder
    for info in speech_models(models_dir):
        if name in (info.id, info.name):
            if info.problem is not None:
                raise LibraryError(f"{info.name} cannot be used: {info.problem}")
            return info.path
    raise LibraryError(f"'{name}' is neither a folder nor a speech model in the library.")
