"""MLX on a CPU without a GPU: a fast BLAS loaded before MLX (`fast_blas`, no MLX import, so
`inference/__init__` may run it first) and float32 weights where they fit (`float32_weights`,
which imports MLX).

May import: `platformdirs`, `psutil`, `mlx` and `mlx_lm`."""
