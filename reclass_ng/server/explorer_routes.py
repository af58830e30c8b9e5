"""The explorer's routes under /ui/: HTML pages, one HTML fragment (a key's history), and the
two static files. Every route only reads; errors become pages, never a traceback.

The pages and their data are the explorer's (reclass_ng.explorer); what is HTTP about them
(the read rule, the service's state, the activity log) is the service's, so it lives here."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from reclass_ng.errors import ReclassError
from reclass_ng.explorer.catalogue import NodeFilter, error_text
from reclass_ng.explorer.data import ExplorerData
from reclass_ng.explorer.group_history import HISTORY_PAGE_SIZE, group_history_page
from reclass_ng.explorer.group_pages import groups_page
from reclass_ng.explorer.html import error_block, page
from reclass_ng.explorer.inventory_pages import class_list_page, class_page, diff_page
from reclass_ng.explorer.node_pages import (
    history_html,
    history_page,
    node_error_page,
    node_list_page,
    node_page,
    origins_json,
)
from reclass_ng.server import group_access
from reclass_ng.server.activity_events import NODE_GROUP
from reclass_ng.server.activity_log import EventQuery
from reclass_ng.server.errors import ApiError
from reclass_ng.server.group_writes import check_uuid
from reclass_ng.server.http import page_parameter, require_auth, service
from reclass_ng.server.inventory_state import Snapshot

# The explorer's data over the service's own snapshots.
ServiceExplorerData = ExplorerData[Snapshot]

router = APIRouter(prefix="/ui", include_in_schema=False)

STATIC_TYPES = {"explorer.css": "text/css; charset=utf-8",
                "explorer.js": "text/javascript; charset=utf-8"}


AUTH_HINT = ("\n\nThe explorer follows the API's rule for reads, and a browser does not send the "
             "token: start the service with --open-reads to browse /ui/, or run "
             "`reclass-ng ui -b DIR` on your own machine.")


def mount_explorer(app: FastAPI) -> None:
    """Serve the explorer at /ui/ from the app's ServiceContext (`app.state.service`, set
    before this is called): the same inventory state and observed state as the API."""
    context = app.state.service
    app.state.explorer = ExplorerData(context.inventory, context.observed)
    app.include_router(router)


def explorer_data(request: Request) -> ServiceExplorerData:
    """The ExplorerData mount_explorer made for this app."""
    return request.app.state.explorer


def respond(request: Request,
            render: Callable[[ServiceExplorerData, Snapshot], str]) -> HTMLResponse:
    """Check the read rule, then build a page from the inventory as it is now; an error of the
    inventory or the service becomes an error page."""
    try:
        require_auth(request, write=False)
        return HTMLResponse(render(explorer_data(request), service(request).inventory.snapshot()))
    except ApiError as err:
        hint = AUTH_HINT if err.status in (401, 403) else ""
        return HTMLResponse(page("Error", error_block(err.msg + hint)), status_code=err.status,
                            headers=err.headers)
    except ReclassError as err:
        return HTMLResponse(page("Error", error_block(error_text(err), "Inventory error")),
                            status_code=200)
    except Exception as err:  # noqa: BLE001 - a page, never a traceback, for a bug of ours
        return HTMLResponse(page("Error", error_block(error_text(err), "Internal error")),
                            status_code=500)


# Highest page number asked for: any larger one shows the last page anyway.
MAX_PAGE_NUMBER = 10**9


def _page_number(request: Request) -> int:
    """`?page=` (from 1; absent or empty: 1); a 400 page for anything but ASCII digits."""
    if not request.query_params.get("page"):
        return 1
    return page_parameter(request, "page", 1, MAX_PAGE_NUMBER)


@router.get("/")
def index() -> RedirectResponse:
    return RedirectResponse("/ui/nodes", status_code=307)


@router.get("/static/{name}")
def static(name: str) -> Response:
    if name not in STATIC_TYPES:
        return Response("not found", status_code=404, media_type="text/plain")
    content = resources.files("reclass_ng.explorer").joinpath("static").joinpath(name).read_bytes()
    return Response(content, media_type=STATIC_TYPES[name],
                    headers={"Cache-Control": "max-age=300"})


@router.get("/nodes")
def nodes(request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        query = request.query_params
        wanted = NodeFilter(text=query.get("q", "").strip(),
                            environment=query.get("environment", "").strip(),
                            class_name=query.get("class", "").strip(),
                            application=query.get("application", "").strip(),
                            group=query.get("group", "").strip(),
                            parameter=query.get("parameter", "").strip(),
                            failing=bool(query.get("failing")))
        catalogue = data.catalogue(snapshot)
        return node_list_page(catalogue, wanted, _page_number(request))
    return respond(request, render)


@router.get("/nodes/{name}")
def node(name: str, request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        inventory = data.inventory(snapshot)
        if name not in inventory.storage.nodes:
            raise ApiError(404, "not-found", f"No node {name!r} in this inventory.", None)
        groups = data.node_groups(snapshot, name)
        try:
            prov = data.provenance(snapshot, name)
        except ReclassError as err:
            return node_error_page(name, error_text(err), groups)
        return node_page(prov, groups, data.schema_violations(prov))
    return respond(request, render)


@router.get("/nodes/{name}/history")
def history(name: str, request: Request) -> HTMLResponse:
    """The history of one key: a fragment for the node page's script, or a whole page."""
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        path = request.query_params.get("path", "")
        section = "exports" if request.query_params.get("section") == "exports" \
            else "parameters"
        prov = data.provenance(snapshot, name)
        report = prov.history(path, section)
        if request.query_params.get("fragment"):
            return history_html(report)
        return history_page(name, report)
    return respond(request, render)


