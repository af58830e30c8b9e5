"""Request plumbing shared by the routes: settings, the body-size limit, authentication, JSON
bodies and error answers in the classifier's `{kind, msg, details}` form."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import attrs
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.server.activity_log import ActivityLog
from reclass_ng.server.allowed_hosts import HostAllowList
from reclass_ng.server.auth import ADMIN, ANONYMOUS_READER, Principal, TokenStore
from reclass_ng.server.catalog_state import CatalogState
from reclass_ng.server.errors import (
    INVENTORY_LOCKED,
    MALFORMED_REQUEST,
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    PERMISSION_DENIED,
    READ_ONLY,
    REQUEST_TOO_LARGE,
    UNREPRESENTABLE_VALUE,
    USER_UNAUTHENTICATED,
    ApiError,
)
from reclass_ng.server.fair_admission import CURRENT_TURN
from reclass_ng.server.git_commits import GitCommits
from reclass_ng.server.inventory_state import InventoryState
from reclass_ng.server.observed_state import DEFAULT_CHECK_IN_HISTORY, ObservedState
from reclass_ng.server.yaml_files import LOCK_TIMEOUT_SECONDS, unrepresentable_value

# Threads that run the blocking work of requests (file reads and writes, rule matching,
# rendering, SQLite): the event loop only parses HTTP, so one slow request never stalls the
# others, and the bound keeps a burst from starting a thread per request.
DEFAULT_WORKER_THREADS = 8
# Threads that run writes (WriteLane): the inventory lock serialises them, so two suffice (one
# writes while the next one prepares).
WRITE_THREADS = 2
_T = TypeVar("_T")


@attrs.frozen
class ServerConfig:
    """How the service runs. Without `token` and `tokens_file`: reads are open and writes are
    refused."""

    inventory_dir: str
    state_path: str
    token: str | None = None
    read_only: bool = False
    open_reads: bool = False
    tokens_file: str | None = None  # roles file (server/auth.py)
    code_dir: str | None = None  # Puppet code for the class catalogue (classifier/class_sync.py)
    # Anonymous classifications (no token presented) only read unless this is set: otherwise
    # anyone who can reach the port could overwrite a node's facts and fill the database.
    record_anonymous: bool = False
    check_in_history: int = DEFAULT_CHECK_IN_HISTORY
    worker_threads: int = DEFAULT_WORKER_THREADS
    # The Host names answered (server/allowed_hosts.py); None: any (an application embedded
    # behind a server of the caller's, which checks Host itself).
    allowed_hosts: HostAllowList | None = None
    # Commit every API write to the inventory's git repository (server/git_commits.py).
    git_commits: bool = False


@attrs.define
class ServiceContext:
    """What every request needs; kept on `app.state.service`."""

    config: ServerConfig
    inventory: InventoryState
    observed: ObservedState
    tokens: TokenStore
    catalog: CatalogState
    activity: ActivityLog
    writes: WriteLane = attrs.field(factory=lambda: WriteLane())


def service(request: Request) -> ServiceContext:
    return request.app.state.service


def _presented_token(request: Request) -> bytes | None:
    """The token's bytes. HTTP headers arrive decoded as Latin-1, so encoding them back gives
    the bytes the client sent: a non-ASCII token sent as UTF-8 matches its UTF-8 hash."""
    token = request.headers.get("x-authentication")
    if token and token.strip():
        return token.strip().encode("latin-1")
    authorization = request.headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip().encode("latin-1")
    return None


def _denied(msg: str) -> ApiError:
    return ApiError(403, PERMISSION_DENIED, msg, None)


def require_auth(request: Request, *, write: bool, permission: str | None = None,
                 admin: bool = False) -> Principal:
    """The caller, or 401/403. Reads need a token (any role) unless the server opens them;
    writes need a configured token and a server that is not read-only, and: `admin` an admin,
    `permission` that permission (classify, facts), otherwise (group writes) an operator or
    admin. Group subtrees are checked by the routes (server/group_access.py)."""
    principal = _authenticated(request, write=write, permission=permission, admin=admin)
    request.state.principal = principal  # the author of the write (writing, activity log)
    return principal


def _authenticated(request: Request, *, write: bool, permission: str | None,
                   admin: bool) -> Principal:
    context = service(request)
    config = context.config
    if write and config.read_only:
        raise ApiError(403, READ_ONLY, "The service is read-only (--read-only): change the "
                       "inventory in git instead.", None)
    if not context.tokens.configured:
        if write:
            raise _denied("Writes are disabled: the server was started without a token "
                          "(RECLASS_NG_TOKEN, --token-file or --tokens-file).")
        return ANONYMOUS_READER
    presented = _presented_token(request)
    principal = context.tokens.identify(presented) if presented is not None else None
    if principal is None and not write and config.open_reads:
        return ANONYMOUS_READER
    if presented is None:
        raise ApiError(401, USER_UNAUTHENTICATED, "Authentication required: send the token as "
                       "`X-Authentication: TOKEN` or `Authorization: Bearer TOKEN`.", None,
                       headers={"WWW-Authenticate": "Bearer"})
    if principal is None:
        raise _denied("The token is not valid for this service.")
    if admin and principal.role != ADMIN:
        raise _denied(f"Only an admin may do this; token {principal.name!r} is a "
                      f"{principal.role}.")
    if permission is not None and not principal.may(permission):
        raise _denied(f"Token {principal.name!r} lacks the {permission!r} permission.")
    if write and permission is None and not admin and not principal.may_write_groups():
        raise _denied(f"Token {principal.name!r} is a {principal.role}: it may only read.")
    return principal


def ascii_integer(text: str) -> int | None:
    """`text` as a non-negative integer when it is ASCII digits only (at most 18, so the value
    fits an SQLite integer), else None. `str.isdigit` alone also takes `²` and other Unicode
    digits, which `int()` then refuses."""
    if not text or len(text) > 18 or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def page_parameter(request: Request, name: str, default: int, maximum: int) -> int:
    """Query parameter `name` (a page size, offset or page number) from 0 to `maximum`;
    `default` when absent, 400 malformed-request otherwise."""
    text = request.query_params.get(name)
    if text is None:
        return default
    value = ascii_integer(text)
    if value is None or value > maximum:
        raise ApiError(400, MALFORMED_REQUEST, f"?{name}= must be an integer from 0 to "
                       f"{maximum} in ASCII digits, got {text[:40]!r}.",
                       {name: text[:40], "maximum": maximum})
    return value


class _NotANumber(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NotANumber(name)


def json_depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), walked without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return deepest


def parse_json_body(raw: bytes) -> Any:
    """A request body as JSON: 400 malformed-request when it does not parse or nests deeper
    than MAX_JSON_DEPTH; 422 unrepresentable-value for NaN, infinities and lone surrogates,
    which JSON answers and YAML files could not carry back."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except _NotANumber as err:
        raise ApiError(422, UNREPRESENTABLE_VALUE, f"The body holds {err}, which has no JSON "
                       "or YAML equivalent; nothing was done.", {"error": str(err)}) from None
    except RecursionError:
        raise ApiError(400, MALFORMED_REQUEST, f"The body nests deeper than {MAX_JSON_DEPTH} "
                       "levels.", {"limit": MAX_JSON_DEPTH}) from None
    except (ValueError, UnicodeDecodeError) as err:
        text = raw[:2000].decode("utf-8", "replace")
        raise ApiError(400, MALFORMED_REQUEST, f"The body is not valid JSON: {err}",
                       {"body": text, "error": str(err)}) from err
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ApiError(400, MALFORMED_REQUEST, f"The body nests deeper than {MAX_JSON_DEPTH} "
                       "levels.", {"limit": MAX_JSON_DEPTH})
    problem = unrepresentable_value(value)
    if problem:
        raise ApiError(422, UNREPRESENTABLE_VALUE, f"{problem}; nothing was done.",
                       {"error": problem})
    return value


