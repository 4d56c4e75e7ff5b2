"""`make run` and `make test` find a Python >= 3.12 without pyenv shims, or say what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

FIND_PYTHON = ROOT / "tools" / "find-python.sh"


def _find(tmp_path: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    old = tmp_path / "bin"
    old.mkdir(exist_ok=True)
    # A machine whose only python3 is 3.11, and no pyenv under its (empty) home.
    fake = old / "python3"
    fake.write_text("#!/bin/sh\nexit 1\n")  # fails the >= 3.12 check, as 3.11 would
    fake.chmod(0o755)
    env = {"PATH": f"{old}:/bin", "HOME": str(tmp_path / "home"), **extra_env}
    return subprocess.run(["/bin/sh", str(FIND_PYTHON)], env=env, capture_output=True, text=True)


def test_without_python_312_it_says_what_to_install_and_fails(tmp_path: Path) -> None:
    found = _find(tmp_path, {})
    assert found.returncode != 0
    assert found.stdout == ""
    assert "needs Python 3.12 or newer" in found.stderr
    assert "BRANCHWISE_PYTHON" in found.stderr


def test_a_python_under_pyenv_versions_is_found_without_shims(tmp_path: Path) -> None:
    versions = tmp_path / "home" / ".pyenv" / "versions" / "3.12.9" / "bin"
    versions.mkdir(parents=True)
    (versions / "python3").symlink_to(sys.executable)
    found = _find(tmp_path, {})
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == str(versions / "python3")


def test_branchwise_python_overrides_the_search(tmp_path: Path) -> None:
    found = _find(tmp_path, {"BRANCHWISE_PYTHON": sys.executable})
    assert found.returncode == 0, found.stderr
    assert os.path.samefile(found.stdout.strip(), sys.executable)
