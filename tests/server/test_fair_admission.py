"""FairQueue (server/fair_admission.py): turns in rotation between waiting clients, and a
waiter that goes away (a closed connection) neither keeps nor loses a turn."""

from __future__ import annotations

import asyncio

from reclass_ng.server.fair_admission import FairQueue


async def _served_order(requests: list[str], turns: int) -> list[str]:
    queue = FairQueue(turns)
    order: list[str] = []
    gate = asyncio.Event()

    async def request(client: str) -> None:
        turn = await queue.take(client)
        await gate.wait()
        order.append(client)
        turn.give_back()

    tasks = [asyncio.create_task(request(client)) for client in requests]
    await asyncio.sleep(0)  # every request has taken a turn or queued for one
    gate.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    return order


def test_turns_rotate_between_the_waiting_clients() -> None:
    order = asyncio.run(_served_order(["a"] * 6 + ["b", "c", "b"], turns=1))
    assert order == ["a", "a", "b", "c", "a", "b", "a", "a", "a"]


def test_a_client_alone_gets_every_turn() -> None:
    order = asyncio.run(_served_order(["a"] * 5, turns=3))
    assert order == ["a"] * 5


def test_a_waiter_that_goes_away_passes_its_turn_on() -> None:
    async def scenario() -> list[str]:
        queue = FairQueue(1)
        first = await queue.take("a")
        gone = asyncio.create_task(queue.take("b"))
        later = asyncio.create_task(queue.take("c"))
        await asyncio.sleep(0)
        gone.cancel()
        await asyncio.sleep(0)
        first.give_back()
        first.give_back()  # twice is harmless: still one turn
        turn = await asyncio.wait_for(later, 10)
        served = ["c"]
        turn.give_back()
        again = await asyncio.wait_for(queue.take("d"), 10)  # the turn came back to the pool
        served.append("d")
        again.give_back()
        return served

    assert asyncio.run(scenario()) == ["c", "d"]
