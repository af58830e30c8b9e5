"""`reclass-ng lsp`: the Language Server Protocol server over stdio (doc/editor.rst)."""

from __future__ import annotations

import argparse

from reclass_ng.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="talk LSP over stdin/stdout (the default and only transport)")


def run(args: argparse.Namespace) -> int:
    try:
        from reclass_ng.lsp.server import serve_stdio
    except ImportError as err:
        from reclass_ng.install import install_hint

        # 78, as `serve` without its `server` extra: the installation, not the command line.
        raise ConfigError(f"reclass-ng lsp needs the `lsp` extra ({install_hint('lsp')}): "
                          f"{err}") from None
    serve_stdio()
    return 0
