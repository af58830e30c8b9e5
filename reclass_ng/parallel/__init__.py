"""Rendering a whole inventory on any `concurrent.futures.Executor` (process pool, Dask, ...).

`chunks` sends chunks of node names to the workers and puts their results back in node order,
`warning_replay` gives the workers' warnings in the serial order, `fragments` assembles the
printed inventory from per-node texts.
"""

from reclass_ng.parallel.chunks import (
    forked_process_pool,
    preload,
    render_inventory,
    render_inventory_pieces,
    render_inventory_text,
)

__all__ = ["forked_process_pool", "preload", "render_inventory", "render_inventory_pieces",
           "render_inventory_text"]
