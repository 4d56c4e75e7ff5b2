"""The frozen app's entry script: PyInstaller runs a script, and ui.main is a module."""

import sys

from ui.main import main

sys.exit(main())
