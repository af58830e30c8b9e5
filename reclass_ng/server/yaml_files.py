"""Writing desired state back to the inventory's YAML: atomically, under a cross-process lock,
keeping the file's comments and key order.

People review these files in git, so a write changes only the values that changed: the file is
loaded with ruamel.yaml's round-trip loader and updated in place (a plain dump would drop every
comment and reorder keys). A write goes to a hidden temporary file in the same directory and is
renamed over the old one, so a reader (or a crash) sees the old file or the new one, never half
(classifier.atomic_files, shared with every other file the project writes).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import fcntl
import hashlib
import io
import math
import os
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from reclass_ng.classifier.atomic_files import TEMP_PREFIX, atomic_write_text
from reclass_ng.server.errors import (
    INVENTORY_LOCKED,
    UNREPRESENTABLE_VALUE,
    UNWRITABLE_FILE,
    ApiError,
)
from reclass_ng.values import to_plain

LOCK_FILE_NAME = ".reclass-ng.lock"


class WriteJournalHooks(Protocol):
    """What the activity log (server/activity_log.py) needs to see of a write."""

    def locked(self) -> None: ...

    def before_change(self, path: str | os.PathLike[str]) -> None: ...

    def unlocking(self) -> None: ...


# The journal of the API write running in this thread (set by WriteJournal.run, in the write
# thread itself); None for writes outside the API (the CLI, tests), which keep no log.
WRITE_JOURNAL: contextvars.ContextVar[WriteJournalHooks | None] = contextvars.ContextVar(
    "WRITE_JOURNAL", default=None)
# How long a write waits for the inventory lock before answering 503 (someone holds it: another
# server, a person's script); the worker thread is then free again.
LOCK_TIMEOUT_SECONDS = 10.0
# Temporary files of a write start with TEMP_PREFIX; one left behind (a killed process) is
# removed by the next write in the same directory, under the lock, when no write of ours can be
# running.
_SafeLoader = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
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
def inventory_lock(inventory_dir: str | os.PathLike[str],
                   timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold an exclusive flock on `<inventory>/.reclass-ng.lock` (shared by every process that
    writes this inventory, unlike a threading lock). The file is hidden, so no loader reads it.

    The lock file is opened without following a symlink (a link planted there must not make us
    create or lock a file outside the inventory), and a holder that keeps it longer than
    `timeout` gets the waiting request a 503 instead of a stalled worker."""
    path = Path(inventory_dir) / LOCK_FILE_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as err:
        reason = "it is a symbolic link" if err.errno == errno.ELOOP else err.strerror
        raise ApiError(503, INVENTORY_LOCKED, f"Cannot use the lock file {path}: {reason}; "
                       "nothing was written.", {"lock_file": str(path)}) from err
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ApiError(503, INVENTORY_LOCKED, f"The lock file {path} is not a regular "
                           "file; nothing was written.", {"lock_file": str(path)})
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ApiError(503, INVENTORY_LOCKED,
                                   f"The inventory is locked by another writer ({path} held "
                                   f"for over {timeout:g} s); nothing was written. Try again.",
                                   {"lock_file": str(path), "waited_seconds": timeout},
                                   headers={"Retry-After": "5"}) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            journal = WRITE_JOURNAL.get()
            if journal is not None:
                journal.locked()
            try:
                yield
            finally:
                if journal is not None:
                    journal.unlocking()
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def remove_stale_temp_files(directory: str | os.PathLike[str]) -> list[str]:
    """Delete temporary files that killed writes left in `directory`. Call under the lock."""
    removed = []
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


def remove_stale_temp_files_below(inventory_dir: str | os.PathLike[str]) -> None:
    """At start-up: temp files of killed writes anywhere under groups/ and nodes/, taken
    under the lock (another server on the same inventory may be writing)."""
    with inventory_lock(inventory_dir):
        for top in ("groups", "nodes"):
            for parent, dirnames, _ in os.walk(Path(inventory_dir) / top):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                remove_stale_temp_files(parent)


def atomic_write(path: str | os.PathLike[str], text: str,
                 inventory_dir: str | os.PathLike[str] | None = None) -> None:
    """Replace `path` with `text` atomically and durably (classifier.atomic_files; a symbolic
    link is written through to its target). Given `inventory_dir`, a link whose target lies
    outside it, or is not a regular file, is refused (409 unwritable-file): a link planted in a
    repository must not make the service overwrite a file elsewhere. Call under the inventory
    lock: it also clears temp files of earlier killed writes in that directory."""
    target = Path(os.path.realpath(path))
    if inventory_dir is not None and os.path.islink(path):
        _check_link_target(Path(path), target, Path(os.path.realpath(inventory_dir)))
    remove_stale_temp_files(target.parent)
    note_change(target)
    atomic_write_text(target, text)


def note_change(path: str | os.PathLike[str]) -> None:
    """Tell the running API write's journal (if any) that `path` is about to change: call it
    under the inventory lock before every write or removal of an inventory file."""
    journal = WRITE_JOURNAL.get()
    if journal is not None:
        journal.before_change(path)


