"""Hostile yaml_git settings: a `repo` that git would read as an option (`--upload-pack=CMD`
runs CMD) or that names no repository is a settings error naming the key and the file, from
every place a reclass-config.yml is read; the command never runs. Driven through the `reclass`
command and through `reclass_ng.load` as the Kapitan backend calls it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from git_repos import bare_repository

import reclass_ng

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def upload_pack(marker: Path) -> str:
    """A repo value that, given to `git fetch` as an option, creates `marker`."""
    return f"--upload-pack=touch {marker};false"


def hostile_config(tmp: Path, key: str, repo: str, good_repo: str) -> dict[str, Any]:
    """A yaml_git or mixed config whose `key` (a dotted setting) is `repo`, every other
    repository a good one."""
    cache = {"cache_dir": str(tmp / "cache"), "lock_dir": str(tmp / "locks")}
    nodes = {"repo": good_repo, "branch": "master", **cache}
    classes: dict[str, Any] = {"repo": good_repo, "branch": "master", **cache}
    config: dict[str, Any] = {"storage_type": "yaml_git", "nodes_uri": nodes,
                              "classes_uri": classes}
    if key == "nodes_uri.repo":
        nodes["repo"] = repo
    elif key == "classes_uri.repo":
        classes["repo"] = repo
    elif key == "classes_uri.env_overrides.prod.repo":
        classes["env_overrides"] = [{"prod": {"repo": repo}}]
    elif key == "mixed classes_uri.repo":
        config = {"storage_type": "mixed",
                  "nodes_uri": {"storage_type": "yaml_fs", "uri": "nodes"},
                  "classes_uri": {"storage_type": "yaml_git", **classes, "repo": repo}}
    else:
        raise AssertionError(key)
    return config


@pytest.fixture(scope="module")
def good_repo(tmp_path_factory: pytest.TempPathFactory) -> str:
    return bare_repository(tmp_path_factory.mktemp("git") / "inv.git", {"master": {
        "n1.yml": "classes: [common]\n", "common.yml": "parameters: {a: 1}\n"}})


KEYS = ("nodes_uri.repo", "classes_uri.repo", "classes_uri.env_overrides.prod.repo",
        "mixed classes_uri.repo")


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "nodes").mkdir(exist_ok=True)
    path = directory / "reclass-config.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("place", ["inventory", "working directory"])
@pytest.mark.parametrize("key", KEYS)
def test_a_repo_git_would_read_as_an_option_never_runs(tmp_path: Path, run_reclass, good_repo,
                                                        key, place) -> None:
    marker = tmp_path / "upload-pack-ran"
    config = hostile_config(tmp_path, key, upload_pack(marker), good_repo)
    inventory = tmp_path / "inv"
    cwd = tmp_path / "cwd"
    config_file = write_config(inventory if place == "inventory" else cwd, config)
    (inventory / "nodes").mkdir(parents=True, exist_ok=True)
    result = run_reclass(["-b", str(inventory), "--inventory"],
                         cwd=cwd if place == "working directory" else None)
    assert not marker.exists(), "the repo value ran as a git option"
    assert result.returncode == 78, result.stderr
    setting = key.removeprefix("mixed ")
    assert f"Setting {setting} in {config_file}: " in result.stderr, result.stderr
    assert "starts with `-`" in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("repo, problem", [
    ("..", "names no repository"),
    ("file://..", "names no repository"),
    ("/", "names no repository"),
    ("", "it is empty"),
    ("ssh://-oProxyCommand=touch x/repo.git", "starts with `-`"),
    ("-oProxyCommand=x:repo.git", "starts with `-`"),
    ("repo\n.git", "control character"),
    ("repo\0.git", "control character"),
])
def test_a_repo_naming_no_repository_is_a_settings_error(tmp_path: Path, run_reclass,
                                                         good_repo, repo, problem) -> None:
    config_file = write_config(tmp_path / "inv",
                               hostile_config(tmp_path, "nodes_uri.repo", repo, good_repo))
    result = run_reclass(["-b", str(tmp_path / "inv"), "--inventory"])
    assert result.returncode == 78, result.stderr
    assert f"Setting nodes_uri.repo in {config_file}: {repo!r}" in result.stderr, result.stderr
    assert problem in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("key", KEYS)
def test_the_kapitan_backends_load_refuses_an_option_repo(tmp_path: Path, good_repo, key
                                                         ) -> None:
    # The call ReclassNgInventory.render_targets makes: Kapitan read the config itself
    # (read_config=False) and hands over its settings and the file it read.
    marker = tmp_path / "upload-pack-ran"
    config = hostile_config(tmp_path, key, upload_pack(marker), good_repo)
    config_file = write_config(tmp_path / "inv", config)
    with pytest.raises(reclass_ng.ReclassError) as raised:
        reclass_ng.load(str(tmp_path / "inv"), read_config=False,
                        config_file=str(config_file), **config).inventory()
    assert not marker.exists()
    assert f"Setting {key.removeprefix('mixed ')} in {config_file}: " in raised.value.message


@pytest.mark.parametrize("repo", [
    "file:///srv/git/classes.git", "git+ssh://git@example.com/salt/nodes.git",
    "https://example.com/a.git", "git@example.com:salt/nodes.git", "example.com:nodes.git",
    "/srv/git/classes.git", "~/git/classes.git", "../repos/classes.git", "classes.git",
])
def test_urls_scp_addresses_and_paths_are_repositories(repo: str) -> None:
    from reclass_ng.storage.yaml_git import repository_problem

    assert repository_problem(repo) is None


def test_a_good_repository_still_renders(tmp_path: Path, run_reclass, good_repo) -> None:
    config = hostile_config(tmp_path, "nodes_uri.repo", good_repo, good_repo)
    write_config(tmp_path / "inv", config)
    result = run_reclass(["-b", str(tmp_path / "inv"), "--inventory", "-o", "json"])
    assert result.returncode == 0, result.stderr
    assert '"a": 1' in result.stdout


def test_a_cache_dir_spelt_like_an_option_is_a_directory(tmp_path: Path, run_reclass,
                                                         good_repo) -> None:
    # Relative, it is below the working directory; git gets the mirror as an absolute path,
    # so `git init --bare <mirror>` never reads `--template=...` (it made the working
    # directory a bare repository, from a template directory of the writer's choosing).
    config = hostile_config(tmp_path, "nodes_uri.repo", good_repo, good_repo)
    for part in ("nodes_uri", "classes_uri"):
        config[part]["cache_dir"] = f"--template={tmp_path / 'templates'}"
    write_config(tmp_path / "inv", config)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    result = run_reclass(["-b", str(tmp_path / "inv"), "--inventory", "-o", "json"], cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert not (cwd / "HEAD").exists() and not (cwd / "config").exists()
    assert (cwd / "--template=").is_dir()
