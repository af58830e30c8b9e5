"""YAML loading as kapicorp-reclass does it: PyYAML safe loading, YAML 1.1 typing, libyaml if present.

Plain block YAML, what nearly every inventory file is, is read by storage/yaml_block.py with
the values PyYAML would give; anything else by PyYAML (storage/yaml_full.py, which gives every
error its message and line). PyYAML itself is imported only for a document, scalar or tool
that needs it (storage/yaml_import.py): a run whose files are all plain block YAML never imports it.

Line numbers are not kept while loading (that would slow every file down); when an error or an
explanation needs the line of a key, storage/positions.py composes that one file again
(`compose_yaml_file`).

Hostile files get a clear error naming file and line, never a crash, a hang or unbounded
memory: only regular files are read (a FIFO or a link to /dev/zero is refused before any read),
at most MAX_YAML_FILE_BYTES of them; nesting deeper than MAX_YAML_DEPTH is refused (libyaml's
composer recurses in C, so a 50,000-deep flow list would overflow the C stack), and aliases may
expand to at most MAX_EXPANDED_NODES values (a 455-byte "billion laughs" file expands to 10**9).
The limits and the implicit tags of plain scalars are storage/yaml_rules.py's: both readers
apply them, and the full one never imports this module.
"""

from __future__ import annotations

import os

