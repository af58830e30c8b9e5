"""`salt-call --local` with the reclass_ng ext_pillar and master_tops modules, loaded by Salt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tool_helpers import EXAMPLE_INVENTORY, require_tool, run_tool, write_salt_minion_config


def write_minion_config(tmp_path: Path, inventory: Path, extra: str = "",
                        ext_pillar: bool = True) -> Path:
    """A masterless minion config as doc/adapters.rst shows it, everything under tmp_path."""
    (tmp_path / "states").mkdir()
    pillar_config = f"""\
ext_pillar:
  - reclass_ng:
      inventory_base_uri: {inventory}
""" if ext_pillar else ""
    return write_salt_minion_config(tmp_path / "conf", tmp_path / "root", tmp_path / "states",
                                    f"""\
{pillar_config}master_tops:
  reclass_ng:
    inventory_base_uri: {inventory}
{extra}""")


def salt_call(conf: Path, minion: str, *args: str) -> dict:
    salt_call_path = require_tool("salt-call")
    result = run_tool([salt_call_path, "--local", "-c", str(conf), "--id", minion,
                       "--out", "json", "--log-level", "quiet", *args])
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)["local"]


@pytest.fixture
def example_conf(tmp_path: Path) -> Path:
    return write_minion_config(tmp_path, EXAMPLE_INVENTORY)


def test_pillar_items_come_from_reclass_ng(example_conf: Path) -> None:
    pillar = salt_call(example_conf, "db1.example.com", "pillar.items", "unmask=True")
    assert pillar["postgresql"]["listen_addresses"] == ["localhost", "db1.example.com"]
    assert pillar["ssh"]["allowed_users"] == ["admin", "dba"]
    assert pillar["monitoring"]["checks"] == ["ping", "ssh", "postgresql"]
    assert pillar["__reclass__"] == {
        "nodename": "db1.example.com", "applications": ["ntp", "postgresql"],
        "classes": ["service.ntp", "service.ssh", "common", "profile.base",
                    "service.postgresql", "profile.database", "role.db", "env.production"],
        "environment": "production"}


def test_show_top_comes_from_master_tops(example_conf: Path) -> None:
    assert salt_call(example_conf, "web1.staging.example.com", "state.show_top") == {
        "staging": ["ntp", "nginx"]}
    assert salt_call(example_conf, "lb1.example.com", "state.show_top") == {
        "production": ["ntp", "haproxy"]}


def test_unknown_minion_gets_a_pillar_error_with_the_reclass_ng_message(
        example_conf: Path, tmp_path: Path) -> None:
    pillar = salt_call(example_conf, "stranger.example.com", "pillar.items", "unmask=True")
    errors = "\n".join(pillar["_errors"])
    assert "ext_pillar.reclass_ng" in errors
    assert "Node 'stranger.example.com' not found" in errors
    log = (tmp_path / "root" / "minion.log").read_text()
    assert "Node 'stranger.example.com' not found" in log


def test_pillar_errors_carry_the_whole_message_without_a_traceback(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, EXAMPLE_INVENTORY)
    pillar = salt_call(conf, "web1", "pillar.items", "unmask=True")
    [error] = pillar["_errors"]
    assert error.startswith("ext_pillar.reclass_ng: -> web1\n")
    assert error.endswith("did you mean web1.example.com, web1.staging.example.com?")
    log = (tmp_path / "root" / "minion.log").read_text()
    assert "did you mean web1.example.com" in log
    assert "Exception caught loading ext_pillar" not in log and "Traceback" not in log


def test_a_misspelt_option_is_named_once_with_a_suggestion(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, EXAMPLE_INVENTORY)
    minion = conf / "minion"
    minion.write_text(minion.read_text().replace(
        f"  - reclass_ng:\n      inventory_base_uri: {EXAMPLE_INVENTORY}\n",
        f"  - reclass_ng:\n      inventory_base_uri: {EXAMPLE_INVENTORY}\n"
        "      ignore_class_notfond: true\n"))
    [error] = salt_call(conf, "web1.example.com", "pillar.items", "unmask=True")["_errors"]
    assert error == ("ext_pillar.reclass_ng: unexpected option: ignore_class_notfond (did you "
                     "mean ignore_class_notfound?) (options are reclass-config.yml settings, "
                     "see doc/configuration.rst)")


def test_short_form_configuration_names_the_inventory(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, EXAMPLE_INVENTORY, ext_pillar=False)
    minion = conf / "minion"
    text = minion.read_text().replace(
        f"master_tops:\n  reclass_ng:\n    inventory_base_uri: {EXAMPLE_INVENTORY}\n",
        f"master_tops:\n  reclass_ng: {EXAMPLE_INVENTORY}\n"
        f"ext_pillar:\n  - reclass_ng: {EXAMPLE_INVENTORY}\n")
    assert text != minion.read_text()
    minion.write_text(text)
    assert salt_call(conf, "web2.example.com", "state.show_top") == {
        "production": ["ntp", "nginx"]}
    pillar = salt_call(conf, "web2.example.com", "pillar.items", "unmask=True")
    assert pillar["nginx"]["worker_processes"] == 8


def test_master_tops_errors_reach_the_salt_log(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, EXAMPLE_INVENTORY, ext_pillar=False)
    assert salt_call(conf, "ghost.example.com", "state.show_top") == {}
    log = (tmp_path / "root" / "minion.log").read_text()
    assert "Top function reclass_ng failed with error master_tops.reclass_ng" in log
    assert "Node 'ghost.example.com' not found" in log


def test_propagated_pillar_data_is_visible_to_inventory_references(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    (inventory / "classes").mkdir(parents=True)
    (inventory / "nodes").mkdir()
    (inventory / "classes" / "app.yml").write_text(
        "parameters:\n  app:\n    db_password: ${secrets:db_password}\n")
    (inventory / "nodes" / "m1.yml").write_text("classes: [app]\n")
    pillar_root = tmp_path / "pillar"
    pillar_root.mkdir()
    (pillar_root / "top.sls").write_text("base:\n  '*':\n    - secrets\n")
    (pillar_root / "secrets.sls").write_text("secrets:\n  db_password: s3cret\n")
    conf = write_minion_config(tmp_path, inventory, extra=f"""\
