"""A one-line progress bar on stderr for long `--inventory` renders.

Shown only where a person watches: stderr is a terminal, the render is large enough to take a
while, and `--quiet` was not given. It redraws at most a few times a second, is erased when the
render ends (so the terminal shows only the output and messages), and never touches stdout.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

# Below this many nodes a render is over before a bar would be read.
MIN_NODES = 200
# Seconds between redraws: enough to look alive, cheap next to rendering.
REDRAW_INTERVAL = 0.1


class ProgressBar:
    """`label [#####.....]  45%` on one terminal line, redrawn in place with a carriage return."""

    def __init__(self, stream: TextIO, total: int, label: str,
                 interval: float = REDRAW_INTERVAL, clock=time.monotonic) -> None:
        self.stream = stream
        self.total = max(1, total)
        self.label = label
        self.interval = interval
        self.clock = clock
        self.done = 0
        self._last_draw: float | None = None
        self._drawn_width = 0

    def update(self, done: int, total: int | None = None) -> None:
        """Record progress; redraw when the last redraw is old enough or the work is complete."""
        if total is not None:
            self.total = max(1, total)
        self.done = min(done, self.total)
        now = self.clock()
        if self.done < self.total and self._last_draw is not None \
                and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        self._draw()

    def _draw(self) -> None:
        width = _terminal_width(self.stream)
        percent = f"{100 * self.done // self.total:3d}%"
        # label, space, [bar], space, percent; the bar takes what is left, within reason.
        room = width - len(self.label) - len(percent) - 5
        bar_width = max(10, min(40, room))
        filled = bar_width * self.done // self.total
        line = f"{self.label} [{'#' * filled}{'.' * (bar_width - filled)}] {percent}"
        line = line[: max(1, width - 1)]  # never wrap: a wrapped line cannot be redrawn
        self.stream.write("\r" + line + " " * max(0, self._drawn_width - len(line)))
        self.stream.flush()
        self._drawn_width = len(line)

    def clear(self) -> None:
        """Erase the bar (before a message is printed, or at the end)."""
        if self._drawn_width:
            self.stream.write("\r" + " " * self._drawn_width + "\r")
            self.stream.flush()
            self._drawn_width = 0
            self._last_draw = None

    def print_above(self, message: str) -> None:
        """Print a line (a warning) to the stream without mixing it into the bar."""
        self.clear()
        self.stream.write(message + "\n")
        self.stream.flush()


def _terminal_width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        return 80


def wants_progress(stream: TextIO, node_count: int, quiet: bool) -> bool:
    """A bar helps: a person watches `stream` (a terminal) and the render is not tiny."""
    if quiet or node_count <= MIN_NODES:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class StepsProgress:
    """The bar of a command that renders every node of one or more inventories (`lint`,
    `diff`): a `progress(done, total)` callback per inventory (`step`), adding the steps up;
    the bar is made when the first step starts, if wants_progress says so."""

    def __init__(self, stream: TextIO, label: str, steps: int = 1, quiet: bool = False) -> None:
        self.stream = stream
        self.label = label  # with {count}: the nodes of the first step
        self.steps = steps
        self.quiet = quiet
        self.bar: ProgressBar | None = None
        self._decided = False
        self._finished = 0  # nodes of the steps before the current one
        self._step = 0  # steps finished

    def step(self, done: int, total: int) -> None:
        """Progress within the current inventory (`done` of its `total` nodes)."""
        if not self._decided:
            self._decided = True
            if wants_progress(self.stream, total * self.steps, self.quiet):
                self.bar = ProgressBar(self.stream, total * self.steps,
                                       self.label.format(count=total))
        if self.bar is None:
            return
        # The steps still to come are guessed as large as this one.
        expected = self._finished + total * (self.steps - self._step)
        self.bar.update(self._finished + done, expected)
        if done == total:
            self._finished += total
            self._step += 1

    def clear(self) -> None:
        """Erase the bar, if one was drawn."""
        if self.bar is not None:
            self.bar.clear()

    # A context manager of its own, not contextlib's: `reclass --inventory` imports this
    # module, and contextlib costs its start an import (tests/test_startup_imports.py).
    def __enter__(self) -> Callable[[int, int], None]:
        return self.step

    def __exit__(self, *exc: object) -> None:
        self.clear()


def steps_progress(stream: TextIO, label: str, steps: int = 1, quiet: bool = False
                   ) -> StepsProgress:
    """A StepsProgress, whose `with` gives its `step` callback and erases the bar after."""
    return StepsProgress(stream, label, steps, quiet)
