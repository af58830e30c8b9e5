"""`kapitan-ng`: Kapitan's own command line with the `reclass-ng` inventory backend available.

Kapitan has no plugin mechanism for inventory backends: they are the entries of the dict
`kapitan.inventory.AVAILABLE_BACKENDS`, which its `--inventory-backend` option also takes its
choices from. Importing this module adds `reclass-ng` there; `main` then runs Kapitan's CLI, so
`kapitan-ng compile --inventory-backend reclass-ng` and `.kapitan`'s
`inventory_backend: reclass-ng` work. The registration happens at import so that compile workers
started with the `spawn` method (Kapitan's default), which re-import the main script, have it too.
"""

from __future__ import annotations

import sys

from reclass_ng.errors import ConfigError
from reclass_ng.kapitan import BACKEND_NAME


def register_backend() -> None:
    """Make `reclass-ng` a Kapitan inventory backend (idempotent)."""
    from kapitan.inventory import AVAILABLE_BACKENDS

    def load_reclass_ng_backend() -> type:
        from reclass_ng.kapitan.inventory import ReclassNgInventory

        return ReclassNgInventory

    AVAILABLE_BACKENDS.setdefault(BACKEND_NAME, load_reclass_ng_backend)


def main(argv: list[str] | None = None) -> int:
    """Run Kapitan's command line with the reclass-ng backend registered."""
    try:
        from kapitan import cli as kapitan_cli
    except ImportError:
        from reclass_ng.install import install_hint

        raise ConfigError(f"kapitan-ng needs Kapitan: {install_hint('kapitan')}") from None
    register_backend()
    kapitan_cli.main(*(sys.argv[1:] if argv is None else argv))
    return 0


try:
    register_backend()
except ImportError:  # Kapitan not installed: main() says so
    pass


def console_main() -> None:
    """The `kapitan-ng` console script."""
    try:
        sys.exit(main())
    except ConfigError as err:
        print(err.message, file=sys.stderr)
        sys.exit(err.exit_code)
