"""The engine: exact, cache-aware generation. `Engine` takes a conversation path (or a raw
prompt), finds the longest cached prefix, prefills the rest in paced chunks and decodes; also the
request and result values, the one decode loop, Regenerate xN variants and cache-state reports.

May import: `mlx`, `mlx_lm`, `numpy`, `psutil` and every other `inference` subpackage
(`inference.errors`, `inference.cache`, `inference.decoding`, `inference.loading`,
`inference.prompt`, `inference.toolcalls`, `inference.vision`): it is the top of the layer.

Nothing in `inference` imports it back.
"""
