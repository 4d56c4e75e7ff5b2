"""Layer caches and the branch cache: a stack of per-layer mlx-lm caches with its token ledger,
forks, the token trie of exact segments and checkpoints, the memory budget, and saved segments
on disk with the key that says when they are valid.

May import: `mlx`, `mlx_lm`, `inference.errors`, `inference.loading` and `inference.cpu` (the weight
layout a saved segment is valid for).

Never `engine`, `decoding` or `prompt`: the engine drives the cache, not the reverse.
"""
