"""Reading the `groups/` tree of an inventory: one YAML file per group, any file name.

Files ending in .yml or .yaml anywhere under groups/ are read; hidden files and directories
(names starting with a dot) are skipped, as reclass skips them under classes/.
"""

from __future__ import annotations

import os
from pathlib import Path

from reclass_ng.classifier.errors import SCHEMA_VIOLATION, GroupProblem, GroupValidationError
from reclass_ng.classifier.groups import Group, group_from_data
from reclass_ng.classifier.hierarchy import GroupTree, validate_groups
from reclass_ng.errors import NotFoundError, YamlFileError
from reclass_ng.storage.yaml_load import parse_yaml_bytes, read_input_file

GROUPS_DIR_NAME = "groups"
GROUP_FILE_SUFFIXES = (".yml", ".yaml")


def groups_dir(inventory_dir: str | os.PathLike[str]) -> Path:
    """Where an inventory keeps its groups."""
    return Path(inventory_dir) / GROUPS_DIR_NAME


def has_groups(inventory_dir: str | os.PathLike[str]) -> bool:
    """True when the inventory has a groups/ directory (node-classifier mode)."""
    return groups_dir(inventory_dir).is_dir()


def group_file_paths(directory: Path) -> list[Path]:
    """Every group file under `directory`, sorted, hidden entries skipped."""
    found = []
    for parent, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            if not filename.startswith(".") and filename.endswith(GROUP_FILE_SUFFIXES):
                found.append(Path(parent) / filename)
    return found


def group_from_bytes(content: bytes, shown: str) -> tuple[Group | None, list[GroupProblem]]:
    """Parse and check one group file's bytes (with the loader's depth and size limits)."""
    try:
        data = parse_yaml_bytes(content, shown)
    except YamlFileError as err:
        where = f"{shown}:{err.line}:{err.column or 1}" if err.line else shown
        return None, [GroupProblem(SCHEMA_VIOLATION, str(err), where,
                                   details={"error": str(err)})]
    return group_from_data(data, shown)


def read_group_sources(inventory_dir: str | os.PathLike[str]) -> dict[str, bytes | str]:
    """Every group file's bytes by its path as shown in messages (`groups/...`); a file that
    cannot be read maps to the error message instead. Each file is read once: callers that
    need a file's content and its parsed group together take both from here."""
    directory = groups_dir(inventory_dir)
    if not directory.is_dir():
        raise NotFoundError(f"No groups directory: {directory} does not exist",
                            path=str(directory))
    sources: dict[str, bytes | str] = {}
    for path in group_file_paths(directory):
        shown = os.path.join(GROUPS_DIR_NAME, os.path.relpath(path, directory))
        try:
            sources[shown] = read_input_file(str(path))
        except YamlFileError as err:
            sources[shown] = str(err).replace(str(path), shown, 1)
    return sources


def groups_from_sources(sources: dict[str, bytes | str]) -> tuple[list[Group], list[GroupProblem]]:
    """The groups of read_group_sources' files that parse cleanly, and every problem: per file,
    then across the tree."""
    groups: list[Group] = []
    problems: list[GroupProblem] = []
    for shown, content in sources.items():
        if isinstance(content, str):
            problems.append(GroupProblem(SCHEMA_VIOLATION, content, shown,
                                         details={"error": content}))
            continue
        group, found = group_from_bytes(content, shown)
        problems.extend(found)
        if group is not None:
            groups.append(group)
    # Tree checks only over groups that read cleanly; a broken file is already reported, and a
    # child of it then shows up as missing-parent, which names the real consequence.
    problems.extend(validate_groups(groups))
    return groups, problems


def read_group_files(inventory_dir: str | os.PathLike[str]) -> tuple[list[Group], list[GroupProblem]]:
    """All groups that read cleanly, and every problem: per file, then across the tree."""
    return groups_from_sources(read_group_sources(inventory_dir))


def load_groups(inventory_dir: str | os.PathLike[str]) -> GroupTree:
    """Read and validate `<inventory_dir>/groups/`; raise GroupValidationError with every problem."""
    groups, problems = read_group_files(inventory_dir)
    if problems:
        raise GroupValidationError(problems, str(groups_dir(inventory_dir)))
    return GroupTree.build(groups, str(groups_dir(inventory_dir)))
