"""Warnings of a parallel render: recorded in the workers, replayed in the serial order.

A worker's inventory warns into the events of the node being rendered instead of printing
(see reclass_ng.parallel). Queried nodes (`$[ ]`) are merged once per serial run and each of
their export paths is rendered once, at the first node whose query needs it; workers remember
the warnings of those renders and repeat them with every use, and the replay shows them at the
first use in node order, once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from reclass_ng.errors import InventoryQueryNodeError, ReclassError
from reclass_ng.queries import ExportView, QueryEngine

Warn = Callable[[str], None]

# A node's events are warning texts (str), ("view", name, warnings) when the node queried
# another node (the warnings of merging that one), and ("lookup", name, keys, warnings) when a
# query read an export path of another node (the warnings of rendering that path).


class Recorder(threading.local):
    """Where this thread's warnings go: the events of the node being rendered, or stderr."""

    events: list[Any] | None = None


_RECORDER = Recorder()


def recording_warn(message: str) -> None:
    """The warn callback of worker inventories: into the current node's events."""
    events = _RECORDER.events
    if events is None:
        print(message, file=sys.stderr)
    else:
        events.append(message)


@contextmanager
def recording(events: list[Any]) -> Iterator[list[Any]]:
    """Warnings of this thread go to `events` inside the block."""
    saved = _RECORDER.events
    _RECORDER.events = events
    try:
        yield events
    finally:
        _RECORDER.events = saved


class RecordingView(ExportView):
    """An ExportView that remembers the warnings the first render of each export path gave.

    Another node of the same worker may have rendered a path first, so every lookup repeats
    those warnings in its node's events; the replay shows them at the first node in node order.
    """

    def __init__(self, renderer: Any, name: str) -> None:
        super().__init__(renderer, name)
        self._lookup_warnings: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._record_lock = threading.Lock()

    def export(self, keys: tuple[str, ...]) -> tuple[bool, Any]:
        """ExportView.export, recording the warnings of the first render of each path."""
        events = _RECORDER.events
        if events is None:
            return super().export(keys)
        with self._record_lock:
            warnings = self._lookup_warnings.get(keys)
            if warnings is not None:
                if warnings:
                    events.append(("lookup", self.name, keys, warnings))
                return super().export(keys)
            seen: list[str] = []
            try:
                with recording(seen):
                    return super().export(keys)
            finally:  # an export that fails may have warned first
                self._lookup_warnings[keys] = tuple(seen)
                if seen:
                    events.append(("lookup", self.name, keys, tuple(seen)))


class RecordingQueryEngine(QueryEngine):
    """QueryEngine whose views remember the warnings of their merge, replayed on each use."""

    def __init__(self, renderer: Any) -> None:
        super().__init__(renderer)
        self._view_warnings: dict[str, tuple[str, ...]] = {}

    def _view(self, name: str) -> ExportView:
        view = self._views.get(name)
        if view is None:
            with recording([]) as created:
                try:
                    view = RecordingView(self.renderer, name)
                except ReclassError as err:
                    view = err
            with self._lock:
                view = self._views.setdefault(name, view)
                self._view_warnings.setdefault(name, tuple(created))
        warnings = self._view_warnings[name]
        if warnings and _RECORDER.events is not None:
            _RECORDER.events.append(("view", name, warnings))
        if isinstance(view, ReclassError):
            raise InventoryQueryNodeError(view)
        return view


class WarningReplay:
    """Gives recorded warnings to `warn` in the order the serial path prints them."""

    def __init__(self, warn: Warn) -> None:
        self.warn = warn
        self.views: set[str] = set()
        self.lookups: dict[str, dict[tuple[str, ...], tuple[str, ...]]] = {}

    def events(self, events: list[Any]) -> None:
        """Give the warnings of one node's events, each shared one only the first time."""
        for event in events:
            if isinstance(event, str):
                self.warn(event)
            elif event[0] == "view":
                if event[1] not in self.views:
                    self.views.add(event[1])
                    for message in event[2]:
                        self.warn(message)
            else:
                self._lookup(*event[1:])

    def _lookup(self, view: str, keys: tuple[str, ...], messages: tuple[str, ...]) -> None:
        # The serial path renders each export path of a queried node once, at the first query
        # asking for it. A worker that rendered a wider or narrower path first (exports:a before
        # exports:a:b) recorded some of those warnings there: they are shown once, not again.
        done = self.lookups.setdefault(view, {})
        if keys in done:
            return
        shown: list[str] = []
        for other, other_messages in done.items():
            if other[:len(keys)] == keys or keys[:len(other)] == other:
                shown.extend(other_messages)
        done[keys] = messages
        for message in messages:
            if message in shown:
                shown.remove(message)
            else:
                self.warn(message)
