"""Start-up: parse the command line, show the window at once, let the model load behind it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

from app.paths import AppPaths


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="branchwise", description="Chat with local models.")
    parser.add_argument("--data-dir", help="keep conversations, models and settings here")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="load a model, stream a short reply, render it offscreen, print a summary and exit",
    )
    parser.add_argument("--model", type=Path, help="the model folder --self-test uses")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        from ui.self_test import run_self_test

        return run_self_test(args.model, args.data_dir)
    paths = AppPaths.resolve(args.data_dir)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setWindowTitle("Branchwise")
    window.setCentralWidget(QLabel(f"No model is loaded yet.\nData folder: {paths.data_dir}"))
    window.resize(900, 640)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
