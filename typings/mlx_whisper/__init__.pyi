# mlx-whisper has no annotations and no py.typed. inference/speech reaches it through the module
# object `inference.speech.whisper.mlx_whisper()` returns (typed `ModuleType`), so its
# functions are read as `Any` there; this stub only lets the import itself resolve.
from typing import Any

def __getattr__(name: str) -> Any: ...
