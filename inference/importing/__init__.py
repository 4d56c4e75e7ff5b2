"""Other model formats turned into MLX model folders: GGUF (header checks, reader, tokenizer
rebuilt from metadata, the import itself) and Dhara checkpoints, written through one folder
writer.

May import: `mlx`, `mlx_lm`, `numpy`, `gguf`, `tokenizers`, `inference.errors`, `inference.loading`,
`inference.models` (Dhara's architecture) and `inference.prompt` (the template check).

Never `engine`.
"""
