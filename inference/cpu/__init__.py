"""MLX on a CPU without a GPU: a fast BLAS loaded before MLX (`fast_blas`, no MLX import, so
`inference/__init__` may run it first), float32 weights where they fit (`float32_weights`,
which imports MLX) and their matrices laid out as this machine multiplies them faster
(`layout_choice` measures, `weight_layout` carries it out).

May import: `platformdirs`, `psutil`, `mlx` and `mlx_lm`."""
