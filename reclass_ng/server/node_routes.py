"""Node state, split as the Chef node-state RFC asks.

* `/nodes/<name>/configuration`: desired state, the node's nodes/ YAML file (classes,
  applications, parameters, exports, environment), edited by people.
* `/nodes/<name>/runtime`: observed state, the facts the node last reported, in SQLite.
* `/nodes/<name>`: both. A PUT to one never touches the other.
* `/v1/nodes[/<name>]`: the classifier's check-in history.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.classifier.groups import unservable_value
from reclass_ng.errors import YamlFileError
from reclass_ng.server.auth import FACTS
from reclass_ng.server.errors import (
    CONFLICTING_IDS,
    ApiError,
    error_responses,
    not_found,
)
from reclass_ng.server.group_routes import check_node_name
from reclass_ng.server.group_writes import check_if_match
from reclass_ng.server.http import (
    blocking,
    json_body,
    page_parameter,
    require_auth,
    service,
    writing,
)
from reclass_ng.server.observed_state import DEFAULT_NODES_PAGE, MAX_NODES_PAGE
from reclass_ng.server.render_check import check_node_renders
from reclass_ng.server.yaml_files import atomic_write, checked_render, file_etag, inventory_lock
from reclass_ng.storage.yaml_load import parse_yaml_bytes, read_input_file

router = APIRouter()

# The keys of a reclass node file, and the type each must have.
_NODE_FILE_KEYS: dict[str, tuple[type, str]] = {
    "classes": (list, "a list of class names"),
    "applications": (list, "a list of application names"),
    "parameters": (dict, "a mapping"),
    "exports": (dict, "a mapping"),
    "environment": (str, "a string"),
}
_CONFIGURATION_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {"name": {"type": "string"}, "classes": {"type": "array"},
                   "applications": {"type": "array"}, "parameters": {"type": "object"},
                   "exports": {"type": "object"}, "environment": {"type": "string"}},
}
_RUNTIME_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {"name": {"type": "string"}, "fact": {"type": "object"},
                   "trusted": {"type": "object"}},
}


def _body_doc(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": schema}}}}


def _node_path(request: Request, name: str) -> Path | None:
    return service(request).inventory.node_file(name)


def _read_configuration(path: Path, name: str) -> tuple[dict[str, Any], str, bytes]:
    """The node file's data, ETag and bytes, all from one read."""
    try:
        content = read_input_file(str(path))
        data = parse_yaml_bytes(content, str(path)) or {}
    except YamlFileError as err:
        raise ApiError(500, "invalid-inventory", str(err), {"file": str(path)}) from err
    if not isinstance(data, Mapping):
        raise ApiError(500, "invalid-inventory", f"{path}: a node file must be a mapping",
                       {"file": str(path)})
    problem = unservable_value(data)
    if problem is not None:
        raise ApiError(500, "invalid-inventory", f"{path}: {problem}: JSON has no such value "
                       "(quote it in the file)", {"file": str(path)})
    return {"name": name, **data}, file_etag(content), content


def _check_name(body: Mapping[str, Any], name: str) -> None:
    if "name" in body and body["name"] != name:
        raise ApiError(400, CONFLICTING_IDS, f"The name in the body ({body['name']!r}) differs "
                       f"from the name in the URL ({name!r}).",
                       {"submitted": body["name"], "fromUrl": name})


def _checked_configuration(body: Any, name: str) -> dict[str, Any]:
    if not isinstance(body, Mapping):
        raise ApiError(400, SCHEMA_VIOLATION, "The configuration must be a JSON object.",
                       {"submitted": body, "schema": _CONFIGURATION_SCHEMA, "error": "shape"})
    _check_name(body, name)
    data = {k: v for k, v in body.items() if k != "name"}
    errors = {key: f"unknown key; a node file has {', '.join(_NODE_FILE_KEYS)}"
              for key in data if key not in _NODE_FILE_KEYS}
    for key, (kind, expected) in _NODE_FILE_KEYS.items():
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, kind) or (kind is list and
                                           not all(isinstance(v, str) for v in value)):  # type: ignore[attr-defined]
            errors[key] = f"expected {expected}"
    if errors:
        raise ApiError(400, SCHEMA_VIOLATION, "The configuration is not a valid node file: "
                       + "; ".join(f"{k}: {v}" for k, v in errors.items()),
                       {"submitted": dict(body), "schema": _CONFIGURATION_SCHEMA,
                        "error": errors})
    return data


@router.get("/nodes/{name}/configuration", responses=error_responses(401, 403, 404))
@router.head("/nodes/{name}/configuration", operation_id="head_configuration", responses=error_responses(401, 403, 404))
def get_configuration(name: str, request: Request) -> JSONResponse:
    """The node's desired state: its nodes/ file as JSON, with the file's ETag (HEAD: the
    headers only)."""
    require_auth(request, write=False)
    path = _node_path(request, name)
    if path is None:
        raise not_found(str(request.url.path))
    data, etag, _ = _read_configuration(path, name)
    return JSONResponse(data, headers={"ETag": etag})


