"""reclass-ng: a fast, compatible reclass node classifier.

The public API::

    import reclass_ng
    inv = reclass_ng.load("inventory", ignore_class_notfound=True)
    inv.node_names            # sorted list of node names
    inv.nodeinfo("web1")      # dict shaped like `reclass --nodeinfo web1`
    inv.inventory()           # dict shaped like `reclass --inventory`
    inv.provenance("web1")    # NodeProvenance: who wrote each value, what the node read

Settings are the keys of `reclass-config.yml` (see doc/configuration.rst). Errors are
`reclass_ng.errors.ReclassError` subclasses carrying an exit code and a printable message.
"""

from __future__ import annotations

from reclass_ng.compiled import find_compiled_modules
from reclass_ng.version import __version__

find_compiled_modules(__path__[0])  # a compiled installation's one extension (see there)

__all__ = ["Entity", "Inventory", "NodeProvenance", "ReclassError", "RenderObserver", "Speed",
           "Write", "__version__", "load"]

# Imported on first use so that `import reclass_ng` (and every console script) starts fast.
_LAZY = {"Entity": "reclass_ng.api", "Inventory": "reclass_ng.api", "load": "reclass_ng.api",
         "ReclassError": "reclass_ng.errors", "NodeProvenance": "reclass_ng.observe.provenance",
         "Write": "reclass_ng.observe.provenance", "RenderObserver": "reclass_ng.observe",
         "Speed": "reclass_ng.settings"}

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # what type checkers see of the lazy names above
    from typing import Any

    from reclass_ng.api import Entity, Inventory, load
    from reclass_ng.errors import ReclassError
    from reclass_ng.observe import RenderObserver
    from reclass_ng.observe.provenance import NodeProvenance, Write
    from reclass_ng.settings import Speed


# Public modules reachable as attributes after a plain `import reclass_ng`
# (`reclass_ng.output.dump(...)`), imported on first use as well.
_SUBMODULES = {"api", "errors", "output", "settings"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"reclass_ng.{name}")
    raise AttributeError(f"module 'reclass_ng' has no attribute {name!r}")
