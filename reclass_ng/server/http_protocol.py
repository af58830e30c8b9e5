"""The HTTP/1.1 connection handling of `reclass-ng serve` and `reclass-ng ui`: uvicorn's h11
protocol with a header timeout and connection caps that one client cannot use up.

uvicorn closes idle keep-alive connections, but a client that sends half a request line and then
nothing keeps its connection (and file descriptor) forever; a few hundred of those starve a
server. Here a connection must deliver its request headers within `header_timeout` seconds of
connecting (or of the previous response), else it is closed.

Connections are capped twice, and both caps act when a connection is accepted, before it costs
more than a moment:

* per client (remote IP address), `max_per_client`, well below the global cap: one client can
  never hold every connection. Past it, one of that client's idle connections is closed (the
  new one, which is about to carry a request, is kept); with none idle, the new one is closed.
* in all, `max_connections`: past it, an idle connection of the client holding the most
  connections is closed, if that client holds more than the newcomer's; otherwise the newcomer
  is closed. So idle connections of a few clients never lock out another client.

"Idle" is a connection with no request in progress: one that never sent a byte, or a keep-alive
connection between requests. A request in progress is never cut. (uvicorn's own
`limit_concurrency` is not used: it answers 503 to every request once the connections of all
clients together reach the limit, which is exactly the lock-out an idle client could cause.)
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any, ClassVar

import attrs
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 100
DEFAULT_MAX_PER_CLIENT = 20


class ConnectionTable:
    """The open connections of one server, by client address, oldest first."""

    def __init__(self) -> None:
        self._by_client: dict[str, dict[Any, None]] = {}
        self.total = 0

    def add(self, client: str, connection: Any) -> None:
        self._by_client.setdefault(client, {})[connection] = None
        self.total += 1

    def remove(self, client: str, connection: Any) -> None:
        connections = self._by_client.get(client)
        if connections is not None and connection in connections:
            del connections[connection]
            self.total -= 1
            if not connections:
                del self._by_client[client]

    def count(self, client: str) -> int:
        return len(self._by_client.get(client, ()))

    def busiest(self) -> tuple[str, int]:
        """The client holding the most connections, and how many."""
        counts = Counter({client: len(c) for client, c in self._by_client.items()})
        return counts.most_common(1)[0] if counts else ("", 0)

    def idle_of(self, client: str, spare: Any) -> Any | None:
        """The oldest idle connection of `client` other than `spare`, or None."""
        for connection in self._by_client.get(client, ()):
            if connection is not spare and connection.is_idle():
                return connection
        return None


@attrs.frozen
class ConnectionLimits:
    """The header timeout and the two connection caps of one server."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_per_client: int = DEFAULT_MAX_PER_CLIENT


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits of the module's docstring. Each server uses a
    subclass made by `bounded_protocol`, which holds its limits and its connection table."""

    limits: ClassVar[ConnectionLimits]
    table: ClassVar[ConnectionTable]
    _header_timer: asyncio.TimerHandle | None = None
    _client_key: str | None = None

    def connection_made(self, transport: Any) -> None:  # type: ignore[override,unused-ignore]
        super().connection_made(transport)
        self._client_key = self.client[0] if self.client else ""
        self.table.add(self._client_key, self)
        self._arm_header_timer()
        self._enforce_caps(self._client_key)

    def _enforce_caps(self, client: str) -> None:
        """Close a connection when this new one, of `client`, goes past a cap."""
        if self.table.count(client) > self.limits.max_per_client:
            self._close_one_of(client)
        elif self.table.total > self.limits.max_connections:
            busiest, held = self.table.busiest()
            if held > self.table.count(client):
                self._close_one_of(busiest)
            else:
                self.drop()

    def is_idle(self) -> bool:
        """No request in progress (never sent one, or between keep-alive requests)."""
        return (not self.transport.is_closing() and self.conn.their_state is h11.IDLE
                and (self.cycle is None or self.cycle.response_complete))

    def _close_one_of(self, client: str) -> None:
        """Close an idle connection of `client` other than this new one; else this one."""
        victim = self.table.idle_of(client, self)
        (victim if victim is not None else self).drop()

    def drop(self) -> None:
        """Close this connection now and forget it in the per-client table."""
        self._forget()
        self.transport.close()

    def _forget(self) -> None:
        if self._client_key is not None:
            self.table.remove(self._client_key, self)
            self._client_key = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm_header_timer()  # (a trickle of bytes does not re-arm a running timer)
        else:
            self._cancel_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._forget()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout,
                                                      self._headers_late)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(header_timeout: float = DEFAULT_HEADER_TIMEOUT,
                     max_connections: int = DEFAULT_MAX_CONNECTIONS,
                     max_per_client: int = DEFAULT_MAX_PER_CLIENT) -> type[H11Protocol]:
    """An H11Protocol class with these limits (and its own ConnectionTable), to pass to uvicorn
    as `http=`."""

    class ServerH11Protocol(BoundedH11Protocol):
        limits = ConnectionLimits(header_timeout, max_connections, max_per_client)
        table = ConnectionTable()

    return ServerH11Protocol
