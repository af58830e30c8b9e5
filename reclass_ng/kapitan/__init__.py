"""reclass-ng as a Kapitan inventory backend (see doc/kapitan.rst).

`inventory.ReclassNgInventory` is the backend; `cli.main` (the `kapitan-ng` command) registers
it under the name `reclass-ng` and runs Kapitan's own command line. Kapitan is an optional
dependency: the `kapitan` extra (reclass_ng.install says how to install it).
"""

BACKEND_NAME = "reclass-ng"

__all__ = ["BACKEND_NAME"]
