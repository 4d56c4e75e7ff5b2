"""The layer caches of a stack, seen leaf by leaf, as the branch cache stores them.

mlx-lm gives each model layer one cache object; some layers hold several (`CacheList`, e.g. an
attention KV cache beside a convolution window). Flattened, every leaf is one of two kinds:

- a **segmentable** leaf, mlx-lm's plain `KVCache`: its keys and values grow along the token
  axis and can be cut into exact per-token segments, so a shared prefix is stored once and a
  branch is rebuilt by concatenating the segments on its path;
- a **snapshot** leaf, anything else (recurrent `ArraysCache` state, a `RotatingKVCache` sliding
  window, ...): it cannot be cut or rewound, so it is captured whole at message boundaries
  (checkpoints) and a branch resumes from the nearest one.

Every copy here gives new `mx.array` handles: two caches must never hold the same array object,
because MLX slice assignment rebinds the object in place and the other holder would silently read
the new keys (docs/ARCHITECTURE.md, "Forks never share arrays").

Worker thread only, like every MLX object.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, cast

import mlx.core as mx
from mlx_lm.models.cache import CacheList, KVCache

Segment = tuple[mx.array, mx.array]
# KVCache buffers grow in steps of this many tokens (mlx-lm's own step); a restored cache gets
# room up to the next step so the prompt's prefill writes in place.
KV_STEP = KVCache.step


def leaves(caches: Sequence[Any]) -> list[Any]:
    """Every leaf cache object of a stack, in a fixed order (CacheLists opened up)."""
    found: list[Any] = []
    for cache in caches:
        if isinstance(cache, CacheList):
            found.extend(leaves(cache.caches))
        else:
            found.append(cache)
    return found


def is_segmentable(leaf: Any) -> bool:
    """Whether a leaf is a plain KV cache whose tokens can be cut into segments."""
    return type(leaf) is KVCache


def class_names(caches: Sequence[Any]) -> list[str]:
    """The leaf classes of a stack, as part of what a saved cache is keyed by."""
    return [type(leaf).__name__ for leaf in leaves(caches)]


def exact_copy(array: mx.array) -> mx.array:
    """A copy that owns exactly its own bytes. A slice alone would keep the whole buffer it came
    from alive, so the stored bytes would be far more than they are counted as."""
    return mx.contiguous(array)


def cut_segment(leaf: KVCache, start: int, end: int) -> Segment:
    """Exact copies of a KV leaf's keys and values for the tokens [start, end)."""
    keys, values = leaf.keys, leaf.values
    assert keys is not None and values is not None, "a leaf with tokens has buffers"
    return exact_copy(keys[..., start:end, :]), exact_copy(values[..., start:end, :])


def segment_bytes(segments: Sequence[Segment]) -> int:
    return sum(k.nbytes + v.nbytes for k, v in segments)


def restore_kv(leaf: KVCache, parts: Sequence[Segment], tokens: int, room: int) -> None:
    """Fill an empty KV leaf with the concatenated `parts` (`tokens` in all), leaving space for
    `room` more tokens before mlx-lm has to grow the buffer: one concatenation per layer."""
    if not parts or tokens == 0:
        return
    k0, v0 = parts[0]
    capacity = -(-(tokens + room) // KV_STEP) * KV_STEP
    spare = capacity - tokens
    keys = [k for k, _ in parts]
    values = [v for _, v in parts]
    if spare:
        keys.append(mx.zeros((*k0.shape[:2], spare, k0.shape[3]), k0.dtype))
        values.append(mx.zeros((*v0.shape[:2], spare, v0.shape[3]), v0.dtype))
    leaf.keys = mx.concatenate(keys, axis=2)
    leaf.values = mx.concatenate(values, axis=2)
    leaf.offset = tokens


def capture(leaf: Any) -> Any:
    """A snapshot leaf's whole state, with new array handles (deep copies share a buffer only
    until either side writes, so this costs nothing up front)."""
    return copy.deepcopy(leaf.state)


def restore_snapshot(leaf: Any, state: Any) -> None:
    leaf.state = copy.deepcopy(state)


# A snapshot state is what the leaf's `state` holds (arrays and plain values in nested lists and
# tuples, untyped in mlx-lm), and its skeleton is JSON: a list narrowed out of either says nothing
# of its members, hence the casts to `object` members below.


def state_bytes(state: Any) -> int:
    if isinstance(state, mx.array):
        return state.nbytes
    if isinstance(state, list | tuple):
        return sum(state_bytes(item) for item in cast("Sequence[object]", state))
    return 0


def state_arrays(state: Any) -> list[mx.array]:
    if isinstance(state, mx.array):
        return [state]
    if isinstance(state, list | tuple):
        return [a for item in cast("Sequence[object]", state) for a in state_arrays(item)]
    return []


# --- saving a snapshot state to a safetensors file ----------------------------------------------


def encode_state(state: Any, name: str, arrays: dict[str, mx.array]) -> Any:
    """A JSON skeleton of `state`, its arrays moved into `arrays` under names from `name`."""
    if isinstance(state, mx.array):
        arrays[name] = state
        return {"array": name}
    if isinstance(state, list | tuple):
        items = cast("Sequence[object]", state)
        return [encode_state(item, f"{name}.{i}", arrays) for i, item in enumerate(items)]
    if state is None or isinstance(state, bool | int | float | str):
        return {"value": state}
    raise TypeError(f"a cache state holds a {type(state).__name__}, which cannot be saved")


def decode_state(skeleton: Any, arrays: dict[str, mx.array]) -> Any:
    if isinstance(skeleton, list):
        return [decode_state(item, arrays) for item in cast("list[object]", skeleton)]
    if isinstance(skeleton, dict):
        entry = cast("dict[str, Any]", skeleton)  # JSON: keys are text
        if set(entry) == {"array"}:
            return arrays[entry["array"]]
        if set(entry) == {"value"}:
            return entry["value"]
    raise ValueError("a saved cache state has an unknown shape")