@router.put("/nodes/{name}/configuration", openapi_extra=_body_doc(_CONFIGURATION_SCHEMA),
            responses=error_responses(400, 401, 403, 404, 409, 413, 422))
async def put_configuration(name: str, request: Request) -> JSONResponse:
    """Replace the node's nodes/ file (it must exist); comments on unchanged keys survive."""
    require_auth(request, write=True, admin=True)
    data = _checked_configuration(await json_body(request), name)
    uri = str(request.url.path)
    text = await writing(request, _write_configuration, request, name, data,
                         request.headers.get("if-match"), uri)
    return JSONResponse({"name": name, **data}, headers={"ETag": file_etag(text.encode())})


def _write_configuration(request: Request, name: str, data: dict[str, Any],
                         if_match: str | None, uri: str) -> str:
    state = service(request).inventory
    with inventory_lock(state.inventory_dir):
        path = state.node_file(name)
        if path is None:
            raise not_found(uri)
        _, etag, content = _read_configuration(path, name)
        check_if_match(if_match, etag, what="node file")
        current = content.decode("utf-8")
        text = checked_render(current, data, str(path.relative_to(state.inventory_dir)))
        check_node_renders(state.inventory(), name, path, text)
        if text != current:
            atomic_write(path, text, state.inventory_dir)
    return text


@router.get("/nodes/{name}/runtime", responses=error_responses(401, 403, 404))
def get_runtime(name: str, request: Request) -> JSONResponse:
    """The node's observed state: the facts it last reported (PUT here or by classifying)."""
    require_auth(request, write=False)
    found = service(request).observed.runtime(name)
    if found is None:
        raise not_found(str(request.url.path))
    return JSONResponse(found)


@router.put("/nodes/{name}/runtime", openapi_extra=_body_doc(_RUNTIME_SCHEMA),
            responses=error_responses(400, 401, 403, 413))
async def put_runtime(name: str, request: Request) -> JSONResponse:
    """Replace the node's observed facts; never touches the inventory."""
    require_auth(request, write=True, permission=FACTS)
    body = await json_body(request)
    if not isinstance(body, Mapping) or set(body) - {"name", "fact", "trusted"} or \
            not isinstance(body.get("fact", {}), dict) or \
            not isinstance(body.get("trusted", {}), dict):
        raise ApiError(400, SCHEMA_VIOLATION, "The runtime state must be an object with "
                       "`fact` and `trusted` objects (and optionally `name`).",
                       {"submitted": body, "schema": _RUNTIME_SCHEMA, "error": "shape"})
    _check_name(body, name)
    check_node_name(name)
    stored = await blocking(service(request).observed.put_runtime, name, body.get("fact", {}),
                            body.get("trusted", {}))
    return JSONResponse(stored)


@router.get("/nodes/{name}", responses=error_responses(401, 403, 404))
@router.head("/nodes/{name}", operation_id="head_node", responses=error_responses(401, 403, 404))
def get_node(name: str, request: Request) -> JSONResponse:
    """Desired and observed state together; 404 when the node has neither."""
    require_auth(request, write=False)
    path = _node_path(request, name)
    configuration = _read_configuration(path, name)[0] if path is not None else None  # HEAD too
    runtime = service(request).observed.runtime(name)
    if configuration is None and runtime is None:
        raise not_found(str(request.url.path))
    return JSONResponse({"name": name, "configuration": configuration, "runtime": runtime})


@router.get("/v1/nodes", responses=error_responses(400, 401, 403))
def list_check_ins(request: Request) -> JSONResponse:
    """The nodes that were classified, with their check-ins (time, explanation, transaction),
    a page at a time: `?limit=` (default 100, at most 1000) and `?offset=`. The `X-Total-Count`
    header gives the number of nodes, and a `Link: <...>; rel="next"` header the next page."""
    require_auth(request, write=False)
    limit = page_parameter(request, "limit", DEFAULT_NODES_PAGE, MAX_NODES_PAGE)
    offset = page_parameter(request, "offset", 0, 2 ** 31)
    nodes, total = service(request).observed.nodes(limit, offset)
    headers = {"X-Total-Count": str(total)}
    if offset + limit < total:
        headers["Link"] = f'</v1/nodes?limit={limit}&offset={offset + limit}>; rel="next"'
    return JSONResponse(nodes, headers=headers)


@router.get("/v1/nodes/{name}", responses=error_responses(401, 403, 404))
def node_check_ins(name: str, request: Request) -> JSONResponse:
    """One node's check-ins; 404 if it never checked in."""
    require_auth(request, write=False)
    found = service(request).observed.node(name)
    if found is None:
        raise not_found(str(request.url.path))
    return JSONResponse(found)
