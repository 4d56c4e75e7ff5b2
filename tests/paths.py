"""Where the tests find the repository and their outputs, wherever a test file sits."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "tests" / "screenshots"
