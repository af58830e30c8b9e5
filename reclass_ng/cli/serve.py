"""`reclass-ng serve -b DIR`: the Node Classifier v1 HTTP API over the inventory (uvicorn).

The token comes from the environment (RECLASS_NG_TOKEN) or --token-file, never from the command
line, where every user of the machine could read it in the process list.
"""

from __future__ import annotations

import argparse
import os
import sys

from reclass_ng.cli.inventory_args import add_inventory_argument
from reclass_ng.errors import ConfigError, UsageError
from reclass_ng.storage.regular_file import read_regular_file

TOKEN_VARIABLE = "RECLASS_NG_TOKEN"
DEFAULT_LISTEN = "127.0.0.1:1261"  # the standalone classifier's HTTP port
LISTENING_PREFIX = "reclass-ng serve: listening on "  # + the URL, on stdout (doc/service.rst)
# The defaults of server/http_protocol.py, repeated so --help needs no server import.
DEFAULT_MAX_CONNECTIONS = 100
MAX_TOKEN_FILE_BYTES = 64 * 1024  # --token-file holds one token
DEFAULT_MAX_PER_CLIENT = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("--listen", metavar="ADDR:PORT", default=DEFAULT_LISTEN,
                        help=f"address and port to listen on; port 0: a free one (default: "
                             f"{DEFAULT_LISTEN}); the address is printed on stdout as "
                             f"'{LISTENING_PREFIX}http://ADDR:PORT'")
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
    parser.add_argument("--git-commit", action="store_true",
                        help="commit every write through the API to the inventory's git "
                             "repository, authored by the token's name, with the activity "
                             "log's message (only the files the write changed)")
    parser.add_argument("--record-anonymous-check-ins", action="store_true",
                        help="let classifications without the token store the node's facts "
                             "and a check-in (default: only clients with the token do)")
    parser.add_argument("--check-in-history", type=int, default=10, metavar="N",
                        help="check-ins kept per node (default: 10)")
    parser.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        metavar="N",
                        help="open connections at most; past it, an idle connection of the "
                             "client holding the most is closed, or the new one (default: "
                             f"{DEFAULT_MAX_CONNECTIONS})")
    parser.add_argument("--max-connections-per-client", type=int,
                        default=DEFAULT_MAX_PER_CLIENT, metavar="N",
                        help="open connections of one client (IP address) at most; past it, "
                             "one of its idle connections is closed, or the new one (default: "
                             f"{DEFAULT_MAX_PER_CLIENT})")
    parser.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="a connection must send its request headers within this time "
                             "(default: 10)")
    parser.add_argument("--worker-threads", type=int, default=8, metavar="N",
                        help="threads for blocking work: file reads and writes, matching, "
                             "rendering (default: 8)")
    add_allowed_host_argument(parser)
    parser.add_argument("--log-level", default="info",
                        choices=("critical", "error", "warning", "info", "debug"),
                        help="uvicorn log level (default: info)")


# How long a keep-alive connection may sit between requests before it is closed.
IDLE_KEEP_ALIVE_SECONDS = 5


def add_allowed_host_argument(parser: argparse.ArgumentParser) -> None:
    """`--allowed-host NAME` (repeatable): the Host allow-list of server/allowed_hosts.py."""
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name clients use to reach the service (repeatable); "
                             "requests with another Host header get 421, a guard against DNS "
                             "rebinding. The listen address, and localhost for a loopback "
                             "one, are always allowed")


def parse_listen(text: str) -> tuple[str, int]:
    """`ADDR:PORT` (IPv6 as `[::1]:PORT`) -> (host, port); port 0 asks for a free port."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) or not 0 <= int(port) < 65536:
        raise UsageError(f"--listen: expected ADDR:PORT (e.g. {DEFAULT_LISTEN}), got {text!r}")
    return host.strip("[]"), int(port)


def read_token(token_file: str | None) -> str | None:
    """The token from --token-file, else from the environment; None when neither is set."""
    if token_file:
        try:
            content = read_regular_file(os.path.expanduser(token_file), MAX_TOKEN_FILE_BYTES)[0]
            token = content.decode("utf-8").strip()
        except OSError as err:
            raise ConfigError(f"--token-file: cannot read {token_file}: {err.strerror}") from err
        except UnicodeDecodeError:
            raise ConfigError(f"--token-file: {token_file} is not UTF-8 text") from None
        if not token:
            raise ConfigError(f"--token-file: {token_file} is empty")
        return token
    return os.environ.get(TOKEN_VARIABLE, "").strip() or None


def run(args: argparse.Namespace) -> int:
    from reclass_ng.cli import http_serving

    uvicorn = http_serving.import_uvicorn("serve")
    from reclass_ng.server import ServerConfig, create_app, default_state_path
    from reclass_ng.server.allowed_hosts import HostAllowList
    from reclass_ng.server.http_protocol import bounded_protocol

    inventory_dir = http_serving.existing_inventory_dir(args)
    host, port = parse_listen(args.listen)
    token = read_token(args.token_file)
    state_path = args.state_db or str(default_state_path(inventory_dir))
    tokens_file = os.path.abspath(args.tokens_file) if args.tokens_file else None
    code_dir = os.path.abspath(args.puppet_code_dir) if args.puppet_code_dir else None
    for option, value in (("--check-in-history", args.check_in_history),
                          ("--max-connections", args.max_connections),
                          ("--max-connections-per-client", args.max_connections_per_client),
                          ("--worker-threads", args.worker_threads),
                          ("--header-timeout", args.header_timeout)):
        if value <= 0:
            raise UsageError(f"{option}: must be positive, got {value}")
    config = ServerConfig(inventory_dir=inventory_dir, state_path=state_path, token=token,
                          read_only=args.read_only, open_reads=args.open_reads,
                          tokens_file=tokens_file, code_dir=code_dir,
                          record_anonymous=args.record_anonymous_check_ins,
                          check_in_history=args.check_in_history,
                          worker_threads=args.worker_threads,
                          git_commits=args.git_commit,
                          allowed_hosts=HostAllowList.for_listen_address(
                              host, http_serving.allowed_host_names(args.allowed_host)))
    app = create_app(config)
    sock = http_serving.listening_socket(host, port, f"--listen {args.listen}")
    if token is None and tokens_file is None and not args.read_only:
        print(f"reclass-ng serve: no token ({TOKEN_VARIABLE} or --token-file): reads are open, "
              "writes are refused", file=sys.stderr)
    print(f"reclass-ng serve: inventory {inventory_dir}, observed state in {state_path}",
          file=sys.stderr)
    # The one line a script or a test reads for the address, with the real port (--listen
    # ADDR:0); printed once the socket listens, so the address answers from now on.
    print(f"{LISTENING_PREFIX}{http_serving.socket_url(sock)}", flush=True)
    return http_serving.serve_on(
        uvicorn, sock, app, log_level=args.log_level,
        http=bounded_protocol(args.header_timeout, args.max_connections,
                              args.max_connections_per_client),
        timeout_keep_alive=IDLE_KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=64 * 1024)
