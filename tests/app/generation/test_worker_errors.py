"""The worker's failures arrive as data of a kind: matched by type against inference's own error
classes where the exception is caught, so an exception that only shares a class name with one
of them is a bug, and the GUI thread acts on the kind (a context too small offers a new chat, a
cut-off remote reply keeps its text)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.generation.reply_events import ContextFull
from app.generation.reply_generation import ReplyGeneration
from app.generation.worker import InferenceWorker
from app.generation.worker_engine import EngineLike
from app.generation.worker_errors import FailureKind, WorkerFailure, failure_of
from app.generation.worker_events import TokensReady
from app.store.conversations import Store
from inference.errors import (
    ContextOverflowError,
    InferenceError,
    ModelLoadError,
    PromptError,
    SamplingError,
)
from inference.importing.model_folder import ImportCancelled
from tests.app.generation.test_prompt_images import _Backend
from tests.app.generation.test_worker import SyntheticEngine, _request, _worker_with


class _Elsewhere:
    """Another library's errors, one named as inference's."""

    class ContextOverflowError(Exception):
        pass


_Lookalike = _Elsewhere.ContextOverflowError


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ContextOverflowError("The chat no longer fits."), FailureKind.CONTEXT_FULL),
        (PromptError("The prompt is empty."), FailureKind.INVALID_REQUEST),
        (SamplingError("max_tokens must be positive."), FailureKind.INVALID_REQUEST),
        (InferenceError("The engine refused."), FailureKind.REFUSED),
        (_Lookalike("The chat no longer fits."), FailureKind.BUG),
        (ValueError("The chat no longer fits."), FailureKind.BUG),
    ],
)
def test_a_failed_generation_arrives_as_its_kind(
    qtbot, error: Exception, kind: FailureKind
) -> None:
    engine = SyntheticEngine(tokens=5)
    engine.fail_with = error
    worker = _worker_with(engine, qtbot)
    with qtbot.waitSignal(worker.generationFailed, timeout=5000) as failed:
        worker.submit(_request(7))
    worker.shutdown()
    assert failed.args[0] == WorkerFailure(kind, str(error), 7)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ModelLoadError("No config.json in /nowhere."), FailureKind.LOAD_FAILED),
        (ImportCancelled("The import was cancelled."), FailureKind.CANCELLED),
        (FileNotFoundError("/nowhere"), FailureKind.BUG),
    ],
)
def test_a_failed_load_arrives_as_its_kind(qtbot, error: Exception, kind: FailureKind) -> None:
    def factory(_path: Path, _progress: Callable[[str, int, int], None]) -> tuple[EngineLike, dict]:
        raise error

    worker = InferenceWorker(factory)
    with qtbot.waitSignal(worker.loadFailed, timeout=5000) as failed:
        worker.load_model(Path("/nowhere"))
    worker.shutdown()
    assert failed.args[0] == WorkerFailure(kind, str(error))


def test_only_a_bug_is_logged_with_its_traceback(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger="app.generation.worker_errors"):
        refused = failure_of(PromptError("The prompt is empty."), 3)
        bug = failure_of(_Lookalike(), 4)
    assert refused == WorkerFailure(FailureKind.INVALID_REQUEST, "The prompt is empty.", 3)
    # Without a message of its own, the person is told the type.
    assert bug == WorkerFailure(FailureKind.BUG, "ContextOverflowError", 4)
    assert [r.exc_info[0] for r in caplog.records if r.exc_info] == [_Lookalike]


def test_the_request_is_at_fault_when_refused_or_too_long() -> None:
    at_fault = {k for k in FailureKind if WorkerFailure(k, "").invalid_request}
    assert at_fault == {FailureKind.INVALID_REQUEST, FailureKind.CONTEXT_FULL}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "conversations.sqlite3") as opened:
        yield opened


def _failed_reply(store: Store, kind: FailureKind) -> tuple[str, list[str], list[ContextFull]]:
    """A reply its backend fails with `kind`: its stored status, the notices and the offers of
    a new chat it caused."""
    cid = store.create_conversation("Chat").id
    user = store.append_message(cid, None, "user", "Hello")
    backend = _Backend()
    generation = ReplyGeneration(store, [backend], lambda: "stop", lambda: 1)
    notices: list[str] = []
    offers: list[ContextFull] = []
    generation.notice.connect(notices.append)
    generation.contextFull.connect(offers.append)
    reply_id = generation.start(cid, user.id, "tiny", backend)
    backend.tokensReady.emit(TokensReady(1, "Half an"))
    backend.generationFailed.emit(WorkerFailure(kind, "It went wrong.", 1))
    assert not generation.is_busy()
    return store.get_message(reply_id).status, notices, offers


def test_a_reply_too_long_for_the_context_offers_a_new_chat(store: Store) -> None:
    status, notices, offers = _failed_reply(store, FailureKind.CONTEXT_FULL)
    assert (status, notices) == ("error", [])
    assert [o.message for o in offers] == ["It went wrong."]


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (FailureKind.INTERRUPTED, "interrupted"),
        (FailureKind.REFUSED, "error"),
        (FailureKind.BUG, "error"),
    ],
)
def test_any_other_failure_is_told_and_only_a_cut_off_reply_keeps_its_text_as_good(
    store: Store, kind: FailureKind, status: str
) -> None:
    assert _failed_reply(store, kind) == (status, ["It went wrong."], [])
