"""Start-up: parse the command line, show the window at once, let the model load behind it.

The window is on screen before any model work starts: the controller resolves the start-up
model (the last one used if it is still in the library, else the built-in default, imported
from its GGUF on first start) and loads it on the inference worker while the person can
already read, search and type.

Before any of that, the launch claims its data folder (`ui.single_instance`): a second launch on
the same folder hands its command line to the running app and exits before touching the store.

The Qt event loop is also the asyncio loop (`qasync.QEventLoop`), so the local server (and the
clients of remote backends) run on the GUI thread without blocking it; the inference worker
thread stays the only owner of MLX.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from app.chat.controller import ChatController, ModelResolver
from app.generation.knowledge_index import IndexKnowledge
from app.generation.worker import InferenceWorker, default_engine_factory
from app.gui_relay import GuiRelay
from app.gui_thread_gc import collect_on_gui_thread
from app.knowledge.pause import app_pause_gate
from app.logs import configure_logging
from app.operations.knowledge_activity import KnowledgeActivity
from app.operations.knowledge_embedder import shared_embedder
from app.operations.knowledge_folders import KnowledgeFolders
from app.operations.knowledge_pause import pause_while_generating
from app.paths import APP_NAME, AppPaths
from app.remote.connections import Connections
from app.settings import Preferences
from app.store.conversations import Store, StoreError
from ui.dialogs.connections_dialog import add_connections_action
from ui.single_instance import LockError, SingleInstance, bring_to_front, server_name
from ui.text.plain_text import show_message
from ui.widgets.theme import apply_theme
from ui.window.actions import add_log_folder_action
from ui.window.found_models_offer import offer_found_models
from ui.window.knowledge_commands import START_DELAY_MS
from ui.window.main_window import MainWindow

if TYPE_CHECKING:
    import asyncio

    from app.knowledge.embedder import Embedder


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
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="log everything (conversation text included), not only warnings and errors",
    )
    return parser.parse_args(argv)


def model_resolver(
    models_dir: Path, preferred_id: str | None, relay: GuiRelay, explicit: Path | None = None
) -> ModelResolver:
    """What to load at start-up; runs on the inference worker (a first start imports MLX).
    Its progress reports go through `relay`: they update the controller, a GUI-thread object."""

    def resolve(progress: Callable[[str, int, int], None]) -> Path:
        from app.library.entries import list_models
        from app.library.install import ensure_default_model, remove_abandoned_work
        from app.library.model_support import refresh_support

        progress = relay.wrap(progress)
        remove_abandoned_work(models_dir)
        refresh_support(models_dir)  # imports mlx-lm, which loading the model needs anyway
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
    # The data folder's claim, held until the app exits; None for a launch that took none (tests).
    instance: SingleInstance | None = None

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


def asyncio_loop(app: QApplication, already_running: bool = False) -> asyncio.AbstractEventLoop:
    """The asyncio loop that runs on `app`'s Qt event loop, made once and set as the current
    loop. `already_running`: Qt's loop is running (`run` installs it after the first paint),
    so asyncio code runs from now on; otherwise it runs once `run_forever` or
    `run_until_complete` runs Qt's loop.

    asyncio and qasync are imported here, not with this module: together they take about a
    tenth of a second, which the window's first frame does not wait for."""
    from concurrent.futures import ThreadPoolExecutor

    import qasync

    loop = getattr(app, "_asyncio_loop", None)
    if loop is None or loop.is_closed():
        loop = qasync.QEventLoop(app, already_running=already_running)
        # qasync's own executor runs QThreads that abort the process if still alive at exit
        # ("QThread: Destroyed while thread is still running"); Python's threads are joined.
        loop.set_default_executor(ThreadPoolExecutor(thread_name_prefix="asyncio-executor"))
        # Kept on the app, which lives as long as the loop.
        app._asyncio_loop = loop  # pyright: ignore[reportAttributeAccessIssue]  (our attribute: QApplication's stub has none)
    import asyncio

    asyncio.set_event_loop(loop)
    return loop


def start_async_services(launched: Launched, already_running: bool = False) -> None:
    """Install the asyncio loop and start what runs on it: the local server, when the person
    left it on in Preferences › Server."""
    asyncio_loop(launched.app, already_running)
    preferences = launched.controller.preferences
    if preferences.server_enabled:
        launched.controller.server.apply(preferences.server_config)


