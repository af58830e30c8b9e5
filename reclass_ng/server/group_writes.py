"""Changing groups through the API: check the whole proposed tree, then write one YAML file.

Every write runs under the inventory lock and re-reads the files inside it, so the checks see
what is on disk now (another process or a person may have changed it). A write that would add
a problem to the tree (missing parent, cycle, duplicate name) changes nothing. Optimistic
concurrency: a client that sends `If-Match` with the ETag it read, or the group's
`serial_number` in the body (as the classifier's clients do), gets 409 if the file changed since,
and nothing is written. Both are hashes of the group file's bytes, so they need no stored counter
and see hand edits too. Under the lock the change is applied to the group parsed from exactly
the bytes the check compared (`write_snapshot`), and the rendered file is parsed back and
compared with what was meant before it replaces the old one.
"""

from __future__ import annotations

import contextlib
import copy
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from reclass_ng.classifier.errors import ROOT_RULE_EDIT, SCHEMA_VIOLATION
from reclass_ng.classifier.group_files import GROUPS_DIR_NAME
from reclass_ng.classifier.groups import (
    DEFAULT_ENVIRONMENT,
    ROOT_GROUP_ID,
    ROOT_RULE_DATA,
    Group,
    group_from_data,
    is_uuid,
)
from reclass_ng.classifier.hierarchy import validate_groups
from reclass_ng.server.errors import (
    CHILDREN_PRESENT,
    CONFLICTING_IDS,
    MALFORMED_UUID,
    ROOT_DELETE,
    STALE_WRITE,
    ApiError,
    from_problems,
    not_found,
)
from reclass_ng.server.http import if_match_tags
from reclass_ng.server.inventory_state import InventoryState, Snapshot
from reclass_ng.server.referent_checks import check_expansion, check_referents
from reclass_ng.server.yaml_files import (
    atomic_write,
    checked_render,
    file_etag,
    file_serial,
    inventory_lock,
    remove_file,
)

# Values a group has when its file leaves the key out; not written unless the file has the key.
_DEFAULTS: dict[str, Any] = {
    "environment": DEFAULT_ENVIRONMENT, "environment_trumps": False, "classes": {}, "variables": {},
    "config_data": {},
}


SERIAL_NUMBER = "serial_number"


@attrs.frozen
class WriteResult:
    """What a write did: the group as stored now (with its serial_number), its file's ETag, and
    whether it changed."""

    group: dict[str, Any]
    etag: str
    changed: bool


def with_serial(data: dict[str, Any], content: bytes) -> dict[str, Any]:
    """The group's API form: its data plus the `serial_number` of its file's bytes."""
    return {**data, SERIAL_NUMBER: file_serial(content)}


def check_uuid(text: str) -> str:
    """A group id from a URL, lower-cased; 400 malformed-uuid if it is not a UUID."""
    if not is_uuid(text):
        raise ApiError(400, MALFORMED_UUID, f"{text!r} is not a UUID", text)
    return text.lower()


@contextlib.contextmanager
def locked_group(state: InventoryState, group_id: str, url: str
                 ) -> Iterator[tuple[Snapshot, Group]]:
    """Hold the inventory lock for the block and yield the groups as they are on disk now (the
    write snapshot) with the group `group_id` (an id check_uuid returned); 404 naming `url`
    when there is no such group."""
    with inventory_lock(state.inventory_dir):
        snapshot = state.write_snapshot()
        group = snapshot.group(group_id)
        if group is None:
            raise not_found(url)
        yield snapshot, group


