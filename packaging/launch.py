"""The frozen app's entry script: PyInstaller runs a script, and ui.entry is a module.

Model files are checked in child processes (app/isolated.py), which multiprocessing starts by
running this executable again: `freeze_support` turns such a start into the child's job and
exits, before the window's modules are imported, so a child starts quickly and never shows a
window.
"""

import multiprocessing
import sys

multiprocessing.freeze_support()

from ui.entry import main  # noqa: E402  (after freeze_support, which a child never returns from)

sys.exit(main())
