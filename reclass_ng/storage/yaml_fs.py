"""yaml_fs storage: the nodes/ and classes/ directory trees.

Both trees are scanned once when the storage is opened (so a duplicate name anywhere is reported
before any node is rendered, as reclass does); files are read and parsed only when a node needs
them, and each file at most once per process.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from reclass_ng.errors import DuplicateNameError, NotFoundError, UnsafeClassNameError
from reclass_ng.records import Record
from reclass_ng.storage.yaml_load import load_yaml_file

EXTENSIONS = (".yml", ".yaml")
SKIPPED_DIRS = {"CVS", "SCCS"}


class NodeFile(Record):
    __slots__ = ("name", "path", "pathname")
    _fields = __slots__
    name: str
    path: str  # absolute path of the file
    pathname: str  # path below nodes/ without extension, used by class_mappings_match_path

    def __init__(self, name: str, path: str, pathname: str) -> None:
        _set = object.__setattr__
        _set(self, "name", name)
        _set(self, "path", path)
        _set(self, "pathname", pathname)

    @property
    def uri(self) -> str:
        return "yaml_fs://" + self.path


def _walk_yaml_files(top: str) -> list[tuple[str, str]]:
    """(absolute path, path relative to top) of every YAML file, in a stable order.

    Top-down, files of a directory before its sub-directories, names sorted (reclass used raw
    readdir order, which differs between machines). Directories starting with `.` and CVS/SCCS
    are skipped (D4); symlinked directories are followed, each real directory only once so a
    symlink loop cannot hang the scan. Unreadable directories are skipped, as os.walk does.
    """
    found: list[tuple[str, str]] = []
    try:
        top_stat = os.stat(top)
    except OSError:
        return found
    _walk_dir(top, "", found, {(top_stat.st_dev, top_stat.st_ino)})
    return found


def _walk_dir(path: str, relpath: str, found: list[tuple[str, str]],
              seen_dirs: set[tuple[int, int]]) -> None:
    # os.scandir and relative paths built while descending: os.walk with os.path.relpath and
    # realpath per directory took most of a `--nodeinfo` run on a few thousand files.
    try:
        with os.scandir(path) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    subdirs = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            subdirs.append(entry)
        elif entry.name.endswith(EXTENSIONS):
            found.append((entry.path, relpath + entry.name))
    for entry in subdirs:
        name = entry.name
        if name.startswith(".") or name in SKIPPED_DIRS:
            continue
        try:
            stat = entry.stat()
        except OSError:
            continue
        identity = (stat.st_dev, stat.st_ino)
        if identity in seen_dirs:
            continue
        seen_dirs.add(identity)
        _walk_dir(entry.path, relpath + name + os.sep, found, seen_dirs)


def _strip_extension(relpath: str) -> str:
    for ext in EXTENSIONS:
        if relpath.endswith(ext):
            return relpath[: -len(ext)]
    return relpath


def node_name_for(relpath: str, compose_node_name: bool) -> tuple[str, str]:
    """(node name, pathname) for a file below nodes/."""
    pathname = _strip_extension(relpath)
    parts = pathname.split(os.sep)
    if not compose_node_name or len(parts) == 1 or parts[0].startswith("_"):
        return parts[-1], pathname
    return ".".join(parts), pathname


def class_name_for(relpath: str) -> str:
    """Class name for a file below classes/: dotted path, `dir/init.yml` names `dir`."""
    parts = _strip_extension(relpath).split(os.sep)
    if len(parts) > 1 and parts[-1] == "init":
        parts.pop()
    return ".".join(parts)


def check_class_name(name: str) -> None:
    """Refuse names that could only be an attempt to leave classes/ (they never match a file)."""
    if name.startswith("/") or "\0" in name:
        raise UnsafeClassNameError(name, "class names are dotted names inside classes/, not paths")


class YamlFsStorage:
    """Node and class files below two directories, parsed lazily and cached."""

    def __init__(self, nodes_dir: str, classes_dir: str, compose_node_name: bool = False) -> None:
        self.nodes_dir = os.path.abspath(os.path.expanduser(nodes_dir))
        self.classes_dir = os.path.abspath(os.path.expanduser(classes_dir))
        for directory in (self.nodes_dir, self.classes_dir):
            if not os.path.isdir(directory):
                raise NotFoundError(f"No such directory: {directory}")
        self.nodes = self._scan_nodes(compose_node_name)
        self.class_paths = self._scan_classes()
        self._parsed: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def nodes_uri(self) -> str:
        return "yaml_fs://" + self.nodes_dir

    @property
    def classes_uri(self) -> str:
        return "yaml_fs://" + self.classes_dir

    def _scan_nodes(self, compose_node_name: bool) -> dict[str, NodeFile]:
        nodes: dict[str, NodeFile] = {}
        for path, relpath in _walk_yaml_files(self.nodes_dir):
            name, pathname = node_name_for(relpath, compose_node_name)
            if name in nodes:
                raise DuplicateNameError("node", name, path, nodes[name].path)
            nodes[name] = NodeFile(name, path, pathname)
        return nodes

    def _scan_classes(self) -> dict[str, str]:
        classes: dict[str, str] = {}
        for path, relpath in _walk_yaml_files(self.classes_dir):
            name = class_name_for(relpath)
            if name in classes:
                raise DuplicateNameError("class", name, path, classes[name])
            classes[name] = path
        return classes

    def parsed(self, path: str) -> Any:
        """The YAML document of a file, parsed once per process."""
        try:
            return self._parsed[path]
        except KeyError:
            pass
        data = load_yaml_file(path)
        with self._lock:
            return self._parsed.setdefault(path, data)

    def class_uri(self, name: str) -> str | None:
        check_class_name(name)
        path = self.class_paths.get(name)
        return None if path is None else "yaml_fs://" + path
