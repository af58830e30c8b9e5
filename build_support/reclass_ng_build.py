"""The PEP 517 build backend: setuptools', compiling the hot modules where that is possible.

`pip install .` builds a wheel: when a C compiler and Python's headers are present (and
RECLASS_NG_PURE_PYTHON is not set), Cython is added to the build requirements and setup.py
compiles reclass_ng.compiled.COMPILED_MODULES from the same .py files. Editable installs
(`pip install -e .`, `make install`) never compile: the source tree stays the code that runs,
with no compiled module that could go stale beside it.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the rest of the backend, unchanged)

COMPILE_FLAG = "RECLASS_NG_COMPILE"


def can_compile() -> bool:
    """Whether this machine can build the compiled modules."""
    if os.environ.get("RECLASS_NG_PURE_PYTHON"):
        return False
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    return shutil.which(compiler) is not None and os.path.exists(headers)


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    requires = _setuptools.get_requires_for_build_wheel(config_settings)
    return requires + (["Cython>=3.0"] if can_compile() else [])


def build_wheel(wheel_directory: str, config_settings: Any = None,
                metadata_directory: str | None = None) -> str:
    previous = os.environ.get(COMPILE_FLAG)
    os.environ[COMPILE_FLAG] = "1" if can_compile() else "0"
    try:
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    finally:
        if previous is None:
            os.environ.pop(COMPILE_FLAG, None)
        else:
            os.environ[COMPILE_FLAG] = previous
