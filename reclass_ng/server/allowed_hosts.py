"""The Host allow-list: requests whose `Host` header is not a name of this service get 421.

Why: DNS rebinding. A web page on `evil.example` makes its name resolve, a moment later, to
127.0.0.1; the browser then sends that page's requests to our port, believes them same-origin
and hands the answers (every rendered parameter, with open reads or `reclass-ng ui`) to the
page's script. The one thing such a request cannot hide is its `Host: evil.example`. Checking
it against the names the service is reached by closes the hole; TLS or a token would too, but
`reclass-ng ui` and open-read services have neither.

Allowed: the address the service listens on, `localhost`, `127.0.0.1` and `::1` for a loopback
address, those and any IP address for a wildcard address (`0.0.0.0`, `::`: a rebinding page
always sends a name, never an address), and the names the operator adds (`--allowed-host NAME`). The port in
the header is not compared. A request without `Host` (HTTP/1.0) passes: a browser always sends
one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

import attrs
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from reclass_ng.server.errors import ApiError

MISDIRECTED_REQUEST = "misdirected-request"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# Longest Host value quoted back in the error message.
_SHOWN = 100


def _normal(name: str) -> str:
    """A host name or address as compared: lower case, no brackets, no final dot."""
    return name.strip().lower().removeprefix("[").removesuffix("]").removesuffix(".")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def host_of(header: str) -> str:
    """The host part of a Host header (`name`, `name:port`, `[v6]:port`), normalised."""
    header = header.strip()
    if header.startswith("["):
        return _normal(header[:header.find("]") + 1] if "]" in header else header)
    name, _, _port = header.partition(":") if header.count(":") == 1 else (header, "", "")
    return _normal(name)


@attrs.frozen
class HostAllowList:
    """The names a service answers to (see the module's docstring)."""

    names: frozenset[str]
    any_address: bool = False  # a wildcard listen address: every IP literal is ours

    @classmethod
    def for_listen_address(cls, listen_host: str, extra: Iterable[str] = ()) -> HostAllowList:
        host = _normal(listen_host)
        names = {host, *(_normal(name) for name in extra)}
        address = _ip(host)
        if host == "localhost" or (address is not None and (address.is_loopback
                                                            or address.is_unspecified)):
            names.update(LOOPBACK_NAMES)
        return cls(frozenset(names), address is not None and address.is_unspecified)

    def allows(self, header: str) -> bool:
        host = host_of(header)
        if host in self.names:
            return True
        return self.any_address and _ip(host) is not None


class AllowedHosts:
    """ASGI middleware: 421 misdirected-request for a Host header not in the allow-list."""

    def __init__(self, app: ASGIApp, allowed: HostAllowList) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next((value for key, value in scope["headers"] if key == b"host"), None)
            if header is not None:
                host = header.decode("latin-1")
                if not self.allowed.allows(host):
                    shown = host[:_SHOWN]
                    error = ApiError(421, MISDIRECTED_REQUEST, f"This service does not answer to "
                                     f"the host name {shown!r} (a guard against DNS "
                                     "rebinding); its operator can add it with --allowed-host.",
                                     {"host": shown})
                    response = JSONResponse(error.body(), status_code=error.status)
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