def launch(
    args: argparse.Namespace,
    worker: InferenceWorker | None = None,
    instance: SingleInstance | None = None,
) -> Launched | None:
    """Open the store, show the window, then start loading the model; None if the store
    cannot be opened (the person has been told why). `worker` replaces the real inference
    worker (tests give one with a scripted engine); `instance` is the data folder's claim, whose
    later launches bring this window to the front."""
    app = create_application()
    collect_on_gui_thread(app)
    paths = AppPaths.resolve(args.data_dir)
    preferences = Preferences(paths.settings_file)
    apply_theme(app, preferences.theme)
    try:
        store = Store.open(paths.database)
    except StoreError as exc:
        show_message(
            None, QMessageBox.Icon.Critical, "Branchwise cannot open its conversations", str(exc)
        )
        return None
    worker = worker or InferenceWorker(
        partial(
            default_engine_factory,
            cache_dir=paths.caches_dir,
            # Read at each load, on the worker thread: its own QSettings object (reentrant).
            cpu_float32=lambda: Preferences(paths.settings_file).cpu_float32,
        )
    )
    resolver = model_resolver(paths.models_dir, preferences.model_id, worker.relay, args.model)
    connections = Connections(paths.data_dir)
    controller = ChatController(store, worker, preferences, resolver, connections, paths.models_dir)
    # Index runs and the chat's searches use one embedder: the model the preference names.
    embedder = shared_embedder(
        lambda: Preferences(paths.settings_file).knowledge_embedder, paths.models_dir, worker
    )
    # What chats read of the knowledge folders (nothing is opened while there are none).
    controller.knowledge.set_base(IndexKnowledge(paths.knowledge_database, embedder))
    knowledge = knowledge_folders(paths, worker, embedder, controller)
    window = MainWindow(controller, paths, preferences, knowledge)
    add_log_folder_action(window, paths.logs_dir)
    add_connections_action(window, window.menu_actions.library, connections)
    if instance is not None:
        instance.activationRequested.connect(lambda _argv: bring_to_front(window))
    controller.server.stateChanged.connect(window.status_panel.set_server)
    window.restore_state()
    window.show()
    window.composer.edit.setFocus()
    offer_found_models(
        window,
        paths.models_dir,
        preferences,
        window.banner,
        lambda: window.open_library().find_models(),
    )
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
    QTimer.singleShot(START_DELAY_MS, window.knowledge_folders.start)
    return Launched(app, window, controller, instance)


def knowledge_folders(
    paths: AppPaths,
    worker: InferenceWorker,
    embedder: Callable[[], Embedder | None],
    owner: QObject,
) -> KnowledgeActivity:
    """The app's knowledge folders, kept current from start to quit (indexed in the background,
    watched, rescanned), whose index runs wait while a reply is generating. The app owns them,
    not a window or a page: a page closed, or opened later, changes nothing about indexing."""
    gate = app_pause_gate()
    pause_while_generating(gate, worker)
    folders = KnowledgeFolders(paths.knowledge_database, embedder, gate=gate, parent=owner)
    return KnowledgeActivity(folders)


def main(argv: list[str] | None = None) -> int:
    # Model files are checked in child processes (app/isolated.py); in the frozen app a child
    # starts as this executable, and this turns it into the child's job before any window.
    multiprocessing.freeze_support()
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.self_test:
        from ui.self_test import run_self_test

        return run_self_test(args.model, args.data_dir)
    paths = AppPaths.resolve(args.data_dir)
    configure_logging(paths.logs_dir, verbose=args.verbose)
    create_application()
    try:
        instance = claim_data_folder(paths, argv)
    except LockError as exc:
        logging.getLogger(__name__).error("%s", exc)
        show_message(None, QMessageBox.Icon.Critical, "Branchwise cannot start", str(exc))
        return 1
    if instance is None:
        return 0
    launched = launch(args, instance=instance)
    if launched is None:
        instance.release()
        return 1
    return run(launched)


def claim_data_folder(paths: AppPaths, argv: list[str]) -> SingleInstance | None:
    """This launch's claim on the data folder, or None once the app already running on it has
    taken `argv` over. Raises LockError, with a message for the person, when the folder can be
    neither claimed nor handed over."""
    instance = SingleInstance(paths.lock_file, server_name(paths.data_dir))
    if instance.claim():
        return instance
    if instance.hand_over(argv):
        return None
    if instance.claim():  # the running one quit meanwhile
        return instance
    raise LockError(
        f"Another Branchwise is using the data folder {paths.data_dir} but does not respond. "
        "Quit it (or end it), then start Branchwise again."
    )


def run(launched: Launched) -> int:
    """Run the event loop (Qt's, which is also the asyncio loop) until the window closes, then
    leave.

    Closing stops generation, saves and closes the store and waits 2 s for the worker; then the
    tool servers are stopped (the asyncio loop runs once more for that). A worker
    still busy after that is inside a step nothing can interrupt (importing MLX, importing a
    model); letting the interpreter tear MLX's threads down under it aborts the process
    ("terminate called without an active exception"), so exit at once: every word is already
    on disk, and an unfinished import leaves only a hidden staging folder.
    """
    # Runs in the event loop's first round, after the window's first paint.
    QTimer.singleShot(0, lambda: start_async_services(launched, already_running=True))
    code = launched.app.exec()
    launched.controller.tool_session.close_at_quit()
    if launched.instance is not None:
        launched.instance.release()
    if launched.controller.worker.is_alive():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
