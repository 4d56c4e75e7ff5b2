"""Start-up: parse the command line, show the window at once, let the model load behind it.

The window is on screen before any model work starts: the controller resolves the start-up
model (the last one used if it is still in the library, else the built-in default, imported
from its GGUF on first start) and loads it on the inference worker while the person can
already read, search and type.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from app.controller import ChatController, ModelResolver
from app.paths import APP_NAME, AppPaths
from app.settings import Preferences
from app.store import Store, StoreError
from app.worker import InferenceWorker
from ui.main_window import MainWindow
from ui.theme import apply_theme


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="branchwise", description="Chat with local models.")
    parser.add_argument("--data-dir", help="keep conversations, models and settings here")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="load a model, stream a short reply, render it offscreen, print a summary and exit",
    )
    parser.add_argument(
        "--model",
        type=Path,
        help="an MLX model folder to load instead of the last used one (and for --self-test)",
    )
    return parser.parse_args(argv)


def model_resolver(
    models_dir: Path, preferred_id: str | None, explicit: Path | None = None
) -> ModelResolver:
    """What to load at start-up; runs on the inference worker (a first start imports MLX)."""

    def resolve(progress: Callable[[str, int, int], None]) -> Path:
        from app.library import ensure_default_model, list_models, remove_abandoned_work

        remove_abandoned_work(models_dir)
        if explicit is not None:
            return explicit
        if preferred_id:
            for info in list_models(models_dir):
                if info.problem is None and info.path.name == preferred_id:
                    return info.path
        return ensure_default_model(
            models_dir, lambda done, total: progress("Importing the built-in model", done, total)
        )

    return resolve


@dataclass
class Launched:
    app: QApplication
    window: MainWindow
    controller: ChatController

    @property
    def store(self) -> Store:
        return self.controller.store


def create_application() -> QApplication:
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName("branchwise")
    # A QIcon made from a file name decodes the PNG only when it is first drawn.
    app.setWindowIcon(QIcon(str(resources.files("resources").joinpath("icon.png"))))
    return app


def launch(args: argparse.Namespace, worker: InferenceWorker | None = None) -> Launched | None:
    """Open the store, show the window, then start loading the model; None if the store
    cannot be opened (the person has been told why). `worker` replaces the real inference
    worker (tests give one with a scripted engine)."""
    app = create_application()
    paths = AppPaths.resolve(args.data_dir)
    preferences = Preferences(paths.settings_file)
    apply_theme(app, preferences.theme)  # type: ignore[arg-type]  (a str from THEMES)
    try:
        store = Store.open(paths.database)
    except StoreError as exc:
        QMessageBox.critical(None, "Branchwise cannot open its conversations", str(exc))
        return None
    worker = worker or InferenceWorker()
    resolver = model_resolver(paths.models_dir, preferences.model_id, args.model)
    controller = ChatController(store, worker, preferences, resolver)
    window = MainWindow(controller, paths, preferences)
    window.restore_state()
    window.show()
    window.composer.edit.setFocus()
    if store.recovered_from is not None:
        window.banner.show_notice(
            "The conversation database was damaged, so Branchwise started a new one. The "
            f"damaged file was kept at {store.recovered_from}.",
            kind="warning",
            sticky=True,
        )
    # Model work starts once the event loop runs, after the first paint: the worker's MLX
    # imports would otherwise compete with the window for the CPU and the GIL.
    QTimer.singleShot(0, controller.start)
    return Launched(app, window, controller)


def main(argv: list[str] | None = None) -> int:
    # Model files are checked in child processes (app/isolated.py); in the frozen app a child
    # starts as this executable, and this turns it into the child's job before any window.
    multiprocessing.freeze_support()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        from ui.self_test import run_self_test

        return run_self_test(args.model, args.data_dir)
    launched = launch(args)
    if launched is None:
        return 1
    return run(launched)


def run(launched: Launched) -> int:
    """Run the event loop until the window closes, then leave.

    Closing stops generation, saves and closes the store and waits 2 s for the worker. A worker
    still busy after that is inside a step nothing can interrupt (importing MLX, importing a
    model); letting the interpreter tear MLX's threads down under it aborts the process
    ("terminate called without an active exception"), so exit at once: every word is already
    on disk, and an unfinished import leaves only a hidden staging folder.
    """
    code = launched.app.exec()
    if launched.controller.worker.is_alive():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
