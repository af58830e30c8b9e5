"""Watching a render: the observer seam and the records kept through it.

- `seam`: what the engine tells whoever watches one node's render (RenderObserver,
  WriteObserver); the only extension point of the engine;
- `provenance`: who wrote each value of a node and what it read (NodeProvenance);
- `provenance_recorder`: the observer that keeps the facts a NodeProvenance answers from;
- `inputs`: the files and nodes a render read (NodeInputs), for incremental renders;
- `walk_recording`: a shared class walk's merge, recorded once and told to each of its nodes.

Only the seam is imported here (every render imports it); the records are imported where they
are used. `from reclass_ng.observe import RenderObserver` keeps working as it did when this
was one module.
"""

from reclass_ng.observe.seam import ExportsPrefix, RenderObserver, WriteObserver

__all__ = ["ExportsPrefix", "RenderObserver", "WriteObserver"]
