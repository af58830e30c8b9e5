"""reclass_ng/storage/kapitan_settings.py: Kapitan's reclass-config.yml mapping turned into the settings
of `reclass_ng.load` by the rules of Kapitan's `reclass` backend (no Kapitan needed; the
backend itself is compiled with real Kapitan in tests/integration/test_kapitan_compile.py)."""

from __future__ import annotations

import os
from pathlib import Path

import reclass_ng
from reclass_ng.storage.kapitan_settings import kapitan_load_settings

# What Kapitan's get_reclass_config() returns for an inventory without reclass-config.yml.
KAPITAN_DEFAULTS = {"storage_type": "yaml_fs", "inventory_base_uri": "inventory",
                    "nodes_uri": "targets", "classes_uri": "classes", "compose_node_name": False,
                    "allow_none_override": True, "ignore_class_notfound": False}


def test_relative_directories_are_taken_from_the_inventory_not_the_working_directory(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = kapitan_load_settings("inv", {**KAPITAN_DEFAULTS, "classes_uri": "../shared",
                                             "cache_dir": ".cache"})
    assert settings["nodes_uri"] == str(tmp_path / "inv" / "targets")
    assert settings["classes_uri"] == str(tmp_path / "shared")
    assert settings["cache_dir"] == str(tmp_path / "inv" / ".cache")


def test_absolute_directories_home_and_storage_mappings_are_kept(tmp_path: Path) -> None:
    git_nodes = {"uri": "https://example.org/inventory.git", "branch": "main"}
    settings = kapitan_load_settings(str(tmp_path), {
        **KAPITAN_DEFAULTS, "storage_type": "yaml_git", "nodes_uri": git_nodes,
        "classes_uri": "/srv/classes", "cache_dir": "~/reclass-cache"})
    assert settings["nodes_uri"] == git_nodes
    assert settings["classes_uri"] == "/srv/classes"
    assert settings["cache_dir"] == os.path.expanduser("~/reclass-cache")


def test_keys_kapitans_backend_ignores_are_dropped_and_unknown_ones_told(tmp_path: Path) -> None:
    warnings: list[str] = []
    settings = kapitan_load_settings(str(tmp_path), {
        **KAPITAN_DEFAULTS, "inventory_base_uri": ".", "output": "json", "pretty_print": "maybe",
        "no_refs": True, "applications_postfix": "_apps", "ignore_class_regexp": [".*"],
        "kapitan_note": 1, "allow_list_over_scalar": True, "class_mappings": ["* common"]},
        warn=warnings.append)
    assert settings == {"storage_type": "yaml_fs", "nodes_uri": str(tmp_path / "targets"),
                        "classes_uri": str(tmp_path / "classes"), "compose_node_name": False,
                        "allow_none_override": True, "ignore_class_notfound": False,
                        "allow_list_over_scalar": True, "class_mappings": ["* common"]}
    config_file = tmp_path / "reclass-config.yml"
    assert warnings == [f"{config_file}: unknown setting 'kapitan_note' ignored"]


def test_the_settings_load_the_inventory_wherever_the_process_runs(tmp_path: Path,
                                                                   monkeypatch) -> None:
    inventory = tmp_path / "inventory"
    (inventory / "targets").mkdir(parents=True)
    (inventory / "classes").mkdir()
    (inventory / "targets" / "t1.yml").write_text("parameters:\n  a: 1\n")
    monkeypatch.chdir(tmp_path)
    settings = kapitan_load_settings("inventory", {**KAPITAN_DEFAULTS, "inventory_base_uri": "."})
    nodes = reclass_ng.load("inventory", read_config=False, **settings).inventory()["nodes"]
    assert nodes["t1"]["parameters"]["a"] == 1
