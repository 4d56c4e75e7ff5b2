"""Compare Models in the real window with two tiny llamas of different weights: the composer's
Compare with… button, the chooser (memory said before anything is sent), the answers in their
own columns with their models' names and stats, Keep this one, the chat going on with the kept
answer's model, and blind mode hiding the names until a pick."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtWidgets import QToolButton

from app.generation.worker import InferenceWorker, default_engine_factory
from app.library.entries import list_models, rename_model
from app.library.install import import_folder
from app.paths import AppPaths
from tests.tiny_models import NO_EOS, build_model
from tests.ui.window_harness import OFFSCREEN_NOISE, running_app, set_params
from ui.chat.message_toolbar import COMPARE_BUTTON
from ui.main import Launched

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)
GREEDY = {"temperature": 0.0, "max_tokens": 4, "seed": 0, "logit_bias": NO_EOS}


@pytest.fixture(scope="module")
def other_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_model("llama", tmp_path_factory.mktemp("llama-b") / "llama-b", seed=1)


def _library(data_dir: Path, tiny_models_dir: Path, other: Path) -> None:
    models = AppPaths.resolve(data_dir).models_dir
    models.mkdir(parents=True, exist_ok=True)
    for source, name in ((tiny_models_dir / "llama", "Tiny Llama A"), (other, "Tiny Llama B")):
        rename_model(models, import_folder(source, models, link=True).name, name)
    assert [m.name for m in list_models(models)] == ["Tiny Llama A", "Tiny Llama B"]


def _choose_both(app, blind: bool = False):
    window = app.window
    window.composer.edit.setPlainText("Hello there")
    features = window.model_compare
    assert features.button.isEnabled()
    features.button.click()
    chooser = features.chooser
    assert chooser is not None and chooser.isVisible()
    assert [m.name for m in chooser.chosen()] == ["Tiny Llama A"]  # the chat's own model
    assert not chooser.send_button.isEnabled()
    assert chooser.memory.text() == "Check 2 to 4 models."
    chooser.set_checked(["llama", "llama-b"])
    assert chooser.send_button.text() == "Send to 2 Models"
    assert chooser.memory.text().startswith("Running side by side: Tiny Llama A ")
    chooser.blind.setChecked(blind)
    return chooser


@contextmanager
def _compare_app(
    qtbot, data_dir: Path, tiny_models_dir: Path, other: Path, worker: InferenceWorker | None = None
) -> Iterator[Launched]:
    """The app on a library of both llamas, a new greedy chat open on the first."""
    _library(data_dir, tiny_models_dir, other)
    with running_app(qtbot, data_dir, tiny_models_dir / "llama", worker) as app:
        app.window.new_chat()
        set_params(app, GREEDY)
        yield app


def test_compare_two_models_keep_one_and_the_chat_goes_on_with_its_model(
    qtbot, tmp_path: Path, tiny_models_dir: Path, other_llama: Path
) -> None:
    with _compare_app(qtbot, tmp_path, tiny_models_dir, other_llama) as app:
        window, ctl = app.window, app.controller
        cid = window.current_conversation_id
        chooser = _choose_both(app)
        with qtbot.waitSignal(ctl.compare.ended, timeout=60000):
            chooser.send_button.click()
            assert window.composer.text() == ""  # sent: the draft went with it
        view = window.model_compare.view
        assert view is not None and view.isVisible()
        assert [c.title.text() for c in view.columns] == ["Tiny Llama A", "Tiny Llama B"]
        assert all(c.detail.text().startswith("on this computer · ") for c in view.columns)
        assert view.notice.text().startswith("Running side by side:")
        for column in view.columns:
            assert column.text.toPlainText()
            line = column.stats.text()
            assert line.startswith("4 tokens · ") and "tok/s" in line, line
            assert "s to first token" in line and "reused from cache" in line, line
        assert window.title_label.text() == "Hello there"

        view.columns[1].keep.click()
        assert not view.isVisible()
        path = ctl.store.active_path(cid)
        assert path[-1].model_id == "llama-b"
        assert ctl.store.get_conversation(cid).model_id == "llama-b"
        assert window.banner.text == (
            "This branch was written by Tiny Llama B: the chat goes on with it."
        )
        qtbot.waitUntil(
            lambda: window.models.loaded_id() == "llama-b" and ctl.model_state == "ready",
            timeout=60000,
        )
        assert window.model_picker.current_model() == "llama-b"
        reply = window.chat_view.message_widget(str(path[-1].id))
        assert reply.stats_label.text().startswith("Tiny Llama B · 4 tokens · ")
        assert reply._toolbar.nav is not None and reply._toolbar.nav.position_text == "2/2"

        # ‹ goes back to the first model's answer, and the chat follows it back.
        with qtbot.waitSignal(ctl.modelFollowed, timeout=5000):
            reply._toolbar.nav.previous_button.click()
        assert ctl.store.get_conversation(cid).model_id == "llama"
        qtbot.waitUntil(
            lambda: window.models.loaded_id() == "llama" and ctl.model_state == "ready",
            timeout=60000,
        )

        # The Compare button on the sent message asks the models again: two more siblings.
        user = window.chat_view.message_widget(str(path[0].id))
        button = next(b for b in user.findChildren(QToolButton) if b.property(COMPARE_BUTTON))
        button.click()
        again = window.model_compare.chooser
        again.set_checked(["llama", "llama-b"])
        with qtbot.waitSignal(ctl.compare.ended, timeout=60000):
            again.send_button.click()
        siblings = ctl.store.children(path[0].id)
        assert [m.model_id for m in siblings] == ["llama", "llama-b", "llama", "llama-b"]
        assert [m.status for m in siblings] == ["complete"] * 4


def test_blind_mode_hides_the_names_until_an_answer_is_kept(
    qtbot, tmp_path: Path, tiny_models_dir: Path, other_llama: Path
) -> None:
    with _compare_app(qtbot, tmp_path, tiny_models_dir, other_llama) as app:
        window, ctl = app.window, app.controller
        cid = window.current_conversation_id
        chooser = _choose_both(app, blind=True)
        with qtbot.waitSignal(ctl.compare.ended, timeout=60000):
            chooser.send_button.click()
        view = window.model_compare.view
        assert [c.title.text() for c in view.columns] == ["Model A", "Model B"]
        assert view.notice.text().startswith("Running side by side: the models fit in ")
        assert "Tiny Llama" not in " ".join(
            [view.notice.text()] + [c.detail.text() + c.stats.text() for c in view.columns]
        )
        shown = ctl.store.active_path(cid)[-1]
        reply = window.chat_view.message_widget(str(shown.id))
        assert reply.stats_label.text().startswith("Model A · ")
        assert window.replay.open(shown.id) is None  # Details would name the model
        assert "blind" in window.banner.text

        view.columns[1].keep.click()
        assert view.isVisible()  # it stays, to show what was picked
        names = [c.title.text() for c in view.columns]
        assert sorted(names) == ["Tiny Llama A", "Tiny Llama B"]
        assert view.columns[1].keep.text() == "Kept" and not view.columns[0].keep.isEnabled()
        assert view.hint.text().startswith(f"You kept Model B: {names[1]}.")
        kept = ctl.store.active_path(cid)[-1]
        reply = window.chat_view.message_widget(str(kept.id))
        assert reply.stats_label.text().startswith(f"{names[1]} · ")
        view.close()


def test_models_that_cannot_run_are_refused_in_the_chooser_and_the_draft_stays(
    qtbot, tmp_path: Path, tiny_models_dir: Path, other_llama: Path
) -> None:
    worker = InferenceWorker(
        partial(default_engine_factory, cache_dir=tmp_path / "caches"),
        model_room=lambda _held: 300_000,
    )
    with _compare_app(qtbot, tmp_path, tiny_models_dir, other_llama, worker) as app:
        window, ctl = app.window, app.controller
        window.composer.edit.setPlainText("Hello there")
        chooser = window.model_compare.choose_for_draft()
        assert chooser is not None
        chooser.set_checked(["llama", "llama-b"])
        assert chooser.memory.text().startswith("Tiny Llama A needs 49")
        assert chooser.memory.text().endswith("only 300.0 KB is free. Choose a smaller model.")
        assert not chooser.send_button.isEnabled()
        chooser.accept()  # as if sent anyway: the controller refuses it too, saying why
        assert window.composer.text() == "Hello there"
        assert ctl.store.active_path(window.current_conversation_id) == []
        assert "only 300.0 KB is free" in window.banner.text
