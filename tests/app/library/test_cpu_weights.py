"""The memory check counts what the CPU preference will run: float32 (four bytes a parameter)
where it converts, the stored size where it does not; and the preference itself persists."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

import app.library.cpu_weights as cpu_weights
from app.library import entries as library
from app.library.cpu_weights import running_weights_bytes
from app.library.entries import LibraryError, ModelInfo
from app.settings import Preferences

GB = 1_000_000_000
# A 4-bit model of 2.5 billion parameters: 1.5 GB stored, 10 GB as float32.
MODEL = ModelInfo(
    id="m",
    folder=Path("m"),
    path=Path("m"),
    name="Mid model",
    architecture="llama",
    parameters=2_500_000_000,
    quantization="4-bit",
    size_bytes=int(1.5 * GB),
    weights_bytes=int(1.5 * GB),
    context_length=None,
    source="test",
)


def test_each_policy_counts_the_form_it_will_run() -> None:
    def running(policy: str, total: int, available: int, cpu: bool = True) -> float:
        size = running_weights_bytes(
            MODEL.weights_bytes,
            MODEL.parameters,
            policy,
            cpu=cpu,
            total_ram=total,
            available=available,
        )
        return size / GB

    assert running("auto", total=64 * GB, available=32 * GB) == 10  # fits a quarter of 64 GB
    assert running("auto", total=32 * GB, available=32 * GB) == 1.5  # a quarter is 8 GB
    assert running("auto", total=64 * GB, available=8 * GB) == 1.5  # not free right now
    assert running("always", total=16 * GB, available=4 * GB) == 10
    assert running("never", total=64 * GB, available=64 * GB) == 1.5
    assert running("always", total=64 * GB, available=64 * GB, cpu=False) == 1.5  # a GPU


def test_the_memory_check_refuses_float32_that_does_not_fit_and_says_how_much(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cpu_weights, "cpu_backend", lambda: True)
    memory = SimpleNamespace(total=16 * GB, available=6 * GB)
    monkeypatch.setattr(library.psutil, "virtual_memory", lambda: memory)
    monkeypatch.setattr(cpu_weights.psutil, "virtual_memory", lambda: memory)
    with pytest.raises(LibraryError, match=r"needs 10\.0 GB"):
        library.memory_check(MODEL, cpu_float32="always")
    library.memory_check(MODEL, cpu_float32="auto")  # auto runs it as stored instead
    library.memory_check(MODEL, cpu_float32="never")
    unknown = replace(MODEL, parameters=None)  # unreadable headers: the stored size
    library.memory_check(unknown, cpu_float32="always")


def test_the_preference_persists_and_refuses_an_unknown_choice(tmp_path: Path) -> None:
    path = tmp_path / "settings.ini"
    preferences = Preferences(path)
    assert preferences.cpu_float32 == "auto"
    preferences.cpu_float32 = "never"
    preferences.sync()
    assert Preferences(path).cpu_float32 == "never"
    with pytest.raises(ValueError, match="sometimes"):
        preferences.cpu_float32 = "sometimes"
