"""Writing desired state back to the inventory's YAML: atomically, under a cross-process lock,
keeping the file's comments and key order.

People review these files in git, so a write changes only the values that changed: the file is
loaded with ruamel.yaml's round-trip loader and updated in place (a plain dump would drop every
comment and reorder keys). A write goes to a hidden temporary file in the same directory and is
renamed over the old one, so a reader (or a crash) sees the old file or the new one, never half.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

LOCK_FILE_NAME = ".reclass-ng.lock"
# Lists under these keys read best on one line, as the example inventory writes them.
FLOW_STYLE_KEYS = ("rule", "pinned", "reclass_classes")


def _round_trip() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def file_etag(content: bytes) -> str:
    """A strong ETag for a file's bytes: any change on disk (hand edits too) changes it."""
    return '"' + hashlib.sha256(content).hexdigest()[:32] + '"'


def file_serial(content: bytes) -> int:
    """The group's `serial_number`: the first 52 bits of the same hash as the ETag, so it needs
    no counter anywhere (hand edits change it too) and stays an exact JSON number (< 2**53)."""
    return int(hashlib.sha256(content).hexdigest()[:13], 16)


@contextlib.contextmanager
def inventory_lock(inventory_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive flock on `<inventory>/.reclass-ng.lock` (shared by every process that
    writes this inventory, unlike a threading lock). The file is hidden, so no loader reads it."""
    path = Path(inventory_dir) / LOCK_FILE_NAME
    with open(path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Replace `path` with `text`: temp file in the same directory, fsync, then os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o777)
        else:
            os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _styled(key: str | None, value: Any) -> Any:
    """Plain data as ruamel nodes, lists under FLOW_STYLE_KEYS in flow style."""
    if isinstance(value, Mapping):
        node = CommentedMap()
        for k, v in value.items():
            node[k] = _styled(None, v)
        return node
    if isinstance(value, list):
        seq = CommentedSeq(_styled(key, v) for v in value)
        if key in FLOW_STYLE_KEYS:
            seq.fa.set_flow_style()
        return seq
    if key in FLOW_STYLE_KEYS and isinstance(value, str):
        return DoubleQuotedScalarString(value)  # "~" and regexes stay readable, as hand-written
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _update_in_place(node: CommentedMap, wanted: Mapping[str, Any], top_key: str | None) -> None:
    """Make `node` equal `wanted`, touching only what differs (so comments on unchanged keys
    and the order of existing keys survive)."""
    for key in [k for k in node if k not in wanted]:
        del node[key]
    for key, value in wanted.items():
        flow_key = key if top_key is None else top_key
        current = node.get(key)
        if key in node and isinstance(current, CommentedMap) and isinstance(value, Mapping):
            _update_in_place(current, value, flow_key)
        elif key in node and _plain(current) == value and type(_plain(current)) is type(value):
            continue
        else:
            node[key] = _styled(flow_key, value)


def render_update(existing_text: str | None, wanted: Mapping[str, Any]) -> str:
    """The YAML text for `wanted`, edited into `existing_text` when there is one."""
    yaml = _round_trip()
    document = yaml.load(existing_text) if existing_text else None
    if not isinstance(document, CommentedMap):
        document = CommentedMap()
    _update_in_place(document, wanted, None)
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()
