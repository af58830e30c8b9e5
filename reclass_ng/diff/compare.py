"""A semantic inventory diff: render every node on two sides and compare key by key.

Each side is an inventory directory (a git revision is exported to one first, see
`sources`). For every node present on either side the rendered classes, applications,
environment, parameters and exports are flattened to key paths (lists are compared whole) and
compared; each added or changed value says which class or node file wrote it: the last write
the engine kept in the value, from its provenance record of the node.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import attrs

import reclass_ng
from reclass_ng.collector import cycle_collection_paused
from reclass_ng.errors import ReclassError
from reclass_ng.explain.origin import Origin
from reclass_ng.location import display_path
from reclass_ng.observe.provenance import NodeProvenance
from reclass_ng.settings import Speed
from reclass_ng.values import Interpolation, to_plain

SECTIONS = ("parameters", "exports")
COMPARED = ("classes", "applications", "environment") + SECTIONS  # as flatten() takes them


@attrs.define
class RenderedNode:
    """One node of one side: its rendered nodeinfo (or the error that stopped it), and the
    engine's provenance record of its render, made by `record` when the origin of a value is
    first asked (only added, changed and removed values ask) and kept until `release`."""

    info: dict[str, Any] | None
    error: str | None
    record: Callable[[], NodeProvenance | None]
    base: str
    _provenance: NodeProvenance | None = attrs.field(default=None, init=False)
    _recorded: bool = attrs.field(default=False, init=False)

    @property
    def values(self) -> dict[tuple, Any]:
        """The flattened values (empty for a node that failed)."""
        return flatten(self.info) if self.info is not None else {}

    @property
    def provenance(self) -> NodeProvenance | None:
        """The provenance record of the node's render (None when it could not be made)."""
        if not self._recorded:
            self._provenance, self._recorded = self.record(), True
        return self._provenance

    def release(self) -> None:
        """Forget the provenance record (it is made again if asked)."""
        self._provenance, self._recorded = None, False

    def origin(self, keys: tuple) -> Origin | None:
        """Where the value at `keys` (section first) was written: the last write the engine
        kept in it (for a list, the last one appended)."""
        section, path = keys[0], keys[1:]
        if section not in SECTIONS or not path or self.provenance is None:
            return None
        finals = [write for write in self.provenance.writes(path, section) if write.final]
        if not finals:
            return None
        write = finals[-1]
        shown = display_path(write.file, self.base) if write.file else None
        via = write.written.text if type(write.written) is Interpolation else write.via
        return Origin(write.source.kind, write.source.name, shown, write.line, via)


def flatten(info: dict[str, Any]) -> dict[tuple, Any]:
    """Key paths of a nodeinfo (without `__reclass__`, which holds timestamps and paths)."""
    out: dict[tuple, Any] = {}
    for key in ("classes", "applications", "environment"):
        out[(key,)] = to_plain(info[key])
    for section in SECTIONS:
        _flatten_mapping(info[section], (section,), out)
    return out


def _flatten_mapping(mapping: dict, prefix: tuple, out: dict[tuple, Any]) -> None:
    if not mapping and len(prefix) > 1:
        out[prefix] = {}
    for key, value in mapping.items():
        path = prefix + (key,)
        if isinstance(value, dict):
            _flatten_mapping(value, path, out)
        else:
            out[path] = to_plain(value)


def without_root(text: str, root: str) -> str:
    """`text` with the side's own directory taken out of the paths and URIs it names.

    Both sides of a diff are different directories (often temporary exports), so the same
    failure names a different absolute path on each; compared as written, a node that fails
    the same way on both sides would count as changed.
    """
    for directory in dict.fromkeys((root, os.path.realpath(root))):
        text = text.replace(f"yaml_fs://{directory}/", "").replace(f"yaml_fs://{directory}", ".")
        text = text.replace(directory + os.sep, "").replace(directory, ".")
    return text


