"""`GET /status`: how the service itself is doing (version, the roles file in force), for an
operator or a monitoring check; the inventory's own state is in the other routes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from reclass_ng.server.errors import error_responses
from reclass_ng.server.http import require_auth, service
from reclass_ng.version import __version__

router = APIRouter()


@router.get("/status", responses=error_responses(401, 403))
def status(request: Request) -> JSONResponse:
    """The version and, with `--tokens-file`, the roles file's state: `ok`, or `stale` with
    the problem (a missing or broken file) while the last good tokens stay in force."""
    require_auth(request, write=False)
    context = service(request)
    body: dict[str, Any] = {"version": __version__, "read_only": context.config.read_only}
    tokens_file = context.tokens.state()
    if tokens_file is not None:
        body["tokens_file"] = tokens_file.to_data()
    return JSONResponse(body)