async def json_body(request: Request, *, empty: Any = attrs.NOTHING) -> Any:
    """The request's JSON body (see parse_json_body). An empty body is `empty` when given,
    else malformed."""
    raw = await request.body()
    if not raw.strip() and empty is not attrs.NOTHING:
        return empty
    return parse_json_body(raw)


async def blocking(function: Callable[..., _T], *args: Any) -> _T:
    """Run `function(*args)` on the bounded worker pool, off the event loop."""
    return await run_in_threadpool(function, *args)


class WriteLane:
    """Where writes to the inventory run: WRITE_THREADS threads of their own, apart from the
    worker pool (and a write gives back its turn of fair_admission.FairQueue). A write waits for the inventory lock (held by another write, another server,
    a person's script) in one of these threads, so waiting writes never hold the threads that
    reads and classifications need; writes beyond WRITE_THREADS wait on the event loop, which
    costs no thread, and get 503 inventory-locked after LOCK_TIMEOUT_SECONDS. (The lock lets
    one write through at a time anyway: more threads would only wait.)"""

    def __init__(self, threads: int = WRITE_THREADS) -> None:
        self._slots = anyio.Semaphore(threads)
        self._threads = anyio.CapacityLimiter(threads)

    async def run(self, function: Callable[..., _T], *args: Any) -> _T:
        """`function(*args)` (which takes the inventory lock) in a write thread."""
        turn = CURRENT_TURN.get()
        if turn is not None:  # the turn is for reads (fair_admission.py)
            turn.give_back()
        with anyio.move_on_after(LOCK_TIMEOUT_SECONDS) as waited:
            await self._slots.acquire()
        if waited.cancelled_caught:
            raise ApiError(503, INVENTORY_LOCKED, f"Other writes have been waiting for the "
                           f"inventory lock for over {LOCK_TIMEOUT_SECONDS:g} s; nothing was "
                           "written. Try again.", {"waited_seconds": LOCK_TIMEOUT_SECONDS},
                           headers={"Retry-After": "5"})
        try:
            return await anyio.to_thread.run_sync(function, *args, limiter=self._threads)
        finally:
            self._slots.release()


