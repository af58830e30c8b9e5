"""`kapitan-ng`: Kapitan's own command line with the `reclass-ng` inventory backend available.

Kapitan has no plugin mechanism for inventory backends: they are the entries of the dict
`kapitan.inventory.AVAILABLE_BACKENDS`, which its `--inventory-backend` option also takes its
choices from. Importing this module adds `reclass-ng` there; `main` then runs Kapitan's CLI, so
`kapitan-ng compile --inventory-backend reclass-ng` and `.kapitan`'s
`inventory_backend: reclass-ng` work. The registration happens at import so that compile workers
started with the `spawn` method (Kapitan's default), which re-import the main script, have it too.
"""

from __future__ import annotations

import json
import sys

from reclass_ng.errors import ConfigError, NotFoundError, ReclassError, UsageError
from reclass_ng.kapitan import BACKEND_NAME

TARGETS_FROM = "--targets-from"
MAX_TARGETS_FILE = 16 << 20  # bytes: a target list is names, never this long


def register_backend() -> None:
    """Make `reclass-ng` a Kapitan inventory backend (idempotent)."""
    from kapitan.inventory import AVAILABLE_BACKENDS

    def load_reclass_ng_backend() -> type:
        from reclass_ng.kapitan.inventory import ReclassNgInventory

        return ReclassNgInventory

    AVAILABLE_BACKENDS.setdefault(BACKEND_NAME, load_reclass_ng_backend)


def read_target_list(path: str) -> list[str]:
    """The target names in `path` (`-`: stdin): `reclass-ng affected -o json` output (its
    `nodes`), a JSON list, or one name a line."""
    try:
        if path == "-":
            text = sys.stdin.read(MAX_TARGETS_FILE + 1)
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(MAX_TARGETS_FILE + 1)
    except OSError as err:
        raise NotFoundError(f"kapitan-ng: cannot read {TARGETS_FROM} {path}: {err.strerror}",
                            path=path) from None
    except UnicodeDecodeError:
        raise UsageError(f"kapitan-ng: {TARGETS_FROM} {path} is not UTF-8 text") from None
    if len(text) > MAX_TARGETS_FILE:
        raise UsageError(f"kapitan-ng: {TARGETS_FROM} {path} is over {MAX_TARGETS_FILE} bytes")
    if text.lstrip()[:1] in ("{", "["):
        try:
            document = json.loads(text)
        except ValueError as err:
            raise UsageError(f"kapitan-ng: {TARGETS_FROM} {path}: not JSON: {err}") from None
        names = document.get("nodes") if isinstance(document, dict) else document
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise UsageError(f"kapitan-ng: {TARGETS_FROM} {path}: expected a list of target "
                             f"names, or an object whose `nodes` is one")
        return names
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def with_target_list(argv: list[str]) -> list[str] | None:
    """Kapitan's arguments with `--targets-from FILE` turned into `--targets NAME...`; None
    when the file lists no target (Kapitan given no target compiles every one)."""
    words = list(argv)
    for index, word in enumerate(words):
        if word == TARGETS_FROM or word.startswith(TARGETS_FROM + "="):
            if "compile" not in words[:index]:
                raise UsageError(f"kapitan-ng: {TARGETS_FROM} is an option of compile")
            if word == TARGETS_FROM:
                if index + 1 >= len(words):
                    raise UsageError(f"kapitan-ng: {TARGETS_FROM} needs a file")
                path = words.pop(index + 1)
            else:
                path = word.split("=", 1)[1]
            words.pop(index)
            names = read_target_list(path)
            if not names:
                return None
            return [*words, "--targets", *names]
    return words


def main(argv: list[str] | None = None) -> int:
    """Run Kapitan's command line with the reclass-ng backend registered."""
    try:
        from kapitan import cli as kapitan_cli
    except ImportError:
        from reclass_ng.install import install_hint

        raise ConfigError(f"kapitan-ng needs Kapitan: {install_hint('kapitan')}") from None
    words = with_target_list(sys.argv[1:] if argv is None else argv)
    if words is None:
        print(f"kapitan-ng: {TARGETS_FROM} lists no target: nothing to compile",
              file=sys.stderr)
        return 0
    register_backend()
    kapitan_cli.main(*words)
    return 0


try:
    register_backend()
except ImportError:  # Kapitan not installed: main() says so
    pass


def console_main() -> None:
    """The `kapitan-ng` console script."""
    try:
        sys.exit(main())
    except ReclassError as err:
        print(err.message, file=sys.stderr)
        sys.exit(err.exit_code)
