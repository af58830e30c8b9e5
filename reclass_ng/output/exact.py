"""The exact writers: YAML through PyYAML and indented JSON as `json.dumps(indent=2)` writes
it, byte for byte as kapicorp-reclass prints them; the references the fast writers of
output.block_yaml and output.fast_json must equal (output.dispatch chooses between them)."""

from __future__ import annotations

from reclass_ng.storage.yaml_load import plain_scalar_tag
from reclass_ng.values import OwnedDict, OwnedList

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    import re  # imported where a pattern is compiled: most starts need none
    from typing import Any

# The json module's own C encoder functions, taken from its accelerator: `import json` (its
# decoder and scanner compile six regular expressions) was 3% of a `--nodeinfo` start, and
# only compact output and a rare check need the module itself.
try:
    from _json import encode_basestring_ascii
    from _json import make_encoder as c_make_encoder
except ImportError:  # an interpreter without the accelerator: what json.encoder falls back to
    from json.encoder import (  # type: ignore[attr-defined,no-redef,unused-ignore]
        c_make_encoder,
        encode_basestring_ascii,
    )
INFINITY = float("inf")

class _Dumpers:
    """The dumper of YAML output, made on first use: it needs PyYAML, which most runs do not
    import (storage/yaml_import.py)."""

    made: type | None = None


def yaml_dumper() -> type:
    """PyYAML's safe dumper (libyaml's if present) knowing reclass-ng's containers, never
    writing anchors and aliases: what `dump(data, "yaml")` writes with."""
    if _Dumpers.made is None:
        _Dumpers.made = _make_dumper()
    return _Dumpers.made


def _make_dumper() -> type:
    from reclass_ng.storage.yaml_full import SafeLoader
    from reclass_ng.storage.yaml_import import pyyaml

    yaml = pyyaml()
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    scalar_node = yaml.ScalarNode

    class Dumper(base):  # type: ignore[misc, valid-type]
        """Safe dumper that knows reclass-ng's containers and never writes anchors/aliases."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            # Asked for every scalar written: would a plain `value` read back as a string?
            # Common spellings are told apart without PyYAML's regular expressions
            # (storage.yaml_load), while the dumper shares the loader's table of implicit
            # resolvers (PyYAML's own).
            if kind is scalar_node and implicit[0] and shares_loader_resolvers:
                tag = plain_scalar_tag(value)
                if tag is not None:
                    return tag
            return super().resolve(kind, value, implicit)

    shares_loader_resolvers = (
        Dumper.yaml_implicit_resolvers is SafeLoader.yaml_implicit_resolvers
        and not Dumper.yaml_path_resolvers)
    Dumper.add_representer(OwnedDict, base.represent_dict)
    Dumper.add_representer(OwnedList, base.represent_list)
    for cls in (dict, list):
        for sub in cls.__subclasses__():
            if sub.__module__ == "reclass_ng.values":
                Dumper.add_representer(
                    sub, base.represent_dict if cls is dict else base.represent_list)
    return Dumper


def _json_default(value: Any) -> Any:
    # D11: kapicorp crashes on dates in JSON; ISO-8601 strings are what every consumer expects.
    import datetime  # a date exists only once PyYAML (or a caller) has imported it

    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def pyyaml_text(data: Any, pretty: bool = True) -> str:
    """`dump(data, "yaml", pretty)` written by PyYAML alone: the reference of the fast writer
    of block YAML (`output/block_yaml.py`), and flow style, which that writer leaves to PyYAML."""
    from reclass_ng.storage.yaml_import import pyyaml

    return pyyaml().dump(data, Dumper=yaml_dumper(), default_flow_style=not pretty) + "\n"


# -- indented JSON ----------------------------------------------------------------------
# json.dumps(indent=2) runs the pure-Python encoder (CPython's C encoder ignores indent), which
# took a third of a large `--inventory -o json` run. This writes the same text, character for
# character, with one string per container instead of a generator per value.

def pretty_json(value: Any, indent: str = "") -> str:
    """`json.dumps(value, indent=2)` (with reclass-ng's date handling), nested at `indent`."""
    kind = type(value)
    if kind in _JSON_DICTS:
        return _json_object(value, indent)
    if kind in _JSON_LISTS:
        return _json_array(value, indent)
    return _json_other(value, indent)


def _json_object(mapping: dict, indent: str) -> str:
    if not mapping:
        return "{}"
    inner = indent + "  "
    if _LEAF_TYPES.issuperset(map(type, mapping.values())):
        return "{\n" + inner + _leaf_body(mapping, inner) + "\n" + indent + "}"
    parts: list[str] = []
    append = parts.append
    for key, value in mapping.items():
        key = encode_basestring_ascii(key) if type(key) is str else json_key(key)
        kind = type(value)
        if kind is str:
            append(key + ": " + encode_basestring_ascii(value))
        elif kind in _JSON_DICTS:
            append(key + ": " + _json_object(value, inner))
        elif kind in _JSON_LISTS:
            append(key + ": " + _json_array(value, inner))
        else:
            append(key + ": " + _json_other(value, inner))
    return "{\n" + inner + (",\n" + inner).join(parts) + "\n" + indent + "}"


def _json_array(items: list | tuple, indent: str) -> str:
    if not items:
        return "[]"
    inner = indent + "  "
    if _LEAF_TYPES.issuperset(map(type, items)):
        return "[\n" + inner + _leaf_body(items, inner) + "\n" + indent + "]"
    parts: list[str] = []
    append = parts.append
    for value in items:
        kind = type(value)
        if kind is str:
            append(encode_basestring_ascii(value))
        elif kind in _JSON_DICTS:
            append(_json_object(value, inner))
        elif kind in _JSON_LISTS:
            append(_json_array(value, inner))
        else:
            append(_json_other(value, inner))
    return "[\n" + inner + (",\n" + inner).join(parts) + "\n" + indent + "]"


# -- indented JSON through orjson -------------------------------------------------------
# orjson writes indented JSON ten times faster than the code above, and the same text except
# in four places, each found in its output cheaply: non-ASCII characters (json escapes them:
# so do we, afterwards), floats below 1e-4 (`0.00001` or `1e-7` where json writes `1e-05`
# and `1e-07`), NaN and infinities (orjson writes null) and what it refuses (keys that are
# not strings, integers beyond 64 bits, nesting deeper than 255). Values with the last three
# take the exact path above. It costs 30 ms to import, so only whole inventories use it.

_orjson: Any = None
# Two patterns, compiled on first use (re keeps them): a start that writes a node by the exact
# path above never needs them. A line of indented JSON holding a number: `  "key": -1.5e-07,`
# or `  0.00001`; what json escapes above \x1f (a negated class: compiling the range up to
# U+10FFFF took 8 ms).
_NUMBER_LINE = rb' *(?:"(?:[^"\\]|\\.)*": )?-?[0-9][0-9.eE+-]*,?'
NON_ASCII_PATTERN = "[^\x00-\x7e]"


def fast_pretty_json(value: Any, indent: str = "") -> str:
    """The text of `pretty_json(value, indent)`, through orjson when it can write it."""
    text = _orjson_text(value) if type(value) in _JSON_DICTS or type(value) in _JSON_LISTS \
        else None
    if text is None:
        return pretty_json(value, indent)
    return text.replace("\n", "\n" + indent) if indent else text


def _orjson_text(value: Any) -> str | None:
    global _orjson
    if _orjson is None:
        try:
            import orjson
        except ImportError:  # a platform without orjson's wheel: the exact path only
            _orjson = False
            return None
        _orjson = orjson
    elif _orjson is False:
        return None
    try:
        data = _orjson.dumps(value, default=_json_default, option=_orjson.OPT_INDENT_2
                             | _orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:  # orjson.JSONEncodeError included
        return None
    if (b"e-" in data or b"0.0000" in data) and _has_small_float(data):
        return None
    if b"null" in data and _has_non_finite_float(value):
        return None
    import re

    if data.isascii():
        text = data.decode("ascii")
        return re.compile(NON_ASCII_PATTERN).sub(_escaped, text) if "\x7f" in text else text
    return re.compile(NON_ASCII_PATTERN).sub(_escaped, data.decode("utf-8"))


def _has_small_float(data: bytes) -> bool:
    """Whether a number line of orjson's output holds `e-` or `0.0000` (a float below 1e-4)."""
    import re

    number_line = re.compile(_NUMBER_LINE)
    for marker in (b"e-", b"0.0000"):
        at = data.find(marker)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            if number_line.fullmatch(data, start, end):
                return True
            at = data.find(marker, end)
    return False


def _has_non_finite_float(value: Any) -> bool:
    import json

    try:
        json.dumps(value, allow_nan=False, check_circular=False, separators=(",", ":"),
                   default=_json_default)
    except ValueError:
        return True
    return False


def _escaped(match: re.Match[str]) -> str:
    return encode_basestring_ascii(match.group())[1:-1]


# A container of scalars only has no nested indentation, so CPython's C encoder can write
# its items, with the newline and indent of its level as the item separator. Dates (rare:
# PyYAML's timestamps) take the item by item way, which writes the same text through
# _json_default, so that a start need not import datetime.
_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})
_leaf_encoders: dict[str, Any] = {}


