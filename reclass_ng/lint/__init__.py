"""`reclass-ng lint`: find mistakes in an inventory that rendering alone does not show.

`lint_inventory(base)` runs every rule and returns the findings; it never raises for a broken
inventory (a broken file or setting is itself a finding). Rules are listed in `findings.RULES`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

import attrs

import reclass_ng
from reclass_ng.collector import cycle_collection_paused
from reclass_ng.errors import NotFoundError, ReclassError, UsageError
from reclass_ng.lint.findings import ERROR, RULES, Finding, finding
from reclass_ng.lint.inventory_rules import (
    RenderRules,
    class_trees,
    rendered_classes,
    unreachable_class,
)
from reclass_ng.lint.nodes import node_runs
from reclass_ng.lint.schema_rule import SchemaRule
from reclass_ng.lint.write_rules import WriteRules
from reclass_ng.lint.yaml_pass import LineIndex, check_files
from reclass_ng.settings import Settings, find_config_file
from reclass_ng.storage import load_settings, read_config_file
from reclass_ng.storage.yaml_fs import walk_yaml_files

__all__ = ["RULES", "Finding", "LintResult", "lint_inventory", "check_rule_names"]

CONFIG_KEY = "lint_disable"


@attrs.frozen
class LintResult:
    findings: list[Finding]
    nodes: int  # nodes rendered
    files: int  # YAML files read

    @property
    def errors(self) -> int:
        """How many findings are errors."""
        return sum(1 for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        """How many findings are warnings."""
        return len(self.findings) - self.errors


def check_rule_names(names: Iterable[str], where: str) -> set[str]:
    """The rule names as a set; a UsageError naming `where` for an unknown one."""
    unknown = sorted(set(names) - set(RULES))
    if unknown:
        raise UsageError(f"{where}: unknown lint rule(s) {', '.join(unknown)}; "
                         f"known rules: {', '.join(RULES)}")
    return set(names)


def disabled_in_config(base: str) -> set[str]:
    """Rules listed under `lint_disable` in the reclass-config.yml the inventory uses."""
    path = find_config_file(base)
    if path is None:
        return set()
    try:
        value = read_config_file(path).get(CONFIG_KEY)
    except ReclassError:
        return set()  # reported as load-error by the run itself
    if value is None:
        return set()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{path}: {CONFIG_KEY} must be a list of rule names")
    return check_rule_names(value, f"{path}: {CONFIG_KEY}")


def lint_inventory(base: str, disabled: Iterable[str] = (),
                   progress: Callable[[int, int], None] | None = None,
                   kapitan: bool = False) -> LintResult:
    """Every finding of every enabled rule, sorted by file and line. `progress(done, total)`
    is told as nodes render. `kapitan`: `base` is a Kapitan inventory, read as Kapitan's
    reclass backend reads it (its targets/ as nodes unless its reclass-config.yml says else)."""
    if not os.path.isdir(base):
        raise NotFoundError(f"No such directory: {base}", path=str(base))
    off = set(disabled) | disabled_in_config(base)
    found: list[Finding] = []
    try:
        if kapitan:
            from reclass_ng.storage.kapitan_settings import kapitan_inventory_settings

            settings = load_settings(base, kapitan_inventory_settings(base), read_config=False)
        else:
            settings = load_settings(base, {})
        settings_ok = True
    except ReclassError as err:
        found.append(finding("load-error", find_config_file(base), None, err.message))
        settings, settings_ok = Settings(inventory_base_uri=base), False
    root = os.path.abspath(os.path.expanduser(base))
    dirs = [os.path.join(root, os.path.expanduser(d))
            for d in (settings.nodes_uri, settings.classes_uri)
            if isinstance(d, str)]  # yaml_git/mixed options are mappings: no directory here
    files = [path for d in dirs if os.path.isdir(d) for path, _ in walk_yaml_files(d)]
    index = LineIndex(root)
    prefixes = settings.dict_key_override_prefix + settings.dict_key_constant_prefix
    found.extend(check_files(files, settings.delimiter, prefixes, index))
    yaml_broken = {f.path for f in found if f.rule == "yaml-syntax"}
    nodes = 0
    warnings: list[str] = []
    inventory = None
    try:
        # With broken settings only the file rules run (the error is reported above).
        inventory = reclass_ng.load(base, warn=warnings.append, kapitan=kapitan,
                                    group_errors=True) if settings_ok else None
    except ReclassError as err:
        found.append(finding("load-error", "", None, " ".join(err.lines())))
    if inventory is not None:
        # Each rule keeps what it needs of a node; the node's record goes before the next.
        rendered: set[str] = set()
        writes = WriteRules(inventory.settings.strict_constant_parameters, index)
        renders = RenderRules(index, yaml_broken)
        schemas = SchemaRule(root, inventory.settings.delimiter) if "schema" not in off \
            else None
        # As a whole-inventory render does: the collector's passes went over everything the
        # rules keep (12% of lint's time at 2,000 nodes) and found little garbage (40,000
        # objects at 2,000 nodes: a node's record is freed by reference counting).
        with cycle_collection_paused():
            for run in node_runs(inventory, progress):
                nodes += 1
                rendered |= rendered_classes(run)
                writes.add(run)
                renders.add(run)
                if schemas is not None:
                    schemas.add(run)
        # yaml_git and mixed: the files of the branches the nodes read (known once rendered);
        # a tree whose classes are in a directory walked above (yaml_fs) is not walked again
        checked = set(files)
        walked = {os.path.realpath(d) for d in dirs}
        tree_files = [path for tree in class_trees(inventory.storage)
                      if tree.classes_dir and os.path.realpath(tree.classes_dir) not in walked
                      for path, _ in walk_yaml_files(tree.classes_dir)
                      if path not in checked]
        files += tree_files
        found.extend(check_files(tree_files, settings.delimiter, prefixes, index))
        if "unreachable-class" not in off:
            found.extend(unreachable_class(inventory, rendered))
        dead, types, constants = writes.findings()
        refs, node_errors = renders.findings()
        found.extend(dead + types + constants + refs + node_errors)
        if schemas is not None:
            found.extend(schemas.findings())
    kept = [f for f in found if f.rule not in off]
    kept.sort(key=lambda f: (f.path, f.line or 0, f.rule, f.message))
    return LintResult(kept, nodes, len(files))
