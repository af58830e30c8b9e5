"""Indented JSON of whole inventories as bytes, through orjson, at the depth each part sits.

`output.pretty_json` (json.dumps(indent=2), character for character) is the slow reference;
this writes the same bytes. orjson cannot start at an indentation, so a part at depth d is
dumped inside d one-key wrapper objects and the wrappers' fixed text is cut off: no decode,
re-indent or encode of the text. orjson's text differs from json's in four places only:

* non-ASCII characters and DEL, which json escapes: escaped afterwards, when `bytes.isascii`
  or a search for DEL finds one;
* floats below 1e-4, NaN and infinities: each storage's YAML loader records whether it
  built any (`Inventory.floats_json_exact`); a caller that knows there are none says so with
  `floats_exact=True`, otherwise the text is searched for them as before;
* what orjson refuses (keys that are not strings, integers beyond 64 bits, nesting deeper
  than 255): those parts go through the exact writer.
"""

from __future__ import annotations

import re

import orjson

from reclass_ng.output.exact import (
    NON_ASCII_PATTERN,
    _escaped,
    _has_non_finite_float,
    _has_small_float,
    _json_default,
    json_key,
    pretty_json,
)

TYPE_CHECKING = False  # `typing` costs a JSON --inventory 10 M instructions: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATETIME
_NON_ASCII = re.compile(NON_ASCII_PATTERN)
# Nodes dumped per orjson call. orjson grows its output by reallocating it (a copy of the
# text so far, each time): one node a call copies least (16 a call: 37 M instructions more on
# a 500-node mcp inventory, doc/performance.rst), and the text is a node's at a time.
NODES_PER_PIECE = 1

# {"nodes": {...}} dumped: the members of the inner object sit between these two.
_NODES_HEAD = b'{\n  "nodes": {\n    '
_NODES_TAIL = b"\n  }\n}"
# {key: value} dumped: the member sits between these two.
_MEMBER_HEAD = b"{\n  "
_MEMBER_TAIL = b"\n}"


def inventory_json_pieces(data: dict[str, Any],
                          floats_exact: bool = False) -> Iterator[bytes | memoryview]:
    """The bytes of `pretty_json(data) + "\\n"` for an inventory document, in pieces.

    `floats_exact`: the caller knows that no float in `data` is below 1e-4, NaN or infinite.
    """
    yield b"{"
    first = True
    for key, value in data.items():
        yield b"\n  " if first else b",\n  "
        first = False
        if key == "nodes" and type(value) is dict and value:
            yield b'"nodes": {\n    '
            names = list(value)
            for start in range(0, len(names), NODES_PER_PIECE):
                if start:
                    yield b",\n    "
                piece = {name: value[name] for name in names[start:start + NODES_PER_PIECE]}
                yield _members(piece, 2, floats_exact)
            yield b"\n  }"
        else:
            yield _members({key: value}, 1, floats_exact)
    yield b"\n}\n" if not first else b"}\n"


def _members(mapping: dict[Any, Any], depth: int, floats_exact: bool) -> bytes | memoryview:
    """The members of `mapping` as an object at `depth` holds them (without its braces)."""
    head, tail = (_NODES_HEAD, _NODES_TAIL) if depth == 2 else (_MEMBER_HEAD, _MEMBER_TAIL)
    try:
        data = orjson.dumps({"nodes": mapping} if depth == 2 else mapping,
                            default=_json_default, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError included
        return _exact_members(mapping, depth)
    if not floats_exact:
        if (b"e-" in data or b"0.0000" in data) and _has_small_float(data):
            return _exact_members(mapping, depth)
        if b"null" in data and _has_non_finite_float(mapping):
            return _exact_members(mapping, depth)
    if data.isascii() and b"\x7f" not in data:
        return memoryview(data)[len(head):len(data) - len(tail)]  # no copy of the text
    text = data[len(head):len(data) - len(tail)].decode("utf-8")
    return _NON_ASCII.sub(_escaped, text).encode("ascii")


def _exact_members(mapping: dict[Any, Any], depth: int) -> bytes:
    indent = "  " * depth
    return (",\n" + indent).join(json_key(key) + ": " + pretty_json(value, indent)
                                 for key, value in mapping.items()).encode("ascii")


def node_member(name: str, info: Any, floats_exact: bool = False) -> bytes | memoryview:
    """The bytes of `"name": info` as the `nodes` object of an indented inventory holds them
    (a node's fragment of a parallel or cached render, reclass_ng.output.fragments)."""
    return _members({name: info}, 2, floats_exact)
