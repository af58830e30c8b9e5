"""What `reclass-ng serve` and `reclass-ng ui` share: the `server` extra, the inventory directory,
and uvicorn run on a socket this module binds itself.

Binding here rather than inside uvicorn gives a busy or unusable address one clear line (uvicorn
logs it and exits 3, which says nothing to a script), and lets port 0 mean "a free port" whose
real number is printed before serving: a caller (a test, a script) starts the server with
`--listen 127.0.0.1:0` and reads the address from that line, instead of picking a free port first
and hoping nobody takes it before the server binds it.

Imported only when one of those commands runs (the socket module is not needed at every start).
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import socket
from types import ModuleType
from typing import Any

from reclass_ng.cli.inventory_args import inventory_dir_from_args
from reclass_ng.errors import ConfigError, ReclassError, UsageError

# Connections made between the bind and uvicorn's start wait in this queue, so the printed
# address answers at once.
LISTEN_BACKLOG = 128

# After Ctrl-C or SIGTERM, requests in progress get this long to finish, then they are cut: a
# client that stopped reading its response (a stalled proxy, a paused `curl | less`) held the
# server up for ever otherwise, uvicorn waiting for that connection to close (doc/service.rst).
SHUTDOWN_GRACE_SECONDS = 10


class ListenError(ReclassError):
    """The address to listen on cannot be used (port taken, address not on this machine)."""

    exit_code = 69  # EX_UNAVAILABLE (doc/usage.rst, exit codes)


def import_uvicorn(command: str) -> ModuleType:
    """uvicorn, after checking that the `server` extra (FastAPI, uvicorn, ruamel.yaml) is
    installed: reclass_ng.server imports at once afterwards."""
    try:
        import uvicorn

        import reclass_ng.server  # noqa: F401 - imported to check the extra
    except ImportError as err:
        from reclass_ng.install import install_hint

        raise ConfigError(f"reclass-ng {command} needs the `server` extra ({err.name} is "
                          f"missing): {install_hint('server')}") from err
    return uvicorn


def allowed_host_names(names: list[str]) -> list[str]:
    """The --allowed-host names, checked: a name or address, without scheme, path or port."""
    for name in names:
        bare = name.strip().removeprefix("[").removesuffix("]")
        if not bare or any(c in bare for c in "/@ \t") or (":" in bare and "[" not in name
                                                             and bare.count(":") == 1):
            raise UsageError(f"--allowed-host: expected a host name or address without scheme, "
                             f"port or path (e.g. classifier.example.com), got {name!r}")
    return names


def existing_inventory_dir(args: argparse.Namespace) -> str:
    """The absolute inventory directory of `-b` (or its default); ConfigError if it is missing."""
    inventory_dir = os.path.abspath(inventory_dir_from_args(args))
    if not os.path.isdir(inventory_dir):
        raise ConfigError(f"inventory directory {inventory_dir} does not exist")
    return inventory_dir


def listening_socket(host: str, port: int, option: str) -> socket.socket:
    """A socket bound to (host, port) and listening; port 0 binds a free port. `option` names
    what the user gave (e.g. `--listen 127.0.0.1:80`) in the ListenError of an unusable address.

    The address family follows uvicorn's rule (IPv6 when the host has a colon), so a name such
    as `localhost` is an IPv4 address, as it was when uvicorn bound it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise ListenError(f"{option}: unknown address ({err.strerror})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(LISTEN_BACKLOG)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise ListenError(f"{option}: the port is already in use (another reclass-ng "
                              "serve?); choose another port, or port 0 for a free one") from None
        raise ListenError(f"{option}: cannot listen there ({err.strerror})") from None
    return sock


def socket_url(sock: socket.socket) -> str:
    """`http://HOST:PORT` of a bound socket, with the port it really has (IPv6 in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if sock.family == socket.AF_INET6 else f"http://{host}:{port}"


def serve_on(uvicorn: ModuleType, sock: socket.socket, app: Any, **options: Any) -> int:
    """Run uvicorn with `options` (uvicorn.Config's) on the listening socket until it is stopped
    (Ctrl-C, SIGTERM: requests in progress get SHUTDOWN_GRACE_SECONDS); 0, or 3 as uvicorn.run
    exits when the application failed to start."""
    options.setdefault("timeout_graceful_shutdown", SHUTDOWN_GRACE_SECONDS)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    # uvicorn stops gracefully on SIGTERM, then raises the signal again under the handler that
    # was there before it ran, so that the default action ends the process: killed by
    # SIGTERM (exit -15), which tells a service manager or a script that the stop failed.
    # Under this handler the stop it asked for ends with 0, as doc/usage.rst says; a SIGTERM
    # that arrives before uvicorn took the signal over stops the server the same way.
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    terminated = False
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # a second Ctrl-C while uvicorn was already stopping
        pass
    except _Terminated:
        terminated = True
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    return 0 if server.started or terminated else 3


class _Terminated(BaseException):
    """SIGTERM reached the process outside uvicorn's own handler (see serve_on). A
    BaseException, like KeyboardInterrupt, so that no `except Exception` on the way swallows
    it."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise _Terminated
