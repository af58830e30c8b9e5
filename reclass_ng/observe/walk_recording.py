"""What a shared class walk tells an observer, recorded once and told again to each node.

A shared class walk (classes.SharedClassWalks) merges the first classes of several nodes once.
An observer of writes (provenance) must be told every write of its node, so it used to make
every node merge its classes itself. `WalkRecording` is told the walk's merge once, as the
node's own walk would tell it (the classes read, each entity's writes, the entities merged),
and `replay` tells it again to a node's observer, in order. The only objects of the walk that
differ from the node's own are the layers of the stacks the walk made: a node starts from a
frozen copy of the walk (values.frozen_copy), whose stacks hold copies of those layers, and
the render that follows folds the copies. `freeze` pairs each layer the recording was told
with its copy, and `replay` tells the copies; a walk whose layers cannot all be paired (a stack
below another stack) is not replayed, and its nodes merge their classes themselves
(tests/test_walk_recording.py compares every node's record with its unshared one).
"""

from __future__ import annotations

from reclass_ng.observe.seam import RenderObserver, WriteObserver
from reclass_ng.values import Stack

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from reclass_ng.entity import Entity
    from reclass_ng.values import Layer, Source

SECTIONS = ("parameters", "exports")
# The kinds of event, first in each recorded tuple
CLASS_READ, ENTITY_MERGED, ENTITY_WRITTEN, STACKED, IGNORED, APPENDED = range(6)


class _SectionLog(WriteObserver):
    """The writes of one section during the walk's merge, appended to the recording's events."""

    __slots__ = ("recording", "section")

    def __init__(self, recording: WalkRecording, section: str) -> None:
        self.recording = recording
        self.section = section

    def entity_written(self, source: Source, value: Any) -> None:
        """See the base class."""
        self.recording.events.append((ENTITY_WRITTEN, self.section, source, value))

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        """See the base class."""
        self.recording.events.append((STACKED, self.section, path, tuple(new_layers), wrapped))
        self.recording.stack_paths.append((self.section, path))

    def ignored(self, path: tuple, constant: Layer) -> None:
        """See the base class."""
        self.recording.events.append((IGNORED, self.section, path, constant))
        self.recording.stack_paths.append((self.section, path))

    def appended(self, path: tuple) -> None:
        """See the base class."""
        self.recording.events.append((APPENDED, self.section, path))

    # A merge folds nothing and renders nothing: told any of these, the walk is not replayed.
    def folded(self, path: tuple, layers: Sequence[Layer], index: int, outcome: str,
               value: Any) -> None:
        """See the base class."""
        self.recording.replayable = False

    def fold_merged(self) -> None:
        """See the base class."""
        self.recording.replayable = False

    def kept_key_read(self, path: tuple, written: str, read: Layer, layer: Layer) -> None:
        """See the base class."""
        self.recording.replayable = False

    def rendered(self, path: tuple, interpolation: Any, value: Any) -> None:
        """See the base class."""
        self.recording.replayable = False

    def reference(self, path: tuple, target: str) -> None:
        """See the base class."""
        self.recording.replayable = False


