"""The small AST of a string value: literal text, references (which may nest) and queries."""

from __future__ import annotations

from reclass_ng.records import Record

_set = object.__setattr__


class Text(Record):
    """Literal text, escapes already applied."""

    __slots__ = ("value",)
    _fields = ("value",)
    value: str

    def __init__(self, value: str) -> None:
        _set(self, "value", value)


class Ref(Record):
    """`${...}`: the path is the concatenation of its items, nested references rendered first."""

    __slots__ = ("items", "path")
    _fields = ("items",)
    items: tuple[Text | Ref, ...]
    # The path when no reference is nested inside, else None: computed once, read per lookup.
    path: str | None

    def __init__(self, items: tuple[Text | Ref, ...]) -> None:
        _set(self, "items", items)
        # Most references are one text (`${a:b}`: every one the plain parse makes), its value
        # the path at once: the two generators below cost more than the rest of a parse.
        if len(items) == 1 and type(items[0]) is Text:
            path: str | None = items[0].value
        elif all(type(item) is Text for item in items):
            path = "".join(item.value for item in items)  # type: ignore[union-attr]
        else:
            path = None
        _set(self, "path", path)

    @property
    def is_simple(self) -> bool:
        return self.path is not None

    @property
    def simple_path(self) -> str:
        return "".join(item.value for item in self.items)  # type: ignore[union-attr]

    def source_text(self) -> str:
        return "${" + "".join(
            item.value if isinstance(item, Text) else item.source_text() for item in self.items
        ) + "}"


class Query(Record):
    """`$[ ... ]`: the raw query text, parsed further by the query grammar when evaluated."""

    __slots__ = ("text",)
    _fields = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        _set(self, "text", text)

    def source_text(self) -> str:
        return "$[" + self.text + "]"


class Template(Record):
    """A parsed string: a sequence of text, references and queries."""

    __slots__ = ("items", "single", "has_query")
    _fields = ("items",)
    items: tuple[Text | Ref | Query, ...]
    # Read once per rendered value: computed when the template is made.
    single: Ref | Query | None  # the reference or query when it is the whole value (typed)
    has_query: bool

    def __init__(self, items: tuple[Text | Ref | Query, ...]) -> None:
        _set(self, "items", items)
        single = items[0] if len(items) == 1 and type(items[0]) is not Text else None
        _set(self, "single", single)
        has_query = False
        for item in items:  # a loop, not any() over a generator: templates have few items
            if type(item) is Query:
                has_query = True
                break
        _set(self, "has_query", has_query)

    @property
    def is_literal(self) -> bool:
        for item in self.items:  # see has_query
            if not isinstance(item, Text):
                return False
        return True

    @property
    def literal(self) -> str:
        return "".join(item.value for item in self.items)  # type: ignore[union-attr]

    def references(self) -> list[Ref]:
        return [item for item in self.items if isinstance(item, Ref)]