def remove_file(path: str | os.PathLike[str]) -> None:
    """Remove an inventory file (under the lock), noted in the write's journal first."""
    note_change(path)
    os.unlink(path)


def _check_link_target(link: Path, target: Path, inventory: Path) -> None:
    problem = None
    if not target.is_relative_to(inventory):
        problem = "outside the inventory"
    elif target.exists() and not target.is_file():
        problem = "not a regular file"
    if problem is not None:
        raise ApiError(409, UNWRITABLE_FILE, f"{link.name} is a symbolic link to {target}, "
                       f"which is {problem}; the service writes only regular files inside the "
                       "inventory. Nothing was written.",
                       {"file": str(link), "target": str(target)})


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
        elif key in node and to_plain(current) == value and type(to_plain(current)) is type(value):
            continue
        else:
            node[key] = _styled(flow_key, value)
        _drop_comments_of_emptied(node, key)


def _drop_comments_of_emptied(parent: CommentedMap, key: Any) -> None:
    """An empty mapping or list is written in flow style (`{}`, `[]`) on the key's line. A
    comment that stood between the key and its first entry is kept by ruamel in the key's
    slot and in the child's leading comment; emitted, it ends the key's line, so `{}` lands at
    column 0 and the file no longer parses (or means something else). Such a comment described
    an entry that is gone: drop it with the entries."""
    value = parent.get(key)
    if not isinstance(value, (CommentedMap, CommentedSeq)) or len(value) != 0:
        return
    slots = parent.ca.items.get(key)
    if slots is not None:
        slots[2:] = [None] * (len(slots) - 2)
        if all(slot is None for slot in slots):
            del parent.ca.items[key]
    if value.ca.comment is not None:
        value.ca.comment = None
    value.ca.items.clear()


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


def unrepresentable_value(value: Any, path: str = "") -> str | None:
    """Where `value` holds something a YAML file cannot carry back to JSON unchanged (NaN or an
    infinity, a lone surrogate or other non-character, a non-string key), as a message; None
    when everything round-trips. Walks with an explicit stack: depth is not a problem here."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where or 'the body'}: {item!r} has no JSON or YAML equivalent"
        if isinstance(item, str):
            problem = _string_problem(item)
            if problem:
                return f"{where or 'the body'}: the string {problem}"
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{where or 'the body'}: key {key!r} is not a string"
                problem = _string_problem(key)
                if problem:
                    return f"{where or 'the body'}: the key {problem}"
                stack.append((f"{where}.{key}" if where else key, child))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))
    return None


def _string_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{text[:40]!r} holds a lone surrogate (not a Unicode character)"
    return None


def checked_render(existing_text: str | None, wanted: Mapping[str, Any], file: str) -> str:
    """render_update, then parse the result back as every reader will (PyYAML, YAML 1.1) and
    compare with `wanted`: a write whose file would mean something else is refused (422)
    before anything reaches the disk."""
    problem = unrepresentable_value(wanted)
    if problem:
        raise ApiError(422, UNREPRESENTABLE_VALUE, f"{problem}; nothing was written.",
                       {"file": file, "error": problem})
    text = render_update(existing_text, wanted)
    try:
        reread = pyyaml.load(text, Loader=_SafeLoader)
    except pyyaml.YAMLError as err:
        raise ApiError(422, UNREPRESENTABLE_VALUE, f"{file}: the values cannot be written as "
                       f"YAML that reads back ({err}); nothing was written.",
                       {"file": file, "error": str(err)}) from err
    reread = {} if reread is None else reread
    difference = first_difference(dict(wanted), reread)
    if difference is not None:
        raise ApiError(422, UNREPRESENTABLE_VALUE, f"{file}: {difference} would not read back "
                       "unchanged from YAML (e.g. a line-break character such as NEL in a "
                       "name, or a value YAML types differently); nothing was written.",
                       {"file": file, "error": difference})
    return text


def first_difference(wanted: Any, got: Any, path: str = "") -> str | None:
    """The first key path where `got` differs from `wanted` (type included), or None."""
    stack: list[tuple[str, Any, Any]] = [(path, wanted, got)]
    while stack:
        where, left, right = stack.pop()
        shown = where or "the document"
        if isinstance(left, Mapping) and isinstance(right, Mapping):
            if list(left) != list(right) and set(left) != set(right):
                return f"{shown} (keys {sorted(map(str, set(left) ^ set(right)))[:5]})"
            stack.extend((f"{where}.{k}" if where else str(k), left[k], right[k]) for k in left)
        elif isinstance(left, list) and isinstance(right, list):
            if len(left) != len(right):
                return shown
            stack.extend((f"{where}[{i}]", a, b) for i, (a, b) in enumerate(zip(left, right, strict=True)))
        elif type(left) is not type(right) or left != right:
            return shown
    return None