from reclass_ng.cache import BoundedCache
from reclass_ng.errors import YamlFileError
from reclass_ng.storage.regular_file import NOT_REGULAR, UnreadableFile, read_regular_file
from reclass_ng.storage.yaml_block import BlockYamlReader, NotSimple, block_yaml_text
from reclass_ng.storage.yaml_rules import (
    _BOOL,
    _BOOL_SPELLINGS,
    _DIGITS,
    _FLOAT,
    _INT,
    _MERGE,
    _NULL,
    _STR,
    _VALUE,
    MAX_MEMO_ENTRIES,
    MAX_YAML_DEPTH,
    MAX_YAML_FILE_BYTES,
    plain_scalar_tag,
    standard_tags,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

_INFINITY = float("inf")

_TRUE_SPELLINGS = frozenset(("yes", "true", "on"))  # lower case: SafeConstructor.bool_values


def float_json_exact(value: float) -> bool:
    """Whether orjson writes `value` as json does (`float.__repr__`): zero, and finite floats
    of at least 1e-4 in size (tested on random bit patterns in tests/test_output_json.py)."""
    return value == 0.0 or 1e-4 <= abs(value) < _INFINITY


_NOT_PLAIN = object()
_UNKNOWN = object()  # not in a memo table


class YamlLoader:
    """Reads the YAML files of one storage: owns the loader's memo tables and knows whether
    every float it loaded prints the same through orjson as through json.

    The memo tables (plain scalar -> its resolved tag, (tag, spelling) -> value, and the
    block reader's keys and values) depend on the spelling alone, never on a file, and hold
    immutable values only, so every file of the storage shares them; each keeps at most
    `memo_entries` spellings (a service reading new files for months stays bounded).

    `floats_json_exact` stays true unless a file held a float below 1e-4 (orjson writes
    `0.00001` where json writes `1e-05`), a NaN or an infinity, or was read by PyYAML's own
    constructor (floats not checked). The writers of JSON skip searching their output for
    such numbers while it holds (`output_json`, the Salt adapter, the result store): it
    travels with the storage that read the files, so one inventory's floats never change how
    another one's output is written.

    `block_reader`: whether plain block YAML is read by the fast path (Speed.block_yaml_reader;
    None: RECLASS_NG_SPEED's); False reads every file the full way, PyYAML's. `unique_keys`:
    the fast path declines a mapping writing a key twice (see `block_read`)."""

    __slots__ = ("plain_tags", "scalar_values", "floats_json_exact", "block_reader",
                 "block_reader_on", "_kept_tag", "_kept_value")

    def __init__(self, memo_entries: int = MAX_MEMO_ENTRIES,
                 block_reader: bool | None = None, unique_keys: bool = False) -> None:
        self.plain_tags: BoundedCache[str, str] = BoundedCache(memo_entries)
        self.scalar_values: BoundedCache[tuple[str, str], Any] = BoundedCache(memo_entries)
        self.floats_json_exact = True
        # Their `peek`s, read into a local before the call: an attribute that is not a method
        # is looked up the slow way when called as `self.x.peek(...)`, once per scalar.
        self._kept_tag = self.plain_tags.peek
        self._kept_value = self.scalar_values.peek
        self.block_reader = BlockYamlReader(self.plain_tags, self.plain_value, MAX_YAML_DEPTH,
                                            memo_entries, unique_keys)
        # Whether block_reader may read a file (Speed.block_yaml_reader): the owner's speed,
        # else RECLASS_NG_SPEED's, read once here rather than once per file.
        self.block_reader_on = _block_reader_on() if block_reader is None else block_reader

    def load_file(self, path: str) -> Any:
        """The document in `path`; invalid YAML is an error naming the file, line and column."""
        return self.parse_bytes(read_input_file_stat(path)[0], path)

    def parse_bytes(self, data: bytes, path: str) -> Any:
        """The document in `data` (read from `path`, named in errors), within the loader's
        limits: plain block YAML by the fast path, anything else the full way."""
        document = self.block_document(data)
        if document is not _DECLINED:
            return document
        from reclass_ng.storage.yaml_full import parse_yaml_bytes_full

        return parse_yaml_bytes_full(data, path, self)

    def block_read(self, data: bytes) -> tuple[bool, Any]:
        """(True, the document in `data`) when the fast path of plain block YAML reads it,
        (False, None) for anything else. With `unique_keys` the fast path declines a mapping
        that writes a key twice: a document it reads is valid YAML, within the loader's
        limits, writing no key twice (what lint's YAML checks look for)."""
        document = self.block_document(data)
        return (False, None) if document is _DECLINED else (True, document)

    def block_document(self, data: bytes) -> Any:
        """The document in `data` read by the fast path of plain block YAML
        (storage/yaml_block.py), or _DECLINED for anything else."""
        if not self.block_reader_on:
            return _DECLINED
        text = block_yaml_text(data)
        if text is not None and standard_tags():
            try:
                return self.block_reader.parse(text)
            except NotSimple:
                pass
        return _DECLINED

    def typed_scalar(self, tag: str, text: str) -> Any:
        """The value of a scalar of `tag` (int, float, bool, null or timestamp) spelt `text`.
        These are immutable: one value per spelling, shared by every file."""
        key = (tag, text)
        kept_value = self._kept_value
        value = kept_value(key, _UNKNOWN)
        if value is not _UNKNOWN:
            return value
        value = _plain_typed_value(tag, text)
        if value is _NOT_PLAIN:
            from reclass_ng.storage.yaml_full import constructed_scalar

            value = constructed_scalar(tag, text)
        if tag == _FLOAT and not float_json_exact(value):
            self.floats_json_exact = False
        if len(text) < 40:
            self.scalar_values.put(key, value)
        return value

    def plain_value(self, text: str) -> Any:
        """The value of the plain scalar `text` for BlockYamlReader.parse; NotSimple for a
        merge key, a `=` or a timestamp, which the full loader reads."""
        kept_tag = self._kept_tag
        tag = kept_tag(text)
        if tag is None:
            tag = plain_scalar_tag(text)
            if tag is None:
                from reclass_ng.storage.yaml_full import resolved_plain_tag

                tag = resolved_plain_tag(text)
            if tag == _MERGE or tag == _VALUE:
                raise NotSimple  # never remembered: the loader notes each one (merge_keys)
            if tag == _STR:
                tag = _STR  # BlockYamlReader.parse compares by identity
            if len(text) < 40:
                self.plain_tags.put(text, tag)
        if tag == _STR:
            return text
        if tag in _BLOCK_SCALAR_TAGS:
            return self.typed_scalar(tag, text)
        raise NotSimple


def _plain_typed_value(tag: str, text: str) -> Any:
    """What PyYAML's safe constructor makes of `text` tagged `tag`, for the spellings
    plain_scalar_tag decides (nulls, booleans, decimal and octal integers, `2.5`), without
    PyYAML; _NOT_PLAIN for the others. tests/test_yaml_load.py compares it with the
    constructor."""
    if tag == _NULL:
        return None  # construct_yaml_null ignores the text
    if tag == _BOOL:
        return text.lower() in _TRUE_SPELLINGS if text in _BOOL_SPELLINGS else _NOT_PLAIN
    if not text.isascii() or text[:1] not in _DIGITS:
        return _NOT_PLAIN
    if tag == _INT:
        if not text.isdigit():
            return _NOT_PLAIN
        if text == "0" or text[0] != "0":
            return int(text)
        # A leading zero: octal, as construct_yaml_int reads it (file modes such as `0640`,
        # in Kapitan inventories too; each one imported PyYAML for its value).
        return int(text, 8) if "8" not in text and "9" not in text else _NOT_PLAIN
    if tag == _FLOAT:
        return float(text) if text.count(".") == 1 and text.replace(".", "").isdigit() \
            else _NOT_PLAIN
    return _NOT_PLAIN


# Tags of plain scalars that BlockYamlReader.parse takes the value of here (others: the full way).
_BLOCK_SCALAR_TAGS = frozenset((_INT, _FLOAT, _BOOL, _NULL))

# What YamlLoader.block_document returns for a document the fast path declines.
_DECLINED = object()


def _block_reader_on() -> bool:
    """Whether the fast path may read files when the loader's owner did not say
    (Speed.block_yaml_reader, from RECLASS_NG_SPEED). A yaml_fs storage asks once, when it
    opens (its parsed files are shared by every inventory reusing it): reading the environment
    costs more than a file."""
    from reclass_ng.settings import Speed  # settings imports errors, which import this

    return Speed.from_environment().block_yaml_reader


def _parse(data: bytes) -> Any:
    """The document in `data` read by a new YamlLoader (tests compare it with
    parse_yaml_full)."""
    loader = YamlLoader(block_reader=True)
    document = loader.block_document(data)
    return parse_yaml_full(data, loader) if document is _DECLINED else document


def parse_yaml_full(data: bytes, loader: YamlLoader | None = None) -> Any:
    """The document in `data`, read through PyYAML's parser (the fast path's reference), with
    the memo tables of `loader` (a new YamlLoader's when None)."""
    from reclass_ng.storage.yaml_full import parse_yaml_full as full

    return full(data, loader or YamlLoader())


def read_input_file(path: str) -> bytes:
    """The bytes of `path` if it is a regular file of at most MAX_YAML_FILE_BYTES; YamlFileError
    naming the file otherwise (read_input_file_stat)."""
    return read_input_file_stat(path)[0]


def read_input_file_stat(path: str) -> tuple[bytes, os.stat_result]:
    """The bytes of `path` and its fstat taken before they were read, if it is a regular file
    of at most MAX_YAML_FILE_BYTES; YamlFileError naming the file otherwise.

    The one way an inventory file is read: by the loader and by every digest and stamp of the
    caches, the watcher and the service (incremental/), so none of them can be made to block
    or to read without end by a file the loader refuses (storage/regular_file.py)."""
    try:
        return read_regular_file(path, MAX_YAML_FILE_BYTES)
    except UnreadableFile as err:  # refused: its own wording (tests and doc/ quote it)
        if err.not_regular:
            raise YamlFileError(path, NOT_REGULAR) from None
        if err.too_large and err.size is not None:
            raise YamlFileError(path, f"the file has {err.size} bytes; the limit is "
                                f"{MAX_YAML_FILE_BYTES}") from None
        raise YamlFileError(path, f"the file grew past the limit of {MAX_YAML_FILE_BYTES} "
                            "bytes while it was read") from None
    except OSError as err:
        raise YamlFileError(path, f"cannot read file: {err.strerror}") from None


def load_yaml_file(path: str, block_reader: bool | None = None) -> Any:
    """The document in `path` read by a new YamlLoader, for a file read on its own (settings,
    a tool); a storage reads its files with its own loader. `block_reader`: as YamlLoader's."""
    return YamlLoader(block_reader=block_reader).load_file(path)


def parse_yaml_bytes(data: bytes, path: str, block_reader: bool | None = None) -> Any:
    """The document in `data` (read from `path`, named in errors) read by a new YamlLoader,
    for a document read on its own (YamlLoader.parse_bytes). `block_reader`: as YamlLoader's."""
    return YamlLoader(block_reader=block_reader).parse_bytes(data, path)


def compose_yaml_file(path: str) -> Any:
    """The node graph of `path` (with positions), within the loader's limits: for tools that
    need lines (lint, explain). YamlFileError for a file over a limit, yaml.YAMLError for
    invalid YAML."""
    return compose_yaml_bytes(read_input_file(path), path)


def compose_yaml_bytes(data: bytes, path: str) -> Any:
    """The node graph of `data` read from `path` (an editor's buffer), as compose_yaml_file."""
    from reclass_ng.storage.yaml_full import compose_yaml_bytes as compose

    return compose(data, path)
