"""The HTTP/1.1 connection handling of `reclass-ng serve`: uvicorn's h11 protocol with a header
timeout and a hard connection cap.

uvicorn closes idle keep-alive connections, but a client that sends half a request line and then
nothing keeps its connection (and file descriptor) forever; a few hundred of those starve a
server. Here a connection must deliver its request headers within `header_timeout` seconds of
connecting (or of the previous response), else it is closed; and connections beyond
`max_connections` are closed as soon as they are accepted, before they cost more than a moment.
(uvicorn's own `limit_concurrency` answers 503 to requests above the limit, but only once a
request has arrived.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 100


def bounded_protocol(header_timeout: float = DEFAULT_HEADER_TIMEOUT,
                     max_connections: int = DEFAULT_MAX_CONNECTIONS) -> type[H11Protocol]:
    """An H11Protocol class with these limits, to pass to uvicorn as `http=`."""

    class BoundedH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override,unused-ignore]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.close()
                return
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._arm_header_timer()  # (a trickle of bytes does not re-arm a running timer)
            else:
                self._cancel_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol
