"""Compiled extensions for wheels built by build_support/reclass_ng_build.py (see there);
everything else is in setup.cfg."""

from __future__ import annotations

import glob
import os
import runpy
import shutil
import subprocess
import sys

from setuptools import Extension, setup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# The generated C goes to build/, never next to the sources; annotations are not used as C
# types (subclasses of dict and list must keep their own methods), and no local is given a C
# type by inference: only the .pxd files beside the modules declare types. (Inferred,
# `for b in (b"-", b"?")` made `b` a C char: `b + b" "` then raised TypeError in the YAML
# loader. Inference saved 0.5% of a render's instructions.)
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True,
              "embedsignature": False, "infer_types": False}
# Where the modules are copied without their .pxd files, when those no longer match.
PLAIN_SOURCES = os.path.join("build", "plain-sources")
# Which of the two ways the extensions in build/ were last compiled ("declared" or "plain"),
# rewritten only when that changes: every extension depends on it, so that a build after the
# other way rebuilds them. (Without it, the plain extensions of a failed .pxd stayed newer
# than the unchanged generated C of their modules, and setuptools kept them once the .pxd
# matched again: a `pip install .` of this tree then ran without the .pxd types.)
VARIANT = os.path.join("build", "compiled-variant")


def compiled_extensions() -> list[Extension]:
    if os.environ.get("RECLASS_NG_COMPILE") != "1":
        _drop_stale_extensions(())
        return []  # editable installs, sdists, and machines without a C compiler
    try:
        from Cython.Build import cythonize
        from Cython.Compiler.Errors import CompileError
    except ImportError:
        print("reclass-ng: Cython not importable, installing pure Python", file=sys.stderr)
        return []
    compiled = runpy.run_path(os.path.join("reclass_ng", "compiled.py"))
    names, bundle = compiled["COMPILED_MODULES"], compiled["BUNDLE"]
    _drop_stale_extensions((bundle,))
    try:
        extensions = cythonize([_extension(name, ".") for name in names],
                               build_dir="build/cython", quiet=True,
                               compiler_directives=DIRECTIVES)
        return [_linked_into_one(bundle, _depending_on_variant(extensions, "declared"))]
    except CompileError:
        # A .pxd file declares a method or base class its module no longer has (an engine
        # change the .pxd has not followed yet): every module is compiled without them, as
        # a module compiled against another's .pxd expects that one's C layout.
        print("reclass-ng: the .pxd files do not match their modules; compiling without them",
              file=sys.stderr)
    # In a fresh interpreter: Cython caches what it found where during the first attempt.
    for name in names:
        _copy_without_declarations(name)
    out = os.path.abspath(os.path.join("build", "cython-plain"))
    code = ("import sys; from Cython.Build import cythonize; from setuptools import Extension; "
            "cythonize([Extension(n, [n.replace('.', '/') + '.py']) for n in sys.argv[2:]], "
            f"build_dir=sys.argv[1], quiet=True, force=True, compiler_directives={DIRECTIVES!r})")
    # From PLAIN_SOURCES: Cython looks for a module's .pxd from the working directory too.
    if subprocess.run([sys.executable, "-c", code, out, *names], cwd=PLAIN_SOURCES).returncode:
        print("reclass-ng: Cython cannot compile the modules, installing pure Python",
              file=sys.stderr)
        return []
    return [_linked_into_one(bundle, _depending_on_variant(
        [_extension(name, out, ".c") for name in names], "plain"))]


def _extension(name: str, root: str, suffix: str = ".py") -> Extension:
    return Extension(name, [os.path.join(root, name.replace(".", "/") + suffix)], optional=True)


def _linked_into_one(bundle: str, extensions: list[Extension]) -> Extension:
    """One extension, `bundle`, of the C of every extension in `extensions`: each module's
    code keeps its own names (Cython makes all but `PyInit_<last name>` static), and
    reclass_ng.compiled.CompiledBundleFinder imports each module from it."""
    init_functions = [f"PyInit_{extension.name.rpartition('.')[2]}" for extension in extensions]
    if len(set(init_functions)) != len(init_functions):
        raise SystemExit("reclass-ng: two compiled modules share a last name "
                         f"({', '.join(sorted(init_functions))}); they cannot be linked together")
    return Extension(bundle, [source for extension in extensions for source in extension.sources],
                     depends=sorted({path for extension in extensions
                                     for path in extension.depends}),
                     include_dirs=sorted({path for extension in extensions
                                          for path in extension.include_dirs}),
                     export_symbols=init_functions, optional=True)


def _drop_stale_extensions(names: Sequence[str]) -> None:
    """Remove from build/lib* the extensions of modules not in `names`: setuptools packs
    whatever build/lib holds, and an extension left there by an earlier build (of a module
    since dropped from COMPILED_MODULES, or one extension a module, as builds before the
    bundle made them) would be imported instead of its .py."""
    kept = set(names)
    for lib in glob.glob(os.path.join("build", "lib*")):
        for built in glob.glob(os.path.join(lib, "reclass_ng", "**", "*.*"), recursive=True):
            if not built.endswith((".so", ".pyd")):
                continue
            *packages, filename = os.path.relpath(built, lib).split(os.sep)
            if ".".join([*packages, filename.split(".")[0]]) not in kept:
                os.remove(built)


def _depending_on_variant(extensions: list[Extension], variant: str) -> list[Extension]:
    """`extensions`, each depending on VARIANT, which says `variant` (written only when it
    said otherwise: its time then tells setuptools to compile them all again)."""
    try:
        with open(VARIANT) as recorded:
            changed = recorded.read() != variant
    except OSError:
        changed = True
    if changed:
        os.makedirs(os.path.dirname(VARIANT), exist_ok=True)
        with open(VARIANT, "w") as recorded:
            recorded.write(variant)
    for extension in extensions:
        extension.depends.append(VARIANT)
    return extensions


def _copy_without_declarations(name: str) -> None:
    """Copy module `name` (and its packages' __init__.py) under PLAIN_SOURCES."""
    parts = name.split(".")
    for depth in range(1, len(parts) + 1):
        relative = os.path.join(*parts[:depth]) + (".py" if depth == len(parts) else "")
        if depth < len(parts):
            relative = os.path.join(relative, "__init__.py")
        os.makedirs(os.path.join(PLAIN_SOURCES, os.path.dirname(relative)), exist_ok=True)
        shutil.copyfile(relative, os.path.join(PLAIN_SOURCES, relative))


setup(ext_modules=compiled_extensions())
