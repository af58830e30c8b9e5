"""Read-only views of one group in the current Node Classifier API: its subtree
(`/v1/group-children/<id>`), its rules with their PuppetDB translations
(`/v1/groups/<id>/rules`) and its nodes (`/v1/groups/<id>/nodes`).

PE answers `/nodes` from PuppetDB; here the nodes come from the observed state: every node
whose last reported facts match the group's inherited rule, and the group's pinned nodes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from reclass_ng.classifier.groups import Group, inherited_condition
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.rule_ast import Condition
from reclass_ng.classifier.rule_evaluator import matches, node_map
from reclass_ng.classifier.rule_translation import UntranslatableRuleError, translate_rule
from reclass_ng.server import group_access, group_writes
from reclass_ng.server.auth import Principal
from reclass_ng.server.errors import error_responses, not_found
from reclass_ng.server.http import blocking, page_parameter, require_auth, service

router = APIRouter()

# Deeper than any real hierarchy; the walk is iterative, so the cap only bounds the answer.
MAX_CHILDREN_DEPTH = 10_000


def _found_group(request: Request, principal: Principal, group_id: str
                 ) -> tuple[GroupTree, Group]:
    state = service(request).inventory
    group_id = group_writes.check_uuid(group_id)
    group_access.check_read(principal, state, group_id)
    tree = state.snapshot().valid_tree()
    group = tree.get(group_id)
    if group is None:
        raise not_found(str(request.url.path))
    return tree, group


def group_subtree(tree: GroupTree, group: Group, depth: int,
                  visible: Any = lambda g: True) -> dict[str, Any]:
    """The group with `children` (nested, `depth` levels) and `immediate_child_count` (all its
    children, whether shown or not), built without recursion."""
    top = {**group.to_data(), "children": [], "immediate_child_count": 0}
    pending: list[tuple[Group, dict[str, Any], int]] = [(group, top, 0)]
    while pending:
        current, shown, level = pending.pop()
        children = [c for c in tree.children(current) if c.id != current.id and visible(c)]
        shown["immediate_child_count"] = len(children)
        if level >= depth:
            continue
        for child in sorted(children, key=lambda g: g.name):
            entry = {**child.to_data(), "children": [], "immediate_child_count": 0}
            shown["children"].append(entry)
            pending.append((child, entry, level + 1))
    return top


@router.get("/v1/group-children/{group_id}", responses=error_responses(400, 401, 403, 404))
def group_children(group_id: str, request: Request) -> JSONResponse:
    """The group and its descendants as nested `children`, each with `immediate_child_count`;
    `?depth=N` limits the levels shown (0: the group alone)."""
    principal = require_auth(request, write=False)
    tree, group = _found_group(request, principal, group_id)
    depth = page_parameter(request, "depth", MAX_CHILDREN_DEPTH, MAX_CHILDREN_DEPTH)
    state = service(request).inventory
    seen = {g.id for g in group_access.visible(principal, state, tree.walk())}
    return JSONResponse([group_subtree(tree, group, depth, lambda g: g.id in seen)])


def _translated(condition: Condition | None, query_format: str) -> Any:
    if condition is None:
        return None
    try:
        return translate_rule(condition, query_format)
    except UntranslatableRuleError:
        return None  # PuppetDB's format cannot say it; the classifier rule still applies


def group_rules(tree: GroupTree, group: Group) -> dict[str, Any]:
    """`rule` (pins OR'd in, as the classifier stores them), `rule_with_inherited` and both
    PuppetDB translations of the latter (null where that format cannot express it)."""
    own = group.own_condition()
    inherited = inherited_condition(tree.chain(group))
    return {
        "rule": None if own is None else own.to_data(),
        "rule_with_inherited": None if inherited is None else inherited.to_data(),
        "translated": {"nodes_query_format": _translated(inherited, "nodes"),
                       "inventory_query_format": _translated(inherited, "inventory")},
    }


@router.get("/v1/groups/{group_id}/rules", responses=error_responses(400, 401, 403, 404))
def get_group_rules(group_id: str, request: Request) -> JSONResponse:
    """The group's rule, its inherited rule, and their PuppetDB translations."""
    principal = require_auth(request, write=False)
    tree, group = _found_group(request, principal, group_id)
    return JSONResponse(group_rules(tree, group))


def _group_nodes(request: Request, tree: GroupTree, group: Group) -> dict[str, Any]:
    condition = inherited_condition(tree.chain(group))
    pinned = set(group.pinned)
    found: dict[str, dict[str, Any]] = {}
    if condition is not None:
        for name, time, fact, trusted in service(request).observed.runtimes():
            if matches(condition, node_map(name, fact, trusted)):
                found[name] = {"name": name, "pinned": name in pinned, "last_seen": time}
    for name in pinned - set(found):
        found[name] = {"name": name, "pinned": True, "last_seen": None}
    return {"nodes": [found[name] for name in sorted(found)]}


@router.get("/v1/groups/{group_id}/nodes", responses=error_responses(400, 401, 403, 404))
async def get_group_nodes(group_id: str, request: Request) -> JSONResponse:
    """The nodes in the group: those whose last reported facts match its inherited rule, and
    its pinned nodes (`last_seen` null when they never reported facts)."""
    principal = require_auth(request, write=False)
    tree, group = await blocking(_found_group, request, principal, group_id)
    return JSONResponse(await blocking(_group_nodes, request, tree, group))
