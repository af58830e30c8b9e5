"""Tools and integrations use the engine through its public API only (doc/explain.rst,
"From Python: the provenance record"; STYLE.md): no engine class subclassed, no engine
attribute assigned, no engine internal read. An AST scan of their packages, plus planted
violations that the scan must find.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "reclass_ng"
# Tools and integrations: everything else under reclass_ng/ is the engine.
TOOL_PACKAGES = ("explain", "lint", "diff", "explorer", "adapters", "server", "classifier",
                 "kapitan", "lsp")
# Engine modules whose classes hold the render machinery (what a tool once swapped parts of).
MACHINERY_MODULES = ("api", "render", "classes.expansion", "merge", "resolve.resolver", "queries",
                     "prepare", "resolve.rendered_subtrees", "storage.base", "storage.yaml_fs")
# What a render produces rather than what renders: its fields are plain data names.
RESULT_CLASSES = ("MergedNode", "ExportView")
# Engine classes made to be extended: error types and the observer seam.
EXTENSION_POINTS = ("reclass_ng.observe.seam.RenderObserver",
                    "reclass_ng.observe.seam.WriteObserver")


def _engine_module(module: str | None) -> bool:
    if module is None or not (module == "reclass_ng" or module.startswith("reclass_ng.")):
        return False
    parts = module.split(".")
    return len(parts) < 2 or parts[1] not in TOOL_PACKAGES


def _machinery_attributes() -> frozenset[str]:
    """Attribute names the engine's machinery classes set on themselves (`self.x = ...`,
    `__slots__`) or make on first use (a property): assigning one of them from outside is
    replacing an engine part."""
    names: set[str] = set()
    for module in MACHINERY_MODULES:
        tree = ast.parse((PACKAGE / (module.replace(".", "/") + ".py")).read_text())
        for cls in ast.walk(tree):
            if not isinstance(cls, ast.ClassDef) or cls.name in RESULT_CLASSES:
                continue
            names.update(item.name for item in cls.body if isinstance(item, ast.FunctionDef)
                         and any(isinstance(d, ast.Name) and d.id == "property"
                                 for d in item.decorator_list))
            for node in ast.walk(cls):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                        and isinstance(node.value, ast.Name) and node.value.id == "self":
                    names.add(node.attr)
    return frozenset(names)


MACHINERY_ATTRIBUTES = _machinery_attributes()


def _is_engine_class(module: str, name: str) -> bool:
    from reclass_ng.errors import ReclassError

    found = getattr(importlib.import_module(module), name, None)
    if not inspect.isclass(found):
        return False
    if issubclass(found, ReclassError):
        return False  # a tool's own error type is a ReclassError, so the CLI prints it
    return f"{found.__module__}.{found.__qualname__}" not in EXTENSION_POINTS


def engine_reaches(source: str, filename: str = "<tool>") -> list[str]:
    """Every place in a tool's `source` that reaches past the engine's public API."""
    tree = ast.parse(source, filename)
    imported: dict[str, tuple[str, str]] = {}  # local name -> (engine module, name)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _engine_module(node.module):
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module or "", alias.name)
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{filename}:{node.lineno}: imports private {alias.name} "
                                 f"from {node.module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                origin = imported.get(base.id) if isinstance(base, ast.Name) else None
                if origin is not None and _is_engine_class(*origin):
                    found.append(f"{filename}:{node.lineno}: class {node.name} subclasses the "
                                 f"engine class {origin[1]}")
        elif isinstance(node, ast.Attribute):
            owner = node.value
            is_self = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
            if isinstance(node.ctx, (ast.Store, ast.Del)) and not is_self:
                root = owner
                while isinstance(root, ast.Attribute):
                    root = root.value
                if node.attr in MACHINERY_ATTRIBUTES or (isinstance(root, ast.Name)
                                                         and root.id in imported):
                    found.append(f"{filename}:{node.lineno}: assigns engine attribute "
                                 f"{ast.unparse(node)}")
            if node.attr == "renderer" or (node.attr.startswith("_")
                                           and not node.attr.startswith("__") and not is_self):
                found.append(f"{filename}:{node.lineno}: reads engine internal "
                             f"{ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and node.args \
                and not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self"):
            found.append(f"{filename}:{node.lineno}: {node.func.id} on "
                         f"{ast.unparse(node.args[0])}")
    return found


# The command line uses the engine, tools and integrations; none of them uses the command
# line. `python -m reclass_ng` (__main__.py) is the command line's own entry point.
COMMAND_LINE = "reclass_ng.cli"
COMMAND_LINE_ENTRY_POINTS = ("__main__.py",)


def command_line_imports(source: str, filename: str = "<module>") -> list[str]:
    """Every import of reclass_ng.cli in `source`, at module level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        imported = [name for name in names
                    if name == COMMAND_LINE or name.startswith(COMMAND_LINE + ".")]
        if imported:
            found.append(f"{filename}:{node.lineno}: imports {imported[0]}")
    return found


def test_nothing_outside_the_command_line_imports_it():
    outside = sorted(path for path in PACKAGE.rglob("*.py")
                     if path.relative_to(PACKAGE).parts[0] != "cli"
                     and str(path.relative_to(PACKAGE)) not in COMMAND_LINE_ENTRY_POINTS)
    assert len(outside) > 100
    found = [reach for path in outside
             for reach in command_line_imports(path.read_text(), str(path.relative_to(PACKAGE)))]
    assert found == []


