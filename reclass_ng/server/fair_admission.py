"""Fair queuing of requests between clients: when every worker is busy, the next free turn goes to
the next waiting client in rotation, not to whoever queued the most requests.

The worker pool (`--worker-threads`) serves requests first come, first served; a client that
keeps twenty requests queued would make every other client wait behind all twenty. Here a
request needs a turn (one of `turns`, as many as worker threads) before it runs; waiting
requests queue per client (remote IP address), and a freed turn goes to the client at the front
of the rotation, which then moves to the back. A client alone gets every turn.

A request gives its turn back when its response starts (so a client that reads its answers
slowly, or never, holds no turn), and when it enters the write lane (http.WriteLane: a write
waiting for the inventory lock must not hold a turn that reads need).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import OrderedDict, deque

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class Turn:
    """A request's turn; giving it back twice is harmless."""

    def __init__(self, queue: FairQueue) -> None:
        self._queue: FairQueue | None = queue

    def give_back(self) -> None:
        queue, self._queue = self._queue, None
        if queue is not None:
            queue.release()


# The turn of the request being handled (set by FairAdmission, given back by the write lane).
CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("reclass_ng_turn",
                                                                          default=None)


class FairQueue:
    """`turns` turns, handed out in rotation between the clients that wait for one."""

    def __init__(self, turns: int) -> None:
        self._free = turns
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    async def take(self, client: str) -> Turn:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return Turn(self)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(client, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted just as the request went away: pass it on
            else:
                self._forget(client, future)
            raise
        return Turn(self)

    def release(self) -> None:
        """A turn is free: to the next waiting client in rotation, else back to the pool."""
        while self._waiting:
            client, futures = next(iter(self._waiting.items()))
            future = futures.popleft()
            if futures:
                self._waiting.move_to_end(client)
            else:
                del self._waiting[client]
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

    def _forget(self, client: str, future: asyncio.Future[None]) -> None:
        futures = self._waiting.get(client)
        if futures is not None and future in futures:
            futures.remove(future)
            if not futures:
                del self._waiting[client]


class FairAdmission:
    """ASGI middleware: each HTTP request waits for a turn of its FairQueue."""

    def __init__(self, app: ASGIApp, turns: int) -> None:
        self.app = app
        self.queue = FairQueue(turns)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        turn = await self.queue.take(client[0] if client else "")
        reset = CURRENT_TURN.set(turn)

        async def send_and_give_back(message: Message) -> None:
            if message["type"] == "http.response.start":
                turn.give_back()
            await send(message)

        try:
            await self.app(scope, receive, send_and_give_back)
        finally:
            turn.give_back()
            CURRENT_TURN.reset(reset)
