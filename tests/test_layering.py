"""Arrows point one way: ui -> app -> inference -> (mlx, mlx_lm).

Two checks per package. The source check reads every import statement, the lazy ones inside
functions included, so a forbidden import anywhere in the package fails. The load check imports
every module of the package in a fresh interpreter and lists what got loaded, so an import hidden
in a dependency fails too. `app` may import inference (and so MLX) lazily, on the worker thread,
but never while being imported: the window shows before MLX loads.
"""

from __future__ import annotations

import ast
import functools
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.repo_tools import load_tool

QT = {"PySide6", "shiboken6", "qasync"}
MLX = {"mlx", "mlx_lm", "inference"}

# What each package's source may never import, at any point.
NEVER_IMPORTS = {
    "inference": QT | {"app", "ui"},
    "app": {"PySide6.QtWidgets", "PySide6.QtGui", "ui"},
    "ui": MLX,
}
# The model library in app/ reads what a model folder holds from inference.model_files (file
# names, context-length keys; no MLX: the package imports its heavy modules lazily) and whether
# it reads images from inference.vision.support (its config and files), and the worker's failures
# are matched against inference's error classes, so app and ui load that much of inference (and
# the fast-BLAS preload `inference` runs): no MLX.
MLX_FREE_INFERENCE = {
    "inference",
    "inference.loading",
    "inference.loading.model_files",
    "inference.cpu",
    "inference.cpu.fast_blas",
    "inference.vision",
    "inference.vision.support",
    "inference.vision.families",
    "inference.errors",
    "inference.importing",
    "inference.importing.model_folder",
    # The library tells an embedding model from a chat model by its folder (no MLX).
    "inference.embedding",
    "inference.embedding.folder",
    "inference.loading.identity",
}
# What must not be loaded once every module of the package has been imported.
NOT_LOADED_BY_IMPORT = {
    "inference": NEVER_IMPORTS["inference"],
    "app": NEVER_IMPORTS["app"] | MLX,
    "ui": NEVER_IMPORTS["ui"],
}


def _banned(module: str, banned: set[str]) -> bool:
    return any(module == b or module.startswith(b + ".") for b in banned)


def _modules_of(package: str, root: Path) -> set[str]:
    found = pkgutil.walk_packages([str(root / package)], f"{package}.")
    return {package} | {m.name for m in found}


@functools.cache  # the load check and its positive control read the same run of `inference`
def loaded_after_import(package: str, root: Path = ROOT) -> frozenset[str]:
    """Every module loaded after importing each module of `package`, in a new interpreter."""
    code = (
        f"import importlib, pkgutil, sys, {package}\n"
        f"for m in pkgutil.walk_packages({package}.__path__, '{package}.'):\n"
        f"    importlib.import_module(m.name)\n"
        "print('\\n'.join(sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root, env=env
    ).stdout
    return frozenset(out.split())


