"""Conflicts between the classifications of a node's leaf groups, and their explanation.

Only leaves can conflict: an ancestor never conflicts with a descendant, which simply overrides
it. A conflict is a path (the environment, a class parameter, a variable, or any leaf path inside
a nested value) where the leaves hold more than one distinct value. Identical values and
disjoint keys merge quietly. `environment_trumps` then settles an environment conflict when
exactly one environment trumps.

Conflicts are found at any depth but reported at the classifier's granularity: the environment,
`classes.<class>.<param>`, `config_data.<class>.<key>`, `variables.<name>`, each with the whole differing values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.merge import canonical, get_path

Path = tuple[str, ...]


def _conflicting_paths(maps: Sequence[Mapping[str, Any]], prefix: Path = ()) -> list[Path]:
    """Leaf paths where the maps that have a value disagree (maps merge, other values compare)."""
    found: list[Path] = []
    keys: dict[str, None] = {}
    for mapping in maps:
        keys.update(dict.fromkeys(mapping))
    for key in keys:
        values = [m[key] for m in maps if key in m]
        if len(values) < 2:
            continue
        if all(isinstance(v, Mapping) for v in values):
            found.extend(_conflicting_paths(values, prefix + (key,)))
        elif len({canonical(v) for v in values}) > 1:
            found.append(prefix + (key,))
    return found


def _reported_path(path: Path) -> Path:
    """Lift a deep conflict to the level the classifier reports: env, class param, variable."""
    if path[0] in ("classes", "config_data"):
        return path[:3]
    if path[0] == "variables":
        return path[:2]
    return path[:1]


def find_conflicts(leaf_classifications: Sequence[Mapping[str, Any]]) -> dict[Path, list[Any]]:
    """Conflicting paths (at the reported level) -> their distinct values, before trumping.

    Only leaves that hold a value at a conflicting path take part: a leaf whose value at the
    reported level merely adds other keys is not part of the conflict.
    """
    comparable = [{k: v for k, v in c.items() if k != "environment_trumps"}
                  for c in leaf_classifications]
    conflicts: dict[Path, dict[str, Any]] = {}
    for path in _conflicting_paths(comparable):
        values = conflicts.setdefault(_reported_path(path), {})
        for classification in comparable:
            if get_path(classification, path)[0]:
                value = get_path(classification, _reported_path(path))[1]
                values.setdefault(canonical(value), value)
    return {path: list(values.values()) for path, values in conflicts.items()}


def trump_environments(leaf_classifications: Sequence[Mapping[str, Any]]) -> list[str]:
    """The distinct environments of leaves with environment_trumps set, in first-seen order."""
    found: dict[str, None] = {}
    for classification in leaf_classifications:
        if classification.get("environment_trumps"):
            found[classification["environment"]] = None
    return list(found)


def apply_environment_trumps(conflicts: dict[Path, list[Any]], trumps: list[str]) -> dict[Path, list[Any]]:
    """No trump: an environment conflict stands. One: it wins. Several: they conflict."""
    if ("environment",) not in conflicts or not trumps:
        return conflicts
    settled = dict(conflicts)
    if len(trumps) == 1:
        del settled[("environment",)]
    else:
        settled[("environment",)] = list(trumps)
    return settled


def _value_details(path: Path, values: list[Any], leaves: Sequence[Group],
                   inherited: Mapping[str, Mapping[str, Any]],
                   chains: Mapping[str, list[Group]]) -> list[dict[str, Any]]:
    """For each value: every leaf (`from`) whose inherited classification has it, and the group
    in that leaf's chain that set it (`defined_by`): the nearest with exactly this value, else
    the nearest that sets the path at all (a merged map may not exist in any single group)."""
    details = []
    for value in values:
        wanted = canonical(value)
        for leaf in leaves:
            found, leaf_value = get_path(inherited[leaf.id], path)
            if not found or canonical(leaf_value) != wanted:
                continue
            chain = chains[leaf.id]
            own = [(g, get_path(g.classification(), path)) for g in chain]
            definer = next((g for g, (ok, v) in own if ok and canonical(v) == wanted), None)
            if definer is None:
                definer = next((g for g, (ok, _) in own if ok), leaf)
            details.append({"value": value, "from": leaf.to_data(), "defined_by": definer.to_data()})
    return details


def explain_conflicts(conflicts: Mapping[Path, list[Any]], leaves: Sequence[Group],
                      inherited: Mapping[str, Mapping[str, Any]],
                      chains: Mapping[str, list[Group]]) -> dict[str, Any]:
    """The `details` of a classification-conflict: environment / classes / variables."""
    explained: dict[str, Any] = {}
    for path, values in conflicts.items():
        details = _value_details(path, values, leaves, inherited, chains)
        if path[0] == "environment":
            explained["environment"] = details
        elif path[0] in ("classes", "config_data"):
            explained.setdefault(path[0], {}).setdefault(path[1], {})[path[2]] = details
        else:
            explained.setdefault("variables", {})[path[1]] = details
    return explained


def _quoted_list(names: Sequence[str]) -> str:
    quoted = [f'"{n}"' for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def conflict_message(explained: Mapping[str, Any]) -> str:
    """The classifier's wording: which groups, and what they disagree about."""
    groups: dict[str, None] = {}
    for details in _all_details(explained):
        groups[details["from"]["name"]] = None
    what = []
    if "environment" in explained:
        what.append("the environment")
    if "classes" in explained:
        what.append(f"class parameters for {_quoted_list(sorted(explained['classes']))} classes")
    if "config_data" in explained:
        what.append(f"configuration data for "
                    f"{_quoted_list(sorted(explained['config_data']))} classes")
    if "variables" in explained:
        what.append(f"variables named {_quoted_list(sorted(explained['variables']))}")
    return (f"The node was classified into groups named {_quoted_list(list(groups))} that "
            f"defined conflicting values for {', '.join(what)}. See the `details` key for all "
            "conflicts.")


def _all_details(explained: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = list(explained.get("environment", []))
    for key in ("classes", "config_data"):
        for params in explained.get(key, {}).values():
            for details in params.values():
                found.extend(details)
    for details in explained.get("variables", {}).values():
        found.extend(details)
    return found
