"""Compiled extensions for wheels built by build_support/reclass_ng_build.py (see there);
everything else is in setup.cfg."""

from __future__ import annotations

import os
import runpy
import sys

from setuptools import Extension, setup


def compiled_extensions() -> list[Extension]:
    if os.environ.get("RECLASS_NG_COMPILE") != "1":
        return []  # editable installs, sdists, and machines without a C compiler
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("reclass-ng: Cython not importable, installing pure Python", file=sys.stderr)
        return []
    names = runpy.run_path(os.path.join("reclass_ng", "compiled.py"))["COMPILED_MODULES"]
    extensions = [Extension(name, [name.replace(".", "/") + ".py"], optional=True)
                  for name in names]
    # The generated C goes to build/, never next to the sources; annotations are not
    # used as C types (subclasses of dict and list must keep their own methods).
    return cythonize(extensions, build_dir="build/cython", quiet=True,
                     compiler_directives={"language_level": 3, "annotation_typing": False,
                                          "binding": True, "embedsignature": False})


setup(ext_modules=compiled_extensions())
