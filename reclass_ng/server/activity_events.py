"""What a write changed, in the words of PE's activity service: the object (a node group, a
node's configuration, the class catalogue), a readable message, and one event per changed
field with its value before and after.

Built from a file's bytes before and after the write, so every write path (group writes, pins,
imports, node configuration, catalogue syncs) is described by the same code and the record
says what reached the disk, not what a route meant to do.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

import attrs
import yaml

from reclass_ng.classifier.group_files import GROUPS_DIR_NAME

NODE_GROUP = "node_group"
NODE = "node"
CLASS_CATALOGUE = "class_catalogue"
OBJECT_TYPES = (NODE_GROUP, NODE, CLASS_CATALOGUE)
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@attrs.frozen
class Change:
    """One object's change: what PE's activity API calls a commit."""

    object_type: str
    object_id: str
    object_name: str
    message: str
    events: list[dict[str, Any]]


def _plain(value: Any) -> Any:
    """`value` as JSON can carry it (YAML dates and the like become strings)."""
    return json.loads(json.dumps(value, default=str))


def _mapping(content: bytes | None) -> dict[str, Any] | None:
    if content is None:
        return None
    try:
        loaded = yaml.load(content, Loader=_SafeLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return {"unparsed": content.decode("utf-8", "replace")}
    return _plain(loaded) if isinstance(loaded, dict) else {"value": _plain(loaded)}


def _object_of(relative: str, before: dict[str, Any] | None, after: dict[str, Any] | None
               ) -> tuple[str, str, str]:
    path = PurePosixPath(relative)
    data = after if after is not None else before or {}
    # A group file may be a symbolic link whose target lies elsewhere in the inventory (the
    # write goes to the target): its content still says it is a group.
    if (path.parts and path.parts[0] == GROUPS_DIR_NAME) or ("id" in data and "name" in data):
        return NODE_GROUP, str(data.get("id", relative)), str(data.get("name", path.stem))
    if path.parts and path.parts[0] == "nodes":
        return NODE, path.stem, path.stem
    return CLASS_CATALOGUE, relative, path.name


_NOUNS = {NODE_GROUP: "group", NODE: "configuration of node", CLASS_CATALOGUE: "class catalogue"}


def describe_change(relative: str, before: bytes | None, after: bytes | None) -> Change | None:
    """The change of the file at `relative` (inventory-relative, `/`-separated) from `before`
    to `after` (None: absent); None when the data did not change (a reformatted file)."""
    old, new = _mapping(before), _mapping(after)
    if old == new:
        return None
    kind, object_id, name = _object_of(relative, old, new)
    noun = _NOUNS[kind]
    subject = f'the "{name}" {noun}' if kind == NODE_GROUP else f'the {noun} "{name}"'
    if kind == CLASS_CATALOGUE:
        subject = f"the class catalogue ({name})"
    if old is None:
        verb, action = "Created", "create"
    elif new is None:
        verb, action = "Deleted", "delete"
    else:
        verb, action = "Changed", "edit"
    events = []
    old_fields, new_fields = old or {}, new or {}
    for field in sorted(set(old_fields) | set(new_fields)):
        if old_fields.get(field) == new_fields.get(field) and (field in old_fields) == \
                (field in new_fields):
            continue
        # PE's event fields: `type` the action, `what` the part of the object it touched,
        # `description` the two joined (`create_node_class`), `message` for people.
        events.append({
            "type": action, "what": field, "description": f"{action}_{field}",
            "message": f'{verb} {field} of {subject}' if verb == "Changed"
            else f"{verb} {subject}: {field}",
            "old_value": old_fields.get(field), "new_value": new_fields.get(field),
        })
    fields = ", ".join(str(e["what"]) for e in events)
    if verb == "Changed":
        message = f"Changed {fields} of {subject}"
    else:
        message = f"{verb} {subject}" + (f" with id {object_id}" if kind == NODE_GROUP else "")
    return Change(kind, object_id, name, message, events)
