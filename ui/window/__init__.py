"""The main window and its parts: the window itself, its menus and actions, and the helpers
that wire the sidebar, chat view and composer to the controller (branch commands, compare,
export, model handling, status bar, streaming presentation).

May import every other `ui` subpackage, `app` and PySide6; never mlx or `inference`.
"""
