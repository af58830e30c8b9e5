"""yaml_fs storage: the nodes/ and classes/ directory trees.

Both trees are scanned once when the storage is opened (so a duplicate name anywhere is reported
before any node is rendered, as reclass does); files are read and parsed only when a node needs
them, and each file at most once per process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from reclass_ng.errors import ConfigError, DuplicateNameError, NotFoundError, UnsafeClassNameError
from reclass_ng.records import Record
from reclass_ng.settings import Settings
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


class NodeFiles(Mapping[str, NodeFile]):
    """Node name -> NodeFile for every file below nodes/. The records are made when asked
    for: a `--nodeinfo` run looks at one node of thousands."""

    __slots__ = ("_where", "_made")

    def __init__(self, where: dict[str, tuple[str, str, str]]) -> None:
        self._where = where  # name -> (directory, file name, directory below nodes/ + os.sep)
        self._made: dict[str, NodeFile] = {}

    def __getitem__(self, name: str) -> NodeFile:
        made = self._made.get(name)
        if made is None:
            directory, filename, relative = self._where[name]
            made = self._made[name] = NodeFile(name, directory + os.sep + filename,
                                               relative + _stem(filename))
        return made

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


def _walk_yaml_files(top: str) -> list[tuple[str, str]]:
    """(absolute path, path relative to top) of every YAML file, in a stable order."""
    return [(os.path.join(directory, name), relative + name)
            for directory, relative, names in _walk_dirs(top) for name in names]


def walk_directories(top: str) -> list[str]:
    """Every directory the scan of `top` reads, `top` first (see _walk_dirs)."""
    return [directory for directory, _, _ in _walk_dirs(top)]


def _walk_dirs(top: str) -> list[tuple[str, str, list[str]]]:
    """(directory, its path relative to top with a trailing separator, its YAML file names)
    for every directory below top, in a stable order.

    Top-down, files of a directory before its sub-directories, names sorted (reclass used raw
    readdir order, which differs between machines). Directories starting with `.` and CVS/SCCS
    are skipped (D4); symlinked directories are followed, each real directory only once so a
    symlink loop cannot hang the scan. Unreadable directories are skipped, as os.walk does.
    """
    found: list[tuple[str, str, list[str]]] = []
    try:
        top_stat = os.stat(top)
    except OSError:
        return found
    _walk_dir(top, "", found, top_stat.st_dev, {(top_stat.st_dev, top_stat.st_ino)})
    return found


def _walk_dir(path: str, relpath: str, found: list[tuple[str, str, list[str]]], device: int,
              seen_dirs: set[tuple[int, int]]) -> None:
    # os.scandir and relative paths built while descending: os.walk with os.path.relpath and
    # realpath per directory took most of a `--nodeinfo` run on a few thousand files. A real
    # directory is known by the inode readdir gives (no stat call); only symlinked ones are
    # stat'ed, to know the directory they lead to.
    try:
        with os.scandir(path) as scan:
            entries = {entry.name: entry for entry in scan}
    except OSError:
        return
    files = []
    subdirs = []
    for name in sorted(entries):
        entry = entries[name]
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if name[0] != "." and name not in SKIPPED_DIRS:
                subdirs.append(entry)
        elif name.endswith(EXTENSIONS):
            files.append(name)
    found.append((path, relpath, files))
    for entry in subdirs:
        try:
            if entry.is_symlink():
                stat = entry.stat()
                identity = (stat.st_dev, stat.st_ino)
            else:
                identity = (device, entry.inode())
        except OSError:
            continue
        if identity in seen_dirs:
            continue
        seen_dirs.add(identity)
        _walk_dir(entry.path, relpath + entry.name + os.sep, found, identity[0], seen_dirs)


def _stem(filename: str) -> str:
    return filename[:-4] if filename.endswith(".yml") else filename[:-5]


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


def _class_name_in(dotted_directory: str, filename: str) -> str:
    # class_name_for, the directory part already dotted ("a.b." or "").
    stem = filename[:-4] if filename[-4:] == ".yml" else filename[:-5]
    if stem == "init" and dotted_directory:
        return dotted_directory[:-1]
    return dotted_directory + stem


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

    def __init__(self, nodes_dir: str | None, classes_dir: str | None,
                 compose_node_name: bool = False) -> None:
        # A storage of nodes only (classes_dir None) or of classes only (nodes_dir None) is a
        # part of a yaml_git or mixed storage (storage/split.py).
        self.nodes_dir = nodes_dir and os.path.abspath(os.path.expanduser(nodes_dir))
        self.classes_dir = classes_dir and os.path.abspath(os.path.expanduser(classes_dir))
        self.compose_node_name = compose_node_name
        for directory in (self.nodes_dir, self.classes_dir):
            if directory is not None and not os.path.isdir(directory):
                raise NotFoundError(f"No such directory: {directory}")
        self.nodes = self._scan_nodes(compose_node_name) if self.nodes_dir else NodeFiles({})
        self._parsed: dict[str, Any] = {}
        self._lock = threading.Lock()
        # The classes tree is scanned in a thread while the first node is read and merged
        # (directory listings release the interpreter); until it is done, a class is found at
        # its usual place and checked against the scan before the node is used
        # (check_classes), so a duplicate class name is still an error, reported first.
        self._class_paths: dict[str, str] | None = None if self.classes_dir else {}
        self._class_scan_error: BaseException | None = None
        self._found_early: dict[str, str | None] = {}
        self._class_scan = threading.Thread(target=self._scan_classes_in_background,
                                            name="reclass-ng class scan", daemon=True)
        if self.classes_dir:
            self._class_scan.start()

    @property
    def nodes_uri(self) -> str:
        return "yaml_fs://" + (self.nodes_dir or "")

    @property
    def classes_uri(self) -> str:
        return "yaml_fs://" + (self.classes_dir or "")

    def classes_for(self, environment: str) -> YamlFsStorage:
        """The classes a node of `environment` reads: the same tree for every environment."""
        return self

    def _scan_nodes(self, compose_node_name: bool) -> NodeFiles:
        # node_name_for, one directory at a time (thousands of files: this is start-up time).
        where: dict[str, tuple[str, str, str]] = {}
        assert self.nodes_dir is not None
        for directory, relative, names in _walk_dirs(self.nodes_dir):
            dotted = relative.replace(os.sep, ".")
            if not compose_node_name or not relative or relative.startswith("_"):
                dotted = ""
            known = len(where)
            where.update({dotted + (filename[:-4] if filename[-4:] == ".yml" else filename[:-5]):
                          (directory, filename, relative) for filename in names})
            if len(where) != known + len(names):
                self._raise_duplicate_node(compose_node_name)
        return NodeFiles(where)

    def _raise_duplicate_node(self, compose_node_name: bool) -> None:
        # The scan again, a file at a time, to name the first duplicate and both its files.
        paths: dict[str, str] = {}
        assert self.nodes_dir is not None
        for path, relative in _walk_yaml_files(self.nodes_dir):
            name = node_name_for(relative, compose_node_name)[0]
            if name in paths:
                raise DuplicateNameError("node", name, path, paths[name])
            paths[name] = path
        raise RuntimeError("nodes/ changed while it was scanned")  # a name counted twice

    def _scan_classes(self) -> dict[str, str]:
        # class_name_for, one directory at a time.
        classes: dict[str, str] = {}
        assert self.classes_dir is not None
        for directory, relative, names in _walk_dirs(self.classes_dir):
            dotted = relative.replace(os.sep, ".")
            known = len(classes)
            classes.update({_class_name_in(dotted, filename): directory + os.sep + filename
                            for filename in names})
            if len(classes) != known + len(names):
                self._raise_duplicate_class()
        return classes

    def _raise_duplicate_class(self) -> None:
        # The scan again, a file at a time, to name the first duplicate and both its files.
        paths: dict[str, str] = {}
        assert self.classes_dir is not None
        for path, relative in _walk_yaml_files(self.classes_dir):
            name = class_name_for(relative)
            if name in paths:
                raise DuplicateNameError("class", name, path, paths[name])
            paths[name] = path
        raise RuntimeError("classes/ changed while it was scanned")  # a name counted twice

    def _scan_classes_in_background(self) -> None:
        try:
            self._class_paths = self._scan_classes()
        except BaseException as err:  # noqa: BLE001 - handed to the thread that asks
            self._class_scan_error = err

    @property
    def class_paths(self) -> dict[str, str]:
        """Class name -> file, for every class file below classes/."""
        if self._class_paths is None:
            self._class_scan.join()
            if self._class_scan_error is not None:
                raise self._class_scan_error
            if self._class_paths is None:  # a forked child: the scanning thread stayed behind
                self._scan_classes_in_background()
                return self.class_paths
        return self._class_paths

    def class_path(self, name: str) -> str | None:
        """The file of a class, or None."""
        if self._class_paths is not None or not self._class_scan.is_alive():
            return self.class_paths.get(name)
        path = self._usual_class_file(name)
        if path is None:  # somewhere else, or nowhere: only the scan can tell
            return self.class_paths.get(name)
        with self._lock:
            self._found_early[name] = path
        return path

    def _usual_class_file(self, name: str) -> str | None:
        parts = name.split(".")
        if self.classes_dir is None or any(not part or part[0] == "." or part in SKIPPED_DIRS or os.sep in part
               for part in parts):
            return None
        base = os.path.join(self.classes_dir, *parts)
        for candidate in (base + ".yml", base + ".yaml", os.path.join(base, "init.yml"),
                          os.path.join(base, "init.yaml")):
            if os.path.isfile(candidate):
                return candidate
        return None

    def check_classes(self) -> None:
        """Wait for the classes scan; raise its error (a duplicate class name), and make sure
        every class found before it ended is the one the scan names."""
        paths = self.class_paths
        with self._lock:
            early, self._found_early = self._found_early, {}
        for name, path in early.items():
            if paths.get(name) != path:
                raise NotFoundError(f"Class {name!r}: {path} changed while the inventory was "
                                    "read; run again")

    def parsed(self, path: str) -> Any:
        """The YAML document of a file, parsed once per process."""
        try:
            return self._parsed[path]
        except KeyError:
            pass
        data = load_yaml_file(path)
        with self._lock:
            return self._parsed.setdefault(path, data)

    def origin(self, path: str) -> str:
        """The URI of a file in messages and `__reclass__:uri`."""
        return "yaml_fs://" + path

    def reuse_parsed(self, other: YamlFsStorage, paths: Iterable[str]) -> None:
        """Take the parsed documents of `paths` from `other` (files known to be unchanged
        since `other` parsed them), so they are not parsed again."""
        theirs = other._parsed
        with self._lock:
            for path in paths:
                if path in theirs:
                    self._parsed.setdefault(path, theirs[path])

    def class_uri(self, name: str) -> str | None:
        check_class_name(name)
        path = self.class_paths.get(name)
        return None if path is None else "yaml_fs://" + path


def check_distinct(nodes_dir: str, classes_dir: str) -> None:
    """Refuse a nodes directory that is, or contains, the classes directory, or the reverse."""
    nodes_dir, classes_dir = os.path.abspath(nodes_dir), os.path.abspath(classes_dir)
    if nodes_dir == classes_dir:
        raise ConfigError(f"The inventory URIs must not be the same for nodes and classes: "
                          f"{nodes_dir}")
    if os.path.commonpath([nodes_dir, classes_dir]) in (nodes_dir, classes_dir):
        raise ConfigError(f"The nodes and classes directories must not contain each other: "
                          f"{nodes_dir}, {classes_dir}")


def open_storage(settings: Settings, reuse: object = None) -> YamlFsStorage:
    """The yaml_fs storage of `settings` (`reuse`, an open one, when it reads the same trees)."""
    base = os.path.expanduser(settings.inventory_base_uri or os.getcwd())
    uris = [settings.nodes_uri, settings.classes_uri]
    if not all(isinstance(uri, str) for uri in uris):
        raise ConfigError("storage_type yaml_fs: nodes_uri and classes_uri are directories "
                          "(mappings of options are for yaml_git and mixed)")
    nodes_dir, classes_dir = (os.path.join(base, os.path.expanduser(str(uri))) for uri in uris)
    check_distinct(nodes_dir, classes_dir)
    if (isinstance(reuse, YamlFsStorage) and (reuse.nodes_dir, reuse.classes_dir,
                                              reuse.compose_node_name)
            == (os.path.abspath(nodes_dir), os.path.abspath(classes_dir),
                settings.compose_node_name)):
        return reuse
    return YamlFsStorage(nodes_dir, classes_dir, settings.compose_node_name)
