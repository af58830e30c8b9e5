"""Which engine modules the optional compiled build compiles, and which ones are compiled here.

`pip install .` compiles the modules below with Cython, from these same .py files, where a C
compiler and Python's headers are present (build_support/reclass_ng_build.py); elsewhere, and
for editable installs, everything stays pure Python. Output is the same either way.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util

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


def compiled_modules() -> list[str]:
    """The modules of COMPILED_MODULES that this installation loads as compiled extensions."""
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
    import os
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
    compiled = compiled_modules()
    return [f"{module}.{name}" for module, name, _ in pxd_classes(source_tree)
            if module in compiled
            and getattr(importlib.import_module(module), name).__flags__ & HEAP_TYPE_FLAG]
