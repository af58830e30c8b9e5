"""Salt loader modules named `reclass_ng`, found by Salt through the `salt.loader` entry point.

setup.cfg registers `loader_dirs` under the `salt.loader` entry point group; Salt calls it and adds
the returned `pillar` and `tops` directories to its module search path, so
`ext_pillar: [reclass_ng: {...}]` and `master_tops: {reclass_ng: {...}}` work without copying
files into `extension_modules`. Salt skips files whose names start with `_`, so the `__init__.py`
files (which make the directories part of the Python package) are never loaded as Salt modules.
"""

from __future__ import annotations

import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def loader_dirs() -> dict[str, list[str]]:
    """Directories of reclass-ng's Salt modules, keyed by Salt loader type."""
    return {
        "pillar": [os.path.join(_HERE, "pillar")],
        "tops": [os.path.join(_HERE, "tops")],
    }
