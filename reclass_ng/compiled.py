"""Which engine modules the optional compiled build compiles, where it puts them, and which
ones are compiled here.

`pip install .` compiles the modules below with Cython, from these same .py files, where a C
compiler and Python's headers are present (build_support/reclass_ng_build.py); elsewhere, and
for editable installs, everything stays pure Python. Output is the same either way.

The compiled modules are linked into one extension, BUNDLE, each keeping its own
`PyInit_<name>`; `reclass_ng/__init__.py` puts a CompiledBundleFinder ahead of the finder that
would find their .py files. Twenty-seven extension modules cost every start as many files to
open and map and as many sets of symbols to bind, which made an extension module import in
the time of its .pyc: linked into one, a `reclass --inventory` of a 23-node Salt model takes
5% less CPU time (doc/performance.rst, "one extension for the compiled modules").
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

try:  # what importlib.machinery exports, without importing importlib (0.3 ms of every start)
    from _frozen_importlib import ModuleSpec as _ModuleSpec
    from _frozen_importlib_external import ExtensionFileLoader as _ExtensionFileLoader
    from _frozen_importlib_external import PathFinder as _PathFinder
except ImportError:  # an interpreter whose import system is not CPython's
    from importlib.machinery import ExtensionFileLoader as _ExtensionFileLoader
    from importlib.machinery import ModuleSpec as _ModuleSpec
    from importlib.machinery import PathFinder as _PathFinder

# The hot path of a render (doc/performance.rst), and of lint's: the provenance record each
# node's render keeps and the rules that read it (on a 500-node `mcp` lint they cost 4.9 G
# instructions interpreted, against 2.0 G for the whole compiled render), with the observer
# seam whose default calls a recorded render makes (observe/seam.py: 1% of a lint). A
# compiled function uses the C stack where the interpreter raises RecursionError, so what
# recurses without a bound stays interpreted: the writers' fallbacks (once per nesting level
# of a rendered tree).
# The YAML loader recurses once per nesting level of a file, but refuses files nested deeper
# than storage.yaml_load.MAX_YAML_DEPTH (200); the provenance walks (observe/provenance.py)
# recurse over entities' prepared trees, one file's depth at most. The .pxd files beside
# merge, values, prepare, classes/expansion, the modules of resolve/, output/block_yaml,
# storage/yaml_block, syntax/grammar and observe/provenance(_recorder) declare their main
# classes as extension types, and the one beside observe/seam its WriteObserver, the base of
# provenance_recorder's SectionRecorder, and the one beside output/yaml_scalars its _Line;
# the one beside storage/dir_entries types the locals of its directory listing.
COMPILED_MODULES = (
    "reclass_ng.values",
    "reclass_ng.merge",
    "reclass_ng.resolve.resolver",
    "reclass_ng.resolve.fast_paths",
    "reclass_ng.resolve.shared_subtrees",
    "reclass_ng.resolve.rendered_subtrees",
    "reclass_ng.classes.expansion",
    "reclass_ng.prepare",
    "reclass_ng.render",
    "reclass_ng.syntax.ast",
    "reclass_ng.syntax.grammar",
    "reclass_ng.output.block_yaml",
    "reclass_ng.output.yaml_scalars",  # libyaml's folding of long and multi-line strings
    "reclass_ng.entity",
    "reclass_ng.storage.yaml_load",
    "reclass_ng.storage.yaml_rules",
    "reclass_ng.storage.yaml_block",
    "reclass_ng.storage.yaml_full",
    "reclass_ng.storage.yaml_fs",
    # the class scan's loop over every directory entry, and the read of every file
    "reclass_ng.storage.dir_entries",
    "reclass_ng.storage.regular_file",
    "reclass_ng.observe.seam",
    "reclass_ng.observe.provenance",
    "reclass_ng.observe.provenance_recorder",
    "reclass_ng.observe.walk_recording",
    "reclass_ng.observe.shared_answers",
    "reclass_ng.lint.write_rules",
)


# The extension a compiled build installs (in the package directory): COMPILED_MODULES linked
# together. Their last names must differ, as each one's `PyInit_<last name>` is in it.
BUNDLE = "reclass_ng._compiled"


class CompiledBundleFinder:
    """Finds the modules of `names` in the extension at `path` (an import system meta path
    finder): the dynamic linker loads the file once, at the first of them, and each import
    after that only runs that module's own `PyInit_<name>`."""

    def __init__(self, path: str, names: Sequence[str]) -> None:
        self.path = path
        self.names = frozenset(names)

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name not in self.names:
            return None
        return _ModuleSpec(name, _ExtensionFileLoader(name, self.path), origin=self.path)


def find_compiled_modules(package_dir: str) -> None:
    """Where the BUNDLE extension is in `package_dir` (the reclass_ng directory), have the
    modules of COMPILED_MODULES imported from it: a compiled installation. Called once, by
    `reclass_ng/__init__.py`; elsewhere (an editable or pure-Python installation) nothing
    changes."""
    if any(isinstance(finder, CompiledBundleFinder) for finder in sys.meta_path):
        return  # reclass_ng imported again (importlib.reload)
    import _imp

    stem = os.path.join(package_dir, BUNDLE.rpartition(".")[2])
    for suffix in _imp.extension_suffixes():
        if os.path.isfile(stem + suffix):
            # Just ahead of the finder of files on sys.path, which would find the .py files;
            # hooks put before that (a profiler's, pytest's) still see every import first.
            place = sys.meta_path.index(_PathFinder) if _PathFinder in sys.meta_path \
                else len(sys.meta_path)
            sys.meta_path.insert(place, CompiledBundleFinder(stem + suffix, COMPILED_MODULES))
            return


def compiled_modules() -> list[str]:
    """The modules of COMPILED_MODULES that this installation loads as compiled extensions."""
    import importlib.machinery
    import importlib.util

    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    found = []
    for name in COMPILED_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is not None and (spec.origin or "").endswith(suffixes):
            found.append(name)
    return found


# Set on every class made by a class statement (a heap type), never on an extension type
# compiled from a .pxd's `cdef class` (a static type).
HEAP_TYPE_FLAG = 1 << 9


def pxd_classes(source_tree: str) -> list[tuple[str, str, str]]:
    """(module, class name, its declarations) of each `cdef class` of the .pxd files below
    `source_tree`, the reclass_ng directory of a checkout (wheels do not hold them)."""
    import re

    files = sorted(os.path.relpath(os.path.join(directory, name), source_tree).split(os.sep)
                   for directory, _, names in os.walk(source_tree)
                   for name in names if name.endswith(".pxd"))
    found = []
    for parts in files:
        module = "reclass_ng." + ".".join([*parts[:-1], parts[-1][:-len(".pxd")]])
        with open(os.path.join(source_tree, *parts)) as pxd:
            text = pxd.read()
        for block in re.split(r"^(?=cdef class )", text, flags=re.M)[1:]:
            name = re.match(r"cdef class (\w+)", block).group(1)  # type: ignore[union-attr]
            found.append((module, name, block))
    return found


def plain_pxd_classes(source_tree: str) -> list[str]:
    """The `cdef class`es of the .pxd files below `source_tree` that this installation
    compiled as plain classes: setup.py compiles every module without the .pxd files when one
    no longer matches its module (slower, and still counted by compiled_modules())."""
    from importlib import import_module

    compiled = compiled_modules()
    return [f"{module}.{name}" for module, name, _ in pxd_classes(source_tree)
            if module in compiled
            and getattr(import_module(module), name).__flags__ & HEAP_TYPE_FLAG]
