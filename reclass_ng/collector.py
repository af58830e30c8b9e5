"""The one way reclass-ng pauses Python's cycle collector (a render, a command's whole run)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


class _FrozenRender:
    """Whether the last render froze what it left alive (see cycle_collection_paused)."""

    froze = False


@contextlib.contextmanager
def cycle_collection_paused(collect: bool = True) -> Iterator[None]:
    """Python's cycle collector off while a whole inventory is rendered.

    Rendered parameters are trees, freed by reference counting; the collector's passes over
    the millions of objects a large inventory keeps alive took a third of the render. When it
    was on, it is switched back on afterwards with everything then alive frozen (`gc.freeze`):
    otherwise its next pass would go over every object the render made (0.45 s at 2,000
    nodes) and find nothing to collect. Reference counting still frees frozen objects; the
    next render unfreezes them and collects once before it starts, so cyclic garbage among
    them is kept until the next render at most. A single render pays no collection at all.
    With `collect` False, what earlier renders froze stays frozen and uncollected (a
    long-lived inventory rendering a few nodes at a time collects once per generation, not
    once per node: reclass_ng.incremental.live).
    """
    was_enabled = gc.isenabled()
    if _FrozenRender.froze and collect:
        gc.unfreeze()
        _FrozenRender.froze = False
        if was_enabled:
            gc.collect()  # cyclic garbage among what the last render froze, before refreezing
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            _FrozenRender.froze = True
            gc.enable()
