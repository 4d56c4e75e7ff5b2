"""The models the worker holds: a request naming a model loads it beside the main one while the
room holds both (and the budget for stored caches is shared), in place of them otherwise
(their caches saved first), and a request stopped before its model loaded loads nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.generation.worker import GenerationRequest, InferenceWorker
from app.generation.worker_events import GenerationFinished, ModelLoaded
from app.generation.worker_requests import ModelPreparing, RequestModel
from tests.app.generation.test_worker import SyntheticEngine

WEIGHTS = 1_000_000


class _Engine(SyntheticEngine):
    """Counts the saves asked of it, and keeps the budget it is given."""

    cache_budget_bytes = 0

    def __init__(self) -> None:
        super().__init__(tokens=3)
        self.pending_saves = 2

    def save_pending(self, seconds: float) -> bool:
        self.pending_saves = max(0, self.pending_saves - 1)
        return self.pending_saves > 0


def _worker(room: int) -> tuple[InferenceWorker, dict[str, _Engine]]:
    engines: dict[str, _Engine] = {}

    def factory(path: Path, _progress: Any) -> tuple[_Engine, ModelLoaded]:
        engines[path.name] = _Engine()
        return engines[path.name], ModelLoaded(path.name, str(path), None, weights_bytes=WEIGHTS)

    return InferenceWorker(factory, model_room=lambda _held: room), engines


def _ask(
    qtbot, worker: InferenceWorker, path: Path, together: tuple[Path, ...], stopped: bool = False
) -> GenerationFinished:
    request = GenerationRequest(
        worker.next_request_id(),
        [{"role": "user", "content": "hi"}],
        {},
        model=RequestModel(path, WEIGHTS, together),
    )
    if stopped:
        request.cancel.set()
    with qtbot.waitSignal(worker.generationFinished, timeout=10000) as finished:
        worker.submit(request)
    return finished.args[0]


def _loaded(qtbot, worker: InferenceWorker, path: Path) -> None:
    with qtbot.waitSignal(worker.modelLoaded, timeout=10000):
        worker.load_model(path)


def test_a_model_that_fits_loads_beside_the_main_one_and_shares_the_cache_budget(
    qtbot, tmp_path: Path
) -> None:
    worker, engines = _worker(room=3 * WEIGHTS)
    a, b = tmp_path / "a", tmp_path / "b"
    _loaded(qtbot, worker, a)
    worker.set_cache_budget(1000)
    preparing: list[ModelPreparing] = []
    worker.modelPreparing.connect(preparing.append)
    assert _ask(qtbot, worker, b, (a, b)).text == "xxx"
    assert [(m.model_id, m.main) for m in worker.held_models()] == [("a", True), ("b", False)]
    assert [p.beside for p in preparing] == [True]
    assert engines["a"].cache_budget_bytes == engines["b"].cache_budget_bytes == 500
    # Asked again, it is held already: nothing loads.
    assert _ask(qtbot, worker, b, (a, b)).text == "xxx"
    assert len(preparing) == 1
    # Made the main model, at once: the other stays held beside it.
    _loaded(qtbot, worker, b)
    assert [(m.model_id, m.main) for m in worker.held_models()] == [("b", True), ("a", False)]
    assert worker.shutdown()


def test_a_model_that_does_not_fit_replaces_the_held_ones_after_saving_their_caches(
    qtbot, tmp_path: Path
) -> None:
    worker, engines = _worker(room=int(1.5 * WEIGHTS))
    a, b = tmp_path / "a", tmp_path / "b"
    _loaded(qtbot, worker, a)
    preparing: list[ModelPreparing] = []
    worker.modelPreparing.connect(preparing.append)
    # Planned together, but the room says no now: it is loaded in place of the main model.
    with qtbot.waitSignal(worker.modelLoaded, timeout=10000):
        _ask(qtbot, worker, b, (a, b))
    assert [p.beside for p in preparing] == [False]
    assert [(m.model_id, m.main) for m in worker.held_models()] == [("b", True)]
    assert engines["a"].pending_saves == 0  # every cache it had was saved before it went
    assert worker.shutdown()


def test_a_request_stopped_before_its_model_loaded_loads_nothing(qtbot, tmp_path: Path) -> None:
    worker, engines = _worker(room=3 * WEIGHTS)
    _loaded(qtbot, worker, tmp_path / "a")
    finished = _ask(qtbot, worker, tmp_path / "b", (), stopped=True)
    assert (finished.finish_reason, finished.text) == ("cancelled", "")
    assert list(engines) == ["a"]
    assert worker.shutdown()