@pytest.mark.parametrize("source", [
    "from reclass_ng.cli.yaml_import import pyyaml\n",
    "def dump():\n    from reclass_ng.cli.failures import report\n",
    "from reclass_ng import cli\n",
    "import reclass_ng.cli.reclass\n",
])
def test_a_planted_command_line_import_is_found(source):
    assert command_line_imports(source) != []


def test_engine_imports_beside_the_command_line_are_not_taken_for_it():
    assert command_line_imports("from reclass_ng import classifier, client\n"
                                "import reclass_ng.clientele\n") == []


def _tool_files() -> list[Path]:
    return sorted(path for package in TOOL_PACKAGES for path in (PACKAGE / package).rglob("*.py"))


def test_tools_and_integrations_use_only_public_engine_api():
    assert len(_tool_files()) > 20
    found = [reach for path in _tool_files()
             for reach in engine_reaches(path.read_text(), str(path.relative_to(PACKAGE)))]
    assert found == []


@pytest.mark.parametrize("source, expected", [
    ("from reclass_ng.merge import Merger\nclass RecordingMerger(Merger):\n    pass\n",
     "subclasses the engine class Merger"),
    ("from reclass_ng.classes import ClassExpander as Base\nclass Tracing(Base):\n    pass\n",
     "subclasses the engine class ClassExpander"),
    ("def hook(inventory, merger):\n    inventory.renderer.expander.merger = merger\n",
     "assigns engine attribute"),
    ("def hook(inventory, queries):\n    inventory.queries = queries\n",
     "assigns engine attribute"),
    ("from reclass_ng import merge\ndef hook(fold):\n    merge.Merger.fold = fold\n",
     "assigns engine attribute"),
    ("def hook(inventory, expander):\n    setattr(inventory, 'expander', expander)\n",
     "setattr on inventory"),
    ("def mappings(inventory):\n    return inventory.renderer.mappings\n",
     "reads engine internal inventory.renderer"),
    ("def entities(renderer):\n    return renderer._node_entities\n",
     "reads engine internal renderer._node_entities"),
    ("from reclass_ng.storage.yaml_fs import _walk_dirs\n", "imports private _walk_dirs"),
])
def test_a_planted_reach_past_the_public_api_is_found(source, expected):
    found = engine_reaches(source)
    assert any(expected in reach for reach in found), found


@pytest.mark.parametrize("source", [
    "from reclass_ng.errors import ReclassError\nclass ToolError(ReclassError):\n    pass\n",
    "from reclass_ng.observe import RenderObserver\nclass Watcher(RenderObserver):\n    pass\n",
    "class Own:\n    def __init__(self, inventory):\n        self.inventory = inventory\n",
    "def label(target, value):\n    target.epilog = value\n",
])
def test_the_public_extension_points_are_allowed(source):
    assert engine_reaches(source) == []


# -- tests reach the slow references through Speed, never by switching engine parts ----------

TESTS = Path(__file__).resolve().parent


def _through_renderer(node: ast.expr) -> bool:
    """Whether an attribute chain goes through `.renderer` (`inventory.renderer.x`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr == "renderer":
            return True
        node = node.value
    return False


def renderer_assignments(source: str, filename: str = "<test>") -> list[str]:
    """Every place in a test's `source` that assigns (or deletes) an attribute of a renderer,
    or the renderer itself: what tests once did to switch a fast path off, instead of giving
    the inventory a Speed (reclass_ng.settings.Speed)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            own = isinstance(node.value, ast.Name) and node.value.id == "self"
            if (node.attr == "renderer" and not own) or _through_renderer(node.value):
                found.append(f"{filename}:{node.lineno}: assigns {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else None
            target = node.args[0]
            if name in ("setattr", "delattr") and (
                    _through_renderer(target) or (isinstance(target, ast.Attribute)
                                                  and target.attr == "renderer")):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(func)} on "
                             f"{ast.unparse(target)}")
    return found


def test_no_test_assigns_renderer_attributes():
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    found = [reach for path in files
             for reach in renderer_assignments(path.read_text(), str(path.relative_to(TESTS)))]
    assert found == []


@pytest.mark.parametrize("source", [
    "def off(inventory):\n    inventory.renderer.fast_references = False\n",
    "def off(inventory):\n    inventory.renderer.expander.merger = None\n",
    "def off(inventory, other):\n    inventory.renderer = other\n",
    "def off(monkeypatch, inventory):\n"
    "    monkeypatch.setattr(inventory.renderer, 'shared_walks', None)\n",
    "def off(inventory):\n    setattr(inventory.renderer.merger, 'inlined_merge', False)\n",
])
def test_a_planted_renderer_assignment_is_found(source):
    assert len(renderer_assignments(source)) == 1, source


@pytest.mark.parametrize("source", [
    "def render(inventory, name):\n    return inventory.renderer.merge(name)\n",
    "def slow(root):\n    return reclass_ng.load(root, speed=Speed.reference())\n",
    "def own(self, renderer):\n    self.renderer = renderer\n",
])
def test_using_a_renderer_is_not_assigning_it(source):
    assert renderer_assignments(source) == []
