"""`reclass-ng ui -b DIR`: the read-only web explorer alone, on 127.0.0.1, printing its URL.

The same application as `reclass-ng serve` (so the same pages at /ui/), started read-only with
reads open and listening on loopback only: it is for the person at this machine. The port is
a free one unless --port is given.
"""

from __future__ import annotations

import argparse
import sys

from reclass_ng.cli.inventory_args import add_inventory_argument
from reclass_ng.cli.serve import IDLE_KEEP_ALIVE_SECONDS, add_allowed_host_argument
from reclass_ng.errors import UsageError

HOST = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--state-db", metavar="PATH",
                        help="SQLite file of the observed state (facts) to show; default: the "
                             "one `reclass-ng serve` uses for this inventory")
    add_allowed_host_argument(parser)
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn log level (default: warning)")


def run(args: argparse.Namespace) -> int:
    from reclass_ng.cli import http_serving

    uvicorn = http_serving.import_uvicorn("ui")
    from reclass_ng.server import ServerConfig, create_app, default_state_path
    from reclass_ng.server.allowed_hosts import HostAllowList
    from reclass_ng.server.http_protocol import bounded_protocol

    if not 0 <= args.port < 65536:
        raise UsageError(f"--port: expected 0-65535, got {args.port}")
    inventory_dir = http_serving.existing_inventory_dir(args)
    state_path = args.state_db or str(default_state_path(inventory_dir))
    config = ServerConfig(inventory_dir=inventory_dir, state_path=state_path, token=None,
                          read_only=True, open_reads=True,
                          allowed_hosts=HostAllowList.for_listen_address(
                              HOST, http_serving.allowed_host_names(args.allowed_host)))
    app = create_app(config)
    sock = http_serving.listening_socket(HOST, args.port, f"--port {args.port}")
    print(f"reclass-ng explorer: {http_serving.socket_url(sock)}/ui/", flush=True)
    print(f"reclass-ng ui: inventory {inventory_dir}; Ctrl-C stops it", file=sys.stderr)
    return http_serving.serve_on(uvicorn, sock, app, log_level=args.log_level,
                                 http=bounded_protocol(),
                                 timeout_keep_alive=IDLE_KEEP_ALIVE_SECONDS)
