"""Pinning nodes to groups, as the Node Classifier's pin and unpin endpoints do.

A pinned node is a name condition OR'd into the group's rule, `["or", <rule>,
["=", "name", NODE], ...]`, written into the group's YAML file: after a pin, the file and
`GET /v1/groups/<id>` show exactly the rule the classifier would show, and a person reading the
file sees why the node matches. Pins still need the ancestors' rules to match (rules inherit).

Unpinning removes those name conditions from the rule's top-level `or` (and the node from the
reclass-ng `pinned:` list, the other way a file can pin a node). When a single condition is left
the `or` is unwrapped again, so pinning then unpinning a node gives back the original rule.
Writes go through group_writes: the same lock, checks and atomic, comment-keeping write.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.classifier.groups import Group
from reclass_ng.server import group_writes
from reclass_ng.server.errors import ApiError
from reclass_ng.server.inventory_state import InventoryState
from reclass_ng.server.yaml_files import inventory_lock


def _name_condition(node: str) -> list[str]:
    return ["=", "name", node]


def _is_name_condition(term: Any, nodes: set[str]) -> bool:
    return (isinstance(term, list) and len(term) == 3 and term[0] == "=" and term[1] == "name"
            and term[2] in nodes)


def pinned_nodes(group: Group) -> set[str]:
    """The nodes pinned to the group: top-level name conditions of its rule, and `pinned:`."""
    rule = group.rule_data
    terms: list[Any] = []
    if isinstance(rule, list) and rule and rule[0] == "or":
        terms = list(rule[1:])
    elif rule is not None:
        terms = [rule]
    names = {t[2] for t in terms if isinstance(t, list) and len(t) == 3 and t[0] == "="
             and t[1] == "name" and isinstance(t[2], str)}
    return names | set(group.pinned)


def rule_with_pins(rule: Any, nodes: Iterable[str]) -> Any:
    """The rule with `["=", "name", node]` OR'd in for each node (appended to a top-level `or`,
    else wrapping the rule in one)."""
    new_terms = [_name_condition(n) for n in nodes]
    if not new_terms:
        return rule
    if rule is None:
        return ["or", *new_terms]
    if isinstance(rule, list) and rule and rule[0] == "or":
        return [*rule, *new_terms]
    return ["or", rule, *new_terms]


def rule_without_pins(rule: Any, nodes: set[str]) -> Any:
    """The rule with the nodes' name conditions taken out of its top-level `or`."""
    if _is_name_condition(rule, nodes):
        return None
    if not (isinstance(rule, list) and rule and rule[0] == "or"):
        return rule
    kept = [t for t in rule[1:] if not _is_name_condition(t, nodes)]
    if len(kept) == len(rule) - 1:
        return rule
    if not kept:
        return None
    # One condition left: unwrap, so pin-then-unpin restores the rule as it was written.
    return kept[0] if len(kept) == 1 else ["or", *kept]


def nodes_from_request(query_nodes: str | None, body: Any) -> list[str]:
    """The node names of a pin request: `?nodes=a,b` and/or a body `{"nodes": [...]}` (or
    `{"nodes": "a"}`); 400 schema-violation when neither names a node or a name is not text."""
    names: list[str] = []
    if query_nodes:
        names += [n.strip() for n in query_nodes.split(",") if n.strip()]
    if body is not None:
        value = body.get("nodes") if isinstance(body, dict) and set(body) == {"nodes"} else None
        if isinstance(value, str):
            value = [value]
        if not (isinstance(value, list) and all(isinstance(n, str) and n for n in value)):
            raise ApiError(400, SCHEMA_VIOLATION, 'The body must be {"nodes": [NODE, ...]} '
                           "with non-empty node names.",
                           {"submitted": body, "error": {"nodes": "a list of node names"}})
        names += value
    if not names:
        raise ApiError(400, SCHEMA_VIOLATION, 'Name the nodes: ?nodes=a,b or a body '
                       '{"nodes": ["a", "b"]}.', {"submitted": body, "error": {"nodes": "missing"}})
    return list(dict.fromkeys(names))  # keep order, drop repeats


def _rewrite(state: InventoryState, snapshot: Any, old: Group, data: dict[str, Any]) -> None:
    group = group_writes.read_submitted(data, old.file)
    group_writes.store(state, snapshot, group, old, None, None)


def pin(state: InventoryState, group_id: str, nodes: list[str]) -> None:
    """POST /v1/groups/<id>/pin: OR the nodes' name conditions into the group's rule."""
    group_id = group_writes.check_uuid(group_id)
    with group_writes.locked_group(state, group_id, f"/v1/groups/{group_id}/pin"
                                   ) as (snapshot, old):
        if old.is_root:
            return  # the root's rule matches every node already (and may not be edited)
        missing = [n for n in nodes if n not in pinned_nodes(old)]
        if not missing:
            return
        data = old.to_data()
        data["rule"] = rule_with_pins(old.rule_data, missing)
        _rewrite(state, snapshot, old, data)


def _unpinned_data(group: Group, nodes: set[str]) -> dict[str, Any] | None:
    """The group's data with the nodes unpinned, or None when none of them was pinned."""
    if group.is_root or not (pinned_nodes(group) & nodes):
        return None
    data = group.to_data()
    rule = rule_without_pins(group.rule_data, nodes)
    if rule is None:
        data.pop("rule", None)
    else:
        data["rule"] = rule
    pinned = [n for n in group.pinned if n not in nodes]
    if pinned:
        data["pinned"] = pinned
    else:
        data.pop("pinned", None)
    return data


def unpin(state: InventoryState, group_id: str, nodes: list[str]) -> None:
    """POST /v1/groups/<id>/unpin: take the nodes' pins out of the group."""
    group_id = group_writes.check_uuid(group_id)
    with group_writes.locked_group(state, group_id, f"/v1/groups/{group_id}/unpin"
                                   ) as (snapshot, old):
        data = _unpinned_data(old, set(nodes))
        if data is not None:
            _rewrite(state, snapshot, old, data)


def unpin_from_all(state: InventoryState, nodes: list[str]) -> dict[str, Any]:
    """POST /v1/commands/unpin-from-all: unpin the nodes from every group; lists, per node that
    was pinned somewhere, the groups it was unpinned from (`{id, name, environment}`)."""
    unpinned: dict[str, list[dict[str, str]]] = {}
    with inventory_lock(state.inventory_dir):
        for group in state.write_snapshot().groups:
            data = _unpinned_data(group, set(nodes))
            if data is None:
                continue
            # Re-read for each write: the previous one changed the files the checks compare.
            snapshot = state.write_snapshot()
            _rewrite(state, snapshot, group, data)
            for node in sorted(pinned_nodes(group) & set(nodes)):
                unpinned.setdefault(node, []).append(
                    {"id": group.id, "name": group.name, "environment": group.environment})
    return {"nodes": [{"name": n, "groups": unpinned[n]} for n in nodes if n in unpinned]}
