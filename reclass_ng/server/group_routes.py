"""`/v1/groups`, `/v1/validate/group` and `/v1/classified/nodes`: the Node Classifier v1 API
over the inventory's groups/ files."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from reclass_ng.classifier.classification import classification_steps, inherited_classification
from reclass_ng.classifier.errors import CLASSIFICATION_CONFLICT, SCHEMA_VIOLATION
from reclass_ng.classifier.explanation import explanation_from_steps
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.node_classification import render_classification
from reclass_ng.errors import ReclassError
from reclass_ng.server import group_access, group_writes
from reclass_ng.server.auth import ANONYMOUS_READER, CLASSIFY
from reclass_ng.server.errors import (
    MALFORMED_REQUEST,
    MAX_NAME_LENGTH,
    NODE_RENDER_ERROR,
    ApiError,
    error_responses,
    not_found,
)
from reclass_ng.server.http import blocking, json_body, require_auth, service, writing
from reclass_ng.server.inventory_state import Snapshot
from reclass_ng.server.referent_checks import annotate
from reclass_ng.server.yaml_files import file_etag

router = APIRouter()

_GROUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"},
        "description": {"type": "string"}, "parent": {"type": "string", "format": "uuid"},
        "environment": {"type": "string"}, "environment_trumps": {"type": "boolean"},
        "rule": {"type": "array"}, "classes": {"type": "object"}, "variables": {"type": "object"},
        "config_data": {"type": "object"}, "pinned": {"type": "array", "items": {"type": "string"}},
        "reclass_classes": {"type": "array", "items": {"type": "string"}},
        "serial_number": {"type": "integer"},
    },
}
_NODE_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {"fact": {"type": "object"}, "trusted": {"type": "object"},
                   "transaction_uuid": {"type": "string"}},
}


def _body_doc(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"requestBody": {"required": required,
                            "content": {"application/json": {"schema": schema}}}}


def _inherited_flag(request: Request) -> bool:
    value = request.query_params.get("inherited")
    return value is not None and value.lower() not in ("0", "false")


def _inherited_view(tree: GroupTree, group: Group) -> dict[str, Any]:
    """Classes and variables merged from the ancestors; rule `["and", own, parent..., root]`."""
    data = group.to_data()
    merged = inherited_classification(tree, group)
    data["classes"], data["variables"] = merged["classes"], merged["variables"]
    if merged.get("config_data"):
        data["config_data"] = merged["config_data"]
    rules = [g.rule_data for g in tree.chain(group) if g.rule_data is not None]
    data["rule"] = ["and", *rules]
    return data


def _group_json(group: dict[str, Any], status: int, etag: str) -> JSONResponse:
    return JSONResponse(group, status_code=status, headers={"ETag": etag})


@router.get("/v1/groups", responses=error_responses(401, 403, 500))
def list_groups(request: Request) -> JSONResponse:
    """Every group, read from groups/ (with `?inherited`: classes, variables and rule merged
    from the ancestors)."""
    principal = require_auth(request, write=False)
    state = service(request).inventory
    catalog = service(request).catalog.catalog()
    snapshot = state.snapshot()
    if _inherited_flag(request):
        tree = snapshot.valid_tree()
        return JSONResponse([annotate(group_writes.group_view(snapshot, g,
                                                              _inherited_view(tree, g)),
                                      g, catalog)
                             for g in group_access.visible(principal, state, tree.walk())])
    return JSONResponse([annotate(group_writes.group_view(snapshot, g), g, catalog)
                         for g in group_access.visible(principal, state, snapshot.groups)])


@router.get("/v1/groups/{group_id}", responses=error_responses(400, 401, 403, 404, 500))
@router.head("/v1/groups/{group_id}", operation_id="head_group",
             responses=error_responses(400, 401, 403, 404, 500))
def get_group(group_id: str, request: Request) -> JSONResponse:
    """One group, with its file's ETag and its `serial_number` (send either back, as If-Match
    or in the body, to update safely). HEAD gives the headers (the ETag) only."""
    principal = require_auth(request, write=False)
    state = service(request).inventory
    group_id = group_writes.check_uuid(group_id)
    group_access.check_read(principal, state, group_id)
    snapshot = state.snapshot()
    group = snapshot.group(group_id)
    if group is None:
        raise not_found(str(request.url.path))
    data = _inherited_view(snapshot.valid_tree(), group) if _inherited_flag(request) \
        else group.to_data()
    content = snapshot.content(group)  # the version `group` was parsed from
    data = annotate(data, group, service(request).catalog.catalog())
    return _group_json(group_writes.with_serial(data, content), 200, file_etag(content))


@router.put("/v1/groups/{group_id}", openapi_extra=_body_doc(_GROUP_SCHEMA),
            responses={201: {"description": "created or overwritten"},
                       **error_responses(400, 401, 403, 409, 413, 422)})
async def put_group(group_id: str, request: Request) -> JSONResponse:
    """Create or replace a group: 201 when written, 200 when identical to the stored one."""
    principal = require_auth(request, write=True)
    body = await json_body(request)
    await blocking(group_access.check_write, principal, service(request).inventory, group_id,
                   body)
    result = await writing(request, group_writes.put_group, service(request).inventory,
                           group_id, body, request.headers.get("if-match"))
    return _group_json(result.group, 201 if result.changed else 200, result.etag)


@router.post("/v1/groups", status_code=303, openapi_extra=_body_doc(_GROUP_SCHEMA),
             responses={303: {"description": "created; Location names the new group"},
                        **error_responses(400, 401, 403, 413, 422)})
async def create_group(request: Request) -> Response:
    """Create a group with a new id; 303 See Other with its Location."""
    principal = require_auth(request, write=True)
    body = await json_body(request)
    await blocking(group_access.check_write, principal, service(request).inventory, None, body)
    result = await writing(request, group_writes.create_group, service(request).inventory, body)
    return Response(status_code=303, headers={"Location": f"/v1/groups/{result.group['id']}",
                                               "ETag": result.etag})


@router.post("/v1/groups/{group_id}", openapi_extra=_body_doc({"type": "object"}),
             responses=error_responses(400, 401, 403, 404, 409, 413, 422))
async def update_group(group_id: str, request: Request) -> JSONResponse:
    """Apply a delta: classes and variables merge (null removes a key), other fields replace."""
    principal = require_auth(request, write=True)
    body = await json_body(request)
    await blocking(group_access.check_write, principal, service(request).inventory, group_id,
                   body)
    result = await writing(request, group_writes.apply_delta, service(request).inventory,
                           group_id, body, request.headers.get("if-match"))
    return _group_json(result.group, 200, result.etag)


@router.delete("/v1/groups/{group_id}", status_code=204,
               responses=error_responses(400, 401, 403, 404, 409, 422))
async def delete_group(group_id: str, request: Request) -> Response:
    """Delete a group's file; 422 children-present while it has children."""
    principal = require_auth(request, write=True)
    await blocking(group_access.check_write, principal, service(request).inventory, group_id)
    await writing(request, group_writes.delete_group, service(request).inventory, group_id,
                  request.headers.get("if-match"))
    return Response(status_code=204)


