"""The frozen app's entry script: PyInstaller runs a script, and ui.entry is a module."""

import sys

from ui.entry import main

sys.exit(main())