@router.get("/nodes/{name}/origins")
def origins(name: str, request: Request) -> Response:
    """Where each value below a top-level mapping was written, as JSON for the node page."""
    try:
        require_auth(request, write=False)
        data = explorer_data(request)
        section = "exports" if request.query_params.get("section") == "exports" \
            else "parameters"
        prov = data.provenance(service(request).inventory.snapshot(), name)
        return JSONResponse(origins_json(prov, request.query_params.get("path", ""), section))
    except ApiError as err:
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers)
    except ReclassError as err:
        return JSONResponse({"kind": "inventory-error", "msg": error_text(err),
                             "details": None}, status_code=422)


@router.get("/classes")
def classes(request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        return class_list_page(data.class_graph(snapshot), data.catalogue(snapshot),
                               request.query_params.get("q", "").strip())
    return respond(request, render)


@router.get("/classes/{name}")
def class_(name: str, request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        graph = data.class_graph(snapshot)
        if name not in graph.paths:
            raise ApiError(404, "not-found", f"No class {name!r} in this inventory.", None)
        return class_page(name, graph, data.catalogue(snapshot),
                          str(data.state.inventory_dir), _page_number(request))
    return respond(request, render)


@router.get("/groups")
def groups(request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        problems = [f"{p.file}: {p.to_error()['msg']}" for p in snapshot.problems]
        matched = data.group_nodes(snapshot) if not problems else {}
        return groups_page(snapshot.tree, problems, matched, data.observed.runtime)
    return respond(request, render)


@router.get("/groups/{group_id}/history")
def group_history(group_id: str, request: Request) -> HTMLResponse:
    """Who changed the group through the API, from the activity log (newest first)."""
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        group_id_checked = check_uuid(group_id)
        group_access.check_read(request.state.principal, service(request).inventory,
                                group_id_checked)
        group = snapshot.group(group_id_checked)
        if group is None:
            raise ApiError(404, "not-found", f"No group {group_id!r} in this inventory.", None)
        current = _page_number(request)
        query = EventQuery(object_type=NODE_GROUP, object_ids=(group.id,),
                           offset=(current - 1) * HISTORY_PAGE_SIZE, limit=HISTORY_PAGE_SIZE)
        commits, total = service(request).activity.events(query)
        return group_history_page(group, commits, total, current)
    return respond(request, render)


@router.get("/diff")
def diff(request: Request) -> HTMLResponse:
    def render(data: ServiceExplorerData, snapshot: Snapshot) -> str:
        query = request.query_params
        old = (query.get("from_rev") or query.get("from") or "").strip()
        new = (query.get("to_rev") or query.get("to") or "").strip()
        asked = "from" in query or "from_rev" in query
        result = data.diff(snapshot, old, new) if asked else None
        return diff_page(data.revisions(), old, new, result)
    return respond(request, render)