class WalkRecording(RenderObserver):
    """The observer of a shared walk's merge, and the replay of what it was told."""

    def __init__(self, walker: Entity) -> None:
        self.walker = walker  # the entity whose class list the walk merged (a node's)
        self.events: list[tuple] = []
        self.stack_paths: list[tuple[str, tuple]] = []  # (section, path) of each stack told
        self.calls: list[tuple[int, tuple]] = []  # what replay calls (made by freeze)
        self.replayable = True
        self._sections = {section: _SectionLog(self, section) for section in SECTIONS}

    def writes(self, section: str) -> WriteObserver | None:
        """See the base class."""
        return self._sections[section]

    def class_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        self.events.append((CLASS_READ, name, path))

    def entity_merged(self, entity: Entity, listed_by: Entity | None) -> None:
        """See the base class."""
        self.events.append((ENTITY_MERGED, entity, listed_by))

    def freeze(self, merged: Mapping[str, Any], frozen: Mapping[str, Any]) -> None:
        """Pair the layers told with their copies: `merged` and `frozen` hold the walk's
        sections ("parameters", "exports") as merged and as frozen. Then the events are
        made into the calls `replay` makes, the copies in place of the layers."""
        copies = self._copies(merged, frozen) if self.replayable else None
        calls = self._calls(copies) if copies is not None else None
        if calls is None:
            self.replayable = False
            return
        self.calls = calls
        self.events = []  # told as calls from now on
        self.stack_paths = []

    def _copies(self, merged: Mapping[str, Any], frozen: Mapping[str, Any]
                ) -> dict[int, Layer] | None:
        """id(layer) -> its copy, for every layer of the stacks told (None: one of them
        cannot be found in the frozen walk)."""
        copies: dict[int, Layer] = {}
        for section, path in dict.fromkeys(self.stack_paths):
            original, copy = merged[section], frozen[section]
            for key in path:
                # down mappings only: a stack inside another stack's layer is copied with it
                if not isinstance(original, dict) or not isinstance(copy, dict) \
                        or key not in original or key not in copy:
                    return None
                original, copy = original[key], copy[key]
            if type(original) is not Stack or type(copy) is not Stack \
                    or len(original.layers) != len(copy.layers):
                return None
            for layer, copied in zip(original.layers, copy.layers, strict=True):
                copies[id(layer)] = copied
        return copies

    def _calls(self, copies: dict[int, Layer]) -> list[tuple[int, tuple]] | None:
        """The events as replay's calls (see _CALL_SECTION), with the copies of the layers
        told; None when a layer told has no copy."""
        calls: list[tuple[int, tuple]] = []
        try:
            for event in self.events:
                kind = event[0]
                if kind is CLASS_READ:
                    calls.append((_CALL_CLASS_READ, event[1:]))
                elif kind is ENTITY_MERGED:
                    calls.append((_CALL_MERGED_BY_WALKER, event[1:2]) if event[2] is self.walker
                                 else (_CALL_ENTITY_MERGED, event[1:]))
                else:
                    base = _CALL_SECTION + len(_SECTION_CALLS) * SECTIONS.index(event[1])
                    if kind is ENTITY_WRITTEN:
                        calls.append((base, event[2:]))
                    elif kind is STACKED:
                        wrapped = event[4]
                        calls.append((base + 1, (
                            event[2], [copies[id(layer)] for layer in event[3]],
                            None if wrapped is None else copies[id(wrapped)])))
                    elif kind is IGNORED:
                        calls.append((base + 2, (event[2], copies[id(event[3])])))
                    else:
                        calls.append((base + 3, event[2:]))
        except KeyError:
            return None  # a layer told that the walk's stacks do not hold
        return calls

    def replay(self, observer: RenderObserver, walker: Entity) -> None:
        """Tell `observer` what the walk's merge told this recording (once frozen), for a
        node whose own entity is `walker` (it lists the walk's classes)."""
        def merged_by_walker(entity: Entity) -> None:
            observer.entity_merged(entity, walker)

        handlers: list[Any] = [observer.class_read, observer.entity_merged, merged_by_walker]
        for section in SECTIONS:
            record = observer.writes(section)
            handlers.extend(_ignore if record is None else getattr(record, name)
                            for name in _SECTION_CALLS)
        for index, args in self.calls:
            handlers[index](*args)


# replay's calls, by index: the observer's, then each section's (in SECTIONS order)
_CALL_CLASS_READ, _CALL_ENTITY_MERGED, _CALL_MERGED_BY_WALKER, _CALL_SECTION = range(4)
_SECTION_CALLS = ("entity_written", "stacked", "ignored", "appended")


def _ignore(*_args: Any) -> None:
    """A section's call when the observer does not watch that section."""
