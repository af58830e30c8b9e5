"""`POST /v1/import-hierarchy` (replace every group at once) and `POST /v1/rules/translate`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from reclass_ng.classifier.atomic_files import replace_directory
from reclass_ng.classifier.errors import SCHEMA_VIOLATION
from reclass_ng.classifier.group_files import (
    GROUP_FILE_SUFFIXES,
    GROUPS_DIR_NAME,
)
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import validate_group_data
from reclass_ng.classifier.rule_parser import RULE_GRAMMAR_HINT, RuleSyntaxError, parse_rule
from reclass_ng.classifier.rule_translation import (
    FORMATS,
    UntranslatableRuleError,
    translate_rule,
)
from reclass_ng.errors import YamlFileError
from reclass_ng.server.errors import INVALID_INVENTORY, ApiError, error_responses, from_problems
from reclass_ng.server.group_writes import group_file_name, group_file_text
from reclass_ng.server.http import json_body, require_auth, service, writing
from reclass_ng.server.inventory_state import InventoryState, Snapshot
from reclass_ng.server.referent_checks import check_expansion, check_referents
from reclass_ng.server.yaml_files import inventory_lock, note_change
from reclass_ng.storage.yaml_load import read_input_file

router = APIRouter()

UNTRANSLATABLE_RULE = "untranslatable-rule"
# Import takes whole groups: what GET /v1/groups answers is valid input (its serial_number
# and deleted keys are ignored); rule and description may be absent, the rest must be given.
_REQUIRED = ("id", "name", "parent", "environment", "environment_trumps", "classes", "variables")
_IGNORED = ("serial_number", "deleted")
_IMPORT_SCHEMA: dict[str, Any] = {"type": "array", "items": {
    "type": "object", "required": list(_REQUIRED)}}


def _schema_problems(body: Any) -> ApiError | None:
    if not isinstance(body, list):
        return ApiError(400, SCHEMA_VIOLATION, "The body must be a JSON array of groups.",
                        {"submitted": body, "schema": _IMPORT_SCHEMA, "error": "not an array"})
    malformed = []
    for item in body:
        missing = [k for k in _REQUIRED if not isinstance(item, Mapping) or k not in item]
        if missing:
            malformed.append({"submitted": item, "error": {k: "missing-required-key"
                                                          for k in missing}})
    if malformed:
        return ApiError(400, SCHEMA_VIOLATION,
                        f"{len(malformed)} group(s) lack required fields (an import gives every "
                        f"field: {', '.join(_REQUIRED)}); see details.",
                        {"submitted": [m["submitted"] for m in malformed],
                         "error": [m["error"] for m in malformed], "schema": _IMPORT_SCHEMA})
    return None


def _inventory_file(path: Path) -> bytes:
    """A file of groups/ to keep, read as the loader reads (a FIFO or device swapped in since
    the listing is refused, never read); the error names it."""
    try:
        return read_input_file(str(path))
    except YamlFileError as err:
        raise ApiError(500, INVALID_INVENTORY, err.message, {"file": str(path)}) from None


def _new_files(state: InventoryState, snapshot: Snapshot, groups: list[Group]
               ) -> dict[str, str | bytes]:
    """The new groups/ directory: a group that exists keeps its file (edited in place, so its
    comments survive); a new one gets `<slug>.yml`; other files there (README...) are kept.
    Every rendered file is read back and compared with what was meant (checked_render)."""
    directory = state.inventory_dir / GROUPS_DIR_NAME
    files: dict[str, str | bytes] = {}
    for path in directory.rglob("*") if directory.is_dir() else []:
        relative = str(path.relative_to(directory))
        if path.is_file() and not path.name.endswith(GROUP_FILE_SUFFIXES):
            files[relative] = _inventory_file(path)
    pending = []
    for group in groups:
        old = snapshot.group(group.id)
        if old is not None and old.file is not None:
            relative = os.path.relpath(old.file, GROUPS_DIR_NAME)
            current = _inventory_file(state.inventory_dir / old.file).decode("utf-8")
            if old.to_data() == group.to_data():
                files[relative] = current  # unchanged: the same bytes (a re-dump may reflow)
            else:
                files[relative] = group_file_text(group, current, str(old.file))
        else:
            pending.append(group)
    for group in pending:
        name = group_file_name(group, files.__contains__)
        files[name] = group_file_text(group, None, f"{GROUPS_DIR_NAME}/{name}")
    return files


@router.post("/v1/import-hierarchy", status_code=204,
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": _IMPORT_SCHEMA}}}},
             responses=error_responses(400, 401, 403, 413, 422))
async def import_hierarchy(request: Request) -> Response:
    """Replace every group at once: the whole set is validated (schema, one root, parents,
    cycles, reachability, uniqueness, class catalogue), then groups/ is swapped for the new
    files in one step. 204; on any problem nothing is written."""
    require_auth(request, write=True, admin=True)
    body = await json_body(request)
    error = _schema_problems(body)
    if error is not None:
        raise error
    items = [{k: v for k, v in item.items() if k not in _IGNORED} for item in body]
    await writing(request, _import_groups, service(request).inventory, items)
    return Response(status_code=204)


def _import_groups(state: InventoryState, items: list[dict[str, Any]]) -> None:
    """Validate the whole set and swap groups/ under the lock (file work: off the event loop),
    checked against the groups as they are on disk now, not a cached read."""
    with inventory_lock(state.inventory_dir):
        groups, problems = validate_group_data(items)
        if problems:
            raise from_problems(problems)
        snapshot = state.write_snapshot()
        check_referents(state.inventory_dir, snapshot, groups, [g.id for g in groups])
        check_expansion(state, snapshot, groups, groups)
        files = _new_files(state, snapshot, groups)
        directory = state.inventory_dir / GROUPS_DIR_NAME
        existing = {str(p.relative_to(directory)) for p in directory.rglob("*")
                    if p.is_file()} if directory.is_dir() else set()
        for relative in sorted(existing | set(files)):
            note_change(directory / relative)
        replace_directory(directory, files)


@router.post("/v1/rules/translate",
             openapi_extra={"parameters": [{"name": "format", "in": "query", "required": False,
                                            "schema": {"type": "string", "enum": list(FORMATS)}}],
                            "requestBody": {"required": True, "content": {
                                "application/json": {"schema": {"type": "array"}}}}},
             responses=error_responses(400, 401, 403, 413, 422))
async def translate(request: Request) -> JSONResponse:
    """A rule as a PuppetDB query (`?format=nodes`, the default, or `inventory`); 422
    untranslatable-rule when PuppetDB cannot express it."""
    require_auth(request, write=False)
    query_format = request.query_params.get("format", "nodes")
    if query_format not in FORMATS:
        raise ApiError(400, SCHEMA_VIOLATION, f"format must be one of {', '.join(FORMATS)}, "
                       f"got {query_format!r}", {"submitted": query_format,
                                                  "error": "unknown format"})
    body = await json_body(request)
    try:
        condition = parse_rule(body)
    except RuleSyntaxError as err:
        raise ApiError(400, SCHEMA_VIOLATION, f"{err}. {RULE_GRAMMAR_HINT}",
                       {"submitted": body, "error": str(err)}) from err
    try:
        return JSONResponse(translate_rule(condition, query_format))
    except UntranslatableRuleError as err:
        raise ApiError(422, UNTRANSLATABLE_RULE, str(err), body) from err
