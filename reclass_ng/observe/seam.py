"""The observer seam: what the engine tells whoever watches one node's render.

A render is observed by passing a `RenderObserver` to `NodeRenderer.merge()` and
`NodeRenderer.interpolate()` (and to `QueryEngine.evaluator_for()` for the nodes a query reads).
Without one, the engine makes no call at all: every hook below is behind an `is not None` test
outside the per-key loops.

Two kinds of facts reach an observer:

* what the node **read**: its node file, each class file read or tried and not found, the
  exports of other nodes its queries read (`NodeReads` collects them; incremental re-rendering
  needs exactly these to know when a node must be rendered again);
* who **wrote** each value: the entities merged in order (with the entity listing each class),
  and, through the `WriteObserver` of a section, every decision the merge and the fold of layer
  stacks made. `observe.provenance_recorder.ProvenanceRecorder` turns these into `NodeProvenance`.

An observer sees a node's render as it happens: caches (parsed files, loaded classes, query
views) are still used, and the reads they save are still reported. The resolver's fast paths
(values that need nothing rendered) are taken too: for each value one stores, the observer of
writes is told `rendered_directly`, whose default makes the calls the full render would have
made (tests/test_provenance_recorder.py compares the two on generated inventories). Class walks shared between
nodes (`SharedClassWalks`, when the nodes to come were announced) are used by every observer:
one that only wants reads (`reads_only`) is told the classes a shared walk contains; one of
writes is told the walk's merge as it was recorded once (`walk_recording.WalkRecording`), the
calls its node's own walk would have made, with the layers of the node's frozen copy.
"""

from __future__ import annotations

from reclass_ng.syntax.ast import Ref
from reclass_ng.values import Interpolation

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from reclass_ng.entity import Entity
    from reclass_ng.observe.subtree_recording import SubtreeRecording
    from reclass_ng.values import Layer, Source, Stack


def replacing_outcome(layer: Layer) -> str:
    """How a fold records a layer that replaces the value below it (a scalar over a scalar,
    anything over nothing): "override" for a `~` layer, else "replace". Merger.fold's rule
    (spec section 3.3), told in one place: the fold and the fast paths' record of a stack of
    scalars (WriteObserver.rendered_directly) both use it."""
    return "override" if layer.override else "replace"


