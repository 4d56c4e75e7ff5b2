"""Each subpackage's "May import:" paragraph, checked against what its modules really import.

    python tools/import_contracts.py        # exit 1 and list every import no paragraph allows

A subpackage (`app/store`, `inference/cache`, `ui/chat`...) says in its docstring what it may
import, in a paragraph that starts with "May import:" and names each allowed module in
backquotes, e.g. ``May import: `app.paths`, `PySide6.QtCore` (signals only).`` A name allows
that module and everything under it. The standard library and the subpackage itself are always
allowed. Every import counts, lazy ones inside functions and type-only ones included: the
paragraph is the contract a reader trusts, so it has to hold for every line.

`from x import y` is read as an import of `x.y` (a module or a name in it), so `from PySide6
import QtGui` is an import of `PySide6.QtGui`, which `PySide6.QtCore` does not allow.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("inference", "app", "ui")
_ALLOWED_NAME = re.compile(r"`([A-Za-z_][\w.]*)`")


@dataclass(frozen=True)
class Contract:
    """What one subpackage may import, as its docstring says."""

    package: str
    allowed: tuple[str, ...]


@dataclass(frozen=True)
class Breach:
    """One import statement its subpackage's contract does not allow."""

    file: str
    line: int
    imported: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: imports {self.imported}"


def _may_import_paragraph(doc: str) -> str | None:
    for paragraph in re.split(r"\n\s*\n", doc):
        if paragraph.lstrip().startswith("May import:"):
            return paragraph
    return None


def read_contracts(root: Path = ROOT) -> tuple[list[Contract], list[str]]:
    """Every subpackage's contract, and the subpackages that state none."""
    contracts: list[Contract] = []
    missing: list[str] = []
    for top in PACKAGES:
        for init in sorted((root / top).glob("*/__init__.py")):
            package = f"{top}.{init.parent.name}"
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            paragraph = _may_import_paragraph(doc)
            if paragraph is None:
                missing.append(package)
            else:
                contracts.append(Contract(package, tuple(_ALLOWED_NAME.findall(paragraph))))
    return contracts, missing


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, dotted name) for every import in the file, relative ones made absolute."""
    module, is_package = _module_name(path, root)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return sorted(found)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def breaches(contract: Contract, root: Path = ROOT) -> list[Breach]:
    """The imports in the contract's subpackage that it does not allow."""
    folder = root.joinpath(*contract.package.split("."))
    found: list[Breach] = []
    for path in sorted(folder.rglob("*.py")):
        for line, name in _imports(path, root):
            if name.split(".")[0] in sys.stdlib_module_names or name.startswith("__future__"):
                continue
            if any(_within(name, p) for p in (contract.package, *contract.allowed)):
                continue
            found.append(Breach(str(path.relative_to(root)), line, name))
    return found


def main() -> int:
    contracts, missing = read_contracts()
    found = [b for contract in contracts for b in breaches(contract)]
    for package in missing:
        print(f"{package}: its docstring has no 'May import:' paragraph")
    for breach in found:
        print(breach)
    print(f"{len(contracts)} contracts, {len(found)} imports they do not allow")
    return 1 if found or missing else 0


if __name__ == "__main__":
    sys.exit(main())