def group_view(snapshot: Snapshot, group: Group, data: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """`data` (default: the group's own) with the serial_number of the file version the
    snapshot parsed it from."""
    return with_serial(group.to_data() if data is None else data, snapshot.content(group))


def split_serial(body: Any) -> tuple[Any, int | None]:
    """The body without `serial_number`, and that number (None when absent or null); 400
    schema-violation when it is not an integer."""
    if not isinstance(body, Mapping) or SERIAL_NUMBER not in body:
        return body, None
    rest = {k: v for k, v in body.items() if k != SERIAL_NUMBER}
    serial = body[SERIAL_NUMBER]
    if serial is not None and (isinstance(serial, bool) or not isinstance(serial, int)):
        raise ApiError(400, SCHEMA_VIOLATION, f"serial_number: expected an integer (as GET "
                       f"returned it), got {serial!r}",
                       {"submitted": dict(body), "error": {SERIAL_NUMBER: "expected an integer"}})
    return rest, serial


def check_serial(serial: int | None, current: bytes | None) -> None:
    """409 when the client's serial_number is not the one of the file as it is now."""
    if serial is None:
        return
    now = file_serial(current) if current is not None else None
    if serial != now:
        raise ApiError(409, STALE_WRITE,
                       f"The group changed since you read it (serial_number {serial} is stale; "
                       f"it is now {now}); nothing was written. Read it again and re-apply your "
                       "change.", {SERIAL_NUMBER: serial, "current": now})


def check_if_match(if_match: str | None, current_etag: str | None, what: str = "group") -> None:
    """409 stale-write unless If-Match names the current ETag (or is `*` and the resource
    exists); 400 for an empty or unreadable header (see if_match_tags)."""
    wanted = if_match_tags(if_match)
    if wanted is None or (wanted == ["*"] and current_etag is not None):
        return
    if current_etag is None or current_etag not in wanted:
        raise ApiError(409, STALE_WRITE,
                       f"The {what} changed since you read it (If-Match does not match its ETag); "
                       "nothing was written. Read it again and re-apply your change.",
                       {"if_match": if_match, "etag": current_etag})


def read_submitted(data: Any, file: str | None) -> Group:
    group, problems = group_from_data(data, file)
    if problems:
        raise from_problems(problems)
    assert group is not None
    return group


def _check_tree(snapshot: Snapshot, proposed: list[Group]) -> None:
    """422 for problems the change adds; problems already in the files do not block it."""
    before = {(p.kind, p.message) for p in snapshot.problems}
    added = [p for p in validate_groups(proposed) if (p.kind, p.message) not in before]
    if added:
        raise from_problems(added)


def _file_data(group: Group, existing: Mapping[str, Any]) -> dict[str, Any]:
    """What goes into the file: the group's fields, minus defaults the file did not spell out."""
    data = group.to_data()
    for key, default in _DEFAULTS.items():
        if key not in existing and data.get(key) == default:
            data.pop(key, None)
    if group.is_root:
        for key in ("parent", "rule"):
            if key not in existing:
                data.pop(key, None)
    return data


def _slug(name: str) -> str:
    # Bounded: the name may be long, a file name may not (255 bytes on most file systems).
    return re.sub(r"[^a-z0-9]+", "-", name.lower())[:80].strip("-") or "group"


def group_file_name(group: Group, taken: Callable[[str], bool]) -> str:
    """The file name for a new group in groups/: `<slug of its name>.yml`, or, when `taken`
    says that name is used, `<slug>-<first 8 characters of its id>.yml`."""
    name = f"{_slug(group.name)}.yml"
    return f"{_slug(group.name)}-{group.id[:8]}.yml" if taken(name) else name


def group_file_text(group: Group, current: str | None, file: str) -> str:
    """The YAML text of `group`'s file: edited into the file's `current` text (its comments,
    key order and the defaults it spelled out survive) or written anew (None), then read back
    and compared with the group (checked_render: 422 when YAML cannot carry it). `file` names
    the file in that error."""
    return checked_render(current, _file_data(group, _existing_mapping(current or "")), file)


def _new_group_path(state: InventoryState, group: Group) -> Path:
    directory = state.inventory_dir / GROUPS_DIR_NAME
    return directory / group_file_name(group, lambda name: (directory / name).exists())


def _existing_mapping(text: str) -> Mapping[str, Any]:
    try:
        loaded = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, Mapping) else {}


def store(state: InventoryState, snapshot: Snapshot, group: Group, old: Group | None,
          if_match: str | None, serial: int | None) -> WriteResult:
    """Validate `group` (replacing `old`) against the tree and write its file."""
    path = state.group_path(old) if old is not None else _new_group_path(state, group)
    # The bytes `old` was parsed from, read under the lock: what the client's tag must match.
    current_bytes = snapshot.content(old) if old is not None else None
    current = current_bytes.decode("utf-8") if current_bytes is not None else None
    check_if_match(if_match, file_etag(current_bytes) if current_bytes is not None else None)
    check_serial(serial, current_bytes)
    if current_bytes is not None and old is not None and old.to_data() == group.to_data():
        return WriteResult(with_serial(old.to_data(), current_bytes), file_etag(current_bytes),
                           False)
    proposed = [g for g in snapshot.groups if g.id != group.id] + [group]
    _check_tree(snapshot, proposed)
    check_referents(state.inventory_dir, snapshot, proposed, [group.id])
    check_expansion(state, snapshot, proposed, [group])
    shown = str(path.relative_to(state.inventory_dir))
    text = group_file_text(group, current, shown)
    atomic_write(path, text, state.inventory_dir)
    return WriteResult(with_serial(group.to_data(), text.encode()), file_etag(text.encode()),
                       True)


def put_group(state: InventoryState, group_id: str, body: Any, if_match: str | None) -> WriteResult:
    """PUT /v1/groups/<id>: create or replace the whole group."""
    group_id = check_uuid(group_id)
    body, serial = split_serial(body)
    if not isinstance(body, Mapping):
        raise from_problems(group_from_data(body)[1])
    submitted = body.get("id")
    if submitted is not None and str(submitted).lower() != group_id:
        raise ApiError(400, CONFLICTING_IDS,
                       f"The id in the body ({submitted}) differs from the id in the URL "
                       f"({group_id}).", {"submitted": submitted, "fromUrl": group_id})
    with inventory_lock(state.inventory_dir):
        snapshot = state.write_snapshot()
        old = snapshot.group(group_id)
        file = old.file if old is not None else None
        group = read_submitted({**body, "id": group_id}, file)
        return store(state, snapshot, group, old, if_match, serial)


