"""The matrix layout is chosen by measuring this machine: the faster side of the probe is kept
and carried out, remembered by key in the data folder so a later load (another process) skips
the probe, forced by BRANCHWISE_CPU_LAYOUT or a caller, and left as stored for matrices too small
to time. The probe's own result is never assumed: each test hands it the timings it decides on."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mlx.core as mx
import pytest

import inference.cpu.layout_choice as layout_choice
from inference import load_model
from inference.cpu.layout_choice import Basis, LayoutRequest, measure, probe_key
from inference.cpu.weight_layout import AS_STORED, TRANSPOSED, layout, stored_matrices


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No choice made earlier in this process, no variable set, and every model large enough to
    be measured (the tiny models' matrices take a few kilobytes)."""
    monkeypatch.setattr(layout_choice, "_chosen", {})
    monkeypatch.setattr(layout_choice, "MIN_MEASURED_BYTES", 0)
    monkeypatch.delenv(layout_choice.ENV, raising=False)
    return monkeypatch


def timings(monkeypatch: pytest.MonkeyPatch, stored_ms: float, transposed_ms: float) -> list[int]:
    """Make the probe report these timings; returns a list that counts its calls."""
    calls: list[int] = []

    def probe(matrices: object, seconds: float = 0.0) -> tuple[float, float]:
        calls.append(1)
        return stored_ms, transposed_ms

    monkeypatch.setattr(layout_choice, "measure", probe)
    return calls


@pytest.mark.parametrize(
    ("stored_ms", "transposed_ms", "expected"),
    [(10.0, 7.0, TRANSPOSED), (7.0, 10.0, AS_STORED), (10.0, 9.9, AS_STORED)],
)
def test_the_faster_side_of_the_probe_is_kept_and_carried_out(
    tiny_models_dir: Path,
    fresh: pytest.MonkeyPatch,
    stored_ms: float,
    transposed_ms: float,
    expected: str,
) -> None:
    timings(fresh, stored_ms, transposed_ms)
    loaded = load_model(tiny_models_dir / "llama", "always")
    assert loaded.matrix_layout.layout == expected == layout(loaded.model)
    assert loaded.matrix_layout.basis is Basis.MEASURED
    assert f"{stored_ms:.1f} ms as stored, {transposed_ms:.1f} ms transposed" in (
        loaded.matrix_layout.describe()
    )


