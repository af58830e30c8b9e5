"""`reclass-ng ui -b DIR`: the read-only web explorer alone, on 127.0.0.1, printing its URL.

The same application as `reclass-ng serve` (so the same pages at /ui/), started read-only with
reads open and listening on loopback only: it is for the person at this machine. The port is
a free one unless --port is given.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from reclass_ng.cli.groups import add_inventory_argument, inventory_dir_from_args
from reclass_ng.errors import ConfigError, UsageError

if TYPE_CHECKING:  # socket is imported when the command runs, not at every reclass-ng start
    import socket

HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--state-db", metavar="PATH",
                        help="SQLite file of the observed state (facts) to show; default: the "
                             "one `reclass-ng serve` uses for this inventory")
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn log level (default: warning)")


def listening_socket(port: int) -> socket.socket:
    """A socket bound on 127.0.0.1 (port 0: a free one), so the URL is known before serving."""
    import socket

    if not 0 <= port < 65536:
        raise UsageError(f"--port: expected 0-65535, got {port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as err:
        sock.close()
        raise ConfigError(f"--port {port}: cannot listen on {HOST}: {err.strerror}") from err
    sock.listen(128)  # connections wait in the backlog until uvicorn serves: the URL works at once
    return sock


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from reclass_ng.server import ServerConfig, create_app, default_state_path
    except ImportError as err:
        raise ConfigError(f"reclass-ng ui needs the `server` extra ({err.name} is missing): "
                          "from a checkout, pip install '.[server]'") from err

    inventory_dir = os.path.abspath(inventory_dir_from_args(args))
    if not os.path.isdir(inventory_dir):
        raise ConfigError(f"inventory directory {inventory_dir} does not exist")
    state_path = args.state_db or str(default_state_path(inventory_dir))
    config = ServerConfig(inventory_dir=inventory_dir, state_path=state_path, token=None,
                          read_only=True, open_reads=True)
    app = create_app(config)
    sock = listening_socket(args.port)
    port = sock.getsockname()[1]
    print(f"reclass-ng explorer: http://{HOST}:{port}/ui/", flush=True)
    print(f"reclass-ng ui: inventory {inventory_dir}; Ctrl-C stops it", file=sys.stderr)
    server = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level))
    server.run(sockets=[sock])
    return 0
