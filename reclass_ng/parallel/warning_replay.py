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
from collections.abc import Callable

from reclass_ng.queries import ExportView, ViewWatcher

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

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


class recording:  # lower case: used like the function it was, `with recording(...) as ...`
    """Warnings of this thread go to `events` inside the block.

    A class, not contextlib.contextmanager: a worker enters one for each step of each node
    (twice a node), and the generator's context manager cost three times as much."""

    __slots__ = ("events", "saved")

    def __init__(self, events: list[Any]) -> None:
        self.events = events
        self.saved: list[Any] | None = None

    def __enter__(self) -> list[Any]:
        self.saved = _RECORDER.events
        _RECORDER.events = self.events
        return self.events

    def __exit__(self, *exc_info: object) -> None:
        _RECORDER.events = self.saved


class WorkerWarnings(ViewWatcher):
    """Remembers the warnings of merging each queried node and of the first render of each
    of its export paths, and repeats them in the events of every node using them.

    Another node of the same worker may have caused that work first; the replay shows the
    warnings at the first node in node order, once.
    """

    def __init__(self) -> None:
        self._view_warnings: dict[str, tuple[str, ...]] = {}
        self._lookup_warnings: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def view_created(self, name: str, make: Callable[[], ExportView]) -> ExportView:
        """The view made while its warnings are recorded (also when making it fails)."""
        with recording([]) as created:
            try:
                return make()
            finally:
                with self._lock:
                    self._view_warnings.setdefault(name, tuple(created))

    def view_used(self, name: str) -> None:
        """The warnings of merging `name`, into the events of the node querying it."""
        warnings = self._view_warnings.get(name)
        if warnings and _RECORDER.events is not None:
            _RECORDER.events.append(("view", name, warnings))

    def export_read(self, view: ExportView, keys: tuple[str, ...], drop_failed: bool = False
                    ) -> tuple[bool, Any]:
        """The export path, its first render's warnings recorded and repeated."""
        events = _RECORDER.events
        if events is None:
            return view.export(keys, drop_failed)
        with self._lock:
            lock = self._locks.setdefault(view.name, threading.Lock())
        with lock:
            warnings = self._lookup_warnings.get((view.name, keys))
            if warnings is not None:
                if warnings:
                    events.append(("lookup", view.name, keys, warnings))
                return view.export(keys, drop_failed)
            seen: list[str] = []
            try:
                with recording(seen):
                    return view.export(keys, drop_failed)
            finally:  # an export that fails may have warned first
                self._lookup_warnings[(view.name, keys)] = tuple(seen)
                if seen:
                    events.append(("lookup", view.name, keys, tuple(seen)))


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