def test_a_choice_is_remembered_in_the_data_folder_and_a_later_load_skips_the_probe(
    tiny_models_dir: Path, tmp_path: Path, fresh: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "caches" / "cpu-layout.json"
    calls = timings(fresh, 10.0, 6.0)
    first = load_model(tiny_models_dir / "llama", "always", LayoutRequest(memory=memory))
    assert first.matrix_layout.basis is Basis.MEASURED and calls == [1]
    entry = next(iter(json.loads(memory.read_text())["choices"].values()))
    assert entry["layout"] == TRANSPOSED and entry["stored_ms"] == 10.0
    fresh.setattr(layout_choice, "_chosen", {})  # as in a new process
    timings(fresh, 1.0, 100.0)  # a probe now would choose the other layout
    later = load_model(tiny_models_dir / "llama", "always", LayoutRequest(memory=memory))
    assert later.matrix_layout.basis is Basis.REMEMBERED
    assert layout(later.model) == TRANSPOSED and "measured earlier" in (
        later.matrix_layout.describe()
    )


def test_within_a_process_one_model_is_never_given_two_layouts(
    tiny_models_dir: Path, fresh: pytest.MonkeyPatch
) -> None:
    calls = timings(fresh, 10.0, 6.0)
    load_model(tiny_models_dir / "llama", "always")
    timings(fresh, 6.0, 10.0)
    again = load_model(tiny_models_dir / "llama", "always")
    assert layout(again.model) == TRANSPOSED and calls == [1]


def test_a_damaged_memory_is_measured_again_and_written_whole(
    tiny_models_dir: Path, tmp_path: Path, fresh: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "cpu-layout.json"
    memory.write_text('{"choices": {"x": ')
    calls = timings(fresh, 7.0, 10.0)
    loaded = load_model(tiny_models_dir / "llama", "always", LayoutRequest(memory=memory))
    assert loaded.matrix_layout.basis is Basis.MEASURED and calls == [1]
    assert len(json.loads(memory.read_text())["choices"]) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["cpu-layout.json"]  # no spare file left


def test_a_memory_that_cannot_be_written_is_said_in_the_log_and_the_load_goes_on(
    tiny_models_dir: Path,
    tmp_path: Path,
    fresh: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("")
    timings(fresh, 10.0, 6.0)
    with caplog.at_level(logging.WARNING):
        loaded = load_model(
            tiny_models_dir / "llama", "always", LayoutRequest(memory=blocked / "cpu-layout.json")
        )
    assert layout(loaded.model) == TRANSPOSED
    assert "could not be remembered" in caplog.text


@pytest.mark.parametrize(("value", "expected"), [("stored", AS_STORED), ("transposed", TRANSPOSED)])
def test_the_variable_forces_a_layout_without_measuring(
    tiny_models_dir: Path, fresh: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    calls = timings(fresh, 1.0, 1.0)
    fresh.setenv(layout_choice.ENV, value)
    loaded = load_model(tiny_models_dir / "llama", "always")
    assert layout(loaded.model) == expected and calls == []
    assert loaded.matrix_layout.describe().endswith(f"(forced by BRANCHWISE_CPU_LAYOUT={value})")


def test_a_mistyped_variable_is_warned_about_and_the_layout_measured(
    tiny_models_dir: Path, fresh: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls = timings(fresh, 10.0, 6.0)
    fresh.setenv(layout_choice.ENV, "sideways")
    with caplog.at_level(logging.WARNING):
        loaded = load_model(tiny_models_dir / "llama", "always")
    assert loaded.matrix_layout.basis is Basis.MEASURED and calls == [1]
    assert "'sideways' is not one of auto, transposed, stored" in caplog.text


def test_a_caller_s_layout_wins_over_the_variable(
    tiny_models_dir: Path, fresh: pytest.MonkeyPatch
) -> None:
    fresh.setenv(layout_choice.ENV, "transposed")
    request = LayoutRequest("stored", forced_by="the replayed reply's record")
    loaded = load_model(tiny_models_dir / "llama", "always", request)
    assert layout(loaded.model) == AS_STORED
    assert "forced by the replayed reply's record" in loaded.matrix_layout.describe()


def test_an_unknown_mode_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="Unknown matrix layout 'diagonal'"):
        LayoutRequest("diagonal")


def test_matrices_too_small_to_time_stay_as_stored_unmeasured(
    tiny_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(layout_choice, "_chosen", {})
    monkeypatch.delenv(layout_choice.ENV, raising=False)
    calls = timings(monkeypatch, 10.0, 1.0)
    loaded = load_model(tiny_models_dir / "llama", "always")
    assert layout(loaded.model) == AS_STORED and calls == []
    assert loaded.matrix_layout.basis is Basis.TOO_SMALL


def test_the_key_changes_with_the_shapes_and_the_blas_threads(
    tiny_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_model(tiny_models_dir / "llama", "always", LayoutRequest("stored"))
    matrices = stored_matrices(loaded.model)
    key = probe_key(matrices)
    assert probe_key(matrices) == key
    assert probe_key(matrices[:-1]) != key
    monkeypatch.setattr(layout_choice, "thread_count", lambda: 64)
    assert probe_key(matrices) != key


def test_the_probe_times_both_layouts_of_every_shape() -> None:
    """On real (small) matrices: both sides get a positive time, scaled from a sample of each
    shape to the model's bytes, and the matrices handed in are left as they were."""
    matrices = [mx.ones((256, 64)), mx.ones((256, 64)), mx.ones((64, 256))]
    mx.eval(matrices)
    stored_ms, transposed_ms = measure(matrices, seconds=0.01)
    assert stored_ms > 0 and transposed_ms > 0
    assert all(row_major(m) for m in matrices)


def row_major(matrix: mx.array) -> bool:
    return memoryview(matrix).strides == (matrix.itemsize * matrix.shape[1], matrix.itemsize)
