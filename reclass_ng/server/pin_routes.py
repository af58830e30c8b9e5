"""`/v1/groups/<id>/pin`, `/v1/groups/<id>/unpin` and `/v1/commands/unpin-from-all`, as the
Node Classifier has them (see pins.py for how a pin is stored)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from reclass_ng.server import group_access, pins
from reclass_ng.server.errors import error_responses
from reclass_ng.server.http import blocking, json_body, require_auth, service, writing
from reclass_ng.server.inventory_state import InventoryState

router = APIRouter()

_NODES_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["nodes"],
    "properties": {"nodes": {"oneOf": [{"type": "string"},
                                       {"type": "array", "items": {"type": "string"}}]}},
}
_NODES_QUERY: dict[str, Any] = {
    "name": "nodes", "in": "query", "required": False,
    "description": "comma-separated node names (instead of, or as well as, the body)",
    "schema": {"type": "string"},
}


def _pin_doc() -> dict[str, Any]:
    return {"parameters": [_NODES_QUERY],
            "requestBody": {"required": False,
                            "content": {"application/json": {"schema": _NODES_SCHEMA}}}}


async def _requested_nodes(request: Request) -> list[str]:
    body = await json_body(request, empty=None)
    return pins.nodes_from_request(request.query_params.get("nodes"), body)


async def _change_pins(request: Request, group_id: str,
                       change: Callable[[InventoryState, str, list[str]], None]) -> Response:
    """`change` (pins.pin or pins.unpin) for the requested nodes, after the write checks; off
    the event loop, since it reads files and may wait for the inventory lock. 204."""
    principal = require_auth(request, write=True)
    state = service(request).inventory
    await blocking(group_access.check_write, principal, state, group_id)
    nodes = await _requested_nodes(request)
    await writing(request, change, state, group_id, nodes)
    return Response(status_code=204)


@router.post("/v1/groups/{group_id}/pin", status_code=204, openapi_extra=_pin_doc(),
             responses=error_responses(400, 401, 403, 404, 413, 422))
async def pin_nodes(group_id: str, request: Request) -> Response:
    """Pin nodes to the group: `["=", "name", NODE]` is OR'd into its rule. 204."""
    return await _change_pins(request, group_id, pins.pin)


@router.post("/v1/groups/{group_id}/unpin", status_code=204, openapi_extra=_pin_doc(),
             responses=error_responses(400, 401, 403, 404, 413, 422))
async def unpin_nodes(group_id: str, request: Request) -> Response:
    """Unpin nodes from the group (nodes matched by the rest of the rule still match). 204."""
    return await _change_pins(request, group_id, pins.unpin)


@router.post("/v1/commands/unpin-from-all",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": _NODES_SCHEMA}}}},
             responses=error_responses(400, 401, 403, 413, 422))
async def unpin_from_all(request: Request) -> JSONResponse:
    """Unpin nodes from every group; 200 `{"nodes": [{name, groups: [{id, name,
    environment}]}]}` naming, for each node that was pinned somewhere, the groups it left."""
    principal = require_auth(request, write=True)
    group_access.check_whole_tree(principal)
    body = await json_body(request)
    nodes = pins.nodes_from_request(None, body)
    return JSONResponse(await writing(request, pins.unpin_from_all, service(request).inventory,
                                      nodes))
