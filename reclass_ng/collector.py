"""The one way reclass-ng pauses Python's cycle collector (a render, a command's whole run)."""

from __future__ import annotations

import gc

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from types import TracebackType


class _FrozenRender:
    """Whether a render froze what it left alive, how many objects were frozen after the last
    collection (`survivors`), and how many renders have frozen since (`grown`): see
    cycle_collection_paused."""

    froze = False
    survivors = 0
    grown = 0


class cycle_collection_paused:  # lower case: used like the function it was, `with ...():`
    """Python's cycle collector off while a whole inventory is rendered.

    Rendered parameters are trees, freed by reference counting; the collector's passes over
    the millions of objects a large inventory keeps alive took a third of the render. When it
    was on, it is switched back on afterwards with everything then alive frozen (`gc.freeze`):
    otherwise its next pass would go over every object the render made (0.45 s at 2,000
    nodes) and find nothing to collect. Reference counting still frees frozen objects. A later
    render unfreezes them and collects before it starts once renders have frozen a quarter
    more objects than were alive after the last collection: CPython's own rule for its oldest
    generation. A full pass costs time in proportion to everything alive, and in a long-lived
    process (a service, an editor, a test run) that is far more than one render makes:
    collecting before every render cost a render of a few nodes 0.3 s and more. Cyclic garbage
    frozen by renders is so bounded to a quarter of what is alive. A single render pays no
    collection at all.
    What a render freezes is counted from what is not frozen yet, never from what is:
    `gc.get_freeze_count()` walks every frozen object (CPython 3.11 to 3.13), and asked before
    every render it cost a render of a few nodes 56 ms in a process holding 3 million objects.
    It is asked once after each collection, which costs far more.
    With `collect` False, what earlier renders froze stays frozen and uncollected (a
    long-lived inventory rendering a few nodes at a time collects once per generation, not
    once per node: reclass_ng.incremental.live). With `freeze` False, nothing is frozen
    after: for a render of a few nodes in a long-lived process that replaces what it
    renders (reclass_ng.lsp), whose replaced states are cyclic garbage (a node's resolvers
    refer to themselves) that frozen would stay until the next whole render; everything
    the render made is then in the youngest generation, whose next pass collects it.
    """

    # A class, not contextlib.contextmanager: contextlib is 2% of a `--nodeinfo` start.
    __slots__ = ("collect", "freeze", "was_enabled")

    def __init__(self, collect: bool = True, freeze: bool = True) -> None:
        self.collect = collect
        self.freeze = freeze
        self.was_enabled = False

    def __enter__(self) -> None:
        self.was_enabled = was_enabled = gc.isenabled()
        if was_enabled and self.collect and _FrozenRender.froze \
                and _FrozenRender.grown > _FrozenRender.survivors // 4:
            gc.unfreeze()
            gc.collect()  # cyclic garbage among what renders froze, before refreezing
            _FrozenRender.froze = False
            _FrozenRender.survivors = _FrozenRender.grown = 0  # counted when this render freezes
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.was_enabled:
            if self.freeze:
                if _FrozenRender.survivors:
                    _FrozenRender.grown += _unfrozen_objects()
                gc.freeze()
                _FrozenRender.froze = True
                if not _FrozenRender.survivors:
                    _FrozenRender.survivors = gc.get_freeze_count()
            gc.enable()


def cycle_collection_off_until_exit() -> None:
    """The cycle collector off for the rest of a console script that leaves with `os._exit`
    once its output is written (cli.failures.exit_without_teardown), where nothing is freed
    and no collection can pay. A cycle_collection_paused around the whole command switched
    it back on at the end, after freezing what was alive, and counting what it froze walks
    every object (5 ms of the last serial step of a 2,000-node `--inventory`, after the
    output was written). Renders inside it find the collector off and leave it so."""
    gc.disable()


def _unfrozen_objects() -> int:
    """About how many objects the collector tracks outside the frozen ones: the youngest
    generation's net count (the render's own, the collector being off: allocations less
    deallocations, so cyclic garbage, never deallocated, counts) and the two older
    generations, which hold only what was made between renders (everything else is frozen)."""
    return gc.get_count()[0] + len(gc.get_objects(1)) + len(gc.get_objects(2))
