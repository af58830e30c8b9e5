"""yaml_git and mixed storage, on real git repositories the tests create (bare repositories
with several branches, read through file:// URLs), driven through the `reclass` command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from git_repos import bare_repository, git, push_change, write_inventory

import reclass_ng

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")

NODES = {
    "nodes/web1.yml": "environment: prod\nclasses: [app.web, common]\n"
                      "parameters:\n  host: web1\n",
    "nodes/web2.yml": "environment: dev\nclasses: [app.web, common, debug]\n"
                      "parameters:\n  host: web2\n",
    "nodes/db1.yml": "environment: prod\nclasses: [app.db]\nparameters:\n  host: db1\n",
    "nodes/tools1.yml": "classes: [common]\nparameters:\n  host: tools1\n",  # environment base
}
# The classes of each environment's branch. `base` is read from the branch `trunk`
# (an env_overrides entry), the others from the branch named like the environment.
CLASSES = {
    "prod": {
        "classes/common.yml": "parameters:\n  stage: production\n"
                              "  motd: ${host} in ${stage}\n",
        "classes/app/init.yml": "applications: [app]\nparameters:\n  app: {replicas: 3}\n",
        "classes/app/web.yml": "classes: [app]\napplications: [nginx]\n"
                               "parameters:\n  app: {port: 443}\n",
        "classes/app/db.yml": "classes: [app]\napplications: [postgres]\n",
    },
    "dev": {
        "classes/common.yml": "parameters:\n  stage: development\n"
                              "  motd: ${host} in ${stage}\n",
        "classes/app/init.yml": "applications: [app]\nparameters:\n  app: {replicas: 1}\n",
        "classes/app/web.yml": "classes: [app]\napplications: [nginx]\n"
                               "parameters:\n  app: {port: 8080}\n",
        "classes/debug.yml": "applications: [debugger]\nparameters:\n  app: {debug: true}\n",
    },
    "trunk": {
        "classes/common.yml": "parameters:\n  stage: none\n  motd: ${host}\n",
    },
}
ENV_OF_BRANCH = {"prod": "prod", "dev": "dev", "trunk": "base"}


@pytest.fixture(scope="module")
def repositories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("git")
    return {
        "nodes": bare_repository(root / "nodes.git", {"master": NODES}),
        "classes": bare_repository(root / "classes.git", CLASSES),
    }


def git_config(tmp: Path, repos: dict[str, str]) -> dict[str, Any]:
    cache = {"cache_dir": str(tmp / "cache"), "lock_dir": str(tmp / "locks")}
    return {
        "storage_type": "yaml_git",
        "nodes_uri": {"repo": repos["nodes"], "branch": "master", "root": "nodes", **cache},
        "classes_uri": {"repo": repos["classes"], "branch": "__env__", "root": "classes",
                        "env_overrides": [{"base": {"branch": "trunk"}}], **cache},
    }


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "reclass-config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return directory


def without_run_details(nodeinfo: dict[str, Any]) -> dict[str, Any]:
    """A nodeinfo without what differs by where and when it was read (URI, timestamp)."""
    return {key: value for key, value in nodeinfo.items() if key != "__reclass__"}


def on_disk_nodeinfo(tmp: Path, node: str, environment: str) -> dict[str, Any]:
    """The node rendered by yaml_fs from the same files: nodes/, and the classes of the
    environment's branch as classes/."""
    branch = next(b for b, env in ENV_OF_BRANCH.items() if env == environment)
    base = tmp / f"on-disk-{branch}"
    if not base.exists():
        write_inventory(base, {**NODES, **CLASSES[branch]})
    return reclass_ng.load(str(base), read_config=False).nodeinfo(node)


def test_yaml_git_renders_like_the_same_files_on_disk(tmp_path: Path, repositories,
                                                      run_reclass
                                                      ) -> None:
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repositories))
    result = run_reclass(["-b", str(inventory), "--inventory", "-o", "json"])
    assert result.returncode == 0, result.stderr
    rendered = json.loads(result.stdout)
    environments = {"web1": "prod", "web2": "dev", "db1": "prod", "tools1": "base"}
    assert {name: info["environment"] for name, info in rendered["nodes"].items()} == environments
    for node, environment in environments.items():
        assert without_run_details(rendered["nodes"][node]) == without_run_details(
            on_disk_nodeinfo(tmp_path, node, environment)), node
    # each environment's own branch, in one run (kapicorp kept the first node's branch)
    assert rendered["nodes"]["web1"]["parameters"]["app"] == {"replicas": 3, "port": 443}
    assert rendered["nodes"]["web2"]["parameters"]["app"] == {"replicas": 1, "port": 8080,
                                                              "debug": True}
    assert rendered["nodes"]["tools1"]["parameters"]["motd"] == "tools1"
    assert rendered["applications"]["debugger"] == ["web2"]


