"""The main window and its parts: the window itself, its menus and actions, and the helpers
that wire the sidebar, chat view and composer to the controller (branch commands, compare,
export, model handling, status bar, streaming presentation).

May import: `PySide6`, `app` and every other `ui` subpackage (`ui.chat`, `ui.dialogs`, `ui.forms`,
`ui.sidebar`, `ui.text`, `ui.voice`, `ui.widgets`).

Never mlx or `inference`.
"""
