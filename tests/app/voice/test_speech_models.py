"""Whisper folders in the library: listed as speech models, never among the chat models; added
by the same import as any folder; one with only NumPy weights refused in words; the model
dictation uses is the chosen one, else the first; `--model` takes a folder or a name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.library.entries import ModelKind, list_models
from app.library.install import import_folder
from app.library.model_check import LibraryError, validate_folder
from app.voice.speech_models import chosen_speech_model, resolve_speech_model


def test_a_whisper_folder_is_a_speech_model_apart_from_chat_models(
    tmp_path: Path, tiny_whisper_path: Path, llama_path: Path
) -> None:
    models = tmp_path / "models"
    whisper = import_folder(tiny_whisper_path, models, link=False)
    import_folder(llama_path, models, link=True)
    assert [m.kind for m in list_models(models)] == [ModelKind.CHAT]
    [speech] = list_models(models, kind=ModelKind.SPEECH)
    assert speech.folder == whisper and speech.problem is None
    assert speech.architecture == "whisper" and speech.parameters and speech.weights_bytes > 0
    assert len(list_models(models, kind=None)) == 2
    assert chosen_speech_model(models, None) == speech
    assert chosen_speech_model(models, "gone") == speech
    assert resolve_speech_model(models, speech.name, None) == speech.path
    assert resolve_speech_model(models, str(tiny_whisper_path), None) == tiny_whisper_path
    with pytest.raises(LibraryError, match="neither a folder nor a speech model"):
        resolve_speech_model(models, "nothing-like-it", None)


def test_numpy_weights_are_refused_and_model_safetensors_accepted(
    tmp_path: Path, tiny_whisper_path: Path
) -> None:
    npz = tmp_path / "whisper-npz"
    shutil.copytree(tiny_whisper_path, npz)
    (npz / "weights.safetensors").rename(npz / "weights.npz")
    with pytest.raises(LibraryError, match="NumPy archive"):
        validate_folder(npz)
    newest = tmp_path / "whisper-newest"
    shutil.copytree(tiny_whisper_path, newest)
    (newest / "weights.safetensors").rename(newest / "model.safetensors")
    assert validate_folder(newest)["n_mels"] == 80
    with pytest.raises(LibraryError, match="No speech model"):
        resolve_speech_model(tmp_path / "empty", None, None)
