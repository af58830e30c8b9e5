"""Builders for node groups, group trees and small inventories used by the classifier tests."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

from reclass_ng.classifier import ROOT_GROUP_ID, Group, GroupTree, group_from_data


def group_data(name: str, parent: str | None = ROOT_GROUP_ID, **fields: Any) -> dict[str, Any]:
    """Plain data for a group; a stable id derived from the name unless one is given."""
    data: dict[str, Any] = {"id": fields.pop("id", str(uuid.uuid5(uuid.NAMESPACE_DNS, name))),
                            "name": name}
    if parent is not None:
        data["parent"] = parent
    data.update(fields)
    return data


def make_group(name: str, parent: str | None = ROOT_GROUP_ID, **fields: Any) -> Group:
    group, problems = group_from_data(group_data(name, parent, **fields))
    assert not problems, [p.describe() for p in problems]
    assert group is not None
    return group


def root(**fields: Any) -> Group:
    return make_group(fields.pop("name", "All Nodes"), None, id=ROOT_GROUP_ID, **fields)


def tree_of(*groups: Group, with_root: bool = True) -> GroupTree:
    """A validated tree; adds a default root unless one is among `groups`."""
    if with_root and not any(g.is_root for g in groups):
        groups = (root(), *groups)
    return GroupTree.build(groups)


def write_yaml(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def write_inventory(base: Path, groups: dict[str, Any] | None = None,
                    nodes: dict[str, Any] | None = None,
                    classes: dict[str, Any] | None = None) -> Path:
    """An inventory directory: groups/<file>.yml, nodes/<name>.yml, classes/<name>.yml."""
    (base / "nodes").mkdir(parents=True, exist_ok=True)
    (base / "classes").mkdir(parents=True, exist_ok=True)
    for file_name, data in (groups or {}).items():
        write_yaml(base / "groups" / file_name, data)
    for node, data in (nodes or {}).items():
        write_yaml(base / "nodes" / f"{node}.yml", data)
    for cls, data in (classes or {}).items():
        write_yaml(base / "classes" / f"{cls.replace('.', '/')}.yml", data)
    return base


def reclass_ng_command() -> list[str]:
    """The installed `reclass-ng` console script, as a user runs it."""
    script = Path(sys.executable).parent / "reclass-ng"
    return [str(script)] if script.exists() else [sys.executable, "-m", "reclass_ng.cli.main"]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*reclass_ng_command(), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)
