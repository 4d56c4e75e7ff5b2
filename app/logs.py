"""The app's log: a rotating file in the data folder's `logs/`, for bug reports.

Warnings and errors by default, everything with `--verbose`. Only the verbose level may carry
conversation text (debug records); warnings and errors name files, models and exceptions.
Uncaught exceptions, on any thread or in a Qt slot (PySide6 hands those to `sys.excepthook`),
are logged with their traceback too, then passed to the hook that was there before; so are Qt's
own warnings (a platform plugin's complaint can explain a blank window).
"""

from __future__ import annotations

import logging
import sys
import threading
from logging.handlers import RotatingFileHandler
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

LOG_NAME = "branchwise.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s"

_log = logging.getLogger("branchwise")
_QT_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}
_handler: RotatingFileHandler | None = None


def configure_logging(logs_dir: Path, verbose: bool = False) -> Path:
    """Send log records to `logs_dir/branchwise.log`; returns the file's path. Calling it again
    (another data folder, a test) replaces the file it logged to before."""
    global _handler
    logs_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
    path = logs_dir / LOG_NAME
    _handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    _handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(_handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    _install_hooks()
    return path


def _install_hooks() -> None:
    if getattr(sys.excepthook, "logs_to_file", False):
        return
    previous_hook = sys.excepthook
    previous_thread_hook = threading.excepthook

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        _log.critical("Uncaught exception", exc_info=(kind, exc, tb))
        previous_hook(kind, exc, tb)

    def thread_excepthook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            name = args.thread.name if args.thread is not None else "?"
            _log.critical(
                "Uncaught exception on thread %s",
                name,
                exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
            )
        previous_thread_hook(args)

    # Marks the hook as ours, for the check above.
    excepthook.logs_to_file = True  # pyright: ignore[reportFunctionMemberAccess]  (no stub can declare a function's attribute)
    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook
    _install_qt_handler()


def _install_qt_handler() -> None:
    qt_log = logging.getLogger("qt")
    previous = None

    def handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
        qt_log.log(_QT_LEVELS.get(kind, logging.WARNING), "%s", message)
        if previous is not None:
            previous(kind, context, message)
        else:  # Qt's default handler, which installing this one replaced, printed them
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)