def test_a_pushed_change_shows_in_the_next_render(tmp_path: Path, tmp_path_factory,
                                                  run_reclass
                                                  ) -> None:
    root = tmp_path_factory.mktemp("git-update")
    repos = {"nodes": bare_repository(root / "nodes.git", {"master": NODES}),
             "classes": bare_repository(root / "classes.git", CLASSES)}
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repos))

    def motd(node: str) -> str:
        result = run_reclass(["-b", str(inventory), "--nodeinfo", node, "-o", "json"])
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["parameters"]["motd"]

    assert (motd("web1"), motd("web2")) == ("web1 in production", "web2 in development")
    push_change(repos["classes"], "prod", {
        "classes/common.yml": "parameters:\n  stage: production\n  motd: ${host} (updated)\n"},
        root / "clone")
    assert (motd("web1"), motd("web2")) == ("web1 (updated)", "web2 in development")


def test_environments_keep_their_branches_within_one_process(tmp_path: Path, repositories
                                                             ) -> None:
    inventory = reclass_ng.load(None, read_config=False,
                                **git_config(tmp_path, repositories))
    stages = [inventory.nodeinfo(node)["parameters"]["stage"]
              for node in ("web1", "web2", "tools1", "web1", "web2")]
    assert stages == ["production", "development", "none", "production", "development"]


def test_an_environment_without_its_branch_is_a_clear_error(tmp_path: Path, tmp_path_factory,
                                                            run_reclass) -> None:
    root = tmp_path_factory.mktemp("git-missing")
    nodes = {"nodes/qa1.yml": "environment: qa\nclasses: [common]\n"}
    repos = {"nodes": bare_repository(root / "nodes.git", {"master": nodes}),
             "classes": bare_repository(root / "classes.git", CLASSES)}
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repos))
    result = run_reclass(["-b", str(inventory), "--nodeinfo", "qa1"])
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "branch 'qa' missing from" in result.stderr and "qa1" in result.stderr, result.stderr


@pytest.mark.parametrize("options, message", [
    ({"branch": "master"}, "yaml_git needs `repo`"),
    ({"repo": "x", "colour": "blue"}, "unknown yaml_git option 'colour'"),
    ({"repo": "x", "password": "secret"}, "into ssh-agent"),
])
def test_bad_yaml_git_options_are_config_errors(tmp_path: Path, run_reclass, options, message
                                                ) -> None:
    config = {"storage_type": "yaml_git", "nodes_uri": options, "classes_uri": options}
    inventory = write_config(tmp_path / "inv", config)
    result = run_reclass(["-b", str(inventory), "--inventory"])
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


def test_a_repository_git_cannot_fetch_is_a_clear_error(tmp_path: Path, run_reclass) -> None:
    missing = (tmp_path / "no-such.git").as_uri()
    config = git_config(tmp_path, {"nodes": missing, "classes": missing})
    inventory = write_config(tmp_path / "inv", config)
    result = run_reclass(["-b", str(inventory), "--inventory"])
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "`git fetch` failed for " + missing in result.stderr, result.stderr


def test_mixed_nodes_on_disk_classes_from_git_and_an_environment_on_disk(
        tmp_path: Path, repositories, run_reclass) -> None:
    base = write_inventory(tmp_path / "inv", {**NODES, **{
        "dev-classes/" + path[len("classes/"):]: text
        for path, text in CLASSES["dev"].items()}})
    (base / "dev-classes" / "common.yml").write_text(
        "parameters:\n  stage: local checkout\n  motd: ${host} in ${stage}\n")
    cache = {"cache_dir": str(tmp_path / "cache"), "lock_dir": str(tmp_path / "locks")}
    write_config(base, {
        "storage_type": "mixed",
        "nodes_uri": {"storage_type": "yaml_fs", "uri": "nodes"},
        "classes_uri": {"storage_type": "yaml_git", "repo": repositories["classes"],
                        "branch": "__env__", "root": "classes", **cache,
                        "env_overrides": [{"dev": {"storage_type": "yaml_fs",
                                                   "uri": "dev-classes"}},
                                          {"base": {"branch": "trunk"}}]},
    })
    result = run_reclass(["-b", str(base), "--inventory", "-o", "json"])
    assert result.returncode == 0, result.stderr
    nodes = json.loads(result.stdout)["nodes"]
    assert nodes["web2"]["parameters"]["motd"] == "web2 in local checkout"
    assert nodes["web2"]["parameters"]["app"]["debug"] is True
    assert nodes["web1"]["parameters"]["motd"] == "web1 in production"
    assert nodes["tools1"]["parameters"]["stage"] == "none"
    assert without_run_details(nodes["db1"]) == without_run_details(
        on_disk_nodeinfo(tmp_path, "db1", "prod"))


