"""Choosing the next tokens: sampling settings turned into mlx-lm samplers and logits processors,
seeded samplers, and exact speculative decoding (prompt lookup, draft models, draft length).

May import: `mlx`, `mlx_lm`, `inference.errors`, `inference.cache` (a draft model keeps a stack)
and `inference.loading`.

Never `engine`.
"""