def create_group(state: InventoryState, body: Any) -> WriteResult:
    """POST /v1/groups: a new group with a server-chosen id (a serial_number is ignored: there
    is nothing it could be stale against)."""
    body, _ = split_serial(body)
    if not isinstance(body, Mapping):
        raise from_problems(group_from_data(body)[1])
    if "id" in body:
        raise ApiError(400, SCHEMA_VIOLATION, "POST /v1/groups chooses the id; use PUT "
                       "/v1/groups/<id> to create a group with an id of your choice",
                       {"submitted": dict(body), "error": {"id": "disallowed-key"}})
    with inventory_lock(state.inventory_dir):
        snapshot = state.write_snapshot()
        group = read_submitted({**body, "id": str(uuid.uuid4())}, None)
        return store(state, snapshot, group, None, None, None)


def _merge_dropping_nulls(base: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(dict(base))
    for key, value in delta.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge_dropping_nulls(merged[key], value)
        else:
            merged[key] = _merge_dropping_nulls({}, value) if isinstance(value, Mapping) else value
    return merged


def apply_delta(state: InventoryState, group_id: str, delta: Any, if_match: str | None
                ) -> WriteResult:
    """POST /v1/groups/<id>: merge `classes`/`variables`/`config_data` (null removes), replace
    other fields."""
    group_id = check_uuid(group_id)
    delta, serial = split_serial(delta)
    if not isinstance(delta, Mapping):
        raise ApiError(400, SCHEMA_VIOLATION, "a group delta must be a JSON object",
                       {"submitted": delta, "error": "not an object"})
    if "id" in delta and str(delta["id"]).lower() != group_id:
        raise ApiError(400, CONFLICTING_IDS,
                       f"The id in the body ({delta['id']}) differs from the id in the URL "
                       f"({group_id}).", {"submitted": delta["id"], "fromUrl": group_id})
    with locked_group(state, group_id, f"/v1/groups/{group_id}") as (snapshot, old):
        if old.is_root and "rule" in delta and delta["rule"] != ROOT_RULE_DATA:
            raise ApiError(422, ROOT_RULE_EDIT,
                           "Changing the root group's rule is not allowed; none of the delta's "
                           "edits were applied.", dict(delta))
        data = old.to_data()
        for key, value in delta.items():
            if key in ("classes", "variables", "config_data") and isinstance(value, Mapping):
                data[key] = _merge_dropping_nulls(data.get(key) or {}, value)
            elif value is None:
                data.pop(key, None)
            else:
                data[key] = value
        group = read_submitted(data, old.file)
        return store(state, snapshot, group, old, if_match, serial)


def delete_group(state: InventoryState, group_id: str, if_match: str | None) -> None:
    """DELETE /v1/groups/<id>: remove the group's file; never the root or a parent."""
    group_id = check_uuid(group_id)
    with locked_group(state, group_id, f"/v1/groups/{group_id}") as (snapshot, group):
        if group.is_root:
            raise ApiError(422, ROOT_DELETE, "The root group cannot be deleted.", group.to_data())
        children = [g for g in snapshot.groups if g.parent == group.id and g.id != group.id]
        if children:
            names = [c.name for c in children]
            raise ApiError(422, CHILDREN_PRESENT,
                           f"The group cannot be deleted because it has children: {names}",
                           {"group": group.to_data(), "children": [c.to_data() for c in children]})
        check_if_match(if_match, file_etag(snapshot.content(group)))
        remove_file(state.group_path(group))


def validate_only(state: InventoryState, body: Any) -> dict[str, Any]:
    """POST /v1/validate/group: every check a write would make, writing nothing."""
    body, _ = split_serial(body)
    if not isinstance(body, Mapping):
        raise from_problems(group_from_data(body)[1])
    data = dict(body)
    data.setdefault("id", str(uuid.uuid4()))
    if data["id"] == ROOT_GROUP_ID and "rule" in data and data["rule"] != ROOT_RULE_DATA:
        raise ApiError(422, ROOT_RULE_EDIT, "The root group's rule cannot be changed.", data)
    group = read_submitted(data, None)
    snapshot = state.snapshot()
    old = snapshot.group(group.id)
    if old is not None:
        group = attrs.evolve(group, file=old.file)
    proposed = [g for g in snapshot.groups if g.id != group.id] + [group]
    _check_tree(snapshot, proposed)
    check_referents(state.inventory_dir, snapshot, proposed, [group.id])
    check_expansion(state, snapshot, proposed, [group])
    return group.to_data()

