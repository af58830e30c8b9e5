"""yaml_fs storage: the nodes/ and classes/ directory trees.

Each tree is scanned completely, once, into one index (name -> file) that every path uses:
`--nodeinfo`, `--inventory`, the live inventory and the adapters, so a name resolves the same
way everywhere (symlinked directories included) and a duplicate name anywhere fails every
command, as with kapicorp-reclass, which scans both trees when it starts. nodes/ is scanned
when the first node is asked for, classes/ when the first class is (and before a render
ends: a duplicate class name fails a node that reads no class). Files are parsed only when a
node needs them, each at most once per process.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping  # collections.abc without `collections` (6 M)
from _thread import allocate_lock  # threading.Lock, without importing threading

from reclass_ng.errors import (
    ConfigError,
    DuplicateNameError,
    NotFoundError,
    ReclassError,
    UnsafeClassNameError,
)
from reclass_ng.records import Record
from reclass_ng.settings import Settings, Speed
from reclass_ng.storage.dir_entries import EXTENSIONS, directory_identity, directory_listing
from reclass_ng.storage.yaml_load import YamlLoader

# The most directories one scan of nodes/ or classes/ reads (doc/storage.rst): a tree is
# rarely above a few thousand, but symlinked directories that link to one another multiply the
# paths a scan that follows them walks.
MAX_SCANNED_DIRECTORIES = 100_000

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, NoReturn


_UNPARSED = object()  # not in YamlFsStorage._parsed (a document may be None)


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
    """Node name -> NodeFile for every file below nodes/, from one scan of the whole tree
    (`scan`, which raises on a duplicate name) on first use."""

    __slots__ = ("_scan", "_where", "_made")

    def __init__(self, scan: Callable[[], dict[str, tuple[str, str, str]]]) -> None:
        self._scan = scan
        # name -> (directory, file name, directory below nodes/ + os.sep), once scanned
        self._where: dict[str, tuple[str, str, str]] | None = None
        self._made: dict[str, NodeFile] = {}  # at most one per node file

    def _everything(self) -> dict[str, tuple[str, str, str]]:
        if self._where is None:
            self._where = self._scan()
        return self._where

    def _record(self, name: str) -> NodeFile | None:
        made = self._made.get(name)
        if made is not None:
            return made
        where = self._everything().get(name)
        if where is None:
            return None
        directory, filename, relative = where
        made = NodeFile(name, directory + os.sep + filename, relative + _stem(filename))
        return self._made.setdefault(name, made)

    def __getitem__(self, name: str) -> NodeFile:
        made = self._record(name) if isinstance(name, str) else None
        if made is None:
            raise KeyError(name)
        return made

    def get(self, name: str, default: Any = None) -> Any:
        made = self._record(name) if isinstance(name, str) else None
        return default if made is None else made

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._record(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())


def walk_yaml_files(top: str) -> list[tuple[str, str]]:
    """(absolute path, path relative to top) of every YAML file, in a stable order."""
    return [(os.path.join(directory, name), relative + name)
            for directory, relative, names in _walk_dirs(top) for name in names]


def walk_directories(top: str, linked: list[tuple[str, tuple[int, int]]] | None = None
                     ) -> list[str]:
    """Every directory the scan of `top` reads, `top` first (see _walk_dirs). When `linked`
    is given, (path, (device, inode)) of each symlinked directory the walk followed is
    appended to it: the directory the link led to when it was read."""
    return [directory for directory, _, _ in _walk_dirs(top, linked)]


def _walk_dirs(top: str, linked: list[tuple[str, tuple[int, int]]] | None = None
               ) -> list[tuple[str, str, list[str]]]:
    """(directory, its path relative to top with a trailing separator, its YAML file names)
    for every directory below top, in a stable order.

    Top-down, files of a directory before its sub-directories, names sorted (reclass used raw
    readdir order, which differs between machines). Directories starting with `.` and CVS/SCCS
    are skipped (D4). Symlinked directories are followed as kapicorp-reclass follows them
    (os.walk with followlinks): a directory reached by two paths is read under both, so
    `classes/alias -> app` names both `alias.x` and `app.x`. Only a link back to a directory
    of its own path is not followed (kapicorp loops there), and a scan reads at most
    MAX_SCANNED_DIRECTORIES directories (links to links can multiply the paths). Unreadable
    directories are skipped, as os.walk does.
    """
    found: list[tuple[str, str, list[str]]] = []
    try:
        top_stat = os.stat(top)
    except OSError:
        return found
    _walk_dir(top, "", found, top_stat.st_dev, ((top_stat.st_dev, top_stat.st_ino),), linked)
    return found


def _walk_dir(path: str, relpath: str, found: list[tuple[str, str, list[str]]], device: int,
              ancestors: tuple[tuple[int, int], ...],
              linked: list[tuple[str, tuple[int, int]]] | None) -> None:
    # os.scandir and relative paths built while descending: os.walk with os.path.relpath and
    # realpath per directory took most of a `--nodeinfo` run on a few thousand files. A real
    # directory is known by the inode readdir gives (no stat call); only symlinked ones are
    # stat'ed, to know the directory they lead to.
    if len(found) >= MAX_SCANNED_DIRECTORIES:
        raise ReclassError(
            f"{path}: the scan of the inventory reached more than {MAX_SCANNED_DIRECTORIES} "
            "directories (symbolic links to directories that link to each other?); see "
            "doc/storage.rst")
    listing = directory_listing(path)
    if listing is None:
        return
    files, subdirs = listing
    found.append((path, relpath, files))
    for entry in subdirs:
        identity = directory_identity(entry, device)
        if identity is None or identity in ancestors:
            continue
        if linked is not None and entry.is_symlink():
            linked.append((entry.path, identity))
        _walk_dir(entry.path, relpath + entry.name + os.sep, found, identity[0],
                  (*ancestors, identity), linked)


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


def class_name_for(relpath: str) -> str:
    """Class name for a file below classes/: dotted path, `dir/init.yml` names `dir`."""
    parts = _strip_extension(relpath).split(os.sep)
    if len(parts) > 1 and parts[-1] == "init":
        parts.pop()
    return ".".join(parts)


def class_files(top: str) -> dict[str, str] | None:
    """Class name -> file of every class file below `top` (class_name_for's names); None
    when two files name one class (the caller finds them to say which)."""
    # class_name_for, one directory at a time, written out: a call per file was a tenth of
    # the scan of a few thousand classes. A function of its own, not a method: compiled,
    # its locals are typed (yaml_fs.pxd).
    classes: dict[str, str] = {}
    sep = os.sep
    for directory, relative, names in _walk_dirs(top):
        dotted = relative.replace(sep, ".")
        named = dotted[:-1]  # `dir/init.yml` names `dir`
        directory += sep
        known = len(classes)
        for filename in names:
            # (`.yml` or `.yaml`: a character tells them apart, without a slice)
            stem = filename[:-4] if filename[-4] == "." else filename[:-5]
            classes[named if stem == "init" and dotted else dotted + stem] = \
                directory + filename
        if len(classes) != known + len(names):
            return None
    return classes


def check_class_name(name: str) -> None:
    """Refuse names that could only be an attempt to leave classes/ (they never match a file)."""
    if name.startswith("/") or "\0" in name:
        raise UnsafeClassNameError(name, "class names are dotted names inside classes/, not paths")


class YamlFsStorage:
    """Node and class files below two directories, parsed lazily and cached."""

    def __init__(self, nodes_dir: str | None, classes_dir: str | None,
                 compose_node_name: bool = False,
                 overlay: Mapping[str, bytes] | None = None) -> None:
        # `overlay`: absolute path -> the content to read instead of the file's (an editor's
        # unsaved buffers, reclass_ng.lsp); only files that exist on disk are listed.
        # A storage of nodes only (classes_dir None) or of classes only (nodes_dir None) is a
        # part of a yaml_git or mixed storage (storage/split.py).
        self.nodes_dir = nodes_dir and os.path.abspath(os.path.expanduser(nodes_dir))
        self.classes_dir = classes_dir and os.path.abspath(os.path.expanduser(classes_dir))
        self.compose_node_name = compose_node_name
        for directory in (self.nodes_dir, self.classes_dir):
            if directory is not None and not os.path.isdir(directory):
                raise NotFoundError(f"No such directory: {directory}", path=str(directory))
        self.nodes = NodeFiles(self._scan_nodes)
        # The loader's memo tables and what the floats it read were like; whether it reads by
        # the fast path of plain block YAML (Speed) is the speed of the process when the
        # storage opens, for every inventory reusing its parsed files.
        self.loader = YamlLoader(block_reader=Speed.from_environment().block_yaml_reader)
        self._parsed: dict[str, Any] = {}
        self._overlay = dict(overlay or {})
        self._lock = allocate_lock()
        self._class_paths: dict[str, str] | None = None if self.classes_dir else {}

    @property
    def overlay(self) -> Mapping[str, bytes]:
        """What is read instead of some files (absolute path -> content)."""
        return self._overlay

    @property
    def nodes_uri(self) -> str:
        return "yaml_fs://" + (self.nodes_dir or "")

    @property
    def classes_uri(self) -> str:
        return "yaml_fs://" + (self.classes_dir or "")

    def classes_for(self, environment: str) -> YamlFsStorage:
        """The classes a node of `environment` reads: the same tree for every environment."""
        return self

    def _scan_nodes(self) -> dict[str, tuple[str, str, str]]:
        # node_name_for, one directory at a time (thousands of files: this is start-up time).
        where: dict[str, tuple[str, str, str]] = {}
        compose_node_name = self.compose_node_name
        if self.nodes_dir is None:
            return where
        for directory, relative, names in _walk_dirs(self.nodes_dir):
            dotted = relative.replace(os.sep, ".")
            if not compose_node_name or not relative or relative.startswith("_"):
                dotted = ""
            known = len(where)
            where.update({dotted + (filename[:-4] if filename[-4:] == ".yml" else filename[:-5]):
                          (directory, filename, relative) for filename in names})
            if len(where) != known + len(names):
                self._raise_duplicate_node(compose_node_name)
        return where

    def _raise_duplicate_node(self, compose_node_name: bool) -> None:
        # The scan again, a file at a time, to name the first duplicate and both its files.
        paths: dict[str, str] = {}
        assert self.nodes_dir is not None
        for path, relative in walk_yaml_files(self.nodes_dir):
            name = node_name_for(relative, compose_node_name)[0]
            if name in paths:
                raise DuplicateNameError("node", name, path, paths[name])
            paths[name] = path
        raise RuntimeError("nodes/ changed while it was scanned")  # a name counted twice

    def _scan_classes(self) -> dict[str, str]:
        assert self.classes_dir is not None
        classes = class_files(self.classes_dir)
        if classes is None:
            self._raise_duplicate_class()
        return classes

    def _raise_duplicate_class(self) -> NoReturn:
        # The scan again, a file at a time, to name the first duplicate and both its files.
        paths: dict[str, str] = {}
        assert self.classes_dir is not None
        for path, relative in walk_yaml_files(self.classes_dir):
            name = class_name_for(relative)
            if name in paths:
                raise DuplicateNameError("class", name, path, paths[name])
            paths[name] = path
        raise RuntimeError("classes/ changed while it was scanned")  # a name counted twice

    @property
    def class_paths(self) -> dict[str, str]:
        """Class name -> file, for every class file below classes/ (the whole tree, scanned
        once; a duplicate class name anywhere is raised)."""
        if self._class_paths is None:
            self._class_paths = self._scan_classes()
        return self._class_paths

    def class_path(self, name: str) -> str | None:
        """The file of a class, or None (from the scan of the whole tree, see class_paths)."""
        return self.class_paths.get(name)

    def check_classes(self) -> None:
        """Raise the error of the class listing (a duplicate class name), as reclass's
        start-up scan does for every command, when no class lookup raised it yet."""
        self.class_paths  # noqa: B018 - the scan, for its error

    def parsed(self, path: str) -> Any:
        """The YAML document of a file, parsed once per process."""
        # (A lookup, not `try: ... except KeyError`: most calls are a file's first, and
        # raising the KeyError cost more than the lookup.)
        data = self._parsed.get(path, _UNPARSED)
        if data is not _UNPARSED:
            return data
        content = self._overlay.get(path)
        loader = self.loader
        data = loader.load_file(path) if content is None else loader.parse_bytes(content, path)
        with self._lock:
            return self._parsed.setdefault(path, data)

    def forget_parsed(self, path: str) -> None:
        """Drop the parsed document of a file (it is parsed again when asked for)."""
        with self._lock:
            self._parsed.pop(path, None)

    def origin(self, path: str) -> str:
        """The URI of a file in messages and `__reclass__:uri`."""
        return "yaml_fs://" + path

    @property
    def floats_json_exact(self) -> bool:
        """Whether every float of the files parsed so far prints the same through orjson as
        through json (storage.yaml_load.YamlLoader)."""
        return self.loader.floats_json_exact

    def reuse_parsed(self, other: YamlFsStorage, paths: Iterable[str]) -> None:
        """Take the parsed documents of `paths` from `other` (files known to be unchanged
        since `other` parsed them), so they are not parsed again; their floats come along
        (if `other` read an inexact one, this storage may now hold it)."""
        theirs = other._parsed
        if not other.floats_json_exact:
            self.loader.floats_json_exact = False
        with self._lock:
            for path in paths:
                if path in theirs:
                    self._parsed.setdefault(path, theirs[path])

    def with_overlay(self, overlay: Mapping[str, bytes], changed: str) -> YamlFsStorage:
        """A storage of the same trees reading `overlay` instead of those files, after the
        editor changed the content of listed file `changed` (an edit changes no name): the
        listing is this storage's, not scanned again, and so are the parsed documents of
        every other file. A listing that raised (a duplicate name) is scanned again."""
        twin = YamlFsStorage(self.nodes_dir, self.classes_dir, self.compose_node_name, overlay)
        where = self.nodes._where
        if where is not None:
            twin.nodes = NodeFiles(lambda: where)
        twin._class_paths = self._class_paths
        with self._lock:
            unchanged = [path for path in self._parsed if path != changed]
        twin.reuse_parsed(self, unchanged)
        return twin

    def class_uri(self, name: str) -> str | None:
        check_class_name(name)
        path = self.class_path(name)
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


def open_storage(settings: Settings, reuse: object = None,
                 overlay: Mapping[str, bytes] | None = None) -> YamlFsStorage:
    """The yaml_fs storage of `settings` (`reuse`, an open one, when it reads the same trees;
    `overlay`: contents read instead of those files', see YamlFsStorage)."""
    base = os.path.expanduser(settings.inventory_base_uri or os.getcwd())
    uris = [settings.nodes_uri, settings.classes_uri]
    if not all(isinstance(uri, str) for uri in uris):
        raise ConfigError("storage_type yaml_fs: nodes_uri and classes_uri are directories "
                          "(mappings of options are for yaml_git and mixed)")
    nodes_dir, classes_dir = (os.path.join(base, os.path.expanduser(str(uri))) for uri in uris)
    check_distinct(nodes_dir, classes_dir)
    if (overlay is None and isinstance(reuse, YamlFsStorage)
            and (reuse.nodes_dir, reuse.classes_dir, reuse.compose_node_name)
            == (os.path.abspath(nodes_dir), os.path.abspath(classes_dir),
                settings.compose_node_name)):
        return reuse
    return YamlFsStorage(nodes_dir, classes_dir, settings.compose_node_name, overlay)
