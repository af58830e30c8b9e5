"""Deploys that change what a path means, seen by everything that keeps an inventory alive
(Inventory.refresh, refresh(node), Salt's ext_pillar and master_tops, with and without
cache_dir): each answer is a fresh render's (doc/incremental.rst, "Deploy patterns")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from inventory_writer import write_inventory

import reclass_ng
from reclass_ng.adapters import salt
from reclass_ng.errors import DuplicateNameError


def switch_symlink(link: Path, target: str) -> None:
    """`ln -sfn target link`, atomically (a new link renamed over the old one)."""
    temporary = link.with_name(f".{link.name}.new")
    temporary.symlink_to(target, target_is_directory=True)
    os.replace(temporary, link)


def fresh_nodeinfo(base: Path, node: str) -> dict[str, Any]:
    return without_timestamp(reclass_ng.load(str(base)).nodeinfo(node))


def without_timestamp(info: dict[str, Any]) -> dict[str, Any]:
    return {**info, "__reclass__": {k: v for k, v in info["__reclass__"].items()
                                     if k != "timestamp"}}


def salt_options(base: Path, cached: bool, tmp_path: Path) -> dict[str, str]:
    options = {"inventory_base_uri": str(base)}
    if cached:
        options["cache_dir"] = str(tmp_path / "cache")
    return options


@pytest.mark.parametrize("cached", [False, True], ids=["live", "cache_dir"])
def test_a_switched_classes_symlink_is_seen_by_every_later_call(tmp_path: Path,
                                                                cached: bool) -> None:
    base = write_inventory(tmp_path / "inv", {
        "nodes/n1.yml": "classes: [app]\n",
        "classes.v1/app.yml": "applications: [a1]\nparameters: {v: v1}\n",
        "classes.v2/app.yml": "applications: [a2]\nparameters: {v: v2}\n"})
    os.rmdir(base / "classes")
    (base / "classes").symlink_to("classes.v1", target_is_directory=True)
    options = salt_options(base, cached, tmp_path)
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    assert inventory.nodeinfo("n1")["parameters"]["v"] == "v1"
    assert salt.ext_pillar("n1", {}, **options)["v"] == "v1"
    assert salt.top("n1", **options) == {"base": ["a1"]}
    switch_symlink(base / "classes", "classes.v2")
    for _ in range(3):
        assert salt.ext_pillar("n1", {}, **options)["v"] == "v2"
        assert salt.top("n1", **options) == {"base": ["a2"]}
    assert salt.top(None, **options) == {"base": {"n1": ["a2"]}}
    inventory.refresh("n1")
    assert without_timestamp(inventory.nodeinfo("n1")) == fresh_nodeinfo(base, "n1")


@pytest.mark.parametrize("cached", [False, True], ids=["live", "cache_dir"])
def test_an_inventory_replaced_by_renames_is_seen_by_refresh_of_one_node(
        tmp_path: Path, cached: bool) -> None:
    base = write_inventory(tmp_path / "inv", {"nodes/n1.yml": "parameters: {v: v1}\n"})
    write_inventory(tmp_path / "inv.new", {"nodes/n1.yml": "parameters: {v: v2}\n"})
    options = salt_options(base, cached, tmp_path)
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    assert inventory.nodeinfo("n1")["parameters"]["v"] == "v1"
    assert salt.ext_pillar("n1", {}, **options)["v"] == "v1"
    os.rename(base, tmp_path / "inv.old")
    os.rename(tmp_path / "inv.new", base)
    inventory.refresh("n1")
    assert inventory.nodeinfo("n1")["parameters"]["v"] == "v2"
    assert salt.ext_pillar("n1", {}, **options)["v"] == "v2"


def test_a_whole_inventory_behind_a_switched_symlink_is_seen(tmp_path: Path) -> None:
    for release in ("r1", "r2"):
        write_inventory(tmp_path / release, {
            "nodes/n1.yml": "classes: [app]\n",
            "classes/app.yml": f"applications: [{release}]\nparameters: {{v: {release}}}\n",
            "reclass-config.yml": "default_environment: prod\n"})  # the same settings
    current = tmp_path / "current"
    current.symlink_to("r1", target_is_directory=True)
    options = {"inventory_base_uri": str(current)}
    assert salt.top("n1", **options) == {"prod": ["r1"]}
    switch_symlink(current, "r2")
    assert salt.ext_pillar("n1", {}, **options)["v"] == "r2"
    assert salt.top("n1", **options) == {"prod": ["r2"]}


def test_a_symlink_outside_the_inventory_switched_under_a_linked_class_directory(
        tmp_path: Path) -> None:
    # classes/shared -> ../../shared/current, and shared/current is the link a deploy switches:
    # no watched directory of the inventory sees that.
    write_inventory(tmp_path / "shared" / "v1", {"db.yml": "parameters: {db: v1}\n"})
    write_inventory(tmp_path / "shared" / "v2", {"db.yml": "parameters: {db: v2}\n"})
    (tmp_path / "shared" / "current").symlink_to("v1", target_is_directory=True)
    base = write_inventory(tmp_path / "inv", {"nodes/n1.yml": "classes: [shared.db]\n"})
    (base / "classes" / "shared").symlink_to(tmp_path / "shared" / "current",
                                              target_is_directory=True)
    options = {"inventory_base_uri": str(base)}
    assert salt.ext_pillar("n1", {}, **options)["db"] == "v1"
    switch_symlink(tmp_path / "shared" / "current", "v2")
    assert salt.ext_pillar("n1", {}, **options)["db"] == "v2"


def test_a_symlinked_class_directory_resolves_the_same_on_every_path(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {
        "nodes/n1.yml": "classes: [app.db]\n",
        "classes/app/db.yml": "parameters: {db: true}\n",
        "reclass-config.yml": "ignore_class_notfound: true\n"})
    (base / "classes" / "alias").symlink_to("app", target_is_directory=True)
    expected = fresh_nodeinfo(base, "n1")
    assert expected["parameters"]["db"] is True
    fresh_inventory = reclass_ng.load(str(base)).inventory()["nodes"]["n1"]
    assert without_timestamp(fresh_inventory) == expected
    live = reclass_ng.load(str(base))
    live.refresh()
    assert without_timestamp(live.inventory()["nodes"]["n1"]) == expected
    assert without_timestamp(live.nodeinfo("n1")) == expected
    assert salt.ext_pillar("n1", {}, inventory_base_uri=str(base))["db"] is True


def test_a_duplicate_node_file_fails_every_path_as_kapicorp_does(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {
        "nodes/a/web1.yml": "", "nodes/b/web1.yml": "", "nodes/db1.yml": ""})
    live = reclass_ng.load(str(base))
    calls = [lambda: reclass_ng.load(str(base)).nodeinfo("db1"),
             lambda: reclass_ng.load(str(base)).inventory(),
             live.refresh, lambda: live.nodeinfo("db1"),
             lambda: salt.ext_pillar("db1", {}, inventory_base_uri=str(base)),
             lambda: salt.top("db1", inventory_base_uri=str(base))]
    for call in calls:
        with pytest.raises(DuplicateNameError, match="'web1'"):
            call()
    os.remove(base / "nodes" / "b" / "web1.yml")
    live.refresh()
    assert live.nodeinfo("db1") and salt.top("db1", inventory_base_uri=str(base)) == {"base": []}


def test_a_settings_edit_is_told_by_the_live_inventory_as_by_a_fresh_load(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_inventory(tmp_path / "inv", {"nodes/n1.yml": "",
                                              "reclass-config.yml": "pretty_print: true\n"})
    told: list[str] = []
    live = reclass_ng.load(str(base), warn=told.append)
    live.refresh()
    assert salt.ext_pillar("n1", {}, inventory_base_uri=str(base))
    capsys.readouterr()
    (base / "reclass-config.yml").write_text("pretty_print: true\nignore_class_notfoud: true\n")
    fresh: list[str] = []
    reclass_ng.load(str(base), warn=fresh.append).nodeinfo("n1")
    assert len(fresh) == 1 and "did you mean ignore_class_notfound" in fresh[0]
    live.refresh("n1")
    live.nodeinfo("n1")
    assert told == fresh
    assert salt.ext_pillar("n1", {}, inventory_base_uri=str(base))
    assert fresh[0] in capsys.readouterr().err
    live.refresh()  # told once per change of the file, not on every refresh
    assert told == fresh
