"""Which writer prints an output: `dump()` returns the text `reclass -o FMT` prints, `write()`
writes it to a stream, each through the fast writer of its format where there is one
(output.block_yaml, output.fast_json) and otherwise through the exact writers of
output.exact, which the fast ones must equal."""

from __future__ import annotations

import os

from reclass_ng.errors import UsageError
from reclass_ng.settings import Speed

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Any

FORMATS = ("yaml", "json")


def dump(data: Any, fmt: str = "yaml", pretty: bool = True, *, speed: Speed | None = None
         ) -> str:
    """The text `reclass -o FMT` prints for `data` (including the final newline); `speed`:
    whether block YAML takes its fast writer (default: RECLASS_NG_SPEED's)."""
    # (output.exact imported where it writes, not with this module: a streamed
    # `--inventory -o yaml` writes with the block writer only)
    if fmt == "json":
        from reclass_ng.output.exact import _json_default, pretty_json

        if pretty:
            return pretty_json(data) + "\n"
        import json

        return json.dumps(data, separators=(",", ":"), default=_json_default) + "\n"
    if fmt == "yaml":
        if pretty and (speed or Speed.from_environment()).block_yaml_writer:
            from reclass_ng.output.block_yaml import BlockYamlWriter

            return BlockYamlWriter().document(data)
        from reclass_ng.output.exact import pyyaml_text

        return pyyaml_text(data, pretty)
    raise UsageError(f"Unknown output format: {fmt!r} (choose from {', '.join(FORMATS)})")


def write(data: Any, stream: IO[str], fmt: str = "yaml", pretty: bool = True, *,
          floats_exact: bool = False, speed: Speed | None = None) -> None:
    """Write what `dump` returns, without holding all of a large inventory's text at once.

    `floats_exact`: the caller knows that `data` holds no float below 1e-4, NaN or infinity
    (`Inventory.floats_json_exact` tells that of the files an inventory read); the JSON
    writer then need not search its output for them. `speed`: which fast writers are on
    (default: RECLASS_NG_SPEED's); the references write what `dump` does with them off.
    """
    speed = speed or Speed.from_environment()
    if fmt == "json" and pretty and type(data) is dict and type(data.get("nodes")) is dict \
            and speed.orjson_json_writer:
        try:
            from reclass_ng.output.fast_json import inventory_json_pieces
        except ImportError:  # a platform without orjson's wheel: the exact writer
            for chunk in _inventory_json_chunks(data):
                stream.write(chunk)
            stream.write("\n")
            return
        _write_bytes(inventory_json_pieces(data, floats_exact), stream)
        return
    if fmt == "yaml" and pretty and type(data) is dict and speed.block_yaml_writer:
        from reclass_ng.output.block_yaml import BlockYamlWriter

        for piece in BlockYamlWriter().inventory_pieces(data):
            stream.write(piece)
        return
    stream.write(dump(data, fmt, pretty, speed=speed))


def _write_bytes(pieces: Iterable[bytes | memoryview], stream: IO[str]) -> None:
    """Write UTF-8 `pieces` to a text stream, to its binary buffer when it has one (and
    neither its encoding nor newline translation would change the bytes)."""
    buffer = getattr(stream, "buffer", None)
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    if buffer is None or encoding not in ("utf8", "ascii", "usascii") or os.linesep != "\n":
        for piece in pieces:
            stream.write(str(piece, "utf-8"))
        return
    stream.flush()
    for piece in pieces:
        buffer.write(piece)
    buffer.flush()


def _inventory_json_chunks(data: dict[str, Any]) -> Any:
    # The same text as pretty_json(data), one node at a time.
    from reclass_ng.output.exact import fast_pretty_json, json_key, pretty_json

    yield "{"
    first = True
    for key, value in data.items():
        yield ("\n  " if first else ",\n  ") + json_key(key) + ": "
        first = False
        if key == "nodes" and value:
            yield "{"
            sep = "\n    "
            for name, node in value.items():
                yield sep + json_key(name) + ": " + fast_pretty_json(node, "    ")
                sep = ",\n    "
            yield "\n  }"
        else:
            yield pretty_json(value, "  ")
    yield "\n}" if not first else "}"
