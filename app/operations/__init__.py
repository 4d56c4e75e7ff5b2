"""Work off the GUI thread, done one way: an `Operation` runs a job on a thread of its own (or
on the inference worker, for jobs that run MLX), hands the job a context to report progress and
see a cancel, and delivers progress, the result or a typed `Failure` to callbacks on the GUI
thread, never to an owner already deleted. What the job changed is announced as `Changes`
through the app-wide notifier, and each view that shows such things subscribes and refreshes
itself (`operation`, `changes`).

The app's operations live beside the idiom, one module per subject: chat history from other
apps (the preview, the import, its undo, sorting dropped files: `chat_history`), the model
library (imports, conversions, downloads and the look before one: `models`), the models other
apps hold (the scan, adding one: `found_models`) and knowledge folders (adding, indexing,
removing: `knowledge`; the pause while a reply generates: `knowledge_pause`; keeping them
current while the app runs: `knowledge_folders`; what they are doing, remembered for the views:
`knowledge_activity`; their figures read off the GUI thread: `knowledge_overview`).

May import: `PySide6.QtCore`, `app.gui_relay`, `app.importers`, `app.store`, `app.library`,
`app.discovery`, `app.knowledge`, `app.qt_signal` (the type of a signal in a protocol), and
`inference.errors` lazily, inside a job that runs on the inference worker (which has loaded
`inference` by then).

Never `ui`, never widgets, and never `inference` at import time: the window shows before MLX
loads.
"""