def render_side(base: str, progress: Callable[[int, int], None] | None = None,
                kapitan: bool = False) -> dict[str, RenderedNode]:
    """Every node of the inventory in `base`, rendered as `--inventory` renders it (a failing
    node keeps its error); `progress(done, total)` is told as nodes render. `kapitan`: `base`
    is a Kapitan inventory, read as Kapitan's reclass backend reads it."""
    warnings: list[str] = []
    inventory = reclass_ng.load(base, warn=warnings.append, kapitan=kapitan)
    root = os.path.abspath(base)
    nodes: dict[str, RenderedNode] = {}
    # The cycle collector paused, as for `reclass --inventory`: every node rendered stays
    # alive here, and its passes over them were a third of `diff`'s time (2,000 `mcp`
    # nodes: 1.8 against 0.9 s a side); what the side holds is frozen after.
    with cycle_collection_paused():
        for name, info in inventory.each_nodeinfo(progress=progress):
            nodes[name] = _rendered_node(inventory, name, info, root)
    return nodes


def _rendered_node(inventory: reclass_ng.Inventory, name: str,
                   info: dict[str, Any] | Exception, root: str) -> RenderedNode:
    error = None
    if isinstance(info, ReclassError):
        error = " ".join(line.strip() for line in info.detail_lines())
    elif isinstance(info, Exception):  # one broken node must not hide the others
        error = f"internal error: {type(info).__name__}: {info}"
    if error is not None:
        error = without_root(error, root)
    return RenderedNode(info if error is None else None, error,  # type: ignore[arg-type]
                        _recorder(inventory, name), root)


def _recorder(inventory: reclass_ng.Inventory, name: str) -> Callable[[], NodeProvenance | None]:
    def record() -> NodeProvenance | None:
        try:
            return inventory.provenance(name)
        except Exception:  # noqa: BLE001 - an origin is extra: a value without one is shown
            return None
    return record


@attrs.frozen
class KeyChange:
    keys: tuple
    change: str  # "added", "removed" or "changed"
    old: Any
    new: Any
    origin: Origin | None  # of the new value (of the old one for a removal)

    @property
    def path(self) -> str:
        """The key path joined with `:`."""
        return ":".join(str(k) for k in self.keys)


@attrs.frozen
class NodeChange:
    node: str
    status: str  # "added", "removed" or "changed"
    keys: list[KeyChange]
    old_error: str | None = None
    new_error: str | None = None


@attrs.frozen
class InventoryDiff:
    nodes: list[NodeChange]

    @property
    def keys_changed(self) -> int:
        """How many keys changed, over all nodes."""
        return sum(len(n.keys) for n in self.nodes)

    def count(self, status: str) -> int:
        """How many nodes have `status` (added, removed or changed)."""
        return sum(1 for n in self.nodes if n.status == status)


def compare(old: dict[str, RenderedNode], new: dict[str, RenderedNode],
            speed: Speed | None = None) -> InventoryDiff:
    """What changed between two rendered sides, node by node in name order. `speed` (else
    the environment's, RECLASS_NG_SPEED) says how equal trees are found: the answer is
    the same."""
    same_tree = tree_comparer(speed or Speed.from_environment())
    changes: list[NodeChange] = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before is None:
            changes.append(NodeChange(name, "added", [], new_error=after.error if after else None))
        elif after is None:
            changes.append(NodeChange(name, "removed", [], old_error=before.error))
        else:
            keys = compare_node(before, after, same_tree)
            before.release()
            after.release()
            if keys or before.error != after.error:
                changes.append(NodeChange(name, "changed", keys, before.error, after.error))
    return InventoryDiff(changes)


def compare_node(before: RenderedNode, after: RenderedNode,
                 same_tree: Callable[[Any, Any], bool] | None = None) -> list[KeyChange]:
    """Key changes of one node; nothing is compared on a side that failed to render.
    `same_tree`: how two rendered trees are found equal (default: `_same_tree`)."""
    if before.error or after.error or before.info is None or after.info is None:
        return []
    # Only the parts that differ are flattened (most nodes of a diff: none).
    old: dict[tuple, Any] = {}
    new: dict[tuple, Any] = {}
    for key in COMPARED:
        _differing(before.info[key], after.info[key], (key,), old, new, same_tree or _same_tree)
    out: list[KeyChange] = []
    for keys in sorted(set(old) | set(new), key=lambda k: [str(p) for p in k]):
        if keys not in new:
            out.append(KeyChange(keys, "removed", old[keys], None, before.origin(keys)))
        elif keys not in old:
            out.append(KeyChange(keys, "added", None, new[keys], after.origin(keys)))
        elif not _same(old[keys], new[keys]):
            out.append(KeyChange(keys, "changed", old[keys], new[keys], after.origin(keys)))
    return out


