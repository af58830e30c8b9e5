"""Reading the `schemas` setting and the JSON Schema files it names, checked once.

    schemas:
      nginx: schemas/nginx.yml          # parameter path -> schema file (YAML or JSON)
      "": schemas/node.json             # "" : the whole parameters tree

Paths are relative to the directory of reclass-config.yml. `$ref` is resolved across files
(relative to the file holding it; only local files are read, never a URL). Every problem is a
ConfigError naming the schema file: unreadable, not YAML/JSON, not a valid draft 2020-12 schema,
a `$ref` to a missing file or place, or `$ref`s that only lead to each other (a loop).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import attrs
import yaml

from reclass_ng.errors import ConfigError
from reclass_ng.install import install_hint
from reclass_ng.settings import find_config_file
from reclass_ng.storage import read_config_file
from reclass_ng.storage.regular_file import UnreadableFile, read_regular_file

CONFIG_KEY = "schemas"
MAX_SCHEMA_BYTES = 4 << 20  # a schema file larger than this is refused
MAX_SCHEMA_FILES = 1000  # files reachable through $ref
# A schema with only these keys is only a pointer: a chain of them must end somewhere.
REF_ONLY_KEYS = frozenset({"$ref", "$comment", "$id", "$schema"})


def _jsonschema() -> Any:
    try:
        import jsonschema  # type: ignore[import-untyped,unused-ignore]
        import referencing  # noqa: F401 - jsonschema>=4.18 brings it
    except ImportError:
        raise ConfigError(f"the `{CONFIG_KEY}` setting needs the jsonschema library (4.18 or "
                          f"later): {install_hint('schemas')}") from None
    return jsonschema


@attrs.frozen
class AttachedSchema:
    """One entry of the setting: a parameter path and the validator of its schema file."""

    path: tuple[str, ...]  # () for the whole parameters tree
    file: str  # absolute
    validator: Any  # a jsonschema Draft202012Validator


@attrs.frozen
class SchemaSet:
    """The checked schemas of an inventory, and the documents read, by file URI."""

    base: str  # the directory schema files are named relative to
    attached: tuple[AttachedSchema, ...]
    documents: dict[str, Any]
    registry: Any  # referencing.Registry holding every document

    def display(self, path: str) -> str:
        """A schema file as messages show it: relative to the base when below it."""
        relative = os.path.relpath(path, self.base)
        return path if relative.startswith(os.pardir) else relative


def _file_of(uri: str) -> str:
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else uri


def read_schema_document(path: str, shown: str) -> Any:
    """A schema file's content (JSON for `.json`, else YAML), or a ConfigError naming it."""
    try:
        data = read_regular_file(path, MAX_SCHEMA_BYTES)[0]
    except OSError as err:
        if isinstance(err, UnreadableFile) and err.too_large:
            raise ConfigError(f"schema file {shown}: larger than {MAX_SCHEMA_BYTES} bytes"
                              ) from None
        raise ConfigError(f"schema file {shown}: cannot read it: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
        if path.endswith(".json"):
            return json.loads(text)
        return yaml.safe_load(text)
    except UnicodeDecodeError:
        raise ConfigError(f"schema file {shown}: not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"schema file {shown}:{err.lineno}:{err.colno}: not JSON: "
                          f"{err.msg}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError(f"schema file {shown}{where}: not YAML: {problem}") from None
    except RecursionError:
        raise ConfigError(f"schema file {shown}: nested too deeply") from None


def _refs(value: Any, seen: set[int] | None = None) -> Iterator[tuple[dict, str]]:
    """(subschema, `$ref` text) of every `$ref` in a document."""
    seen = set() if seen is None else seen
    if id(value) in seen:  # a YAML alias back to itself
        raise RecursionError
    if isinstance(value, dict):
        seen.add(id(value))
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield value, ref
        for item in value.values():
            yield from _refs(item, seen)
        seen.discard(id(value))
    elif isinstance(value, list):
        seen.add(id(value))
        for item in value:
            yield from _refs(item, seen)
        seen.discard(id(value))


def _setting(base: str) -> tuple[str, dict[str, str]] | None:
    """(directory of reclass-config.yml, its `schemas` mapping) or None when not set."""
    config = find_config_file(base)
    if config is None:
        return None
    value = read_config_file(config).get(CONFIG_KEY)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise ConfigError(f"{config}: {CONFIG_KEY} must map parameter paths to schema files "
                          f"(e.g. `nginx: schemas/nginx.yml`)")
    return os.path.dirname(os.path.abspath(config)), value


def _loops(shown: str) -> ConfigError:
    return ConfigError(f"schema file {shown}: the schema loops (a YAML alias inside itself)")


class _SchemaFiles:
    """The schema files read so far (by file URI) and the registry holding them: each file is
    read and checked when the setting or a `$ref` first names it."""

    def __init__(self, directory: str, jsonschema: Any) -> None:
        import referencing
        from referencing.jsonschema import DRAFT202012

        self._resource = lambda document: referencing.Resource.from_contents(
            document, default_specification=DRAFT202012)
        self._jsonschema = jsonschema
        self.display = SchemaSet(directory, (), {}, None).display
        self.documents: dict[str, Any] = {}
        self.registry = referencing.Registry()

    def add(self, path: str) -> str:
        """Read and check the schema file at `path`; its URI."""
        shown = self.display(path)
        if len(self.documents) >= MAX_SCHEMA_FILES:
            raise ConfigError(f"schema file {shown}: more than {MAX_SCHEMA_FILES} schema files "
                              f"reached through $ref")
        document = read_schema_document(path, shown)
        try:  # jsonschema's own check, whatever validator the nodes are checked with
            self._jsonschema.Draft202012Validator.check_schema(document)
        except self._jsonschema.exceptions.SchemaError as err:
            where = "#/" + "/".join(str(p) for p in err.path)
            raise ConfigError(f"schema file {shown}: not a valid JSON Schema (draft 2020-12) at "
                              f"{where}: {err.message}") from None
        except RecursionError:
            raise _loops(shown) from None
        uri = "file://" + path
        # The file's own URI as its base, so a relative $ref is read next to it.
        if isinstance(document, dict) and "$id" not in document:
            document = {"$id": uri, **document}
        self.documents[uri] = document
        self.registry = self.registry.with_resource(uri, self._resource(document))
        return uri

    def add_referenced(self, pending: list[str]) -> None:
        """Read every file the `$ref`s of the `pending` files lead to, following files as
        they are named: a `$ref` to a URL or to a missing file is found before any node is
        checked."""
        while pending:
            pending.extend(self._add_targets_of(pending.pop()))

    def _add_targets_of(self, uri: str) -> list[str]:
        """Read the files the `$ref`s of `uri` name that are not read yet; their URIs."""
        shown = self.display(_file_of(uri))
        try:
            refs = list(_refs(self.documents[uri]))
        except RecursionError:
            raise _loops(shown) from None
        added = []
        for _, ref in refs:
            target = urldefrag(_join(uri, ref)).url
            if not target.startswith("file://"):
                raise ConfigError(f"schema file {shown}: $ref {ref!r}: only local files are "
                                  f"read, not {target}")
            if target not in self.documents:
                if not os.path.isfile(_file_of(target)):
                    raise ConfigError(f"schema file {shown}: $ref {ref!r}: no such file "
                                      f"{self.display(_file_of(target))}")
                added.append(self.add(_file_of(target)))
        return added

    def check_refs(self) -> None:
        """Resolve every `$ref`: a missing place, or a chain of `$ref`s that comes back to
        itself, is found before any node is checked."""
        import referencing.exceptions

        for uri, document in self.documents.items():
            shown = self.display(_file_of(uri))
            for _, ref in _refs(document):
                _follow(self.registry, uri, ref, shown, referencing.exceptions, self.display)


def load_schemas(base: str, delimiter: str = ":", fast: bool = True) -> SchemaSet | None:
    """The schemas the inventory in `base` attaches (None when its reclass-config.yml has no
    `schemas` setting), every file read and checked. `fast=False`: jsonschema's own keywords
    only (the reference the memo of reclass_ng.schemas.fast_keywords must equal)."""
    found = _setting(base)
    if found is None:
        return None
    directory, setting = found
    jsonschema = _jsonschema()
    validator_class = jsonschema.Draft202012Validator
    if fast:
        from reclass_ng.schemas.fast_keywords import KeywordMemo, fast_keywords

        validator_class = jsonschema.validators.extend(validator_class,
                                                       fast_keywords(KeywordMemo()))
    files = _SchemaFiles(directory, jsonschema)
    attached = []
    pending: list[str] = []
    for key, name in setting.items():
        path = os.path.abspath(os.path.join(directory, os.path.expanduser(name)))
        if "file://" + path not in files.documents:
            pending.append(files.add(path))
        parts = tuple(key.split(delimiter)) if key else ()
        attached.append((parts, path))
    files.add_referenced(pending)
    files.check_refs()
    validators = tuple(
        AttachedSchema(parts, path, validator_class(files.documents["file://" + path],
                                                    registry=files.registry))
        for parts, path in attached)
    return SchemaSet(directory, validators, files.documents, files.registry)


def _join(base_uri: str, ref: str) -> str:
    return urljoin(base_uri, ref)


def _follow(registry: Any, uri: str, ref: str, shown: str, errors: Any,
            display: Callable[[str], str]) -> None:
    """Resolve `ref` (written in `uri`) and the `$ref`-only schemas it leads to; a ConfigError
    for a place that does not exist or a chain that comes back to where it started."""
    seen: set[str] = set()
    base, current = uri, ref
    while True:
        target = _join(base, current)
        if target in seen:
            raise ConfigError(f"schema file {shown}: $ref {ref!r} loops: its $refs lead back "
                              f"to {display(_file_of(target))}")
        seen.add(target)
        try:
            resolved = registry.resolver(base_uri=base).lookup(current)
        except errors.Unresolvable:
            holder = display(_file_of(urldefrag(base).url))
            raise ConfigError(f"schema file {holder}: $ref {current!r} cannot be resolved: no "
                              f"such place in {display(_file_of(urldefrag(target).url))}"
                              ) from None
        contents = resolved.contents
        if not (isinstance(contents, dict) and set(contents) <= REF_ONLY_KEYS
                and isinstance(contents.get("$ref"), str)):
            return
        base, current = urldefrag(target).url, contents["$ref"]
