from collections.abc import Callable
from typing import Any

import mlx.core as mx

# A module is a dict of its parameters, child modules and lists of them, and reads and writes
# unknown attributes through that dict: both are as dynamic as the model that fills them.
class Module(dict[str, Any]):
    def __init__(self) -> None: ...
    def __getattr__(self, key: str) -> Any: ...
    def __setattr__(self, key: str, val: Any) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def parameters(self) -> dict[str, Any]: ...
    def named_modules(self) -> list[tuple[str, Module]]: ...
    def load_weights(
        self, file_or_weights: list[tuple[str, mx.array]], strict: bool = True
    ) -> Module: ...
    def set_dtype(
        self, dtype: mx.Dtype, predicate: Callable[[mx.Dtype], bool] | None = ...
    ) -> None: ...

class Linear(Module):
    weight: mx.array
    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None: ...
    def __call__(self, x: mx.array) -> mx.array: ...

class Embedding(Module):
    weight: mx.array
    def __init__(self, num_embeddings: int, dims: int) -> None: ...
    def __call__(self, x: mx.array) -> mx.array: ...
    def as_linear(self, x: mx.array) -> mx.array: ...

class LayerNorm(Module):
    weight: mx.array
    bias: mx.array
    def __init__(
        self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True
    ) -> None: ...
    def __call__(self, x: mx.array) -> mx.array: ...

class RMSNorm(Module):
    weight: mx.array
    def __init__(self, dims: int, eps: float = 1e-5) -> None: ...
    def __call__(self, x: mx.array) -> mx.array: ...

class Conv1d(Module):
    weight: mx.array
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None: ...
    def __call__(self, x: mx.array) -> mx.array: ...

class QuantizedLinear(Module):
    group_size: int
    bits: int
    mode: str
    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> None: ...

class QuantizedEmbedding(Module):
    group_size: int
    bits: int
    mode: str
    def __init__(
        self,
        num_embeddings: int,
        dims: int,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> None: ...

def silu(x: mx.array) -> mx.array: ...
def gelu(x: mx.array) -> mx.array: ...
