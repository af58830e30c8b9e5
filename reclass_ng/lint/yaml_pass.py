"""The rules that read the YAML files themselves, before any rendering.

PyYAML's loaders keep the last of two equal keys without a word, so duplicates can only be seen
on the composed node tree (the C composer when libyaml is there, for speed). The same pass
records the line of every key below `parameters` and `exports`, which the other rules use to
point at the file and line of what they report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from reclass_ng.errors import YamlFileError
from reclass_ng.lint.findings import Finding, finding
from reclass_ng.location import display_path
from reclass_ng.storage.positions import KeyTable, deepest_position, file_positions
from reclass_ng.storage.yaml_load import YamlLoader, compose_yaml_bytes, read_input_file

SECTIONS = ("parameters", "exports")


class LineIndex:
    """Where keys are written in the files lint read: (section, key, ...) -> position, one
    positions.key_positions table per file the checks composed without error. A table is made
    when a line of its file is first asked: few files are (a finding's), and making a table
    of every file took a quarter of the checks' time and kept every key of the inventory."""

    def __init__(self, base: str = "") -> None:
        self.tables: dict[str, KeyTable] = {}
        self.base = base  # files are shown relative to it in messages
        self.checked: dict[str, str] = {}  # file whose table is made when asked -> prefixes

    def show(self, path: str) -> str:
        """`path` as messages show it: relative to the inventory when it is inside."""
        return display_path(path, self.base or None)

    def add_file(self, path: str, prefixes: str) -> None:
        """Know the lines of `path` (read with `prefixes`), a file the checks composed."""
        self.checked[path] = prefixes

    def line(self, path: str | None, keys: Iterable[object]) -> int | None:
        """The line of the deepest key of `keys` found in `path` (None when nothing matches)."""
        table = self.tables.get(path) if path else None
        if table is None and path in self.checked:
            table = self.tables[path] = file_positions(path, self.checked.pop(path))
        found = deepest_position(table, tuple(keys)) if table else None
        return found[0] if found else None


def strip_prefixes(key: str, prefixes: str) -> str:
    """A parameter key without its `~`/`=` flags (reclass strips up to two)."""
    for _ in range(2):
        if key and key[0] in prefixes:
            key = key[1:]
    return key


def check_files(paths: Iterable[str], delimiter: str, prefixes: str, index: LineIndex
                ) -> list[Finding]:
    """yaml-syntax, duplicate-key and delimiter-in-key findings of every file."""
    found: list[Finding] = []
    # The fast reader of plain block YAML, declining a mapping that writes a key twice: a
    # file it reads holds nothing for the first two rules, and the third looks at its keys.
    # The others (and those with a key to look at closer) are composed by PyYAML, whose node
    # graph tells what the loaders do not (composing every file of a 500-node `mcp`
    # inventory was about a tenth of lint).
    reader = YamlLoader(unique_keys=True)
    for path in paths:
        try:
            # Regular files only, within the loader's limits (as the composer below: a plain
            # yaml.compose of a 50,000-deep flow list overflows the C stack).
            data = read_input_file(path)
            read, document = reader.block_read(data)
            if read and not _may_hold_delimiters(document, delimiter):
                index.add_file(path, prefixes)
                continue
            root = compose_yaml_bytes(data, path)
        except YamlFileError as err:
            found.append(finding("yaml-syntax", path, err.line, err.problem))
            continue
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            problem = " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"
            found.append(finding("yaml-syntax", path, mark.line + 1 if mark else None,
                                 f"invalid YAML: {problem}"))
            continue
        except yaml.YAMLError as err:
            found.append(finding("yaml-syntax", path, None, f"invalid YAML: {err}"))
            continue
        index.add_file(path, prefixes)
        if root is None:
            continue
        found.extend(_duplicates(root, path))
        if isinstance(root, yaml.MappingNode):
            for key_node, value_node in root.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value in SECTIONS:
                    found.extend(_delimiters_in_keys(value_node, (key_node.value,), path,
                                                     delimiter, prefixes))
    return found


def _may_hold_delimiters(document: Any, delimiter: str) -> bool:
    """Whether a key below `parameters` or `exports` of a loaded document may hold the
    delimiter (so may be a delimiter-in-key finding): one that holds it, prefixes and all, or
    that is not a string (its text as written is not known here)."""
    if not delimiter or not isinstance(document, dict):
        return False
    stack = [document.get(section) for section in SECTIONS]
    while stack:
        mapping = stack.pop()
        if isinstance(mapping, dict):
            for key, value in mapping.items():
                if type(key) is not str or delimiter in key:
                    return True
                if isinstance(value, dict):
                    stack.append(value)
    return False


def _duplicates(root: yaml.Node, path: str) -> list[Finding]:
    found: list[Finding] = []
    stack = [root]
    seen: set[int] = set()  # aliases share nodes, and may even make loops
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if not isinstance(value_node, yaml.ScalarNode):  # most are: nothing below
                    stack.append(value_node)
                if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                    continue
                line = key_node.start_mark.line + 1
                ident = (key_node.tag, key_node.value)
                if ident in first:
                    found.append(finding(
                        "duplicate-key", path, line,
                        f"key {key_node.value!r} is already written at line {first[ident]} of "
                        "this mapping; YAML keeps only this last value"))
                else:
                    first[ident] = line
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(item for item in node.value if not isinstance(item, yaml.ScalarNode))
    found.sort(key=lambda f: f.line or 0)
    return found


def _delimiters_in_keys(node: yaml.Node, prefix: tuple, path: str, delimiter: str,
                        prefixes: str, depth: int = 0) -> list[Finding]:
    found: list[Finding] = []
    # An alias can make a mapping contain itself; nothing real is nested 200 levels deep.
    if not isinstance(node, yaml.MappingNode) or depth > 200:
        return found
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = strip_prefixes(key_node.value, prefixes)
        line = key_node.start_mark.line + 1
        keys = prefix + (key,)
        if delimiter and delimiter in key:
            shown = ":".join(keys[1:])
            found.append(finding(
                "delimiter-in-key", path, line,
                f"key {key!r} (at {keys[0]}:{shown}) contains the delimiter {delimiter!r}: "
                "references cannot reach it"))
        found.extend(_delimiters_in_keys(value_node, keys, path, delimiter, prefixes,
                                         depth + 1))
    return found
