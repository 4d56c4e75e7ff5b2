"""The engine: exact, cache-aware generation. `Engine` takes a conversation path (or a raw
prompt), finds the longest cached prefix, prefills the rest in paced chunks and decodes; also the
request and result values, the one decode loop, Regenerate xN variants and cache-state reports.

May import every other `inference` subpackage (it is the top of the layer), mlx and mlx_lm;
nothing in `inference` imports it back.
"""
