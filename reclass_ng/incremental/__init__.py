"""Incremental rendering: render an inventory again, re-rendering only the nodes whose inputs
changed, with exactly the output of a fresh render.

- snapshot.py: what is on disk (file listing, content digests, directory signatures).
- node_results.py: one node's rendered result with the inputs it read, and whether a snapshot
  still matches those inputs; rendering a set of nodes the way a serial render does.
- live.py: `LiveRender`, the state behind `Inventory.refresh()`.
- adapter_pool.py: the bounded set of live inventories a long-lived adapter process keeps.
- disk_cache.py: the on-disk cache of `reclass --inventory --cache-dir` (cache_file.py: its
  file; cached_run.py: a run after a change).
- watch.py: `reclass-ng watch`.

See doc/incremental.rst.
"""
