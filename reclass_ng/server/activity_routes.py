"""`GET /activity-api/v1/events` (and `.csv`): the activity log as PE's activity service
serves it, for `service_id=classifier`."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from reclass_ng.server import group_access
from reclass_ng.server.activity_events import CLASS_CATALOGUE, NODE, NODE_GROUP
from reclass_ng.server.activity_log import DEFAULT_LIMIT, MAX_LIMIT, EventQuery
from reclass_ng.server.auth import ADMIN, Principal
from reclass_ng.server.errors import MALFORMED_REQUEST, ApiError, error_responses
from reclass_ng.server.http import blocking, page_parameter, require_auth, service

router = APIRouter()

SERVICE_ID = "classifier"
# PE's names of the object types, and ours for what PE's classifier does not log.
OBJECT_TYPES = {"node_groups": NODE_GROUP, "node_group": NODE_GROUP, "nodes": NODE,
                "node": NODE, "class_catalogue": CLASS_CATALOGUE}
SUBJECT_TYPES = ("users", "tokens")
MAX_IDS = 100
# Longest ISO-8601 timestamp read from `after_service_commit_time`.
_MAX_TIME_TEXT = 64


def _bad(msg: str, details: Any) -> ApiError:
    return ApiError(400, MALFORMED_REQUEST, msg, details)


def _ids(request: Request, name: str, type_name: str) -> tuple[str, ...]:
    text = request.query_params.get(name)
    if text is None:
        return ()
    if request.query_params.get(type_name) is None:
        raise _bad(f"?{name}= needs ?{type_name}= too.", {name: text[:200]})
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(ids) > MAX_IDS:
        raise _bad(f"?{name}= lists at most {MAX_IDS} ids.", {"limit": MAX_IDS})
    return ids


def _after(request: Request) -> str | None:
    text = request.query_params.get("after_service_commit_time")
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text[:_MAX_TIME_TEXT].replace("Z", "+00:00"))
    except ValueError:
        raise _bad("after_service_commit_time must be an ISO-8601 timestamp such as "
                   f"2026-11-29T02:00:00Z, got {text[:60]!r}.",
                   {"after_service_commit_time": text[:200]}) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def event_query(request: Request, principal: Principal) -> EventQuery | None:
    """The query's filters; None when nothing can match (another service, a subtree token
    asking for objects outside its subtree)."""
    service_id = request.query_params.get("service_id")
    if not service_id:
        raise _bad("?service_id= is required (this service logs `classifier`).", None)
    subject_type = request.query_params.get("subject_type")
    if subject_type is not None and subject_type not in SUBJECT_TYPES:
        raise _bad(f"subject_type must be one of {', '.join(SUBJECT_TYPES)} (the subjects are "
                   f"token names), got {subject_type[:60]!r}.", {"subject_type": subject_type})
    object_type_name = request.query_params.get("object_type")
    object_type = None
    if object_type_name is not None:
        object_type = OBJECT_TYPES.get(object_type_name)
        if object_type is None:
            raise _bad(f"object_type must be one of {', '.join(OBJECT_TYPES)}, got "
                       f"{object_type_name[:60]!r}.", {"object_type": object_type_name})
    order = request.query_params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise _bad(f"order must be asc or desc, got {order[:20]!r}.", {"order": order[:20]})
    query = EventQuery(
        subject_ids=_ids(request, "subject_id", "subject_type"),
        object_type=object_type, object_ids=_ids(request, "object_id", "object_type"),
        after=_after(request), offset=page_parameter(request, "offset", 0, 10**15),
        limit=page_parameter(request, "limit", DEFAULT_LIMIT, MAX_LIMIT),
        ascending=order == "asc")
    if service_id != SERVICE_ID:
        return None
    if principal.group is None or principal.role == ADMIN:
        return query
    # A token limited to a group subtree sees the history of those groups only.
    state = service(request).inventory
    allowed = {g.id for g in group_access.visible(principal, state, state.snapshot().groups)}
    if object_type not in (None, NODE_GROUP):
        return None
    wanted = tuple(i for i in (query.object_ids or sorted(allowed)) if i in allowed)
    if not wanted:
        return None
    return EventQuery(query.subject_ids, NODE_GROUP, wanted, query.after, query.offset,
                      query.limit, query.ascending)


def _events(request: Request) -> tuple[list[dict[str, Any]], int, EventQuery | None]:
    principal = require_auth(request, write=False)
    query = event_query(request, principal)
    if query is None:
        return [], 0, query
    commits, total = service(request).activity.events(query)
    return commits, total, query


@router.get("/activity-api/v1/events", responses=error_responses(400, 401, 403))
async def activity_events(request: Request) -> JSONResponse:
    """Who changed what through the API, newest first: `{commits, offset, limit, total-rows}`;
    filters `subject_type`/`subject_id` (token names), `object_type`/`object_id`, `order`,
    `after_service_commit_time`, paged by `offset` and `limit`."""
    commits, total, query = await blocking(_events, request)
    return JSONResponse({"commits": commits,
                         "offset": query.offset if query else 0,
                         "limit": query.limit if query else DEFAULT_LIMIT,
                         "total-rows": total})


# PE's columns (its activity service's CSV), then the before and after values reclass-ng adds.
_CSV_COLUMNS = ("Submit Time", "Subject Type", "Subject Id", "Subject Name", "Object Type",
                "Object Id", "Object Name", "Type", "What", "Description", "Message",
                "Old Value", "New Value")
# The object types as PE's `object_type` parameter names them.
_PE_OBJECT_TYPES = {NODE_GROUP: "node_groups", NODE: "nodes", CLASS_CATALOGUE: "class_catalogue"}


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    # A spreadsheet runs a cell that starts with one of these as a formula.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def events_csv(commits: list[dict[str, Any]]) -> str:
    """One CSV row per changed field (one per entry without field events)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_CSV_COLUMNS)
    for commit in commits:
        subject, target = commit["subject"], commit["object"]
        head = [commit["timestamp"], "users", subject["id"], subject["name"],
                _PE_OBJECT_TYPES.get(target["type"], target["type"]), target["id"],
                target["name"]]
        for event in commit["events"] or [{"message": commit["message"]}]:
            row = [*head, event.get("type", ""), event.get("what", ""),
                   event.get("description", ""), event.get("message", ""),
                   event.get("old_value"), event.get("new_value")]
            writer.writerow([_cell(v) for v in row])
    return out.getvalue()


@router.get("/activity-api/v1/events.csv", responses=error_responses(400, 401, 403))
async def activity_events_csv(request: Request) -> Response:
    """The same entries and filters as CSV, one row per changed field."""
    commits, _, _ = await blocking(_events, request)
    return Response(events_csv(commits), media_type="text/csv; charset=utf-8")
