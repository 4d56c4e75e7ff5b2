"""Other model formats turned into MLX model folders: GGUF (the checked header, which families,
tokenizers and tensor types import, the tensors in MLX's layout, each family's config, the
tokenizer rebuilt from metadata, the import itself) and Dhara checkpoints, written through one
folder writer. The header and the support table (`gguf_check`, `gguf_support`) load no MLX:
the library's scan reads every GGUF it finds with them.

May import: `mlx`, `mlx_lm`, `numpy`, `gguf`, `tokenizers`, `transformers` (its GGUF tokenizer
conversion: no torch), `inference.errors`, `inference.loading`, `inference.models` (Dhara's
architecture) and `inference.prompt` (the template check).

Never `engine`.
"""
