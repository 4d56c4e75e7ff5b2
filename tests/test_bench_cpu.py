"""bench/engine.py's cpu section: today's form and the fast one, each in its own process, side
by side in one table, on a 4-bit tiny llama, each row naming the BLAS kernels it ran and how its
float32 matrices lay; the two layouts forced beside the measured one, with their ratio; where
the environment forces OpenBLAS's kernels, one more row runs OpenBLAS's own choice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import engine
from inference.cpu.fast_blas import BUNDLED
from tests.test_bench_engine import _table_rows


def test_the_cpu_section_compares_the_stored_form_on_the_bundled_blas_with_float32_on_openblas(
    quantized_models_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine.main(
        [
            "--model",
            str(quantized_models_dir / "llama"),
            "--only",
            "cpu",
            "--runs",
            "1",
            "--attachment-tokens",
            "200",
            "--cpu-decode-tokens",
            "4",
        ]
    )
    rows = _table_rows(capsys.readouterr().out, "cpu")
    assert [row[0] for row in rows[:4]] == [
        "today: as stored, bundled BLAS",
        "float32, OpenBLAS, layout measured",
        "float32, OpenBLAS, matrices as stored",
        "float32, OpenBLAS, matrices transposed",
    ]
    assert rows[0][-2].startswith("4-bit, ") and rows[1][-2].startswith("float32 (from 4-bit), ")
    assert rows[0][-2].endswith("; no float32 matrix")
    assert rows[2][-2].endswith("as stored (forced by BRANCHWISE_CPU_LAYOUT=stored)")
    assert rows[3][-2].endswith("transposed for BLAS (forced by BRANCHWISE_CPU_LAYOUT=transposed)")
    assert rows[0][-1] == BUNDLED
    assert rows[1][-1].startswith("OpenBLAS 0.3") and rows[1][-1].endswith(" kernels")
    for row in rows[:2]:
        assert float(row[1].split()[0]) > 0 and float(row[2]) > 0 and row[4].endswith(" MiB")
    labels = [row[0] for row in rows]
    forced = any(os.environ.get(name) for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    assert ("float32, OpenBLAS choosing its kernels" in labels) == forced
    assert ("its own kernels over today" in labels) == forced
    for label in ("fast over today", "measured layout over the faster forced one"):
        ratio = next(row for row in rows if row[0].startswith(label))
        assert ratio[1].endswith("x") and ratio[2].endswith("x")
