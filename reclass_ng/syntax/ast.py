"""The small AST of a string value: literal text, references (which may nest) and queries."""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class Text:
    """Literal text, escapes already applied."""

    value: str


@attrs.frozen(slots=True)
class Ref:
    """`${...}`: the path is the concatenation of its items, nested references rendered first."""

    items: tuple[Text | Ref, ...]

    @property
    def is_simple(self) -> bool:
        return all(isinstance(item, Text) for item in self.items)

    @property
    def simple_path(self) -> str:
        return "".join(item.value for item in self.items)  # type: ignore[union-attr]

    def source_text(self) -> str:
        return "${" + "".join(
            item.value if isinstance(item, Text) else item.source_text() for item in self.items
        ) + "}"


@attrs.frozen(slots=True)
class Query:
    """`$[ ... ]`: the raw query text, parsed further by the query grammar when evaluated."""

    text: str

    def source_text(self) -> str:
        return "$[" + self.text + "]"


@attrs.frozen(slots=True)
class Template:
    """A parsed string: a sequence of text, references and queries."""

    items: tuple[Text | Ref | Query, ...]

    @property
    def is_literal(self) -> bool:
        return all(isinstance(item, Text) for item in self.items)

    @property
    def literal(self) -> str:
        return "".join(item.value for item in self.items)  # type: ignore[union-attr]

    @property
    def single(self) -> Ref | Query | None:
        """The reference or query when it is the whole value (its result keeps its type)."""
        if len(self.items) == 1 and not isinstance(self.items[0], Text):
            return self.items[0]
        return None

    @property
    def has_query(self) -> bool:
        return any(isinstance(item, Query) for item in self.items)

    def references(self) -> list[Ref]:
        return [item for item in self.items if isinstance(item, Ref)]
