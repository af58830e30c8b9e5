"""yaml_git storage: node and class files read from branches of git repositories.

Configured as kapicorp-reclass configures it::

    storage_type: yaml_git
    nodes_uri:
      repo: git+ssh://git@example.com/salt/nodes.git   # any URL or path git accepts
      branch: master                                   # the default for nodes
      root: nodes                                      # a directory of the branch (optional)
    classes_uri:
      repo: file:///srv/git/classes.git
      branch: __env__                                  # the default: the node's environment
      cache_dir: ~/.reclass/cache/git                  # where repositories are mirrored
      lock_dir: ~/.reclass/cache/lock                  # lock files, one per repository
      env_overrides:
        - prod: {branch: production}                   # environment -> other options
        - test: {repo: file:///srv/git/other.git, branch: main}

Each node's classes come from the branch its environment names (`__env__`), or the branch an
`env_overrides` entry gives; an override without `branch` reads the branch named like the
environment. Unlike kapicorp-reclass, every environment of one `--inventory` reads its own
branch (kapicorp kept the first node's), and a missing branch is an error naming the branch.
Repositories are fetched once each time the inventory is opened (storage/git_trees.py).
`privkey` selects an ssh key; `pubkey` is accepted and unused (ssh finds it next to the
private key); `password` is refused: use ssh-agent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from reclass_ng.errors import ConfigError
from reclass_ng.records import Record
from reclass_ng.settings import Settings
from reclass_ng.storage.git_trees import GitTrees, cache_name, root_directory
from reclass_ng.storage.split import SplitStorage, opened_with
from reclass_ng.storage.yaml_fs import YamlFsStorage

ENVIRONMENT_BRANCH = "__env__"
URI_KEYS = ("repo", "branch", "root", "cache_dir", "lock_dir", "pubkey", "privkey", "password")


class GitLocation(Record):
    """A tree in a repository: the `nodes_uri`/`classes_uri` options of yaml_git."""

    __slots__ = ("repo", "branch", "root", "cache_dir", "lock_dir", "privkey")
    _fields = __slots__
    repo: str
    branch: str
    root: str | None
    cache_dir: str | None
    lock_dir: str | None
    privkey: str | None

    def __init__(self, repo: str, branch: str, root: str | None = None,
                 cache_dir: str | None = None, lock_dir: str | None = None,
                 privkey: str | None = None) -> None:
        _set = object.__setattr__
        for name, value in zip(self.__slots__, (repo, branch, root, cache_dir, lock_dir,
                                                privkey), strict=True):
            _set(self, name, value)

    def updated(self, options: Mapping[str, Any], setting: str) -> GitLocation:
        """A copy with some options changed (checked like a configuration's)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(_checked_options(options, setting))
        return GitLocation(**values)

    def branch_for(self, environment: str) -> str:
        return environment if self.branch == ENVIRONMENT_BRANCH else self.branch

    def describe(self, branch: str) -> str:
        root = f" {self.root}" if self.root else ""
        return f"yaml_git://{self.repo} {branch}{root}"


def _checked_options(options: Any, setting: str) -> dict[str, Any]:
    if not isinstance(options, Mapping):
        raise ConfigError(f"Setting {setting}: expected a mapping of yaml_git options "
                          f"({', '.join(URI_KEYS)}), got {options!r}")
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if key not in URI_KEYS:
            raise ConfigError(f"Setting {setting}: unknown yaml_git option {key!r} "
                              f"(known: {', '.join(URI_KEYS)}, env_overrides in classes_uri)")
        if key == "password" and value is not None:
            raise ConfigError(f"Setting {setting}: ssh key passwords are not supported; "
                              "load the key into ssh-agent instead")
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"Setting {setting}.{key}: expected a string, got {value!r}")
        if key != "pubkey" and key != "password":
            checked[key] = value
    return checked


# `scheme://rest`, and git's scp-like `[user@]host:path` (a colon before any slash).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?P<rest>.+)", re.DOTALL)
_SCP_LIKE = re.compile(r"(?:[^@/:]+@)?(?P<host>[^@/:]+):(?P<rest>.+)", re.DOTALL)


def repository_problem(repo: str) -> str | None:
    """Why `repo` is no repository URL, scp-like address or path git may be given; None when
    it is one. A leading `-` is never accepted: git would read it as an option (its
    `--upload-pack` runs a command), whatever we put before it."""
    if not repo:
        return "it is empty"
    if any(ord(char) < 0x20 or char == "\x7f" for char in repo):
        return "it holds a control character"
    if repo.startswith("-"):
        return "it starts with `-`, which git would read as an option"
    url = _URL.fullmatch(repo)
    scp = None if url else _SCP_LIKE.fullmatch(repo)
    rest = url["rest"] if url else scp["rest"] if scp else repo
    if scp and scp["host"].startswith("-"):
        return "its host starts with `-`, which ssh would read as an option"
    if url and rest.startswith("-"):
        return "its host or path starts with `-`, which ssh or git would read as an option"
    # The mirror and the lock file are named after it (git_trees.cache_name): `.`, `..` or
    # `/` would name the cache directory itself or its parent.
    if os.path.basename(os.path.normpath(rest)) in ("", ".", "..") \
            or cache_name(repo).strip(".") == "":
        return "it names no repository (a URL, user@host:path or the repository's path)"
    return None


