"""The read-only web explorer served at /ui/ by `reclass-ng serve` (and `reclass-ng ui`).

Pages are rendered on the server from the engine's data and the existing tools (explain, diff,
the classifier); a small stylesheet and script are shipped as package data, with no build step
and nothing fetched from elsewhere. Mount it on the service's app with `mount_explorer(app)`.
"""

from __future__ import annotations

from fastapi import FastAPI


def mount_explorer(app: FastAPI) -> None:
    """Serve the explorer at /ui/ from the app's ServiceContext (`app.state.service`, set
    before this is called): the same inventory state and observed state as the API."""
    from reclass_ng.explorer.data import ExplorerData
    from reclass_ng.explorer.routes import router

    context = app.state.service
    app.state.explorer = ExplorerData(context.inventory, context.observed)
    app.include_router(router)


__all__ = ["mount_explorer"]
