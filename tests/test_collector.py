"""API renders leave the cycle collector as they found it, with what they made frozen, and
the next render gives the collector back what the previous one froze."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import pytest
from inventory_writer import write_inventory

import reclass_ng


class _Cyclic:
    def __init__(self) -> None:
        self.me = self


def _render_collections(render) -> list[int]:
    """The generations the cycle collector went over while `render()` ran."""
    generations: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        render()
    finally:
        gc.callbacks.remove(seen)
    return generations


def test_inventory_freezes_what_it_leaves_and_a_later_render_collects_it(tmp_path):
    root = write_inventory(tmp_path, {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2}]\n",
        **{f"nodes/n{i}.yml": "classes: [base]\n" for i in range(20)}})
    inventory = reclass_ng.load(str(root))
    assert gc.isenabled()
    try:
        first = inventory.inventory()
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen > 0
        # Cyclic garbage, frozen by a render while it was alive: a third more than was alive.
        garbage = [_Cyclic() for _ in range(frozen // 3 + 1000)]
        collected = weakref.ref(garbage[0])
        inventory.inventory()
        del garbage
        gc.collect()
        assert collected() is not None  # frozen: the collector does not see it
        second = inventory.inventory()
        assert collected() is None  # the render collected before it froze again
        assert gc.get_freeze_count() < frozen + 1000  # unfrozen first, not piled up
        assert first["nodes"]["n1"]["parameters"] == second["nodes"]["n1"]["parameters"]
    finally:
        gc.unfreeze()


def test_renders_in_a_long_lived_process_do_not_each_collect_everything(tmp_path):
    # A service, an editor or a test run keeps far more alive than a small render makes: a full
    # pass over all of it before every render cost each render 0.3 s and more.
    root = write_inventory(tmp_path, {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2}]\n",
        **{f"nodes/n{i}.yml": "classes: [base]\n" for i in range(5)}})
    inventory = reclass_ng.load(str(root))
    alive = [[i] for i in range(200_000)]  # what a long-lived process holds
    try:
        inventory.inventory()
        collections = [_render_collections(inventory.inventory) for _ in range(10)]
        # At most one: the first render may find a quarter more frozen than after the last
        # collection (what this test holds alive, frozen by the render before).
        assert sum(len(generations) for generations in collections) <= 1, collections
    finally:
        del alive
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


def test_renders_do_not_count_everything_frozen(tmp_path, monkeypatch):
    # gc.get_freeze_count() walks every frozen object (CPython 3.11 to 3.13): asked before each
    # render, it cost a render of a few nodes 56 ms in a process holding 3 million objects.
    root = write_inventory(tmp_path, {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2}]\n",
        **{f"nodes/n{i}.yml": "classes: [base]\n" for i in range(5)}})
    inventory = reclass_ng.load(str(root))
    alive = [[i] for i in range(200_000)]
    asked = []
    count_frozen = gc.get_freeze_count
    monkeypatch.setattr(gc, "get_freeze_count", lambda: asked.append(1) or count_frozen())
    try:
        inventory.inventory()
        collections = [_render_collections(inventory.inventory) for _ in range(10)]
        # Once after each collection, when what survived it is counted; never per render.
        collected = sum(len(generations) for generations in collections)
        assert len(asked) <= 1 + collected, (len(asked), collections)
    finally:
        del alive
        gc.unfreeze()


_WATCHED_CONSOLE_RUN = """
import gc, sys
script, sys.argv = sys.argv[1], sys.argv[1:]
if script == "reclass":
    from reclass_ng.cli.reclass import console_main
else:
    from reclass_ng.cli.main import console_main
def said(what):
    sys.stderr.write(f"collector: {what}\\n")
freeze, count_frozen = gc.freeze, gc.get_freeze_count
gc.freeze = lambda: said("freeze") or freeze()
gc.get_freeze_count = lambda: said("count") or count_frozen()
gc.collect()  # what the start left (collections from here on are the command's)
gc.callbacks.append(lambda phase, info: phase == "start" and said("collection"))
console_main()
"""


@pytest.mark.parametrize("command", [["reclass", "--inventory"],
                                     ["reclass", "--inventory", "-j", "2"], ["reclass-ng", "lint"]])
def test_whole_inventory_console_scripts_never_collect_nor_freeze(tmp_path, command):
    # They leave with os._exit once the output is written: a collection or a freeze at their
    # end (which counted every object alive: 5 ms after 2,000 nodes) was paid for nothing.
    root = write_inventory(tmp_path / "inventory", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2}]\n",
        **{f"nodes/n{i}.yml": "classes: [base]\n" for i in range(40)}})
    script, *words = command
    where = ["-b", str(root)]
    run = subprocess.run([sys.executable, "-c", _WATCHED_CONSOLE_RUN, script, *words, *where],
                         capture_output=True, text=True, timeout=120)
    assert "collector:" not in run.stderr, run.stderr
    if script == "reclass":
        assert run.returncode == 0, run.stderr
        assert "n39:" in run.stdout
    else:
        assert "Traceback" not in run.stderr and run.returncode in (0, 1), run.stderr
