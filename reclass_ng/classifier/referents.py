"""Checking groups against the class catalogue, as the classifier does on every group write.

* `missing-referents`: a class, or a class parameter, that a group sets or inherits does not
  exist in the group's environment. Each detail is `{kind: "missing-class" | "missing-parameter",
  missing: class | [class, parameter], environment, group, defined_by}`; `group` is where the
  error shows (an inheriting descendant, maybe), `defined_by` the group that set the value.
* `unspecified-parameters`: a class the group has (own or inherited) has a required parameter
  (default null) that neither the group nor an ancestor sets. Details `{kind, group,
  environment, class, unspecified: [params], defined_by}`.
* `deleted`: the read-time annotation of a group's own classes and parameters that its
  environment no longer has, with `puppetlabs.classifier/deleted` markers.

Environments without a catalogue are never checked (inventories without Puppet code keep
working), and a write is refused only for problems it adds: a group already referring to a
deleted class can still be edited, as in the classifier ("updates that don't increase the number
of errors associated with a node group are allowed").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from reclass_ng.classifier.catalog import ClassCatalog, PuppetClass
from reclass_ng.classifier.errors import GroupProblem
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree

MISSING_REFERENTS = "missing-referents"
UNSPECIFIED_PARAMETERS = "unspecified-parameters"
DELETED_MARKER = "puppetlabs.classifier/deleted"


def inherited_classes(tree: GroupTree, group: Group) -> dict[str, tuple[str, dict[str, tuple[Any, str]]]]:
    """class -> (name of the group that declared it, {param: (value, name of the setter)}),
    merged root first; a null class or parameter in a descendant removes the inherited one."""
    merged: dict[str, tuple[str, dict[str, tuple[Any, str]]]] = {}
    for ancestor in reversed(tree.chain(group)):
        for class_name, params in ancestor.classes.items():
            if params is None:
                merged.pop(class_name, None)
                continue
            declared_by, current = merged.get(class_name, (ancestor.name, {}))
            current = dict(current)
            for param, value in params.items():
                if value is None:
                    current.pop(param, None)
                else:
                    current[param] = (value, ancestor.name)
            merged[class_name] = (declared_by, current)
    return merged


def _subtree(tree: GroupTree, group: Group) -> list[Group]:
    found, stack = [], [group]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(tree.children(current))
    return found


def referent_problems(tree: GroupTree, catalog: ClassCatalog | None,
                      groups: Iterable[Group] | None = None) -> list[GroupProblem]:
    """Every missing-referents and unspecified-parameters problem of `groups` (default: all),
    with inherited values; one problem per group and kind, listing all its details."""
    if catalog is None:
        return []
    problems = []
    for group in (tree.walk() if groups is None else groups):
        if not catalog.has_environment(group.environment):
            continue
        missing, unspecified = _referent_details(tree, group,
                                                 catalog.classes(group.environment))
        if missing:
            problems.append(GroupProblem(
                MISSING_REFERENTS, _missing_message(missing), group.file, group.id, group.name,
                missing, ("classes",)))
        if unspecified:
            problems.append(GroupProblem(
                UNSPECIFIED_PARAMETERS, _unspecified_message(unspecified), group.file, group.id,
                group.name, unspecified, ("classes",)))
    return problems


def _referent_details(tree: GroupTree, group: Group, known: dict[str, PuppetClass]
                      ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The missing-referents and the unspecified-parameters details of one group, whose
    environment has the classes `known`."""
    missing: list[dict[str, Any]] = []
    unspecified: list[dict[str, Any]] = []
    base = {"environment": group.environment, "group": group.name}
    for class_name, (declared_by, params) in sorted(inherited_classes(tree, group).items()):
        puppet_class = known.get(class_name)
        if puppet_class is None:
            missing.append({"kind": "missing-class", "missing": class_name, **base,
                            "defined_by": declared_by})
            continue
        missing.extend({"kind": "missing-parameter", "missing": [class_name, param], **base,
                        "defined_by": set_by}
                       for param, (_, set_by) in sorted(params.items())
                       if param not in puppet_class.parameters)
        required = [p for p in puppet_class.required() if p not in params]
        if required:
            unspecified.append({"kind": UNSPECIFIED_PARAMETERS, **base, "class": class_name,
                                "unspecified": required, "defined_by": declared_by})
    return missing, unspecified


