"""The checkout's own scripts under `tools/` (not a package: each runs as `python tools/x.py`),
loaded as modules so tests can call their functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.paths import ROOT

TOOLS = ROOT / "tools"


def load_tool(name: str) -> ModuleType:
    """`tools/<name>.py` as the module `name`, loaded once per process."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a tool's dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module
