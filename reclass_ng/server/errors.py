"""The service's errors: the Node Classifier's `{kind, msg, details}` object with its status.

Route code raises `ApiError`; the handlers in app.py turn it (and FastAPI's own validation and
HTTP errors) into that JSON shape, so a client never sees another error format.
"""

from __future__ import annotations

from typing import Any

from reclass_ng.classifier.errors import (
    INHERITANCE_CYCLE,
    MALFORMED_UUID,
    MISSING_PARENT,
    MISSING_ROOT,
    ROOT_RULE_EDIT,
    SCHEMA_VIOLATION,
    UNIQUENESS_VIOLATION,
    UNREACHABLE_GROUPS,
    GroupProblem,
)

MALFORMED_REQUEST = "malformed-request"
CONFLICTING_IDS = "conflicting-ids"
NOT_FOUND = "not-found"
CHILDREN_PRESENT = "children-present"
# reclass-ng's own kinds, for situations the classifier's database never had.
ROOT_DELETE = "root-delete"
STALE_WRITE = "stale-write"
REQUEST_TOO_LARGE = "request-too-large"
READ_ONLY = "read-only"
INVALID_INVENTORY = "invalid-inventory"
INVENTORY_ERROR = "inventory-error"
NODE_RENDER_ERROR = "node-render-error"
USER_UNAUTHENTICATED = "user-unauthenticated"
PERMISSION_DENIED = "permission-denied"
METHOD_NOT_ALLOWED = "method-not-allowed"
INVENTORY_LOCKED = "inventory-locked"
UNREPRESENTABLE_VALUE = "unrepresentable-value"
UNWRITABLE_FILE = "unwritable-file"

# Field-level problems are the client's malformed input (400); tree-level ones are valid input
# the hierarchy cannot accept (422), as in the classifier.
_STATUS_BY_KIND = {
    SCHEMA_VIOLATION: 400,
    MALFORMED_UUID: 400,
    MISSING_PARENT: 422,
    INHERITANCE_CYCLE: 422,
    UNIQUENESS_VIOLATION: 422,
    UNREACHABLE_GROUPS: 422,
    ROOT_RULE_EDIT: 422,
    MISSING_ROOT: 422,
}

MAX_BODY_BYTES = 1_000_000
# Nesting of a JSON body (objects and arrays). Rules, facts and variables are shallow; a deeper
# body is an attack on the recursive code that would walk it (400 malformed-request).
MAX_JSON_DEPTH = 64
# Longest group or node name: names become file names (255 bytes on most file systems).
MAX_NAME_LENGTH = 200


class ApiError(Exception):
    """An error answer: HTTP status and the classifier's error object."""

    def __init__(self, status: int, kind: str, msg: str, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(msg)
        self.status = status
        self.kind = kind
        self.msg = msg
        self.details = details
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return {"kind": self.kind, "msg": self.msg, "details": self.details}


def not_found(uri: str) -> ApiError:
    """The classifier's 404: `details` is the request URI."""
    return ApiError(404, NOT_FOUND, "The resource could not be found.", uri)


def from_problems(problems: list[GroupProblem]) -> ApiError:
    """The answer for a rejected group: the first problem decides kind and status; all are
    listed under `details.problems` when there are several."""
    first = problems[0]
    status = _STATUS_BY_KIND.get(first.kind, 422)
    details = first.details
    msg = first.message
    if len(problems) > 1:
        msg += f" (and {len(problems) - 1} more problem(s), see details.problems)"
        details = {"first": first.details, "problems": [p.to_error() for p in problems]}
    return ApiError(status, first.kind, msg, details)


# The error object as an OpenAPI schema, for the documented responses.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "msg", "details"],
    "properties": {"kind": {"type": "string"}, "msg": {"type": "string"}, "details": {}},
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries for error statuses, all with the error object."""
    return {status: {"description": "error",
                     "content": {"application/json": {"schema": ERROR_SCHEMA}}}
            for status in statuses}