def repository_settings(settings: Settings) -> Iterator[tuple[str, Any]]:
    """(setting key, value) of every `repo` of a yaml_git or mixed `nodes_uri`/`classes_uri`,
    env_overrides included (values of any type: the options' own checks judge those)."""
    for name in ("nodes_uri", "classes_uri"):
        options = getattr(settings, name)
        if not isinstance(options, Mapping):
            continue
        if "repo" in options:
            yield f"{name}.repo", options["repo"]
        overrides = options.get("env_overrides")
        for entry in overrides if isinstance(overrides, (list, tuple)) else ():
            for environment, env_options in (entry.items() if isinstance(entry, Mapping)
                                             else ()):
                if isinstance(env_options, Mapping) and "repo" in env_options:
                    yield f"{name}.env_overrides.{environment}.repo", env_options["repo"]


def check_repositories(settings: Settings) -> None:
    """ConfigError naming the setting and its file for a `repo` git must not be given."""
    for key, repo in repository_settings(settings):
        problem = repository_problem(repo) if isinstance(repo, str) else None
        if problem is not None:
            where = f" in {settings.config_file}" if settings.config_file else ""
            raise ConfigError(f"Setting {key}{where}: {repo!r} is not a repository URL "
                              f"(scheme://host/path), user@host:path or path: {problem}")


def git_location(options: Any, setting: str, default_branch: str) -> GitLocation:
    """The location a `nodes_uri`/`classes_uri` mapping names (without env_overrides)."""
    if isinstance(options, Mapping):
        options = {k: v for k, v in options.items() if k != "env_overrides"}
    checked = _checked_options(options, setting)
    if not checked.get("repo"):
        raise ConfigError(f"Setting {setting}: yaml_git needs `repo`, the repository URL")
    checked.setdefault("branch", default_branch)
    if checked["branch"] is None:
        checked["branch"] = default_branch
    return GitLocation(**checked)


def environment_overrides(options: Mapping[str, Any], base: Any, setting: str,
                          branch_default: bool = True) -> dict[str, Any]:
    """environment -> the options of `base` with that environment's `env_overrides` entry.

    `base` has `.updated(options, setting)`; with `branch_default`, an entry without `branch`
    names the branch after its environment, as kapicorp-reclass's yaml_git does.
    """
    overrides = options.get("env_overrides") or ()
    if not isinstance(overrides, (list, tuple)):
        raise ConfigError(f"Setting {setting}.env_overrides: expected a list of "
                          f"{{environment: {{options}}}} mappings, got {overrides!r}")
    found: dict[str, Any] = {}
    for entry in overrides:
        if not isinstance(entry, Mapping):
            raise ConfigError(f"Setting {setting}.env_overrides: expected "
                              f"{{environment: {{options}}}}, got {entry!r}")
        for environment, env_options in entry.items():
            env_options = dict(env_options or {})
            if branch_default:
                env_options.setdefault("branch", str(environment))
            found[str(environment)] = base.updated(
                env_options, f"{setting}.env_overrides.{environment}")
    return found


class GitRepositories:
    """The GitTrees of each repository an inventory reads, fetched once per storage."""

    def __init__(self) -> None:
        self._repos: dict[str, GitTrees] = {}

    def trees(self, location: GitLocation) -> GitTrees:
        repo = self._repos.get(location.repo)
        if repo is None:
            repo = self._repos[location.repo] = GitTrees(
                location.repo, location.cache_dir, location.lock_dir, location.privkey)
        return repo

    def directory(self, location: GitLocation, branch: str, what: str) -> str:
        tree = self.trees(location).tree(branch)
        return root_directory(tree, location.root, what, location.describe(branch))


class GitClassTrees:
    """environment -> the class tree of its branch, trees shared by environments of a branch."""

    def __init__(self, options: Mapping[str, Any], repos: GitRepositories) -> None:
        self.default = git_location(options, "classes_uri", ENVIRONMENT_BRANCH)
        self.overrides: dict[str, GitLocation] = environment_overrides(
            options, self.default, "classes_uri")
        self.repos = repos
        # kapicorp-reclass fetches every repository when the storage is opened
        for location in (self.default, *self.overrides.values()):
            repos.trees(location)
        self._by_directory: dict[str, YamlFsStorage] = {}

    def classes_for(self, environment: str) -> YamlFsStorage:
        location = self.overrides.get(environment, self.default)
        directory = self.repos.directory(location, location.branch_for(environment), "classes")
        tree = self._by_directory.get(directory)
        if tree is None:
            tree = self._by_directory[directory] = YamlFsStorage(None, directory)
        return tree

    def describe(self) -> str:
        return self.default.describe(self.default.branch)


def node_tree(options: Any, repos: GitRepositories, compose_node_name: bool) -> YamlFsStorage:
    """The nodes of a yaml_git `nodes_uri`."""
    location = git_location(options, "nodes_uri", "master")
    directory = repos.directory(location, location.branch, "nodes")
    return YamlFsStorage(directory, None, compose_node_name)


def open_storage(settings: Settings, reuse: object = None) -> SplitStorage:
    """The yaml_git storage of `settings` (fetching its repositories)."""
    for name in ("nodes_uri", "classes_uri"):
        if not isinstance(getattr(settings, name), Mapping):
            raise ConfigError(f"Setting {name}: storage_type yaml_git needs a mapping of "
                              f"options (repo, branch, root, ...), got "
                              f"{getattr(settings, name)!r}")
    check_repositories(settings)
    if isinstance(reuse, SplitStorage) and reuse.opened_with == opened_with(settings):
        return reuse
    repos = GitRepositories()
    nodes = node_tree(settings.nodes_uri, repos, settings.compose_node_name)
    classes = GitClassTrees(settings.classes_uri, repos)  # type: ignore[arg-type]
    return SplitStorage(nodes, classes.classes_for, classes.describe(), settings)