pillar_roots:
  base:
    - {pillar_root}
""")
    minion = conf / "minion"
    minion.write_text(minion.read_text().replace(
        f"      inventory_base_uri: {inventory}\n",
        f"      inventory_base_uri: {inventory}\n      propagate_pillar_data_to_reclass: true\n",
        1))
    pillar = salt_call(conf, "m1", "pillar.items", "unmask=True")
    assert pillar["app"] == {"db_password": "s3cret"}


# -- environments: allow_adapter_env_override (salt-formulas reclass PR #102) ---------------------

ENV_NODES = {"nodes/m1.yml": "environment: prod\nclasses: [site]\n"}
ENV_CLASSES = {
    "prod": {"classes/site.yml": "applications: [nginx]\nparameters:\n"
                                 "  site: {name: 'site-${_reclass_:environment}', tier: gold}\n"},
    "dev": {"classes/site.yml": "applications: [nginx, debugger]\nparameters:\n"
                                "  site: {name: 'site-${_reclass_:environment}', tier: sandbox}\n"},
}


def git_inventory(tmp_path: Path, allow_override: bool) -> Path:
    """An inventory whose classes come from one git branch per environment (yaml_git)."""
    from git_repos import bare_repository

    repos = tmp_path / "repos"
    nodes_url = bare_repository(repos / "nodes.git", {"master": ENV_NODES})
    classes_url = bare_repository(repos / "classes.git", ENV_CLASSES)
    cache = f"cache_dir: {tmp_path / 'git-cache'}\n  lock_dir: {tmp_path / 'git-locks'}\n"
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "reclass-config.yml").write_text(
        f"storage_type: yaml_git\n"
        f"allow_adapter_env_override: {'true' if allow_override else 'false'}\n"
        f"nodes_uri:\n  repo: {nodes_url}\n  root: nodes\n  {cache}"
        f"classes_uri:\n  repo: {classes_url}\n  root: classes\n  {cache}")
    return inventory


def test_pillarenv_and_saltenv_choose_the_environment_when_allowed(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, git_inventory(tmp_path, allow_override=True))
    pillar = salt_call(conf, "m1", "pillar.items", "unmask=True")
    assert pillar["site"] == {"name": "site-prod", "tier": "gold"}
    assert pillar["__reclass__"]["environment"] == "prod"
    # the dev branch's classes, and the environment everywhere the node shows it
    pillar = salt_call(conf, "m1", "pillar.items", "unmask=True", "pillarenv=dev")
    assert pillar["site"] == {"name": "site-dev", "tier": "sandbox"}
    assert pillar["__reclass__"]["environment"] == "dev"
    assert pillar["__reclass__"]["applications"] == ["nginx", "debugger"]
    assert salt_call(conf, "m1", "state.show_top") == {"prod": ["nginx"]}
    assert salt_call(conf, "m1", "state.show_top", "saltenv=dev") == {
        "dev": ["nginx", "debugger"]}


def test_salt_environments_are_ignored_unless_allowed(tmp_path: Path) -> None:
    conf = write_minion_config(tmp_path, git_inventory(tmp_path, allow_override=False))
    pillar = salt_call(conf, "m1", "pillar.items", "unmask=True", "pillarenv=dev")
    assert pillar["site"] == {"name": "site-prod", "tier": "gold"}
    assert salt_call(conf, "m1", "state.show_top", "saltenv=dev") == {"prod": ["nginx"]}
