"""`python -m inference.cpu.run_module MODULE [ARGS...]`: run MODULE as `python -m MODULE ARGS`
would, with the fast BLAS loaded first (importing this module runs `inference/__init__`, which
preloads it before anything imports MLX). For child processes that run another package's entry
point, such as `mlx_lm.server` in the tests."""

from __future__ import annotations

import runpy
import sys


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m inference.cpu.run_module MODULE [ARGS...]")
    module = sys.argv[1]
    sys.argv = sys.argv[1:]  # argv[0] is reset to the module's file by run_module
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
