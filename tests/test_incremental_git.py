"""Incremental rendering of yaml_git and mixed inventories (reclass_ng.incremental.
split_snapshot) on real git repositories: changes arrive as commits pushed to a branch, and
after each `Inventory.refresh()` the render equals a fresh render of the same commits, while
nodes whose files are unchanged by content keep their results across commits."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reclass_ng
from reclass_ng.adapters import salt
from tests.git_repos import bare_repository, git, write_files
from tests.test_incremental import (
    CLASSES,
    NODES,
    LiveUnderTest,
    apply_edit,
    class_text,
    edits,
    fresh_inventory,
    fresh_nodeinfo,
    node_text,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")

# The branch `other` holds the classes of environment `other`; master holds the nodes and the
# classes of every other environment.
OTHER_CLASSES = {"classes/c0.yml": "parameters: {c0: {v: other}, shared: other}\n",
                 "classes/c1.yml": "classes: [c0]\nparameters: {c1: {v: other}}\n"}


def first_commit_files() -> dict[str, str]:
    files = {f"classes/{name}.yml": class_text(name, {"classes": [], "value": i, "ref": None,
                                                       "app": i % 2 == 0})
             for i, name in enumerate(CLASSES)}
    files.update({f"nodes/{name}.yml": node_text({
        "classes": CLASSES[i // 2:i // 2 + 2], "export": i, "query": None,
        "environment": None}) for i, name in enumerate(NODES[:3])})
    files["nodes/n3.yml"] = node_text({"classes": ["c1"], "export": 3, "query": None,
                                       "environment": "other"})
    return files


def git_settings(root: Path, url: str, storage_type: str = "yaml_git") -> dict[str, Any]:
    cache = {"cache_dir": str(root / "cache"), "lock_dir": str(root / "locks")}
    classes = {"repo": url, "branch": "master", "root": "classes", **cache,
               "env_overrides": [{"other": {"branch": "other"}}]}
    if storage_type == "mixed":
        return {"storage_type": "mixed",
                "nodes_uri": {"storage_type": "yaml_fs", "uri": "nodes"},
                "classes_uri": {"storage_type": "yaml_git", **classes}}
    return {"storage_type": "yaml_git",
            "nodes_uri": {"repo": url, "branch": "master", "root": "nodes", **cache},
            "classes_uri": classes}


class GitInventory:
    """A bare repository, a clone to edit and push from, and the directory with
    reclass-config.yml (and, for mixed, the nodes) that reclass-ng reads."""

    def __init__(self, root: Path, storage_type: str = "yaml_git") -> None:
        files = first_commit_files()
        self.url = bare_repository(root / "inventory.git", {"other": OTHER_CLASSES,
                                                             "master": files})
        self.work = root / "work"
        git("clone", "--quiet", "--branch", "master", self.url, str(self.work))
        self.base = root / "base"
        self.base.mkdir()
        self.settings = git_settings(root, self.url, storage_type)
        self.mixed = storage_type == "mixed"
        if self.mixed:
            write_files(self.base, {k: v for k, v in files.items() if k.startswith("nodes/")})
        self.write_config(ignore_class_notfound=False)

    def write_config(self, ignore_class_notfound: bool) -> None:
        config = dict(self.settings, ignore_class_notfound=ignore_class_notfound)
        (self.base / "reclass-config.yml").write_text(yaml.safe_dump(config))

    def apply(self, edit: tuple) -> None:
        """An edit of the property test of tests/test_incremental.py, made as a commit pushed
        to master (node edits of a mixed inventory are made in its nodes directory)."""
        if edit[0] == "settings":
            self.write_config(edit[1])
            return
        node_edit = edit[0] in ("node", "remove node") or (
            edit[0] == "same size" and not edit[1].startswith("c"))
        if self.mixed and node_edit:
            apply_edit(self.base, edit)
            return
        apply_edit(self.work, edit)
        if git("status", "--porcelain", cwd=self.work).strip():
            git("add", "--all", cwd=self.work)
            git("commit", "--quiet", "-m", f"edit {edit[0]}", cwd=self.work)
            git("push", "--quiet", "origin", "master", cwd=self.work)

    def head(self) -> str:
        return git("rev-parse", "HEAD", cwd=self.work).strip()


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["yaml_git", "mixed"]), st.lists(edits, min_size=1, max_size=4),
       st.sampled_from(NODES))
def test_incremental_git_render_equals_a_fresh_render_after_any_pushed_edit(
        storage_type: str, edit_list: list[tuple], asked: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitInventory(Path(tmp), storage_type)
        for_inventory = LiveUnderTest(repo.base)
        for_one_node = LiveUnderTest(repo.base)
        assert for_inventory.render() == fresh_inventory(repo.base)
        assert for_one_node.render("nodeinfo", asked) == fresh_nodeinfo(repo.base, asked)
        for edit in edit_list:
            repo.apply(edit)
            assert for_inventory.render() == fresh_inventory(repo.base), edit
            assert for_one_node.render("nodeinfo", asked) == fresh_nodeinfo(repo.base, asked), \
                edit


def test_a_commit_renders_again_only_the_nodes_whose_files_it_changed(tmp_path: Path) -> None:
    repo = GitInventory(tmp_path)  # n0, n1: c0 c1; n2: c1 c2; n3 (environment other): c1
    inventory = reclass_ng.load(str(repo.base))
    inventory.refresh()
    before = inventory.inventory()["nodes"]
    first = repo.head()
    repo.apply(("class", "c2", {"classes": [], "value": 7, "ref": None, "app": False}))
    assert repo.head() != first
    refresh = inventory.refresh()
    assert refresh.stale == ("n2",)
    after = inventory.inventory()["nodes"]
    assert after["n2"]["parameters"]["c2"] == {"v": 7}
    # Kept nodes are served from the new commit: the URI of their node file moved with it.
    assert after["n0"]["__reclass__"]["uri"] != before["n0"]["__reclass__"]["uri"]
    assert first not in after["n0"]["__reclass__"]["uri"]
    assert fresh_inventory(repo.base)[0][1]["nodes"]["n0"] == {
        key: value for key, value in after["n0"].items() if key != "__reclass__"} | {
        "__reclass__": {key: value for key, value in after["n0"]["__reclass__"].items()
                        if key != "timestamp"}}
    assert inventory.refresh().stale == ()  # nothing pushed since: nothing to render


def test_a_moved_branch_is_seen_by_the_environment_reading_it(tmp_path: Path) -> None:
    repo = GitInventory(tmp_path)
    inventory = reclass_ng.load(str(repo.base))
    inventory.refresh()
    assert inventory.inventory()["nodes"]["n3"]["parameters"]["c1"] == {"v": "other"}
    # Point `other` at master's commit (a ref moved, no new commit): n3 now reads master's c1.
    subprocess.run(["git", "--git-dir", str(tmp_path / "inventory.git"), "update-ref",
                    "refs/heads/other", "refs/heads/master"], check=True)
    assert inventory.refresh().stale == ("n3",)
    assert inventory.nodeinfo("n3")["parameters"]["c1"] == {"v": 1}


def test_salt_ext_pillar_keeps_a_yaml_git_inventory_live(tmp_path: Path) -> None:
    repo = GitInventory(tmp_path)
    options = {"inventory_base_uri": str(repo.base)}

    def fresh(minion: str) -> dict[str, Any]:
        return salt.pillar_data(reclass_ng.load(str(repo.base)).nodeinfo(minion))

    for minion in NODES:
        assert salt.ext_pillar(minion, {}, **options) == fresh(minion)
    repo.apply(("class", "c0", {"classes": [], "value": 8, "ref": None, "app": True}))
    assert salt.ext_pillar("n0", {}, **options)["c0"] == {"v": 8}
    assert salt.ext_pillar("n0", {}, **options) == fresh("n0")
    assert salt.top("n0", **options) == {"base": ["app_c0"]}