class WriteObserver:
    """The writes of one section (parameters or exports) as the merge and the fold make them.

    Paths are key paths inside the section. `entity_written` starts the writes of one entity;
    the other calls say what happened to a value at a path: which layers a key got (a stack,
    folded when references are known), which were ignored because of a constant, which lists
    were appended to, and how the fold combined the layers.
    """

    __slots__ = ()  # a subclass may do without an instance dict (ExportsPrefix, made per entity)

    def entity_written(self, source: Source, value: Any) -> None:
        """An entity's whole section is merged next (`value` as prepared from its file)."""

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        """`new_layers` were added to the layer stack at `path`; `wrapped` is the layer made of
        the value that was there, when the stack is new."""

    def ignored(self, path: tuple, constant: Layer) -> None:
        """The value merged now at `path` is ignored: `constant` (`=`) holds the key."""

    def appended(self, path: tuple) -> None:
        """The list merged now at `path` was appended to the list there."""

    def folded(self, path: tuple, layers: Sequence[Layer], index: int, outcome: str,
               value: Any) -> None:
        """Layer `index` of the stack at `path` was folded: `outcome` is "replace" (it
        replaces what the earlier layers made), "override" (the same, by a `~` key), "merge"
        (a mapping merged into the mapping so far; merge calls for its keys follow until
        `fold_merged`) or "append" (a list appended). `value` is the layer rendered."""

    def fold_merged(self) -> None:
        """The merge of the last "merge" layer is complete."""

    def kept_key_read(self, path: tuple, written: str, read: Layer, layer: Layer) -> None:
        """The key `written` (`~b`, `=b`: a prefixed key below a prefixed key, kept as
        written) of the mapping that `layer` of a stack gave was read as the last key of
        `path`, the flagged layer `read` of its own: the fold merges that mapping with
        another (Merger.prefixes_applied). Told before the fold step's outcome."""

    def rendered(self, path: tuple, interpolation: Interpolation, value: Any) -> None:
        """A string with references at `path` was rendered to `value`."""

    def reference(self, path: tuple, target: str) -> None:
        """Rendering the value at `path` read the parameter at `target` (a reference path)."""

    def rendered_directly(self, path: tuple, value: Interpolation | Stack, new: Any,
                          targets: Mapping[str, Any]) -> None:
        """`value` at `path` needed nothing rendered and became `new` (a resolver's fast
        path: a string whose references all point at plain values rendered already, or a
        stack of scalars and such references; `targets` holds the value each of them points
        at, by reference path). By default: the calls the full render makes for it, in its order
        (`reference` for each reference, then `rendered`; for a stack, each layer's
        references and its fold, every layer replacing the one before), so an observer
        needs nothing more to take part in the fast paths."""
        if type(value) is Interpolation:
            template = value.template
            single = template.single
            for item in (single,) if single is not None else template.items:
                if type(item) is Ref:
                    self.reference(path, item.path)  # type: ignore[arg-type]
            self.rendered(path, value, new)
            return
        layers = value.layers  # type: ignore[union-attr]
        for index, layer in enumerate(layers):
            written = layer.value
            if type(written) is Interpolation:
                ref_path: str = written.template.single.path  # type: ignore[union-attr, assignment]
                self.reference(path, ref_path)
                written = targets[ref_path]
            self.folded(path, layers, index, replacing_outcome(layer), written)


    def rendered_again(self, path: tuple, told: SubtreeRecording) -> None:
        """The rendered copy of a file container that another node's render made is reused
        at `path` (the rendered-subtree memo): `told` holds what rendering it told that
        node's observer (strings rendered inside it, nothing else). By default: those calls
        again, at `path`."""
        told.replay(self, path)


class RenderObserver:
    """Told about one node's render. Subclass it and override what you need; every method
    does nothing by default."""

    # True: only node_read, class_read, export_read, query_run and queried_merge are wanted
    # (no writes, no entity order), so a shared class walk may stand for the node's own walk.
    reads_only = False

    def writes(self, section: str) -> WriteObserver | None:
        """The observer of the writes of `section` ("parameters" or "exports"), or None to
        leave the merge and fold unobserved."""
        return None

    def node_read(self, name: str, path: str | None) -> None:
        """The node's file was read (`path` None: the node has no file, e.g. an optional
        node of the API)."""

    def class_read(self, name: str, path: str | None) -> None:
        """Class `name` was read from `path`, or looked for and not found (`path` None)."""

    def entity_merged(self, entity: Entity, listed_by: Entity | None) -> None:
        """`entity` was merged (after its own classes); `listed_by` is the entity whose
        `classes` listed it (None for the node, class mappings and API entities)."""

    def export_read(self, node: str, path: tuple[str, ...] | None) -> None:
        """A query read the exports of `node` at `path` (None: only tested which nodes match)."""

    def query_run(self) -> None:
        """A query ran: it read the list of nodes (even when none of them is in its scope)."""

    def queried_merge(self, node: str) -> RenderObserver | None:
        """The observer of the merge of `node`, which a query of this node's render merges
        now to read its exports (None: leave that merge unobserved). The merge is made once
        per render generation and shared by every node that queries `node`."""
        return None


class ExportsPrefix(WriteObserver):
    """A WriteObserver of exports for the merge, whose paths start with "exports"."""

    __slots__ = ("inner",)

    def __init__(self, inner: WriteObserver) -> None:
        self.inner = inner

    def entity_written(self, source: Source, value: Any) -> None:
        """See the base class."""
        self.inner.entity_written(source, value)

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        """See the base class."""
        self.inner.stacked(path[1:], new_layers, wrapped)

    def ignored(self, path: tuple, constant: Layer) -> None:
        """See the base class."""
        self.inner.ignored(path[1:], constant)

    def appended(self, path: tuple) -> None:
        """See the base class."""
        self.inner.appended(path[1:])
