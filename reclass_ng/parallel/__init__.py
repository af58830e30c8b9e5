"""Rendering a whole inventory on any `concurrent.futures.Executor` (process pool, Dask, ...).

`chunks` sends chunks of node names to the workers and puts their results back in node order,
`warning_replay` gives the workers' warnings in the serial order, `fragments` assembles the
printed inventory from per-node texts.

The names below are imported from `chunks` on first use: importing `fragments` alone (what a
cached run needs) does not import the process pool's modules (~40 ms).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.parallel.chunks import (
        forked_process_pool,
        preload,
        render_inventory,
        render_inventory_bytes,
        render_inventory_pieces,
        render_inventory_spooled,
        render_inventory_text,
    )

__all__ = ["forked_process_pool", "preload", "render_inventory", "render_inventory_bytes",
           "render_inventory_pieces", "render_inventory_spooled", "render_inventory_text"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from reclass_ng.parallel import chunks

        return getattr(chunks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
