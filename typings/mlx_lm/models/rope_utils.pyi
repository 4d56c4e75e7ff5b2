from typing import Any

import mlx.core as mx
from mlx import nn

class Llama3RoPE(nn.Module):
    _freqs: mx.array
    def __init__(
        self,
        dims: int,
        max_position_embeddings: int = 2048,
        traditional: bool = False,
        base: float = 10000,
        scaling_config: dict[str, Any] | None = None,
    ) -> None: ...

# One of mlx-lm's RoPE modules, as `scaling_config` says; called as rope(x, offset=...).
def initialize_rope(
    dims: int,
    base: float,
    traditional: bool,
    scaling_config: dict[str, Any] | None = None,
    max_position_embeddings: int | None = None,
) -> nn.Module: ...