def test_mixed_needs_a_storage_type_per_part(tmp_path: Path, run_reclass) -> None:
    inventory = write_config(tmp_path / "inv", {
        "storage_type": "mixed", "nodes_uri": {"uri": "nodes"},
        "classes_uri": {"storage_type": "yaml_fs", "uri": "classes"}})
    result = run_reclass(["-b", str(inventory), "--inventory"])
    assert result.returncode != 0
    assert "Setting nodes_uri.storage_type: expected yaml_fs or yaml_git" in result.stderr


def test_unknown_storage_type(tmp_path: Path, run_reclass) -> None:
    inventory = write_config(tmp_path / "inv", {"storage_type": "memcache_proxy"})
    result = run_reclass(["-b", str(inventory), "--inventory"])
    assert result.returncode != 0
    assert "Storage type 'memcache_proxy' is not supported" in result.stderr


def test_inventory_jobs_render_like_one_process(tmp_path: Path, repositories, run_reclass
                                                ) -> None:
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repositories))
    serial = run_reclass(["-b", str(inventory), "--inventory", "-o", "json"])
    parallel = run_reclass(["-b", str(inventory), "--inventory", "-o", "json", "--jobs", "2"])
    assert serial.returncode == 0 and parallel.returncode == 0, serial.stderr + parallel.stderr

    def nodes(result) -> dict[str, Any]:
        return {name: without_run_details(info)
                for name, info in json.loads(result.stdout)["nodes"].items()}
    assert nodes(parallel) == nodes(serial)


def test_processes_sharing_a_cache_wait_for_each_other(tmp_path: Path, repositories,
                                                       reclass_cmd) -> None:
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repositories))
    runs = [subprocess.Popen([*reclass_cmd, "-b", str(inventory), "--inventory", "-o", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "HOME": str(tmp_path)},
                             cwd=tmp_path) for _ in range(3)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], [err for _, err in outputs]
    rendered = [{name: without_run_details(info)
                 for name, info in json.loads(out)["nodes"].items()} for out, _ in outputs]
    assert rendered[0] == rendered[1] == rendered[2]


def test_explain_follows_each_environment_to_its_branch(tmp_path: Path, repositories) -> None:
    inventory = write_config(tmp_path / "inv", git_config(tmp_path, repositories))
    for node, port in (("web1", "443"), ("web2", "8080")):
        result = subprocess.run([str(Path(sys.executable).parent / "reclass-ng"), "explain",
                                 "-b", str(inventory), node, "app:port"],
                                capture_output=True, text=True, timeout=120,
                                env={**os.environ, "HOME": str(tmp_path)})
        assert result.returncode == 0, result.stderr
        assert f"app:port: {port}" in result.stdout and "classes/app/web.yml:4" in result.stdout


def test_a_missing_root_or_nodes_branch_is_a_clear_error(tmp_path: Path, repositories) -> None:
    config = git_config(tmp_path, repositories)
    config["nodes_uri"] = {**config["nodes_uri"], "root": "hosts"}
    with pytest.raises(reclass_ng.ReclassError, match="nodes root 'hosts' is not a directory"):
        reclass_ng.load(None, read_config=False, **config)
    config["nodes_uri"] = {**config["nodes_uri"], "root": "nodes", "branch": "main"}
    with pytest.raises(reclass_ng.ReclassError, match="branch 'main' missing from .*master"):
        reclass_ng.load(None, read_config=False, **config)


def test_a_link_out_of_the_repository_is_refused(tmp_path: Path, repositories) -> None:
    work = tmp_path / "evil-work"
    git("init", "--quiet", str(work))
    (work / "classes").mkdir()
    (work / "classes" / "common.yml").symlink_to("/etc/hostname")
    git("add", "--all", cwd=work)
    git("commit", "--quiet", "-m", "link", cwd=work)
    bare = tmp_path / "evil.git"
    git("clone", "--quiet", "--bare", str(work), str(bare))
    config = git_config(tmp_path, {**repositories, "classes": bare.as_uri()})
    config["classes_uri"]["env_overrides"] = [{"base": {"branch": "master"}}]
    inventory = reclass_ng.load(None, read_config=False, **config)
    with pytest.raises(reclass_ng.ReclassError, match="cannot export"):
        inventory.nodeinfo("tools1")


def test_trees_no_branch_uses_are_removed_after_a_day(tmp_path: Path, repositories) -> None:
    from reclass_ng.storage.git_trees import STALE_TREE_AGE, GitTrees

    trees = GitTrees(repositories["classes"], str(tmp_path / "cache"), str(tmp_path / "locks"))
    current = trees.tree("prod")
    old = Path(trees.trees_dir) / ("0" * 40)
    recent = Path(trees.trees_dir) / ("1" * 40)
    for stale in (old, recent):
        (stale / "classes").mkdir(parents=True)
    aged = time.time() - STALE_TREE_AGE - 60
    os.utime(old, (aged, aged))
    GitTrees(repositories["classes"], str(tmp_path / "cache"), str(tmp_path / "locks"))
    assert not old.exists() and recent.exists() and Path(current).exists()
