"""Other model formats turned into MLX model folders: GGUF (header checks, reader, tokenizer
rebuilt from metadata, the import itself) and Dhara checkpoints, written through one folder
writer.

May import mlx, gguf, tokenizers, `inference.errors` and `inference.loading`; never `engine`.
"""
