"""Entities: one node or class file (or an entity given through the API), ready to merge."""

from __future__ import annotations

from reclass_ng.records import Record
from reclass_ng.values import Source

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Entity(Record):
    """A node or class (or an entity given through the API), ready to be merged."""

    __slots__ = ("name", "uri", "classes", "applications", "parameters", "exports",
                 "environment", "source")
    _fields = __slots__
    name: str
    uri: str
    classes: tuple[str, ...]
    applications: tuple[str, ...]
    parameters: Any
    exports: Any
    environment: str | None
    source: Source | None

    def __init__(self, name: str, uri: str, classes: Sequence[str] = (),
                 applications: Sequence[str] = (), parameters: Any = None, exports: Any = None,
                 environment: str | None = None, source: Source | None = None) -> None:
        _set = object.__setattr__
        _set(self, "name", name)
        _set(self, "uri", uri)
        _set(self, "classes", classes)
        _set(self, "applications", applications)
        _set(self, "parameters", {} if parameters is None else parameters)
        _set(self, "exports", {} if exports is None else exports)
        _set(self, "environment", environment)
        _set(self, "source", source)

    @property
    def origin(self) -> Source:
        """Where the entity comes from: its file's source, or (given through the API) one made
        from its URI."""
        return self.source or Source(self.uri, self.name, "extra")

    @property
    def classes_origin(self) -> Source:
        """Where the entity's class list comes from: its file, or what its URI names (the class
        mappings, for the classes of a node's automatic entity)."""
        source = self.source
        if source is not None and source.uri == self.uri:
            return source
        return Source(self.uri, self.name, "extra")
