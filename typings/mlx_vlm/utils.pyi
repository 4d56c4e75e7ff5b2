from pathlib import Path
from typing import Any

from mlx import nn

def load_model(model_path: Path, lazy: bool = False, **kwargs: Any) -> nn.Module: ...

# A transformers ProcessorMixin (AutoProcessor.from_pretrained(model_path, **kwargs)), left
# untyped: its processors differ by model, and reading transformers costs pyright ~30 s a run.
def load_processor(
    model_path: Path | str,
    add_detokenizer: bool = True,
    eos_token_ids: int | list[int] | None = None,
    **kwargs: Any,
) -> Any: ...