async def writing(request: Request, function: Callable[..., _T], *args: Any) -> _T:
    """Run a write of the inventory, `function(*args)`, in the service's WriteLane, with a
    journal that records it in the activity log under the caller's token name."""
    principal = getattr(request.state, "principal", None)
    journal = service(request).activity.journal(principal.name if principal else "unknown")
    return await service(request).writes.run(journal.run, function, *args)


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
                          ObservedState(os.path.expanduser(config.state_path),
                                        config.check_in_history),
                          TokenStore(config.token, config.tokens_file),
                          CatalogState(config.inventory_dir, config.code_dir),
                          ActivityLog(os.path.expanduser(config.state_path),
                                      config.inventory_dir,
                                      GitCommits(config.inventory_dir).commit
                                      if config.git_commits else None))


_ETAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')


def if_match_tags(header: str | None) -> list[str] | None:
    """The entity tags of an If-Match header (None when absent, ["*"] for `*`); 400
    malformed-request when it is empty or not a list of quoted tags, since a header the
    server cannot read must never turn into an unconditional write."""
    if header is None:
        return None
    tags = [tag.strip() for tag in header.split(",")]
    if tags == ["*"]:
        return tags
    if not header.strip() or not all(_ETAG.fullmatch(tag) for tag in tags):
        raise ApiError(400, MALFORMED_REQUEST, f"If-Match must be `*` or a list of quoted "
                       f"ETags as GET returned them, got {header[:200]!r}; nothing was written.",
                       {"if_match": header[:200]})
    return tags
