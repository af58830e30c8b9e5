"""Building the ASGI application: routes, error handlers and the body-size limit."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio.to_thread
from fastapi import FastAPI

from reclass_ng.server import (
    activity_routes,
    catalog_routes,
    group_routes,
    group_tree_routes,
    hierarchy_routes,
    node_routes,
    pin_routes,
    status_routes,
)
from reclass_ng.server.allowed_hosts import AllowedHosts
from reclass_ng.server.errors import ApiError
from reclass_ng.server.explorer_routes import mount_explorer
from reclass_ng.server.fair_admission import FairAdmission
from reclass_ng.server.http import BodyLimit, ServerConfig, context_from, install_error_handlers
from reclass_ng.server.yaml_files import inventory_lock, remove_stale_temp_files_below
from reclass_ng.version import __version__


def create_app(config: ServerConfig) -> FastAPI:
    """The service for one inventory. The OpenAPI document is served at /openapi.json."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Blocking work (sync routes and `blocking(...)`) shares anyio's default thread
        # limiter: bound it, so a burst queues instead of starting a thread per request.
        anyio.to_thread.current_default_thread_limiter().total_tokens = config.worker_threads
        if not config.read_only:  # a read-only service leaves the inventory as it found it
            with contextlib.suppress(ApiError):  # lock held elsewhere: the next write cleans
                remove_stale_temp_files_below(config.inventory_dir)
            with contextlib.suppress(ApiError), inventory_lock(config.inventory_dir):
                # Entries a killed server left pending become final or go (activity_log.py).
                app.state.service.activity.settle()
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="reclass-ng classifier",
        version=__version__,
        description="The Node Classifier v1 API over a reclass YAML inventory, with desired "
                    "state (YAML) kept apart from observed state (check-ins, facts). Errors "
                    "are `{kind, msg, details}`.",
        docs_url=None, redoc_url=None,
    )
    app.state.service = context_from(config)
    install_error_handlers(app)
    app.include_router(group_routes.router)
    app.include_router(group_tree_routes.router)
    app.include_router(pin_routes.router)
    app.include_router(node_routes.router)
    app.include_router(catalog_routes.router)
    app.include_router(hierarchy_routes.router)
    app.include_router(status_routes.router)
    app.include_router(activity_routes.router)
    mount_explorer(app)  # the read-only web explorer at /ui/
    # Innermost first: a request has its whole body (BodyLimit) before it waits for a turn, so
    # a client trickling a body holds no turn.
    app.add_middleware(FairAdmission, turns=config.worker_threads)
    app.add_middleware(BodyLimit)
    if config.allowed_hosts is not None:  # outermost: a foreign Host gets nothing else
        app.add_middleware(AllowedHosts, allowed=config.allowed_hosts)
    return app
