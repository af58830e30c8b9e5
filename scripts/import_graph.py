"""Count reclass_ng's import cycles and upward import arrows (issue 28).

    python scripts/import_graph.py [--root DIR] [--json] [--verbose]

Reads every .py file of the reclass_ng package under DIR (default: this checkout) with `ast`,
never importing it, so it runs on any commit (`git archive COMMIT reclass_ng | tar -x -C DIR`).

An *arrow* is one file importing another file of the package, counted once per pair of files.
Every import statement counts, at module level or inside a function (a deferred import still
runs, and still ties the two files together), except those under `if TYPE_CHECKING:`, which
only type checkers read. `from reclass_ng.a import b` points at the file of module
`reclass_ng.a.b` when there is one, else at the file of `reclass_ng.a`.

A *file cycle* is a strongly connected component of more than one file in the graph of
arrows. A *package cycle* is a pair of units that import each other (a unit is a first-level
package such as `storage` or `cli`, or a module at the package root): the components of the
unit graph say little, as one import back from a tool joins most of the package into one.

An arrow is *upward* when it goes from a unit to a unit of a higher layer in LAYERS below:
a layer may use the layers listed before it, never those after it. The engine (layers up to
"facade") never uses a tool, an integration or the command line; within the engine, a stage
uses the stages it is built on (the class expansion merges and resolves what it walks, so it
comes after merge and resolve). Arrows between units of one layer are never upward.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

PACKAGE = "reclass_ng"

# Lowest first. Every unit (first-level package or root module) must be in exactly one layer.
# The root modules that issue 28 moved into stage packages are listed too, so that older
# commits can be measured.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"version", "install", "records", "location", "cache", "collector",
                              "compiled", "errors", "suggestions", "values", "settings"})),
    ("storage", frozenset({"storage", "positions"})),
    ("syntax", frozenset({"syntax"})),
    ("observe", frozenset({"observe", "provenance", "provenance_recorder", "inputs"})),
    ("prepare", frozenset({"entity", "prepare"})),
    ("merge", frozenset({"merge"})),
    ("resolve", frozenset({"resolve", "resolve_fast", "resolve_memo", "subtrees"})),
    ("classes", frozenset({"classes"})),
    ("queries", frozenset({"queries"})),
    ("render", frozenset({"render"})),
    ("output", frozenset({"output", "output_json", "output_yaml"})),
    ("facade", frozenset({"__init__", "api", "parallel", "incremental"})),
    ("tools", frozenset({"explain", "lint", "diff", "explorer", "lsp", "affected", "schemas"})),
    ("integrations", frozenset({"adapters", "kapitan", "classifier", "server"})),
    ("cli", frozenset({"cli", "__main__"})),  # __main__: `python -m reclass_ng` is `reclass`
)
ENGINE_LAYERS = frozenset(name for name, _ in LAYERS[:[n for n, _ in LAYERS].index("facade") + 1])


def module_files(root: Path) -> dict[str, Path]:
    """Module name -> file, for every .py file of the package under `root`."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST) -> list[tuple[str, list[str], int]]:
    """(module, names, level) of every import outside `if TYPE_CHECKING:` blocks."""
    found: list[tuple[str, list[str], int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                for item in child.orelse:  # type: ignore[attr-defined]
                    visit_one(item)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, [], 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", [alias.name for alias in node.names], node.level))
        visit(node)

    visit(tree)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (arrows)."""
    files = module_files(root)
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for module, names, level in _imports(ast.parse(path.read_text(), str(path))):
            if level:
                base = package.split(".")
                base = base[:len(base) - level + 1]
                module = ".".join(base + ([module] if module else []))
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in files]
            if len(targets) < len(names) or not names:
                targets.append(module)
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]  # `import a.b.c`: the file of a.b.c
                if target and target != name:
                    graph[name].add(target)
    return graph


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(unit: str) -> int:
    for index, (_, units) in enumerate(LAYERS):
        if unit in units:
            return index
    raise SystemExit(f"import_graph.py: {unit!r} is in no layer of LAYERS: add it there")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
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
    return sorted(found)


def measure(root: Path) -> dict:
    """Arrows, file and package cycles, and upward arrows of the package under `root`."""
    graph = import_graph(root)
    units: dict[str, set[str]] = {}
    for source, targets in graph.items():
        units.setdefault(unit_of(source), set())
        for target in targets:
            if unit_of(target) != unit_of(source):
                units[unit_of(source)].add(unit_of(target))
    for unit in units:
        layer_of(unit)  # every unit has a layer
    arrows = sorted((source, target) for source, targets in graph.items() for target in targets)
    upward = [(s, t) for s, t in arrows if layer_of(unit_of(s)) < layer_of(unit_of(t))]
    engine_to_tools = [(s, t) for s, t in upward
                       if LAYERS[layer_of(unit_of(s))][0] in ENGINE_LAYERS
                       and LAYERS[layer_of(unit_of(t))][0] not in ENGINE_LAYERS]
    mutual = sorted([a, b] for a in units for b in units[a] if a < b and a in units.get(b, ()))
    return {"files": len(graph), "arrows": len(arrows), "file_cycles": cycles(graph),
            "package_cycles": mutual, "upward": [f"{s} -> {t}" for s, t in upward],
            "engine_to_tools": [f"{s} -> {t}" for s, t in engine_to_tools],
            "root_modules": sorted(p.name for p in (root / PACKAGE).glob("*.py"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the directory holding the reclass_ng package")
    parser.add_argument("--json", action="store_true", help="print the whole measure as JSON")
    parser.add_argument("--verbose", "-v", action="store_true", help="list cycles and arrows")
    args = parser.parse_args(argv)
    found = measure(args.root)
    if args.json:
        json.dump(found, sys.stdout, indent=1)
        print()
        return 0
    print(f"{len(found['root_modules'])} root modules, {found['files']} files, "
          f"{found['arrows']} arrows; {len(found['file_cycles'])} file cycles, "
          f"{len(found['package_cycles'])} package cycles; {len(found['upward'])} upward arrows "
          f"({len(found['engine_to_tools'])} from the engine to a tool, integration or cli)")
    if args.verbose:
        for kind in ("file_cycles", "package_cycles"):
            for cycle in found[kind]:
                print(f"{kind[:-1].replace('_', ' ')}: {' '.join(cycle)}")
        for arrow in found["upward"]:
            print(f"upward: {arrow}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
