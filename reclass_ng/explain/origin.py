"""Where a rendered value was written, as the tools show it (diff, explorer)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Origin:
    """One write of a final value: the class or node file and the line of its key."""

    kind: str  # "class", "node", "automatic", "extra", ...
    name: str
    file: str | None  # relative to the inventory directory shown
    line: int | None
    via: str | None = None  # the reference text when the value written there was one

    @property
    def label(self) -> str:
        """`class web`, `node n1`, or the kind of an entity without a file (`automatic`)."""
        return f"{self.kind} {self.name}" if self.kind in ("class", "node") else self.kind

    @property
    def place(self) -> str:
        """`classes/web.yml:5`, the file alone when the line is unknown, or `(no file)`."""
        if self.file is None:
            return "(no file)"
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def text(self) -> str:
        """`class web, classes/web.yml:5, via ${...}` as the diff's text output shows it."""
        label = self.label
        if self.file:
            label += f", {self.file}" + (f":{self.line}" if self.line else "")
        return label + (f", via {self.via}" if self.via else "")

    def as_dict(self) -> dict[str, Any]:
        """The origin as plain data (the diff's JSON output)."""
        return attrs.asdict(self)
