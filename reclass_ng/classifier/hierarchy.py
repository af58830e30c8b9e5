"""The group tree: checking a set of groups forms one, and walking it once it does.

`validate_groups` works on any in-memory list of groups (files just read, or a change proposed
through the HTTP API) and returns every problem. `GroupTree` is only built from a valid set, so
its walks never meet a cycle or a missing parent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from reclass_ng.classifier.errors import (
    INHERITANCE_CYCLE,
    MISSING_PARENT,
    MISSING_ROOT,
    UNIQUENESS_VIOLATION,
    UNREACHABLE_GROUPS,
    GroupProblem,
    GroupValidationError,
)
from reclass_ng.classifier.groups import ROOT_GROUP_ID, Group, group_from_data


def _problem(kind: str, message: str, group: Group, details: object,
             field: str = "parent") -> GroupProblem:
    return GroupProblem(kind, message, group.file, group.id, group.name, details, (field,))


def _uniqueness_problems(groups: Sequence[Group]) -> list[GroupProblem]:
    problems = []
    seen_ids: dict[str, Group] = {}
    seen_names: dict[tuple[str, str], Group] = {}
    for group in groups:
        first = seen_ids.setdefault(group.id, group)
        if first is not group:
            problems.append(_problem(
                UNIQUENESS_VIOLATION,
                f"id {group.id} is already used by group {first.name!r}"
                + (f" ({first.file})" if first.file else "")
                + "; copied group files need a new id",
                group, {"conflict": {"id": group.id}, "constraintName": "groups_pkey"}, "id"))
        key = (group.name, group.environment)
        first = seen_names.setdefault(key, group)
        if first is not group:
            problems.append(_problem(
                UNIQUENESS_VIOLATION,
                f"The group violates a group uniqueness constraint. A group with name = "
                f"{group.name}, environment_name = {group.environment} already exists"
                + (f" ({first.file})." if first.file else "."),
                group,
                {"conflict": {"name": group.name, "environment_name": group.environment},
                 "constraintName": "groups_name_environment_name_key"}, "name"))
    return problems


def _walk_to_root(group: Group, by_id: dict[str, Group]) -> tuple[list[Group], str]:
    """Follow parents from `group`; returns the path and how it ended: root, missing, cycle."""
    path = [group]
    seen = {group.id}
    current = group
    while not current.is_root:
        parent = by_id.get(current.parent)
        if parent is None:
            return path, "missing"
        if parent.id in seen:
            return path + [parent], "cycle"
        path.append(parent)
        seen.add(parent.id)
        current = parent
    return path, "root"


def _hierarchy_problems(groups: Sequence[Group]) -> list[GroupProblem]:
    by_id: dict[str, Group] = {}
    for group in groups:
        by_id.setdefault(group.id, group)
    problems: list[GroupProblem] = []
    if ROOT_GROUP_ID not in by_id:
        problems.append(GroupProblem(
            MISSING_ROOT,
            f"there is no root group: one group must have id {ROOT_GROUP_ID} "
            "(conventionally named \"All Nodes\", in groups/all-nodes.yml)",
            details={"id": ROOT_GROUP_ID}))
    reported_cycles: set[frozenset[str]] = set()
    for group in groups:
        if by_id.get(group.id) is not group or group.is_root:
            continue
        if group.parent not in by_id:
            problems.append(_problem(
                MISSING_PARENT, f"The parent group {group.parent} does not exist.", group,
                group.to_data()))
            continue
        path, ending = _walk_to_root(group, by_id)
        if ending == "cycle":
            loop_start = next(i for i, g in enumerate(path) if g.id == path[-1].id)
            loop = path[loop_start:]
            members = frozenset(g.id for g in loop)
            if group.id in members and members not in reported_cycles:
                reported_cycles.add(members)
                chain = " -> ".join(g.name for g in loop)
                problems.append(_problem(
                    INHERITANCE_CYCLE, f"Detected group inheritance cycle: {chain}.", group,
                    [g.to_data() for g in loop[:-1]]))
            elif group.id not in members:
                problems.append(_problem(
                    UNREACHABLE_GROUPS,
                    f"not reachable from the root: its ancestor {path[-1].name!r} is in an "
                    "inheritance cycle", group, [group.to_data()]))
        elif ending == "missing" and ROOT_GROUP_ID in by_id:
            problems.append(_problem(
                UNREACHABLE_GROUPS,
                f"not reachable from the root: its ancestor {path[-1].name!r} has a missing "
                "parent", group, [group.to_data()]))
    return problems


def validate_groups(groups: Sequence[Group]) -> list[GroupProblem]:
    """Every problem that stops `groups` from forming one tree under the root.

    Checks: one root, ids unique, (name, environment) unique, parents exist, no inheritance
    cycles, every group reachable from the root. Field-level problems are found when a group is
    read (see groups.group_from_data).
    """
    return _uniqueness_problems(groups) + _hierarchy_problems(groups)


@attrs.frozen
class GroupTree:
    """A valid set of groups with parent/child links; build it with `GroupTree.build`."""

    groups: tuple[Group, ...]
    by_id: dict[str, Group] = attrs.field(eq=False, repr=False)
    children_of: dict[str, tuple[Group, ...]] = attrs.field(eq=False, repr=False)

    @classmethod
    def build(cls, groups: Iterable[Group], where: str = "groups") -> GroupTree:
        """Validate and link `groups`; raise GroupValidationError listing every problem."""
        groups = tuple(groups)
        problems = validate_groups(groups)
        if problems:
            raise GroupValidationError(problems, where)
        children: dict[str, list[Group]] = defaultdict(list)
        for group in groups:
            if not group.is_root:
                children[group.parent].append(group)
        ordered = {k: tuple(sorted(v, key=lambda g: (g.name, g.id))) for k, v in children.items()}
        return cls(groups, {g.id: g for g in groups}, ordered)

    @property
    def root(self) -> Group:
        return self.by_id[ROOT_GROUP_ID]

    def get(self, group_id: str) -> Group | None:
        return self.by_id.get(group_id)

    def ancestors(self, group: Group) -> list[Group]:
        """Parent first, root last; empty for the root."""
        found = []
        while not group.is_root:
            group = self.by_id[group.parent]
            found.append(group)
        return found

    def chain(self, group: Group) -> list[Group]:
        """The group and its ancestors, the group first (the order rules are inherited in)."""
        return [group, *self.ancestors(group)]

    def children(self, group: Group) -> tuple[Group, ...]:
        return self.children_of.get(group.id, ())

    def walk(self) -> list[Group]:
        """Every group, parents before children, siblings by name."""
        order, stack = [], [self.root]
        while stack:
            group = stack.pop()
            order.append(group)
            stack.extend(reversed(self.children(group)))
        return order

    def depth(self, group: Group) -> int:
        return len(self.ancestors(group))


def validate_group_data(items: Sequence[Any], files: Sequence[str | None] | None = None
                        ) -> tuple[list[Group], list[GroupProblem]]:
    """Check a proposed set of groups given as plain data (e.g. an API request), writing nothing.

    Returns the groups that read cleanly and every problem, field-level and tree-level.
    """
    groups: list[Group] = []
    problems: list[GroupProblem] = []
    for index, data in enumerate(items):
        group, found = group_from_data(data, files[index] if files else None)
        problems.extend(found)
        if group is not None:
            groups.append(group)
    return groups, problems + validate_groups(groups)
