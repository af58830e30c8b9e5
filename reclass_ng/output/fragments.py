"""The text of a dumped inventory assembled from per-node fragments dumped by the workers.

In block YAML and in JSON a node's text does not depend on what surrounds it, only on its
depth: a worker dumps {"nodes": {name: info}} with the usual dump() and keeps the part
between the known frame, which is exactly what the whole document holds for that node.
(Flow-style YAML wraps lines by column across nodes, so it is dumped whole.)
"""

from __future__ import annotations

from reclass_ng.render import timestamp
from reclass_ng.settings import Speed

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

# (format, pretty): (frame before the node, frame after it, separator between nodes,
#                    "nodes" of an empty inventory, the same with the nodes in: before, after)
FRAGMENT_FORMS = {
    ("json", True): ('{\n  "nodes": {\n    ', '\n  }\n}\n', ',\n    ',
                     '"nodes": {}', '"nodes": {\n    ', '\n  }'),
    ("json", False): ('{"nodes":{', '}}\n', ',', '"nodes":{}', '"nodes":{', '}'),
    ("yaml", True): ('nodes:\n', '\n', '', 'nodes: {}\n', 'nodes:\n', ''),
}


def node_fragment(name: str, info: dict[str, Any], fmt: str, pretty: bool, *,
                  speed: Speed | None = None) -> str:
    """The text of one node inside the `nodes` of a dumped inventory (`speed`: which fast
    writers write it, default RECLASS_NG_SPEED's)."""
    from reclass_ng.output.dispatch import dump

    if fmt == "json" and pretty:
        return _indented_json_member(name, info, speed)
    before, after = FRAGMENT_FORMS[(fmt, pretty)][:2]
    text = dump({"nodes": {name: info}}, fmt, pretty, speed=speed)
    if not (text.startswith(before) and text.endswith(after)):
        raise RuntimeError(f"unexpected {fmt} layout of node {name!r}")  # output.dump changed
    return text[len(before):len(text) - len(after)]


def node_fragment_bytes(name: str, info: dict[str, Any], fmt: str, pretty: bool, *,
                        speed: Speed | None = None, floats_exact: bool = False
                        ) -> bytes | memoryview:
    """node_fragment() encoded in UTF-8 (orjson's bytes as they are: not decoded first, nor
    copied out of the text orjson wrote, a memoryview then: bytes() of it to pickle it).
    `floats_exact`: the caller knows that every float of `info` prints the same through
    orjson as through json (storage.base.floats_json_exact), so the text is not searched."""
    if fmt == "json" and pretty \
            and (member := _orjson_member(name, info, speed, floats_exact)) is not None:
        return member
    return node_fragment(name, info, fmt, pretty, speed=speed).encode("utf-8")


def assemble_inventory(parts: list[tuple[str, list[str], list[str], Any]], fmt: str,
                       pretty: bool, *, encoded: bool = False,
                       speed: Speed | None = None) -> list[Any]:
    """The dumped inventory, in pieces, from (name, classes, applications, text) of each node;
    with `encoded`, the texts are UTF-8 bytes and so are the pieces. The indexes of indented
    JSON are written by orjson unless `speed` turns that writer off (the same text; the exact
    writer took a third longer, after every node rendered)."""
    before: Any
    after: Any
    before, after = printed_frame([part[:3] for part in parts], fmt, pretty, speed)
    if not parts:
        return [(before + after).encode("utf-8") if encoded else before + after]
    separator: Any = FRAGMENT_FORMS[(fmt, pretty)][2]
    if encoded:
        before, after, separator = (text.encode("utf-8") for text in (before, after, separator))
    pieces = [before]
    for index, part in enumerate(parts):
        if index and separator:
            pieces.append(separator)
        pieces.append(part[3])
    pieces.append(after)
    return pieces


def printed_frame(nodes: list[tuple[str, list[str], list[str]]], fmt: str, pretty: bool,
                  speed: Speed | None = None) -> tuple[str, str]:
    """inventory_frame() stamped now, written as assemble_inventory() writes it (its indexes
    by orjson in indented JSON unless `speed` turns that writer off)."""
    return inventory_frame(nodes, fmt, pretty, timestamp(),
                           fast_json=fmt == "json" and pretty
                           and _orjson_node_member(speed) is not None)


def inventory_frame(nodes: list[tuple[str, list[str], list[str]]], fmt: str, pretty: bool,
                    now: str, *, fast_json: bool = False) -> tuple[str, str]:
    """The dumped inventory's text before its first node's text and after its last one, from
    (name, classes, applications) of each node; the whole text when there is no node.
    `fast_json`: the nodes' JSON was written by output.fast_json (orjson), which then writes
    the class and application indexes too (the same text, as fast as the whole document's)."""
    from reclass_ng.output.dispatch import dump

    classes: dict[str, list[str]] = {}
    applications: dict[str, list[str]] = {}
    for name, node_classes, node_applications in nodes:
        for app in node_applications:
            applications.setdefault(app, []).append(name)
        for cls in node_classes:
            classes.setdefault(cls, []).append(name)
    document = {"__reclass__": {"timestamp": now}, "nodes": {}, "classes": classes,
                "applications": applications}
    if fast_json and fmt == "json" and pretty:
        from reclass_ng.output.fast_json import inventory_json_pieces

        # The frame holds strings only (the timestamp and names): no float that orjson could
        # print otherwise than json, so its text is not searched for one.
        skeleton = str(b"".join(inventory_json_pieces(document, floats_exact=True)), "utf-8")
    else:
        skeleton = dump(document, fmt, pretty)
    if not nodes:
        return skeleton, ""
    empty, opening, closing = FRAGMENT_FORMS[(fmt, pretty)][3:]
    # The empty "nodes" is the first key after the timestamp in JSON, the last key in YAML.
    at = skeleton.find(empty) if fmt == "json" else skeleton.rfind(empty)
    return skeleton[:at] + opening, closing + skeleton[at + len(empty):]


def _indented_json_member(name: str, info: dict[str, Any], speed: Speed | None = None) -> str:
    # The writer of whole inventories (output.fast_json), so a parallel or cached render writes
    # what a serial one does, as fast; the exact writer where orjson has no wheel, or where
    # RECLASS_NG_SPEED turns it off.
    speed = speed or Speed.from_environment()
    if not speed.orjson_json_writer:
        from reclass_ng.output.exact import json_key, pretty_json

        return json_key(name) + ": " + pretty_json(info, "    ")
    member = _orjson_member(name, info, speed)
    if member is None:
        from reclass_ng.output.exact import fast_pretty_json, json_key

        return json_key(name) + ": " + fast_pretty_json(info, "    ")
    return str(member, "ascii")


def _orjson_member(name: str, info: dict[str, Any], speed: Speed | None,
                   floats_exact: bool = False) -> bytes | memoryview | None:
    """`"name": {...}` of an indented inventory as orjson (output.fast_json) writes it; None
    where the speed record turns that writer off or orjson has no wheel."""
    node_member = _orjson_node_member(speed)
    return None if node_member is None else node_member(name, info, floats_exact)


def _orjson_node_member(speed: Speed | None) -> Any:
    """output.fast_json.node_member, or None where the speed record turns orjson's writer
    off or orjson has no wheel."""
    if not (speed or Speed.from_environment()).orjson_json_writer:
        return None
    try:
        from reclass_ng.output.fast_json import node_member
    except ImportError:
        return None
    return node_member