@router.post("/v1/validate/group", openapi_extra=_body_doc(_GROUP_SCHEMA),
             responses=error_responses(400, 401, 403, 413, 422))
async def validate_group(request: Request) -> JSONResponse:
    """Run every check a write would, write nothing; 200 with the group as validated."""
    require_auth(request, write=False)
    body = await json_body(request)
    return JSONResponse(await blocking(group_writes.validate_only, service(request).inventory,
                                       body))


def check_node_name(name: str) -> str:
    """A node name from a URL; 400 when it is longer than MAX_NAME_LENGTH or holds control
    or line-break characters (NEL, LINE SEPARATOR...), which no certname has."""
    if len(name) > MAX_NAME_LENGTH or not name or not name.isprintable():
        raise ApiError(400, MALFORMED_REQUEST, f"A node name must be 1 to {MAX_NAME_LENGTH} "
                       "printable characters (no control or line-break characters); got "
                       f"{len(name)} characters {name[:60]!r}.",
                       {"name": name[:200], "limit": MAX_NAME_LENGTH})
    return name


async def _submitted_node(request: Request) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    body = await json_body(request, empty={})
    if not isinstance(body, dict) or set(body) - {"fact", "trusted", "transaction_uuid"}:
        raise ApiError(400, SCHEMA_VIOLATION,
                       "The body must be an object with only `fact`, `trusted` and "
                       "`transaction_uuid`.", {"submitted": body,
                                               "schema": _NODE_SCHEMA, "error": "shape"})
    fact = {} if body.get("fact") is None else body["fact"]
    trusted = {} if body.get("trusted") is None else body["trusted"]
    transaction = body.get("transaction_uuid")
    if not isinstance(fact, dict) or not isinstance(trusted, dict) or \
            (transaction is not None and not isinstance(transaction, str)):
        raise ApiError(400, SCHEMA_VIOLATION, "`fact` and `trusted` must be objects and "
                       "`transaction_uuid` a string.",
                       {"submitted": body, "schema": _NODE_SCHEMA, "error": "types"})
    return fact, trusted, transaction


