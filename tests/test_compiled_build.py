"""The optional compiled build: which modules are compiled where, and the reference-depth
limit that keeps deep chains a clear error in both builds.

`make test` runs this file, the engine tests and the corpus twice: in the development
virtualenv (an editable install: nothing may be compiled) and in `.venv-compiled`, a
`pip install .` that compiles (RECLASS_NG_EXPECT_COMPILED=1: everything must be compiled).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inventory_writer import write_inventory

import reclass_ng
from reclass_ng.compiled import (
    BUNDLE,
    COMPILED_MODULES,
    HEAP_TYPE_FLAG,
    CompiledBundleFinder,
    compiled_modules,
    pxd_classes,
)
from reclass_ng.errors import ReclassError
from reclass_ng.resolve import MAX_REFERENCE_DEPTH

EXPECT_COMPILED = os.environ.get("RECLASS_NG_EXPECT_COMPILED", "") == "1"
PACKAGE_DIR = Path(reclass_ng.__file__).resolve().parent
SOURCE_TREE = Path(__file__).resolve().parents[1] / "reclass_ng"


def test_the_build_compiled_what_it_should():
    if EXPECT_COMPILED:
        assert compiled_modules() == list(COMPILED_MODULES)
        assert PACKAGE_DIR != SOURCE_TREE.resolve()  # the installed package, not the checkout
    else:
        assert compiled_modules() == []


def test_the_compiled_modules_can_be_linked_into_one_extension():
    # Each module's init function is named after its last name: two alike could not share
    # the one extension (setup.py refuses to build them).
    last_names = [name.rpartition(".")[2] for name in COMPILED_MODULES]
    assert len(set(last_names)) == len(last_names)
    assert BUNDLE not in COMPILED_MODULES


def test_one_extension_holds_every_compiled_module():
    import importlib.machinery

    extensions = sorted(path.relative_to(PACKAGE_DIR) for path in PACKAGE_DIR.rglob("*")
                        if path.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)))
    files = {importlib.import_module(name).__file__ for name in COMPILED_MODULES}
    finders = [finder for finder in sys.meta_path if isinstance(finder, CompiledBundleFinder)]
    if EXPECT_COMPILED:
        assert [str(path).split(".")[0] for path in extensions] == [BUNDLE.rpartition(".")[2]]
        assert files == {str(PACKAGE_DIR / extensions[0])}
        assert len(finders) == 1
        # ahead of the finder of the .py files beside it, behind the hooks before that
        assert sys.meta_path.index(finders[0]) == sys.meta_path.index(importlib.machinery.PathFinder) - 1
    else:
        assert extensions == []
        assert all(path.endswith(".py") for path in files)
        assert finders == []


def test_a_compiled_module_imported_first_in_a_fresh_interpreter():
    # No `import reclass_ng` before it: the package's own import puts the finder in place.
    code = ("import reclass_ng.resolve.resolver as module, sys; "
            "print(module.__file__); print(sorted(m for m in sys.modules "
            "if m.startswith('reclass_ng.') and m.endswith('.resolver')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(Path(__file__).parent), check=True)
    path, modules = done.stdout.splitlines()
    assert modules == "['reclass_ng.resolve.resolver']"
    assert path.endswith(".so" if EXPECT_COMPILED else "resolver.py")


def test_the_bundle_finder_leaves_every_other_module_alone(tmp_path):
    finder = CompiledBundleFinder(str(tmp_path / "bundle.so"), ["reclass_ng.values"])
    assert finder.find_spec("reclass_ng.api") is None
    assert finder.find_spec("json") is None
    spec = finder.find_spec("reclass_ng.values")
    assert spec is not None and spec.origin == str(tmp_path / "bundle.so")
    assert spec.name == "reclass_ng.values" and spec.loader is not None


def test_no_compiled_module_in_the_source_tree():
    # An editable install imports the checkout: a compiled module left there would be
    # imported instead of the .py beside it, and go stale with its next edit.
    assert sorted(SOURCE_TREE.rglob("*.so")) == []
    assert sorted(SOURCE_TREE.rglob("*.c")) == []


def _chain(tmp_path: Path, links: int) -> reclass_ng.Inventory:
    body = "".join(f"  c{i}: ${{c{i + 1}}}\n" for i in range(links)) + f"  c{links}: end\n"
    root = write_inventory(tmp_path, {"nodes/n1.yml": "parameters:\n" + body})
    return reclass_ng.load(str(root), read_config=False)


def test_a_chain_just_below_the_limit_resolves(tmp_path):
    # Compiled, every link uses C stack: this would crash the process if the limit were too
    # high for the default 8 MB stack.
    info = _chain(tmp_path, MAX_REFERENCE_DEPTH - 2).nodeinfo("n1")
    assert info["parameters"]["c0"] == "end"


@pytest.mark.parametrize("links", [MAX_REFERENCE_DEPTH + 1, 20000])
def test_a_chain_past_the_limit_is_a_clear_error(tmp_path, links):
    with pytest.raises(ReclassError, match="too deep.*starting at c0") as error:
        _chain(tmp_path, links).nodeinfo("n1")
    assert error.value.node == "n1"


def _pxd_declarations() -> list:
    """(module, class, its public attributes and cpdef methods) per `cdef class` of the
    .pxd files beside the modules."""
    found = []
    for module, name, block in pxd_classes(str(SOURCE_TREE)):
        members = re.findall(r"^\s+cdef public \w+ (\w+)$", block, flags=re.M)
        members += re.findall(r"^\s+cpdef (\w+)\(", block, flags=re.M)
        found.append(pytest.param(module, name, members, id=f"{module}.{name}"))
    return found


@pytest.mark.parametrize(("module", "name", "members"), _pxd_declarations())
def test_every_pxd_class_is_an_extension_type(module, name, members):
    # When a .pxd no longer matches its module, setup.py compiles every module without the
    # .pxd files (the output stays right, only slower): this is what notices.
    if module not in compiled_modules():
        if EXPECT_COMPILED:
            pytest.fail(f"{module} is not compiled")
        pytest.skip("pure-Python install: the .pxd files are not used")
    cls = getattr(importlib.import_module(module), name)
    assert not cls.__flags__ & HEAP_TYPE_FLAG, \
        f"{module}.{name} is a plain class: its .pxd was not used (see setup.py's warning)"
    # each declared attribute and cpdef method is the declaring class's own
    assert [member for member in members if member not in vars(cls)] == []