def _missing_message(details: Sequence[dict[str, Any]]) -> str:
    parts = []
    for detail in details:
        if detail["kind"] == "missing-class":
            parts.append(f"class {detail['missing']!r}")
        else:
            parts.append(f"parameter {detail['missing'][1]!r} of class {detail['missing'][0]!r}")
        parts[-1] += f" (set by group {detail['defined_by']!r})"
    first = details[0]
    return (f"Group {first['group']!r} refers to {', '.join(parts)}, which the environment "
            f"{first['environment']!r} does not have. See the `details` key for all missing "
            "classes and parameters.")


def _unspecified_message(details: Sequence[dict[str, Any]]) -> str:
    parts = [f"{d['class']} ({', '.join(d['unspecified'])})" for d in details]
    first = details[0]
    return (f"Group {first['group']!r} has classes with required parameters that no group "
            f"sets: {'; '.join(parts)} (environment {first['environment']!r}).")


def _detail_key(group_id: str | None, detail: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a detail the same problem before and after a change (by group id, so a
    rename does not make old problems look new)."""
    missing = detail.get("missing", detail.get("unspecified"))
    return (group_id, detail["kind"], detail.get("class"), repr(missing), detail["environment"],
            detail["defined_by"])


def added_referent_problems(before: GroupTree | None, after: GroupTree,
                            catalog: ClassCatalog | None, changed: Sequence[str]
                            ) -> list[GroupProblem]:
    """The referent problems a change adds: the changed groups and their subtrees in `after`,
    minus the details the same groups already had in `before`."""
    if catalog is None:
        return []
    groups: dict[str, Group] = {}
    for group_id in changed:
        group = after.get(group_id)
        if group is not None:
            groups.update((g.id, g) for g in _subtree(after, group))
    found = referent_problems(after, catalog, groups.values())
    if before is None or not found:
        return found
    old_groups = [g for g in (before.get(group_id) for group_id in groups) if g is not None]
    existing = {_detail_key(p.group_id, d)
                for p in referent_problems(before, catalog, old_groups) for d in p.details}
    added = []
    for problem in found:
        fresh = [d for d in problem.details if _detail_key(problem.group_id, d) not in existing]
        if fresh:
            message = (_missing_message(fresh) if problem.kind == MISSING_REFERENTS
                       else _unspecified_message(fresh))
            added.append(GroupProblem(problem.kind, message, problem.file, problem.group_id,
                                      problem.group_name, fresh, problem.key))
    return added


def deleted_annotation(group: Group, catalog: ClassCatalog | None) -> dict[str, Any] | None:
    """The group's `deleted` object: its own classes and parameters that its environment no
    longer has; None when nothing is missing (or the environment has no catalogue)."""
    if catalog is None or not catalog.has_environment(group.environment):
        return None
    deleted: dict[str, Any] = {}
    for class_name, params in group.classes.items():
        if params is None:
            continue
        puppet_class = catalog.get(group.environment, class_name)
        if puppet_class is None:
            deleted[class_name] = {DELETED_MARKER: True}
            continue
        gone = {param: {DELETED_MARKER: True, "value": value}
                for param, value in params.items() if param not in puppet_class.parameters}
        if gone:
            deleted[class_name] = {DELETED_MARKER: False, **gone}
    return deleted or None


def with_deleted(data: dict[str, Any], group: Group, catalog: ClassCatalog | None
                 ) -> dict[str, Any]:
    """`data` (a group's API form) with its `deleted` key when it has deleted referents."""
    deleted = deleted_annotation(group, catalog)
    return {**data, "deleted": deleted} if deleted else data
