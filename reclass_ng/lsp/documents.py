"""What is where in one buffer: keys, class names and references, by position.

Buffers are composed with PyYAML (positions kept), never loaded into values: the values come
from the engine. Positions here are 0-based (line, character), as LSP counts them; characters
are counted in code points (the server announces UTF-32 when the client offers it, and the
inventories we met are ASCII in their keys).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from reclass_ng.errors import YamlFileError
from reclass_ng.storage.positions import FLAG_PREFIXES
from reclass_ng.storage.yaml_load import compose_yaml_bytes

Position = tuple[int, int]
Span = tuple[Position, Position]
# Buffers bigger than this are not composed (a pasted log): no positions, empty answers.
MAX_BUFFER_BYTES = 4 * 1024 * 1024
_REFERENCE = re.compile(r"\$\{([^{}]*)\}")
_WORD = re.compile(r"[^\s'\"]+")


class YamlProblem:
    """A YAML syntax error of a buffer: the message and where."""

    def __init__(self, message: str, position: Position) -> None:
        self.message = message
        self.position = position


class KeyEntry:
    """A mapping key of a buffer: its path (flags `~`/`=` stripped), flag and span."""

    __slots__ = ("path", "flag", "span", "value")

    def __init__(self, path: tuple[str, ...], flag: str, span: Span, value: yaml.Node) -> None:
        self.path = path
        self.flag = flag
        self.span = span
        self.value = value


class Outline:
    """A composed buffer: its keys in document order, or the syntax error."""

    def __init__(self, text: str, path: str = "<buffer>") -> None:
        self.text = text
        self.lines = text.splitlines()
        self.root: yaml.Node | None = None
        self.problem: YamlProblem | None = None
        self.keys: list[KeyEntry] = []
        if len(text.encode("utf-8", "replace")) > MAX_BUFFER_BYTES:
            self.problem = YamlProblem(f"file larger than {MAX_BUFFER_BYTES} bytes: not read by "
                                       "the editor support", (0, 0))
            return
        try:  # the loader's composer: its depth and size limits hold for buffers too
            self.root = compose_yaml_bytes(text.encode("utf-8"), path)
        except YamlFileError as err:
            self.problem = YamlProblem(err.problem, ((err.line or 1) - 1, (err.column or 1) - 1))
            return
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            where = (mark.line, mark.column) if mark is not None else (0, 0)
            self.problem = YamlProblem(f"YAML syntax error: {err.problem or err}", where)
            return
        except (yaml.YAMLError, RecursionError) as err:
            self.problem = YamlProblem(f"YAML error: {err}", (0, 0))
            return
        if self.root is not None:
            self.keys = list(_walk_keys(self.root, ()))

    def key_at(self, position: Position) -> KeyEntry | None:
        """The key written at `position`."""
        for entry in self.keys:
            if _inside(entry.span, position):
                return entry
        return None

    def key_span(self, path: tuple[str, ...]) -> Span | None:
        """Where the deepest key of `path` written in the buffer is."""
        for length in range(len(path), 0, -1):
            for entry in self.keys:
                if entry.path == path[:length]:
                    return entry.span
        return None

    def class_items(self) -> list[tuple[str, Span]]:
        """The names listed under the top-level `classes` key, with their spans."""
        for entry in self.keys:
            if entry.path == ("classes",) and isinstance(entry.value, yaml.SequenceNode):
                return [(str(item.value), _node_span(item)) for item in entry.value.value
                        if isinstance(item, yaml.ScalarNode)]
        return []

    def class_at(self, position: Position) -> tuple[str, Span] | None:
        """The class name listed at `position`."""
        for name, span in self.class_items():
            if _inside(span, position):
                return name, span
        return None

    def mapped_class_at(self, position: Position) -> tuple[str, Span] | None:
        """The class name at `position` in a `class_mappings` entry (`pattern class ...`) of a
        reclass-config.yml or a node's parameters; the pattern itself is not one."""
        for entry in self.keys:
            if entry.path[-1:] != ("class_mappings",) or \
                    not isinstance(entry.value, yaml.SequenceNode):
                continue
            for item in entry.value.value:
                if not isinstance(item, yaml.ScalarNode) or item.start_mark.line != position[0]:
                    continue
                line = self._line(position[0])
                words = list(_WORD.finditer(line, item.start_mark.column))
                for match in words[1:]:  # the first word is the match pattern
                    if match.start() <= position[1] <= match.end():
                        return match.group(0), ((position[0], match.start()),
                                                (position[0], match.end()))
        return None

    def in_classes_list(self, position: Position) -> bool:
        """Whether `position` is inside the top-level `classes` list (for completion)."""
        for entry in self.keys:
            if entry.path == ("classes",):
                start, end = _node_span(entry.value)
                return start <= position <= end or (
                    entry.span[0][0] < position[0] and position[0] <= end[0] + 1
                    and self._line(position[0]).lstrip().startswith("-"))
        return False

    def _line(self, number: int) -> str:
        return self.lines[number] if 0 <= number < len(self.lines) else ""

    def reference_at(self, position: Position) -> tuple[str, Span] | None:
        """The reference `${...}` around `position` on its line: its text and span."""
        line = self._line(position[0])
        for match in _REFERENCE.finditer(line):
            if match.start() <= position[1] <= match.end():
                return match.group(1), ((position[0], match.start()), (position[0], match.end()))
        return None

    def references(self) -> Iterator[tuple[str, Span]]:
        """Every reference `${...}` of the buffer, line by line."""
        for number, line in enumerate(self.lines):
            for match in _REFERENCE.finditer(line):
                yield match.group(1), ((number, match.start()), (number, match.end()))

    def open_reference_before(self, position: Position) -> str | None:
        """The text typed after an unclosed `${` before `position` on its line (completion)."""
        before = self._line(position[0])[:position[1]]
        start = before.rfind("${")
        if start < 0 or "}" in before[start:]:
            return None
        return before[start + 2:]


def _inside(span: Span, position: Position) -> bool:
    return span[0] <= position <= span[1]


def _node_span(node: yaml.Node) -> Span:
    return ((node.start_mark.line, node.start_mark.column),
            (node.end_mark.line, node.end_mark.column))


def _walk_keys(root: yaml.Node, prefix: tuple[str, ...]) -> Iterator[KeyEntry]:
    """Every mapping key below `root`, in document order; aliases are walked once."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, prefix)]
    found: list[KeyEntry] = []
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                written = str(key_node.value)
                key = written.lstrip(FLAG_PREFIXES)
                flag = written[:len(written) - len(key)]
                entry = KeyEntry(path + (key,), flag, _node_span(key_node), value_node)
                found.append(entry)
                stack.append((value_node, entry.path))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                stack.append((item, path + (str(index),)))
    found.sort(key=lambda entry: entry.span[0])
    return iter(found)
