"""The rules both YAML readers apply (storage/yaml_load.py with its fast path, and
storage/yaml_full.py, PyYAML's way): the limits a file must keep to, and the implicit tags of
plain scalars as PyYAML's safe resolver gives them (`plain_scalar_tag`). Neither reader
imports the other for them.

**Limits** (doc/service.rst, "Limits"): what a hostile file may not make the loader do.

**Implicit tags**, told apart without PyYAML's regular expressions for the common spellings.
The C composer asks the resolver for the tag of every plain scalar; PyYAML's resolver matches
it against regular expressions, each compiled on first use (storage/yaml_import.py) at about
half a million instructions, and the block reader would have to import PyYAML. Words,
booleans, nulls and decimal integers are told apart here; anything else (floats, timestamps,
octal and sexagesimal numbers, merge keys, a newline) is left to PyYAML. This is exact only for
PyYAML's own table of implicit resolvers, which is checked once, on first use; with any other
table PyYAML decides every scalar.
"""

from __future__ import annotations

import sys

# Bytes of a file read at most (storage.yaml_load.read_input_file).
MAX_YAML_FILE_BYTES = 32 * 1024 * 1024
# Nesting of collections: libyaml's composer recurses in C, so a 50,000-deep flow list would
# overflow the C stack.
MAX_YAML_DEPTH = 200
# Values aliases may expand to (a 455-byte "billion laughs" file expands to 10**9).
MAX_EXPANDED_NODES = 1_000_000
# Spellings of plain scalars each memo table of a YamlLoader keeps (about 3 MB at the most).
MAX_MEMO_ENTRIES = 20_000


class NotSimple(Exception):
    """The document is outside what the block reader (storage/yaml_block.py) reads: read it
    the full way."""


# -- implicit tags of plain scalars ----------------------------------------------------------
_TAG = "tag:yaml.org,2002:"
# The tag of strings, one object: the block reader (storage/yaml_block.py) tells a memoised tag
# that is this very object by identity, with no further look.
STR_TAG = _TAG + "str"
_STR, _MAP, _SEQ = STR_TAG, _TAG + "map", _TAG + "seq"
_MERGE, _VALUE = _TAG + "merge", _TAG + "value"
# Scalars whose value the safe constructor computes (and which are immutable, so shareable).
_SCALAR_TAGS = frozenset(_TAG + t for t in ("int", "float", "bool", "null", "timestamp"))
_FLOAT = _TAG + "float"
_BOOL, _NULL, _INT = _TAG + "bool", _TAG + "null", _TAG + "int"

_BOOL_SPELLINGS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_NULL_SPELLINGS = frozenset(("~", "null", "Null", "NULL"))
_DIGITS = "0123456789"
_DOT_FLOATS = frozenset(".inf .Inf .INF .nan .NaN .NAN".split())
# Every character PyYAML's float, int and timestamp patterns hold after a leading digit:
# digits, `_ . : + -`, exponents, `0b` and `0x` numbers, `T`/`t`, spaces and `Z` of timestamps.
_NUMBER_CHARACTERS = frozenset("0123456789_.:+-eEbxabcdefABCDEFTtZ \t")
# First character -> the tags PyYAML's implicit resolvers try, in order (PyYAML 5.1 to 6.0).
_STANDARD_RESOLVERS = {
    "": ["null"], "!": ["yaml"], "&": ["yaml"], "*": ["yaml"], "+": ["float", "int"],
    "-": ["float", "int"], ".": ["float"], "<": ["merge"], "=": ["value"], "~": ["null"],
    **{digit: ["float", "int", "timestamp"] for digit in _DIGITS},
    **{c: ["bool"] for c in "yYtTfFoO"}, "n": ["bool", "null"], "N": ["bool", "null"]}
# The first characters of a plain scalar that some implicit resolver tries: any other one
# makes a string (`${_param:x}`, `salt`, `/etc`), as plain_scalar_tag answers, without a look.
RESOLVED_FIRST_CHARACTERS = frozenset(_STANDARD_RESOLVERS) - {""}

# Indicators that start a tagged scalar only when it is spelt as they are here (`~` null, `<<`
# a merge key, `=` a value key, `!`, `&` and `*` PyYAML's `yaml` tag); anything else starting
# with them is a string.
_YAML = _TAG + "yaml"
_ONE_SPELLING_TAGS = {"~": ("~", _NULL), "<": ("<<", _MERGE), "=": ("=", _VALUE),
                      "!": ("!", _YAML), "&": ("&", _YAML), "*": ("*", _YAML)}
# The letters PyYAML's float, int and timestamp patterns hold outside a `0b`/`0x` prefix:
# exponents and a timestamp's `T`/`t` and `Z`; any other letter after a leading digit makes a
# string (a hash, `24x7`, `30d`, `1.10.x`).
_NUMBER_LETTERS = frozenset("eEtTZ")
# What the float and int patterns hold after a leading digit (no timestamp: its `-` is 5th).
_NUMBER_NOT_TIMESTAMP = frozenset("0123456789_.:eE+-")


# Whether plain_scalar_tag may answer (PyYAML's resolver table is its own); None: not checked
# yet. Module globals, not a class attribute: standard_tags is asked for most new strings the
# block writer spells, and compiled (yaml_rules.pxd) these are C variables, no lookups.
_standard_table: bool | None = None
_modules = sys.modules


