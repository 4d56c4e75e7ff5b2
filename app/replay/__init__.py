"""Replay: a reply generated again from its recorded provenance (`app.store.provenance`) and
compared with it token for token: the plan read from the store (`plan`), the run on an engine
(`run`), the comparison (`outcome`), a reply's Details rows (`details`), the window's replays on
the worker (`replays`), and `branchwise replay` (`cli`).

May import: `PySide6.QtCore`, `app.store`, `app.generation`, `app.paths`, and `inference`
lazily where a model runs (the worker thread, or the command's own process).

Never `app.chat` or `ui`.
"""
