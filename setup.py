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
    # used as C types (subclasses of dict and list must keep their own methods), and no
    # local is given a C type by inference: only the .pxd files beside the modules declare
    # types. (Inferred, `for b in (b"-", b"?")` made `b` a C char: `b + b" "` then raised
    # TypeError in the YAML loader. Inference saved 0.5% of a render's instructions.)
    return cythonize(extensions, build_dir="build/cython", quiet=True,
                     compiler_directives={"language_level": 3, "annotation_typing": False,
                                          "binding": True, "embedsignature": False,
                                          "infer_types": False})


setup(ext_modules=compiled_extensions())
