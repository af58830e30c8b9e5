"""The one way reclass-ng pauses Python's cycle collector (a render, a command's whole run)."""

from __future__ import annotations

import gc

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from types import TracebackType


class _FrozenRender:
    """Whether the last render froze what it left alive, and how much was alive after the last
    render that collected (see cycle_collection_paused)."""

    froze = False
    survivors = 0


class cycle_collection_paused:  # lower case: used like the function it was, `with ...():`
    """Python's cycle collector off while a whole inventory is rendered.

    Rendered parameters are trees, freed by reference counting; the collector's passes over
    the millions of objects a large inventory keeps alive took a third of the render. When it
    was on, it is switched back on afterwards with everything then alive frozen (`gc.freeze`):
    otherwise its next pass would go over every object the render made (0.45 s at 2,000
    nodes) and find nothing to collect. Reference counting still frees frozen objects; the
    next render unfreezes them, and collects before it starts once a quarter more objects are
    frozen than were alive after the last collection: CPython's own rule for its oldest
    generation. A full pass costs time in proportion to everything alive, and in a long-lived
    process (a service, an editor, a test run) that is far more than one render makes:
    collecting before every render cost a render of a few nodes 0.3 s and more. Cyclic garbage
    frozen by renders is so bounded to a quarter of what is alive. A single render pays no
    collection at all.
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
        if _FrozenRender.froze and self.collect:
            frozen = gc.get_freeze_count()
            gc.unfreeze()
            _FrozenRender.froze = False
            survivors = _FrozenRender.survivors
            if was_enabled and frozen - survivors > survivors // 4:
                gc.collect()  # cyclic garbage among what renders froze, before refreezing
                _FrozenRender.survivors = 0  # counted again when this render freezes
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self.was_enabled:
            if self.freeze:
                gc.freeze()
                _FrozenRender.froze = True
                if not _FrozenRender.survivors:
                    _FrozenRender.survivors = gc.get_freeze_count()
            gc.enable()