def imports_in_source(package: str, root: Path = ROOT) -> set[tuple[str, str]]:
    """(file, imported module) for every import statement in `package`'s source."""
    found = set()
    for path in sorted((root / package).rglob("*.py")):
        where = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), where)):
            if isinstance(node, ast.Import):
                found |= {(where, alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # `from PySide6 import QtGui` imports PySide6.QtGui.
                found.add((where, node.module))
                found |= {(where, f"{node.module}.{alias.name}") for alias in node.names}
    return found


def forbidden_imports(package: str, root: Path = ROOT) -> list[str]:
    banned = NEVER_IMPORTS.get(package, set())
    return sorted(
        f"{where}: {name}"
        for where, name in imports_in_source(package, root)
        if _banned(name, banned)
    )


def forbidden_loads(package: str, root: Path = ROOT) -> list[str]:
    loaded = loaded_after_import(package, root)
    missing = _modules_of(package, root) - loaded
    assert not missing, f"the check did not import {sorted(missing)}"
    banned = NOT_LOADED_BY_IMPORT.get(package, set())
    return sorted(m for m in loaded - MLX_FREE_INFERENCE if _banned(m, banned))


@pytest.mark.parametrize("package", sorted(NEVER_IMPORTS))
def test_source_never_imports_a_higher_layer(package: str) -> None:
    assert forbidden_imports(package) == []


@pytest.mark.parametrize("package", sorted(NOT_LOADED_BY_IMPORT))
def test_importing_loads_no_higher_layer(package: str) -> None:
    assert forbidden_loads(package) == []


@pytest.mark.parametrize(
    "module",
    [
        "inference.loading.model_files",
        "inference.vision.support",
        "inference.errors",
        "inference.importing.model_folder",
        "inference.embedding.folder",
        "inference.embedding.static_model",
    ],
)
def test_what_app_reads_of_inference_loads_no_mlx(module: str) -> None:
    code = f"import sys, {module}\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()
    assert module in out
    assert not [m for m in out if _banned(m, {"mlx", "mlx_lm", "PySide6"})]


def test_inference_really_loads_mlx() -> None:
    # The positive control for the load check: inference is the one layer that loads MLX.
    assert "mlx.core" in loaded_after_import("inference", ROOT)


@pytest.mark.parametrize(
    ("package", "bad_line", "caught_by_loading"),
    [
        ("inference", "from PySide6.QtCore import QObject", True),
        ("inference", "import app.store.conversations", True),
        ("app", "from PySide6 import QtGui", True),
        ("app", "import ui.widgets.theme", True),
        ("ui", "import mlx.core", True),
        # Inside a function: only the source check sees it, as it should.
        ("ui", "def later():\n    import mlx_lm", False),
    ],
)
def test_the_checks_catch_a_bad_module(
    tmp_path: Path, package: str, bad_line: str, caught_by_loading: bool
) -> None:
    """Each package copied with one bad module added: the checks above must fail on it."""
    for name in ("app", "inference", "ui", "resources"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / package).unlink()
    copy = tmp_path / package
    copy.mkdir()
    for path in (ROOT / package).iterdir():  # modules and subpackages (inference.cpu loads first)
        if path.suffix == ".py" or (path / "__init__.py").is_file():
            (copy / path.name).symlink_to(path)
    (copy / "_bad.py").write_text(bad_line + "\n")
    assert any("_bad.py" in hit for hit in forbidden_imports(package, tmp_path))
    if caught_by_loading:
        assert forbidden_loads(package, tmp_path)


GRAPH = load_tool("import_graph")

# Inside inference, subpackages from the bottom up: each may import those before it, never one
# after it (the cache does not know the engine; prompt rendering does not know the cache). The
# package's own `__init__` is the public facade above them all.
INFERENCE_ORDER = (
    "errors",
    "models",
    "prompt",
    "toolcalls",
    "cpu",
    "vision",
    "loading",
    "embedding",
    "importing",
    "cache",
    "decoding",
    "engine",
)


def _inference_rank(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "inference" or len(parts) < 2:
        return None
    assert parts[1] in INFERENCE_ORDER, f"{module}: place its subpackage in INFERENCE_ORDER"
    return INFERENCE_ORDER.index(parts[1])


def upward_inference_imports(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in edges.items():
        rank = _inference_rank(module)
        for target in targets:
            target_rank = _inference_rank(target)
            if rank is not None and target_rank is not None and target_rank > rank:
                found.append(f"{module} -> {target}")
    return sorted(found)


def test_no_import_cycles_between_product_modules() -> None:
    """Type-only and lazy imports count: `python tools/import_graph.py` says the same."""
    assert GRAPH.cycles(GRAPH.import_edges()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert GRAPH.cycles(edges) == [["a", "b", "c"]]


def test_every_product_module_is_at_most_400_lines() -> None:
    assert GRAPH.oversized() == {}


def test_inference_subpackages_never_import_upward() -> None:
    assert upward_inference_imports(GRAPH.import_edges()) == []


def test_the_upward_check_catches_the_cache_importing_the_engine() -> None:
    edges = {"inference.cache.trie": {"inference.engine.engine"}, "inference.engine.engine": set()}
    assert upward_inference_imports(edges) == ["inference.cache.trie -> inference.engine.engine"]


CONTRACTS = load_tool("import_contracts")


def test_every_subpackage_states_what_it_may_import() -> None:
    contracts, missing = CONTRACTS.read_contracts()
    assert missing == []
    assert len(contracts) >= 27


def test_every_import_is_one_its_package_allows() -> None:
    """`python tools/import_contracts.py` says the same, with each breach by file and line."""
    contracts, _ = CONTRACTS.read_contracts()
    assert [str(b) for c in contracts for b in CONTRACTS.breaches(c)] == []


def test_the_contract_check_catches_what_the_docstring_does_not_allow(tmp_path: Path) -> None:
    package = tmp_path / "app" / "thing"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""A thing.\n\nMay import: `app.paths` and `PySide6.QtCore`.\n\nNever `ui`."""\n'
    )
    (package / "fine.py").write_text(
        "import json\nfrom PySide6.QtCore import QObject\nfrom app.paths import data_dir\n"
        "from . import other\nfrom .other import helper\n"
    )
    (package / "other.py").write_text("def helper() -> None: ...\n")
    (package / "bad.py").write_text(
        "from PySide6 import QtGui\n"
        "def later() -> None:\n    from app.store import conversations\n    import ui.chat\n"
    )
    contracts, missing = CONTRACTS.read_contracts(tmp_path)
    assert missing == []
    assert contracts == [CONTRACTS.Contract("app.thing", ("app.paths", "PySide6.QtCore"))]
    found = [str(b) for b in CONTRACTS.breaches(contracts[0], tmp_path)]
    assert found == [
        "app/thing/bad.py:1: imports PySide6.QtGui",
        "app/thing/bad.py:3: imports app.store.conversations",
        "app/thing/bad.py:4: imports ui.chat",
    ]


def test_a_package_without_a_contract_is_named(tmp_path: Path) -> None:
    (tmp_path / "ui" / "loose").mkdir(parents=True)
    (tmp_path / "ui" / "loose" / "__init__.py").write_text('"""May import anything, it says."""\n')
    assert CONTRACTS.read_contracts(tmp_path) == ([], ["ui.loose"])
