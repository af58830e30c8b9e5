"""API renders leave the cycle collector as they found it, with what they made frozen, and
the next render gives the collector back what the previous one froze."""

from __future__ import annotations

import gc
import weakref

from inventory_writer import write_inventory

import reclass_ng


class _Cyclic:
    def __init__(self) -> None:
        self.me = self


def test_inventory_freezes_what_it_leaves_and_the_next_render_unfreezes(tmp_path):
    root = write_inventory(tmp_path, {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2}]\n",
        **{f"nodes/n{i}.yml": "classes: [base]\n" for i in range(20)}})
    inventory = reclass_ng.load(str(root))
    assert gc.isenabled()
    garbage = _Cyclic()
    collected = weakref.ref(garbage)
    try:
        first = inventory.inventory()
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        del garbage  # cyclic garbage frozen by the first render
        gc.collect()
        assert collected() is not None
        second = inventory.inventory()
        assert gc.get_freeze_count() < frozen + 1000  # unfrozen first, not piled up
        gc.collect()
        assert collected() is None  # handed back to the collector by the second render
        assert first["nodes"]["n1"]["parameters"] == second["nodes"]["n1"]["parameters"]
    finally:
        gc.unfreeze()


def test_a_disabled_collector_stays_disabled(tmp_path):
    root = write_inventory(tmp_path, {"nodes/n.yml": "parameters: {a: 1}\n"})
    gc.disable()
    try:
        reclass_ng.load(str(root)).inventory()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_render_that_freezes_nothing_leaves_its_cyclic_garbage_to_the_collector():
    # The editor's renders of a few nodes (reclass_ng.lsp): paused, then nothing frozen.
    from reclass_ng.collector import cycle_collection_paused

    frozen = gc.get_freeze_count()
    with cycle_collection_paused(collect=False, freeze=False):
        assert not gc.isenabled()
        garbage = _Cyclic()
        collected = weakref.ref(garbage)
        del garbage
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
    gc.collect()
    assert collected() is None
