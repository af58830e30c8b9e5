"""The checks of a group write against the inventory (missing-referents and
unspecified-parameters against the catalogue, reference-expansion against the engine's limit)
and the `deleted` annotation of group answers, for group_writes.py and the group routes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reclass_ng.classifier.catalog import CatalogError, ClassCatalog, load_catalog
from reclass_ng.classifier.errors import GroupProblem, GroupValidationError
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.node_classification import group_expansion_problems
from reclass_ng.classifier.referents import (
    MISSING_REFERENTS,
    UNSPECIFIED_PARAMETERS,
    added_referent_problems,
    with_deleted,
)
from reclass_ng.server.errors import INVALID_INVENTORY, ApiError, from_problems
from reclass_ng.server.inventory_state import InventoryState, Snapshot


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


def check_expansion(state: InventoryState, snapshot: Snapshot, proposed: Sequence[Group],
                    changed: Sequence[Group]) -> None:
    """422 reference-expansion when the references of a changed group, or of a group
    inheriting from one, expand past the engine's limit in what it gives every node it
    classifies (a reference bomb written through the API; one written by hand is a 422 when
    a node is classified)."""
    try:
        tree = GroupTree.build(proposed)
    except GroupValidationError:
        return  # the tree has problems the change did not add; nothing to check against
    try:
        inventory = state.inventory(snapshot)
    except ApiError:
        return  # nodes or classes do not load now: classifying says so, for every group
    problems = group_expansion_problems(inventory, tree, changed)
    if problems:
        raise from_problems(problems)


def annotate(data: dict[str, Any], group: Group, catalog: ClassCatalog | None
             ) -> dict[str, Any]:
    """A group answer with its `deleted` key (only when something it sets was deleted)."""
    return with_deleted(data, group, catalog)
