"""Model architectures: the registry that says which classes build a model type (mlx-lm's, or
Branchwise's own, found first) and Branchwise's own architectures (Dhara), each a module in
mlx-lm's model-module shape.

May import: `mlx` and `mlx_lm`.

Nothing else of `inference`.
"""
