"""Group subtrees of viewers and operators (server/auth.py): which groups a caller may see and
change. A group is in a caller's subtree when the caller's group is the group or an ancestor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reclass_ng.classifier.groups import Group, is_uuid
from reclass_ng.server.auth import Principal
from reclass_ng.server.errors import PERMISSION_DENIED, ApiError
from reclass_ng.server.inventory_state import InventoryState


def _outside(principal: Principal, what: str) -> ApiError:
    return ApiError(403, PERMISSION_DENIED,
                    f"Token {principal.name!r} may only use the groups below group "
                    f"{principal.group}; {what} is outside.", None)


def visible(principal: Principal, state: InventoryState, groups: Iterable[Group]) -> list[Group]:
    """The groups of `groups` the principal may see."""
    if principal.group is None:
        return list(groups)
    tree = state.snapshot().tree
    return [g for g in groups if principal.sees_group(tree, g.id)]


def check_read(principal: Principal, state: InventoryState, group_id: str) -> None:
    """403 when the group is outside the principal's subtree (unknown groups pass: 404 later)."""
    if principal.group is None:
        return
    snapshot = state.snapshot()
    if snapshot.group(group_id.lower()) is not None and \
            not principal.sees_group(snapshot.tree, group_id.lower()):
        raise _outside(principal, f"group {group_id}")


def check_write(principal: Principal, state: InventoryState, group_id: str | None,
                body: Any = None) -> None:
    """403 unless the group (when it exists) and its parent after the change are in the
    principal's subtree. A new group's parent must be in it; moving a group needs the new
    parent in it too."""
    if principal.group is None:
        return
    snapshot = state.snapshot()
    existing = snapshot.group(group_id.lower()) if group_id and is_uuid(group_id) else None
    if existing is not None and not principal.sees_group(snapshot.tree, existing.id):
        raise _outside(principal, f"group {existing.name!r}")
    parent = body.get("parent") if isinstance(body, Mapping) else None
    if existing is not None and (parent is None or str(parent).lower() == existing.parent):
        return  # the group stays where it is
    if not isinstance(parent, str) or not principal.sees_group(snapshot.tree, parent.lower()):
        raise _outside(principal, f"parent group {parent}")


def check_whole_tree(principal: Principal) -> None:
    """403 for a principal limited to a subtree (commands that touch every group)."""
    if principal.group is not None:
        raise _outside(principal, "this command touches every group, which")
