"""Request plumbing shared by the routes: settings, the body-size limit, authentication, JSON
bodies and error answers in the classifier's `{kind, msg, details}` form."""

from __future__ import annotations

import hmac
import json
import os
from typing import Any

import attrs
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.server.errors import (
    MALFORMED_REQUEST,
    MAX_BODY_BYTES,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    PERMISSION_DENIED,
    READ_ONLY,
    REQUEST_TOO_LARGE,
    USER_UNAUTHENTICATED,
    ApiError,
)
from reclass_ng.server.inventory_state import InventoryState
from reclass_ng.server.observed_state import ObservedState


@attrs.frozen
class ServerConfig:
    """How the service runs. `token` None: reads are open and writes are refused."""

    inventory_dir: str
    state_path: str
    token: str | None = None
    read_only: bool = False
    open_reads: bool = False


@attrs.define
class ServiceContext:
    """What every request needs; kept on `app.state.service`."""

    config: ServerConfig
    inventory: InventoryState
    observed: ObservedState


def service(request: Request) -> ServiceContext:
    return request.app.state.service


def _presented_token(request: Request) -> str | None:
    token = request.headers.get("x-authentication")
    if token:
        return token.strip()
    authorization = request.headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def require_auth(request: Request, *, write: bool) -> None:
    """401 without a token, 403 with a wrong one; writes also need a configured token and a
    server that is not read-only. Reads need the token unless the server opens them."""
    config = service(request).config
    if write and config.read_only:
        raise ApiError(403, READ_ONLY, "The service is read-only (--read-only): change the "
                       "inventory in git instead.", None)
    if config.token is None:
        if write:
            raise ApiError(403, PERMISSION_DENIED, "Writes are disabled: the server was started "
                           "without a token (RECLASS_NG_TOKEN or --token-file).", None)
        return
    if not write and config.open_reads:
        return
    presented = _presented_token(request)
    if presented is None:
        raise ApiError(401, USER_UNAUTHENTICATED, "Authentication required: send the token as "
                       "`X-Authentication: TOKEN` or `Authorization: Bearer TOKEN`.", None,
                       headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(presented.encode(), config.token.encode()):
        raise ApiError(403, PERMISSION_DENIED, "The token is not valid for this service.", None)


async def json_body(request: Request, *, empty: Any = attrs.NOTHING) -> Any:
    """The request's JSON body; 400 malformed-request when it does not parse. An empty body is
    `empty` when given, else malformed."""
    raw = await request.body()
    if not raw.strip() and empty is not attrs.NOTHING:
        return empty
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        text = raw[:2000].decode("utf-8", "replace")
        raise ApiError(400, MALFORMED_REQUEST, f"The body is not valid JSON: {err}",
                       {"body": text, "error": str(err)}) from err


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


class BodyLimit:
    """ASGI middleware: bodies over MAX_BODY_BYTES get 413 before any route reads them.

    Checks Content-Length first and counts streamed (chunked) bodies too, so a client cannot
    get past the limit by leaving the header out.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send)
            return
        chunks: list[Message] = []
        size = 0
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return chunks.pop(0) if chunks else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = ApiError(413, REQUEST_TOO_LARGE,
                         f"Request entity too large: a request may not be larger than "
                         f"{self.limit} bytes.", {"limit": self.limit})
        await error_response(error)(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves as `{kind, msg, details}`."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return error_response(error)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
        details = json.loads(json.dumps(error.errors(), default=str))
        return error_response(ApiError(400, SCHEMA_VIOLATION, "The request does not match the "
                                       "API's schema; see details.", {"error": details}))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 404:
            return error_response(ApiError(404, NOT_FOUND, "The resource could not be found.",
                                           str(request.url.path)))
        kind = METHOD_NOT_ALLOWED if error.status_code == 405 else "http-error"
        return error_response(ApiError(error.status_code, kind, str(error.detail),
                                       str(request.url.path), dict(error.headers or {})))


def context_from(config: ServerConfig) -> ServiceContext:
    return ServiceContext(config, InventoryState(config.inventory_dir),
                          ObservedState(os.path.expanduser(config.state_path)))