def _differing(old: Any, new: Any, path: tuple, old_out: dict[tuple, Any],
               new_out: dict[tuple, Any], same_tree: Callable[[Any, Any], bool]) -> None:
    """The entries of flatten() at or below `path` (`old` and `new` the values there) on
    each side, leaving out the parts that are the same on both."""
    if same_tree(old, new):
        return
    # flatten() goes into a section's keys, and into a mapping that is not empty
    section = len(path) == 1 and path[0] in SECTIONS
    if isinstance(old, dict) and isinstance(new, dict) and (section or (old and new)):
        for key in old.keys() | new.keys():
            if key not in new:
                _flatten_at(old[key], path + (key,), old_out)
            elif key not in old:
                _flatten_at(new[key], path + (key,), new_out)
            else:
                _differing(old[key], new[key], path + (key,), old_out, new_out, same_tree)
    else:
        _flatten_at(old, path, old_out)
        _flatten_at(new, path, new_out)


def _flatten_at(value: Any, path: tuple, out: dict[tuple, Any]) -> None:
    """flatten()'s entries of the value at `path`."""
    if len(path) == 1 and path[0] not in SECTIONS:
        out[path] = to_plain(value)
    elif isinstance(value, dict):
        _flatten_mapping(value, path, out)
    else:
        out[path] = to_plain(value)


def _same_tree(a: Any, b: Any) -> bool:
    """Whether two rendered values are equal, the types of values included (as _same
    compares them); mappings and lists by their contents, whatever their class (the engine
    renders into its own, OwnedDict and OwnedList, and flatten() makes them plain before
    _same compares them). The reference of tree_comparer's fast path."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() \
            and all(_same_tree(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) \
            and all(_same_tree(x, y) for x, y in zip(a, b, strict=True))
    return _same_value(a, b)


def _same_value(a: Any, b: Any) -> bool:
    # 1 == True == 1.0 in Python, but a changed YAML type is a change worth showing; a
    # subclass of str, int or float is the YAML type it is written as.
    return _yaml_type(a) is _yaml_type(b) and (bool(a == b) or _both_nan(a, b))


def _yaml_type(value: Any) -> type:
    kind = type(value)
    if kind in _YAML_SCALARS:
        return kind
    for base in _YAML_SCALARS:
        if isinstance(value, base):
            return base
    return kind


_YAML_SCALARS = (bool, str, int, float)  # bool first: it is an int


def _both_nan(a: Any, b: Any) -> bool:
    # `.nan` on both sides is no change, though nan == nan is False.
    return isinstance(a, float) and a != a and b != b


def tree_comparer(speed: Speed) -> Callable[[Any, Any], bool]:
    """How `compare` finds two rendered trees equal: _same_tree, or its fast path where
    `speed.json_tree_compare` is on and orjson is installed (it has no wheel for some
    platforms). Both give the same answer."""
    if not speed.json_tree_compare:
        return _same_tree
    try:
        import orjson
    except ImportError:
        return _same_tree
    dumps = orjson.dumps

    def same_tree_by_json(a: Any, b: Any) -> bool:
        """_same_tree's answer without walking equal trees in Python.

        Trees that are not equal (`==`) are taken as not the same: _differing then compares
        their parts, down to the values, whose answer is the walk's (only a nan makes
        `==` say otherwise). Equal trees can still differ in types (1, 1.0 and true are
        equal), which orjson writes each its own way, and subclasses of dict, list, str
        and int as the YAML type they are: equal trees it writes alike are the same. What
        it will not write (keys that are not strings, integers over 64 bits, more than 255
        levels) and equal trees written differently (keys in another order, -0.0 and 0.0)
        are walked by _same_tree. Most nodes of a diff are the same on both sides: walking
        them all was a third of a 2,000-node `diff` (1 s).
        """
        if a != b:
            return False
        try:
            if dumps(a) == dumps(b):
                return True
        except TypeError:  # orjson.JSONEncodeError is one
            pass
        return _same_tree(a, b)

    return same_tree_by_json


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return type(a) is type(b) and json.dumps(a, sort_keys=True, default=repr) \
            == json.dumps(b, sort_keys=True, default=repr)
    return _same_value(a, b)
