"""Model folders on disk and loading them: what a folder holds (`model_files`, importable without
MLX, so the app may use it), bounds checks of safetensors headers and sizes before native code
reads them, and `load_model` through mlx-lm without ever running the folder's code.

May import: `mlx`, `mlx_lm` (lazily where the app imports a module), `psutil`, `inference.errors`,
`inference.models` (the registry), `inference.prompt` (the template check), `inference.cpu` (float32
weights) and `inference.vision` (a vision folder's loader).

Never `engine`, `cache` or `decoding`.
"""
