"""`reclass-ng serve -b DIR`: the Node Classifier v1 HTTP API over the inventory (uvicorn).

The token comes from the environment (RECLASS_NG_TOKEN) or --token-file, never from the command
line, where every user of the machine could read it in the process list.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys

from reclass_ng.cli.groups import add_inventory_argument, inventory_dir_from_args
from reclass_ng.errors import ConfigError, ReclassError, UsageError

TOKEN_VARIABLE = "RECLASS_NG_TOKEN"
DEFAULT_LISTEN = "127.0.0.1:1261"  # the standalone classifier's HTTP port


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("--listen", metavar="ADDR:PORT", default=DEFAULT_LISTEN,
                        help=f"address and port to listen on (default: {DEFAULT_LISTEN})")
    parser.add_argument("--token-file", metavar="FILE",
                        help=f"file holding the API token (else ${TOKEN_VARIABLE}); without a "
                             "token, reads are open and writes are refused")
    parser.add_argument("--tokens-file", metavar="FILE",
                        help="YAML file of hashed tokens with roles (viewer, operator of a "
                             "group subtree, admin; see `reclass-ng tokens add`); usable "
                             "together with the single token")
    parser.add_argument("--puppet-code-dir", metavar="DIR",
                        help="Puppet's codedir (environments/<env>/modules) that POST "
                             "/v1/update-classes syncs the class catalogue from")
    parser.add_argument("--read-only", action="store_true",
                        help="refuse every write (for inventories managed in git)")
    parser.add_argument("--open-reads", action="store_true",
                        help="let reads (GET, classification) through without the token")
    parser.add_argument("--state-db", metavar="PATH",
                        help="SQLite file for observed state (check-ins, facts); default "
                             "$XDG_STATE_HOME/reclass-ng/observed-<hash>.sqlite3")
    parser.add_argument("--record-anonymous-check-ins", action="store_true",
                        help="let classifications without the token store the node's facts "
                             "and a check-in (default: only clients with the token do)")
    parser.add_argument("--check-in-history", type=int, default=10, metavar="N",
                        help="check-ins kept per node (default: 10)")
    parser.add_argument("--max-connections", type=int, default=100, metavar="N",
                        help="open connections at most; more are closed at once, and requests "
                             "over the limit get 503 (default: 100)")
    parser.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="a connection must send its request headers within this time "
                             "(default: 10)")
    parser.add_argument("--worker-threads", type=int, default=8, metavar="N",
                        help="threads for blocking work: file reads and writes, matching, "
                             "rendering (default: 8)")
    parser.add_argument("--log-level", default="info",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn log level (default: info)")


def parse_listen(text: str) -> tuple[str, int]:
    """`ADDR:PORT` (IPv6 as `[::1]:PORT`) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen: expected ADDR:PORT (e.g. {DEFAULT_LISTEN}), got {text!r}")
    return host.strip("[]"), int(port)


class ListenError(ReclassError):
    """The address to listen on cannot be used (port taken, address not on this machine)."""

    exit_code = 69  # EX_UNAVAILABLE (doc/usage.rst, exit codes)


def check_listen(host: str, port: int) -> None:
    """Bind the address once before starting uvicorn, so that a busy port is one clear line
    (uvicorn logs it and exits 3, which says nothing to a script)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise ListenError(f"--listen {host}:{port}: unknown address ({err.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise ListenError(f"--listen {host}:{port}: the port is already in use (another "
                                  "reclass-ng serve?); choose another with --listen ADDR:PORT"
                                  ) from None
            raise ListenError(f"--listen {host}:{port}: cannot listen there ({err.strerror})"
                              ) from None


def read_token(token_file: str | None) -> str | None:
    """The token from --token-file, else from the environment; None when neither is set."""
    if token_file:
        try:
            with open(os.path.expanduser(token_file), encoding="utf-8") as stream:
                token = stream.read().strip()
        except OSError as err:
            raise ConfigError(f"--token-file: cannot read {token_file}: {err.strerror}") from err
        if not token:
            raise ConfigError(f"--token-file: {token_file} is empty")
        return token
    return os.environ.get(TOKEN_VARIABLE, "").strip() or None


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from reclass_ng.server import ServerConfig, create_app, default_state_path
    except ImportError as err:
        raise ConfigError(f"reclass-ng serve needs the `server` extra ({err.name} is missing): "
                          "from a checkout, pip install '.[server]'") from err

    inventory_dir = os.path.abspath(inventory_dir_from_args(args))
    if not os.path.isdir(inventory_dir):
        raise ConfigError(f"inventory directory {inventory_dir} does not exist")
    host, port = parse_listen(args.listen)
    check_listen(host, port)
    token = read_token(args.token_file)
    state_path = args.state_db or str(default_state_path(inventory_dir))
    tokens_file = os.path.abspath(args.tokens_file) if args.tokens_file else None
    code_dir = os.path.abspath(args.puppet_code_dir) if args.puppet_code_dir else None
    for option, value in (("--check-in-history", args.check_in_history),
                          ("--max-connections", args.max_connections),
                          ("--worker-threads", args.worker_threads),
                          ("--header-timeout", args.header_timeout)):
        if value <= 0:
            raise UsageError(f"{option}: must be positive, got {value}")
    config = ServerConfig(inventory_dir=inventory_dir, state_path=state_path, token=token,
                          read_only=args.read_only, open_reads=args.open_reads,
                          tokens_file=tokens_file, code_dir=code_dir,
                          record_anonymous=args.record_anonymous_check_ins,
                          check_in_history=args.check_in_history,
                          worker_threads=args.worker_threads)
    if token is None and tokens_file is None and not args.read_only:
        print(f"reclass-ng serve: no token ({TOKEN_VARIABLE} or --token-file): reads are open, "
              "writes are refused", file=sys.stderr)
    print(f"reclass-ng serve: inventory {inventory_dir}, observed state in {state_path}",
          file=sys.stderr)
    from reclass_ng.server.http_protocol import bounded_protocol

    uvicorn.run(create_app(config), host=host, port=port, log_level=args.log_level,
                http=bounded_protocol(args.header_timeout, args.max_connections),
                limit_concurrency=args.max_connections, timeout_keep_alive=5,
                h11_max_incomplete_event_size=64 * 1024)
    return 0
