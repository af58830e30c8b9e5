"""`reclass-ng lsp`: the Language Server Protocol server (pygls) over stdio: the server's
state (reclass_ng.lsp.inventory_server) with a handler for each feature (reclass_ng.lsp.handlers).
"""

from __future__ import annotations

from reclass_ng.lsp.handlers import FEATURES
from reclass_ng.lsp.inventory_server import InventoryServer


def build_server() -> InventoryServer:
    """The server with a handler registered for each LSP feature."""
    server = InventoryServer()
    for method, handler, options in FEATURES:
        server.feature(method, options)(handler)
    return server


def serve_stdio() -> None:
    """Run the server on stdin/stdout until the client exits it."""
    build_server().start_io()