def plain_scalar_tag(value: str) -> str | None:
    """The tag PyYAML's safe resolver gives the plain scalar `value`, for the common cases
    (words, booleans, nulls, decimal integers, options, hashes, multi-line text); None for
    the others, which it must decide. tests/test_yaml_load.py compares it with PyYAML's
    resolver.

    Each case answered here saves a run that meets no other the import of `re` and `enum`
    (about 26 M instructions, a sixth of a small whole `--inventory`): PyYAML's patterns are
    compiled on first use (storage/yaml_import.py)."""
    if not standard_tags():
        return None
    if not value:
        return _NULL  # the null pattern's empty alternative, the one resolver of ""
    first = value[0]
    if "\n" in value:
        # No pattern holds a line break, and `$` matches before one that ends the text: a
        # text ending in its only line break has the tag of the text without it.
        if first not in _STANDARD_RESOLVERS or "\n" in value[:-1]:
            return _STR
        return plain_scalar_tag(value[:-1])
    if first in _DIGITS:
        return _digit_first_tag(value)
    if first in "-+.":
        return _sign_or_dot_first_tag(value)
    if first in "yYtTfFoOnN":
        if value in _BOOL_SPELLINGS:
            return _BOOL
        return _NULL if value in _NULL_SPELLINGS else _STR
    if first in _ONE_SPELLING_TAGS:
        spelling, tag = _ONE_SPELLING_TAGS[first]
        return tag if value == spelling else _STR
    return _STR  # a first character without implicit resolvers


def _sign_or_dot_first_tag(value: str) -> str | None:
    """plain_scalar_tag of a `value` that starts with `-`, `+` or `.`: a float, an int or a
    string (an option such as `-c` or `--port=80`, a relative class name)."""
    second = value[1:2]
    if value.count(".") > 1:
        return _STR  # no pattern holds two dots (`-2..+2`, `../x`)
    if value[0] == ".":  # only `.` + digit and the .inf/.nan spellings are floats
        return None if (second and second in _DIGITS) or value in _DOT_FLOATS else _STR
    # After a sign the float and int patterns all go on with a digit or `.`; with a digit,
    # they are those a text starting with that digit meets, less the timestamp (its `-` 5th).
    if second and second in _DIGITS and value[5:6] != "-":
        return _digit_first_tag(value[1:])
    return None if second and (second in _DIGITS or second == ".") else _STR


def _digit_first_tag(value: str) -> str | None:
    """plain_scalar_tag of a `value` that starts with a digit: an int, a float, a
    timestamp or a string."""
    first = value[0]
    # Decimal digits only, without a leading zero: no float, and the int pattern's
    # `[1-9][0-9_]*`; with a leading zero, the octal `0[0-7_]+` or nothing.
    if value.isascii() and value.isdigit():
        if first != "0" or value == "0":
            return _INT
        return _STR if "8" in value or "9" in value else _INT
    # No pattern holds two dots (versions, addresses, ranges such as `1..3`); digits and one
    # dot are the float pattern's `[0-9][0-9_]*\.[0-9_]*`.
    dots = value.count(".")
    if dots > 1:
        return _STR
    if dots and value.isascii() and value.replace(".", "").isdigit():
        return _FLOAT
    if ":" in value and value.isascii() and value.replace(":", "").replace(".", "").isdigit():
        return _colon_number_tag(value)
    # A character that none of the float, int and timestamp patterns holds (a host name
    # such as 0.pool.ntp.org, `3rd`): none matches, a string.
    if not _NUMBER_CHARACTERS.issuperset(value):
        return _STR
    if value[1:2] in ("x", "b"):
        return None  # `0x1f`, `0b101`: PyYAML decides
    if not _NUMBER_LETTERS.issuperset(character for character in value
                                      if character.isalpha()):
        return _STR
    # Without a timestamp's `-` as 5th character only the float and int patterns remain.
    if value[4:5] != "-" and not _NUMBER_NOT_TIMESTAMP.issuperset(value):
        return _STR
    return None


def _colon_number_tag(value: str) -> str | None:
    """The tag of digits with colons (and dots): a port mapping, a MAC address, an address
    with its port. Only the sexagesimal patterns hold a colon: the int's
    `[1-9][0-9_]*(?::[0-5]?[0-9])+` and the float's, which goes on with a `.` after them."""
    if "." in value:
        # A dot before the first colon: no pattern (the sexagesimal float's comes after).
        return _STR if value.index(".") < value.index(":") else None
    head, *groups = value.split(":")
    sexagesimal = head[0] != "0" and all(
        len(group) == 1 or (len(group) == 2 and group[0] in "012345") for group in groups)
    return _INT if sexagesimal else _STR


def standard_tags() -> bool:
    """Whether plain_scalar_tag may answer (the fast path needs PyYAML's own resolvers).

    Before PyYAML is imported nothing can have changed its resolvers: they are the installed
    PyYAML's own, which tests/test_yaml_load.py checks are the table above. Once it is
    imported, the table is checked (once)."""
    global _standard_table
    if _standard_table is None:
        if "yaml" not in _modules:
            return True
        _standard_table = standard_resolver_table()
    return _standard_table


def standard_resolver_table() -> bool:
    """Whether PyYAML's safe resolvers are its own standard table (plain_scalar_tag's)."""
    from reclass_ng.storage.yaml_import import pyyaml  # imported by then (standard_tags)

    yaml = pyyaml()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # storage.yaml_full.SafeLoader
    table = loader.yaml_implicit_resolvers
    return not loader.yaml_path_resolvers and {
        first: [tag[len(_TAG):] for tag, _ in resolvers] for first, resolvers in table.items()
    } == _STANDARD_RESOLVERS
