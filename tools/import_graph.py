"""The product's import graph: cycles between modules and modules over the size limit.

    python tools/import_graph.py            # exit 1 and list them when any cycle or big module
    python tools/import_graph.py --edges    # also print every edge, "importer -> imported"

Every import statement counts: top-level, inside functions (lazy) and under `TYPE_CHECKING`,
since a type-only cycle still ties two modules together for a reader. `from package import
name` counts as an import of `package.name` when that is a module, else of `package` itself.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("inference", "app", "ui")
MAX_LINES = 400


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the product packages."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def import_edges(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the product modules it imports."""
    files = module_files(root)
    edges: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = _resolve_relative(module, is_package, node.level, node.module)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.append(full if full in files else base)
            for target in targets:
                # `import a.b.c` loads a, a.b and a.b.c; the deepest product module is the edge.
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges[module].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def oversized(root: Path = ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """Modules with more than `limit` lines, with their line counts."""
    files = module_files(root)
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in files.items()}
    return {m: n for m, n in sorted(sizes.items()) if n > limit}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every import edge")
    args = parser.parse_args(argv)
    edges = import_edges()
    if args.edges:
        for module in sorted(edges):
            for target in sorted(edges[module]):
                print(f"{module} -> {target}")
    found = cycles(edges)
    big = oversized()
    for component in found:
        print("cycle: " + ", ".join(component))
    for module, lines in big.items():
        print(f"over {MAX_LINES} lines: {module} ({lines})")
    print(
        f"{len(edges)} modules, {sum(map(len, edges.values()))} imports, "
        f"{len(found)} cycles, {len(big)} modules over {MAX_LINES} lines"
    )
    return 1 if found or big else 0


if __name__ == "__main__":
    sys.exit(main())
