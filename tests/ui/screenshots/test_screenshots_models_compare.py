"""Screenshots of Compare Models (light and dark), saved into tests/screenshots/ for a person to
look at: the chooser with two library models and a server's, the three answers side by side,
the chat once one is kept (its reply named by its model, `‹ k/n ›`, the notice that the chat
goes on with it), and a blind compare before a pick. Scripted engines write chosen text (a
random-weight model writes noise); the server is `tests.fake_openai` on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.generation.worker import InferenceWorker
from app.generation.worker_events import ModelLoaded
from app.library.entries import list_models, rename_model
from app.library.install import import_folder
from app.paths import AppPaths
from app.remote.connections import Connection
from tests.fake_openai import FakeServer, Reply
from tests.remote_servers import until
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, start_app

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

QUESTION = "How do I read a large file line by line in Python?"
ANSWERS = {
    "llama": "Open the file in a `with` block and loop over it. Python reads one line at a "
    "time, so even a file of many gigabytes uses little memory:\n\n"
    '```python\nwith open("big.log", encoding="utf-8") as f:\n'
    "    for line in f:\n        handle(line.rstrip())\n```\n\n"
    "The `with` block closes the file even when an error stops the loop.",
    "gemma3_text": "Iterate over the file object itself:\n\n"
    "```python\nfor number, line in enumerate(open(path), start=1):\n"
    '    print(number, line, end="")\n```\n\n'
    "- each pass gives the next line, newline included\n"
    "- `line.rstrip()` drops the newline\n"
    "- prefer `with open(...)` in real code, so the file is closed",
}
REMOTE_ANSWER = (
    "Use a `for` loop over the open file; avoid `readlines()`, which loads the "
    "**whole file** into memory first.\n\n"
    '```python\nwith open(path, encoding="utf-8") as f:\n'
    "    for line in f:\n        ...\n```"
)
NAMES = {"llama": "Tiny Llama (test model)", "gemma3_text": "Tiny Gemma (test model)"}
LIMIT_S = 120


def _factory(
    engines: dict[str, ScriptedEngine],
) -> Callable[..., tuple[ScriptedEngine, ModelLoaded]]:
    """One scripted engine per model folder, reporting that folder as its model."""

    def make(path: Path, _progress: Any) -> tuple[ScriptedEngine, ModelLoaded]:
        engine = engines.setdefault(
            path.name, ScriptedEngine([ANSWERS[path.name]] * 4, chars_per_step=4, step_s=0.01)
        )
        weights = sum(p.stat().st_size for p in path.glob("*.safetensors"))
        return engine, ModelLoaded(
            path.name,
            str(path),
            engine.context_length,
            model_type="scripted",
            weights_bytes=weights,
        )

    return make


def _library(data_dir: Path, tiny_models_dir: Path) -> Path:
    models = AppPaths.resolve(data_dir).models_dir
    models.mkdir(parents=True, exist_ok=True)
    for kind, name in NAMES.items():
        rename_model(models, import_folder(tiny_models_dir / kind, models, link=True).name, name)
    return next(m.path for m in list_models(models) if m.path.name == "llama")


def _shots(loop: asyncio.AbstractEventLoop, window: Any, widget: Any, name: str) -> None:
    async def take() -> None:
        for theme in ("light", "dark"):
            window.set_theme(theme)
            await asyncio.sleep(0.05)  # let the restyle paint
            _save(widget, f"{name}-{theme}")
        window.set_theme("light")

    loop.run_until_complete(take())


async def _chooser_with_servers(features: Any, count: int) -> Any:
    """The chooser for the draft once the servers' models are listed (the loop runs all along,
    as in the app: a request begun on it must go on on it)."""
    chooser = features.choose_for_draft()
    await until(lambda: chooser.list.count() == count, LIMIT_S)
    return chooser


def _in_loop[T](loop: asyncio.AbstractEventLoop, action: Callable[[], T]) -> T:
    async def run() -> T:
        return action()

    return loop.run_until_complete(run())


def test_screenshots_of_compare_models(
    qtbot, tmp_path: Path, tiny_models_dir: Path, qt_asyncio_loop, monkeypatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")  # keys: a file
    loop = qt_asyncio_loop
    first = _library(tmp_path, tiny_models_dir)
    worker = InferenceWorker(_factory({}), model_room=lambda _held: 7_800_000_000)
    app = start_app(qtbot, tmp_path, first, worker)
    window, ctl = app.window, app.controller
    server = FakeServer([Reply(REMOTE_ANSWER)] * 2, style="whole", model="qwen2.5-72b-instruct")
    url = loop.run_until_complete(server.start())
    try:
        ctl.connections.save(Connection("Lab server", url), None)
        window.resize(1100, 760)
        window.set_theme("light")
        window.new_chat()
        features = window.model_compare
        window.composer.edit.setPlainText(QUESTION)
        chooser = loop.run_until_complete(_chooser_with_servers(features, 3))
        remote = "remote:Lab server/qwen2.5-72b-instruct"
        chooser.set_checked(["llama", "gemma3_text", remote])
        assert chooser.memory.text().startswith("Running side by side: Tiny Llama (test model)")
        chooser.resize(680, 440)
        _shots(loop, window, chooser, "compare-chooser")

        _in_loop(loop, chooser.accept)  # a remote answer starts only with the loop running
        view = features.view
        assert view is not None
        view.resize(1180, 520)
        loop.run_until_complete(until(lambda: not ctl.compare.is_busy(), LIMIT_S))
        assert [c.title.text() for c in view.columns] == [
            "Tiny Llama (test model)",
            "Tiny Gemma (test model)",
            "qwen2.5-72b-instruct on Lab server",
        ]
        assert all("tokens" in c.stats.text() for c in view.columns)
        _shots(loop, window, view, "compare-columns")

        view.columns[1].keep.click()
        loop.run_until_complete(
            until(
                lambda: window.models.loaded_id() == "gemma3_text" and ctl.model_state == "ready",
                LIMIT_S,
            )
        )
        assert window.banner.text.startswith("This branch was written by Tiny Gemma")
        _shots(loop, window, window, "compare-kept")

        # A blind compare of the two library models: the names wait for a pick.
        window.composer.edit.setPlainText("And for a binary file?")
        chooser = features.choose_for_draft()
        assert chooser is not None
        chooser.set_checked(["llama", "gemma3_text"])
        chooser.blind.setChecked(True)
        chooser.accept()
        view = features.view
        assert view is not None
        view.resize(900, 480)
        loop.run_until_complete(until(lambda: not ctl.compare.is_busy(), LIMIT_S))
        assert [c.title.text() for c in view.columns] == ["Model A", "Model B"]
        _shots(loop, window, view, "compare-blind")
        view.close()
    finally:
        loop.run_until_complete(server.stop())
        window.close()