def _render(request: Request, steps: Any, snapshot: Snapshot) -> dict[str, Any]:
    try:
        return render_classification(service(request).inventory.inventory(snapshot), steps)
    except ReclassError as err:  # conflicts were handled before rendering
        # The request is fine and the service works; this node's data does not resolve (e.g. a
        # group parameter refers to ${site:name}, which only the node's classes define): 422,
        # like the classifier's other "valid request, data cannot be processed" answers.
        raise ApiError(422, NODE_RENDER_ERROR, str(err), {"node": steps.name}) from err


def _classify(request: Request, record: bool, name: str, fact: dict[str, Any],
              trusted: dict[str, Any], transaction: str | None, v2: bool = False
              ) -> dict[str, Any]:
    context = service(request)
    snapshot = context.inventory.snapshot()
    tree = snapshot.valid_tree()
    steps = classification_steps(tree, name, fact, trusted)
    explanation = explanation_from_steps(tree, steps)["match_explanations"]
    groups = [g.id for g in steps.matched]
    if record:
        context.observed.put_runtime(name, fact, trusted)
    if steps.conflicts is not None:
        if record:
            context.observed.record_check_in(name, transaction, groups, explanation, None)
        raise ApiError(500, CLASSIFICATION_CONFLICT, steps.conflict_msg or "", steps.conflicts)
    result = _render(request, steps, snapshot)
    if record:
        context.observed.record_check_in(name, transaction, groups, explanation, result)
    return v2_classification(result, steps.matched) if v2 else result


def v2_classification(result: dict[str, Any], matched: tuple[Group, ...]) -> dict[str, Any]:
    """The v2 shape of a classification: `groups` as `{id, name}` sorted by name, no `name`."""
    shown = {key: value for key, value in result.items() if key not in ("name", "groups")}
    shown["groups"] = [{"id": g.id, "name": g.name}
                       for g in sorted(matched, key=lambda g: (g.name, g.id))]
    return shown


@router.post("/v1/classified/nodes/{name}", openapi_extra=_body_doc(_NODE_SCHEMA, False),
             responses=error_responses(400, 401, 403, 413, 422, 500))
async def classify(name: str, request: Request) -> JSONResponse:
    """Classify a node by its facts; 500 classification-conflict when unrelated groups
    disagree. Records a check-in and the node's facts in the observed-state store when the
    client sent a valid token (or the server runs with --record-anonymous-check-ins)."""
    principal = require_auth(request, write=False, permission=CLASSIFY)
    name = check_node_name(name)
    fact, trusted, transaction = await _submitted_node(request)
    # A classification is a read: an anonymous one (no valid token) records nothing unless
    # the server was started to record those.
    record = principal is not ANONYMOUS_READER or service(request).config.record_anonymous
    return JSONResponse(await blocking(_classify, request, record, name, fact, trusted,
                                       transaction))


@router.post("/v2/classified/nodes/{name}", openapi_extra=_body_doc(_NODE_SCHEMA, False),
             responses=error_responses(400, 401, 403, 413, 422, 500))
async def classify_v2(name: str, request: Request) -> JSONResponse:
    """As POST /v1/classified/nodes/<name>, answered in the v2 shape: `groups` are `{id,
    name}` objects sorted by name."""
    principal = require_auth(request, write=False, permission=CLASSIFY)
    name = check_node_name(name)
    fact, trusted, transaction = await _submitted_node(request)
    record = principal is not ANONYMOUS_READER or service(request).config.record_anonymous
    return JSONResponse(await blocking(_classify, request, record, name, fact, trusted,
                                       transaction, True))


def _explain(request: Request, name: str, fact: dict[str, Any], trusted: dict[str, Any]
             ) -> dict[str, Any]:
    snapshot = service(request).inventory.snapshot()
    tree = snapshot.valid_tree()
    steps = classification_steps(tree, name, fact, trusted)
    document = explanation_from_steps(tree, steps)
    if steps.conflicts is None:
        document["classification"] = _render(request, steps, snapshot)
    return document


@router.post("/v1/classified/nodes/{name}/explanation",
             openapi_extra=_body_doc(_NODE_SCHEMA, False),
             responses=error_responses(400, 401, 403, 413, 422, 500))
async def explain(name: str, request: Request) -> JSONResponse:
    """How the node is classified: matched rules with fact values, leaves, inherited
    classifications, then conflicts or the final classification. 200 even with conflicts."""
    require_auth(request, write=False, permission=CLASSIFY)
    name = check_node_name(name)
    fact, trusted, _ = await _submitted_node(request)
    return JSONResponse(await blocking(_explain, request, name, fact, trusted))
