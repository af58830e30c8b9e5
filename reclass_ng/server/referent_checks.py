"""The catalogue checks of a group write (missing-referents, unspecified-parameters) and the
`deleted` annotation of group answers, for group_writes.py and the group routes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reclass_ng.classifier.catalog import CatalogError, ClassCatalog, load_catalog
from reclass_ng.classifier.errors import GroupProblem, GroupValidationError
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.referents import (
    MISSING_REFERENTS,
    UNSPECIFIED_PARAMETERS,
    added_referent_problems,
    with_deleted,
)
from reclass_ng.server.errors import INVALID_INVENTORY, ApiError
from reclass_ng.server.inventory_state import Snapshot


def read_catalog(inventory_dir: Path) -> ClassCatalog | None:
    """The catalogue as on disk now (writes read it inside the inventory lock)."""
    try:
        return load_catalog(inventory_dir)
    except CatalogError as err:
        raise ApiError(500, INVALID_INVENTORY, str(err), {"inventory": str(inventory_dir)}) \
            from err


def referent_error(problems: Sequence[GroupProblem]) -> ApiError | None:
    """One 422 for all problems: missing-referents first (every detail of every group in one
    list, the classifier's shape), else unspecified-parameters."""
    for kind in (MISSING_REFERENTS, UNSPECIFIED_PARAMETERS):
        found = [p for p in problems if p.kind == kind]
        if found:
            details = [d for p in found for d in p.details]
            msg = found[0].message
            if len(found) > 1:
                msg += f" ({len(found) - 1} more group(s) affected, see details)"
            return ApiError(422, kind, msg, details)
    return None


def check_referents(inventory_dir: Path, snapshot: Snapshot, proposed: Sequence[Group],
                    changed: Sequence[str]) -> None:
    """422 when the change adds missing referents or unspecified parameters to the changed
    groups or their descendants (only where the environment has a catalogue)."""
    catalog = read_catalog(inventory_dir)
    if catalog is None:
        return
    try:
        after = GroupTree.build(proposed)
    except GroupValidationError:
        return  # the tree has problems the change did not add; nothing to check against
    error = referent_error(added_referent_problems(snapshot.tree, after, catalog, changed))
    if error is not None:
        raise error


def annotate(data: dict[str, Any], group: Group, catalog: ClassCatalog | None
             ) -> dict[str, Any]:
    """A group answer with its `deleted` key (only when something it sets was deleted)."""
    return with_deleted(data, group, catalog)