def _leaf_body(container: Any, inner: str) -> str:
    """The items of a container of scalars, separated for nesting level `inner`."""
    encoder = _leaf_encoders.get(inner)
    if encoder is None:
        if c_make_encoder is None:  # no C accelerator (e.g. PyPy): the plain loop
            return _plain_leaf_body(container, inner)
        encoder = _leaf_encoders[inner] = c_make_encoder(
            None, _json_default, encode_basestring_ascii, None, ": ", ",\n" + inner,
            False, False, True)
    return "".join(encoder(container, 0))[1:-1]


def _plain_leaf_body(container: Any, inner: str) -> str:
    if isinstance(container, dict):
        parts = [json_key(k) + ": " + _json_other(v, inner) for k, v in container.items()]
    else:
        parts = [_json_other(v, inner) for v in container]
    return (",\n" + inner).join(parts)


def _json_other(value: Any, indent: str) -> str:
    """Scalars, and containers of types the fast paths do not list, as the json module does."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, (list, tuple)):
        return _json_array(value, indent)
    if isinstance(value, dict):
        return _json_object(value, indent)
    return _json_other(_json_default(value), indent)


def _json_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == INFINITY:
        return "Infinity"
    if value == -INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def json_key(key: Any) -> str:
    """A mapping key as json.dumps writes it."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if isinstance(key, float):
        return '"' + _json_float(key) + '"'
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


_JSON_DICTS = frozenset({dict, OwnedDict, *(c for c in dict.__subclasses__()
                                          if c.__module__ == "reclass_ng.values")})
_JSON_LISTS = frozenset({list, tuple, OwnedList, *(c for c in list.__subclasses__()
                                                if c.__module__ == "reclass_ng.values")})
