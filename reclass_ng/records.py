"""Small immutable value objects for the rendering path.

attrs generates and compiles five or six methods per class when a module is imported; for the
dozen value classes every `reclass --nodeinfo` imports, that was a third of the start-up time.
These classes write their `__init__` by hand and share equality, hashing and repr from here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any


class Record:
    """Fields are the class's `_fields`; equal when of the same type with equal fields."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined,unused-ignore]

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __getstate__(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _all_slots(type(self)))

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(_all_slots(type(self)), state, strict=True):
            object.__setattr__(self, name, value)


def _all_slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        names.extend(klass.__dict__.get("__slots__", ()))
    return tuple(names)
