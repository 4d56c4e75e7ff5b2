"""Model architectures: the registry that says which classes build a model type (mlx-lm's, or
Branchwise's own, found first) and Branchwise's own architectures (Dhara), each a module in
mlx-lm's model-module shape.

May import mlx, mlx_lm and `inference.errors`; nothing else of `inference`.
"""
