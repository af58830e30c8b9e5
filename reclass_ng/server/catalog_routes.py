"""`/v1/environments`, `/v1/classes`, `/v1/update-classes`, `/v1/last-class-update`: the class
catalogue (classifier/catalog.py) over HTTP, in the classifier's shapes.

As in the classifier, an unknown environment or class is a 404 with an *empty* body. Without a
catalogue, the environments are the ones the groups use (the answer then has the header
`X-Reclass-Ng-Catalog: none`) and every environment has no classes.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from reclass_ng.classifier.catalog import ClassCatalog
from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.server.errors import ApiError, error_responses
from reclass_ng.server.http import require_auth, service, writing

router = APIRouter()

NO_CATALOG_HEADER = {"X-Reclass-Ng-Catalog": "none"}


def _catalog(request: Request) -> ClassCatalog | None:
    return service(request).catalog.catalog()


def _environment_names(request: Request, catalog: ClassCatalog | None) -> list[str]:
    if catalog is not None:
        return catalog.environments()
    return sorted({g.environment for g in service(request).inventory.snapshot().groups})


def _environment(catalog: ClassCatalog | None, name: str) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name}
    if catalog is not None:
        found["sync_succeeded"] = catalog.sync_succeeded(name)
    return found


def _empty_404() -> Response:
    return Response(status_code=404)


@router.get("/v1/environments", responses=error_responses(401, 403, 500))
def list_environments(request: Request) -> JSONResponse:
    """Every known environment: `[{name, sync_succeeded}]` (null: never synced, declared by
    hand)."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    return JSONResponse([_environment(catalog, name)
                         for name in _environment_names(request, catalog)],
                        headers=NO_CATALOG_HEADER if catalog is None else None)


@router.get("/v1/environments/{name}", responses={404: {"description": "empty body"},
                                                   **error_responses(401, 403, 500)})
def get_environment(name: str, request: Request) -> Response:
    """One environment, or 404 with an empty body."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    if name not in _environment_names(request, catalog):
        return _empty_404()
    return JSONResponse(_environment(catalog, name))


# Puppet's rule for environment names: letters, digits and underscores.
_ENVIRONMENT_NAME = re.compile(r"[A-Za-z0-9_]{1,255}")


@router.put("/v1/environments/{name}", status_code=201,
            responses={201: {"description": "declared"}, 200: {"description": "known already"},
                       **error_responses(400, 401, 403, 409, 503)})
async def put_environment(name: str, request: Request) -> JSONResponse:
    """Declare an environment (PE creates it): 201 with `{name, sync_succeeded}` when it is
    added to puppet-classes.yml, 200 when it is known already; the body is ignored."""
    require_auth(request, write=True, admin=True)
    if not _ENVIRONMENT_NAME.fullmatch(name):
        raise ApiError(400, SCHEMA_VIOLATION, f"An environment name is 1 to 255 letters, "
                       f"digits and underscores (Puppet's rule), got {name[:60]!r}; nothing "
                       "was written.", {"submitted": name[:300], "error": "name"})
    added = await writing(request, service(request).catalog.add_environment, name)
    catalog = _catalog(request)
    return JSONResponse(_environment(catalog, name), status_code=201 if added else 200)


@router.get("/v1/classes", responses=error_responses(401, 403, 500))
def list_classes(request: Request) -> JSONResponse:
    """Every class of every environment: `[{name, environment, parameters}]`; a parameter whose
    default is null is required."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    if catalog is None:
        return JSONResponse([], headers=NO_CATALOG_HEADER)
    return JSONResponse([c.to_data() for env in catalog.environments()
                         for c in catalog.classes(env).values()])


@router.get("/v1/environments/{name}/classes",
            responses={404: {"description": "empty body"}, **error_responses(401, 403, 500)})
def environment_classes(name: str, request: Request) -> Response:
    """The classes of one environment; 404 (empty body) for an unknown environment."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    if name not in _environment_names(request, catalog):
        return _empty_404()
    classes = catalog.classes(name).values() if catalog is not None else []
    return JSONResponse([c.to_data() for c in classes])


@router.get("/v1/environments/{name}/classes/{class_name}",
            responses={404: {"description": "empty body"}, **error_responses(401, 403, 500)})
def environment_class(name: str, class_name: str, request: Request) -> Response:
    """One class, or 404 with an empty body."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    found = catalog.get(name, class_name) if catalog is not None else None
    return JSONResponse(found.to_data()) if found is not None else _empty_404()


@router.post("/v1/update-classes", status_code=201,
             responses={201: {"description": "synced; empty body"},
                        **error_responses(401, 403, 409, 503)})
async def update_classes(request: Request) -> Response:
    """Re-read every environment's classes from the Puppet code (--puppet-code-dir) with
    Puppet's parser: 201 with an empty body. Hand-declared classes are kept."""
    require_auth(request, write=True, admin=True)
    await writing(request, service(request).catalog.sync)
    return Response(status_code=201)


@router.get("/v1/last-class-update", responses=error_responses(401, 403, 500))
def last_class_update(request: Request) -> JSONResponse:
    """`{"last_update": ISO-8601 time of the last sync, or null}`."""
    require_auth(request, write=False)
    catalog = _catalog(request)
    return JSONResponse({"last_update": catalog.last_update if catalog is not None else None})
