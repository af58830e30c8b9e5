"""`ansible-inventory` and `ansible` with reclass-ansible (script) and the inventory plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tool_helpers import EXAMPLE_INVENTORY, adapter_command, require_tool, run_tool

ALL_NODES = ["db1.example.com", "db1.staging.example.com", "lb1.example.com",
             "web1.example.com", "web1.staging.example.com", "web2.example.com"]


@pytest.fixture
def ansible_env(tmp_path: Path) -> dict[str, str]:
    """ansible.cfg as doc/adapters.rst shows it, plus private temp dirs and no colour."""
    collections = run_tool([adapter_command("reclass-ansible"), "--collections-path"])
    assert collections.returncode == 0, collections.stderr
    config = tmp_path / "ansible.cfg"
    config.write_text(
        "[defaults]\n"
        "collections_path = ~/.ansible/collections:/usr/share/ansible/collections:"
        f"{collections.stdout.strip()}\n")
    return {"ANSIBLE_CONFIG": str(config), "ANSIBLE_HOME": str(tmp_path / "home"),
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_NOCOLOR": "1",
            "RECLASS_NG_INVENTORY": str(EXAMPLE_INVENTORY)}


@pytest.fixture
def plugin_source(tmp_path: Path) -> Path:
    source = tmp_path / "inventory.reclass_ng.yml"
    source.write_text(f"""\
plugin: reclass_ng.reclass.inventory
inventory_base_uri: {EXAMPLE_INVENTORY}
sanitize_group_names: true
keyed_groups:
  - key: __reclass__.environment
    prefix: reclass_env
""")
    return source


def inventory_list(source: str, env: dict[str, str]) -> dict:
    tool = require_tool("ansible-inventory")
    result = run_tool([tool, "-i", source, "--list"], env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Unable to parse" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def members(listing: dict, group: str) -> list[str]:
    return sorted(listing[group]["hosts"])


def test_inventory_list_from_the_script(ansible_env: dict[str, str]) -> None:
    listing = inventory_list(adapter_command("reclass-ansible"), ansible_env)
    assert members(listing, "role.db") == ["db1.example.com", "db1.staging.example.com"]
    assert members(listing, "haproxy_hosts") == ["lb1.example.com"]
    assert members(listing, "nginx_hosts") == [
        "web1.example.com", "web1.staging.example.com", "web2.example.com"]
    hostvars = listing["_meta"]["hostvars"]
    assert sorted(hostvars) == ALL_NODES
    assert hostvars["lb1.example.com"]["haproxy"]["backends"] == [
        "web1.example.com", "web2.example.com"]
    assert hostvars["web1.staging.example.com"]["ntp"]["servers"] == ["ntp.staging.example.com"]


def test_inventory_list_from_the_plugin(ansible_env: dict[str, str], plugin_source: Path) -> None:
    listing = inventory_list(str(plugin_source), ansible_env)
    assert members(listing, "role_web") == [
        "web1.example.com", "web1.staging.example.com", "web2.example.com"]
    assert members(listing, "postgresql_hosts") == ["db1.example.com", "db1.staging.example.com"]
    assert members(listing, "reclass_env_staging") == [
        "db1.staging.example.com", "web1.staging.example.com"]
    assert not any("." in group for group in listing)
    hostvars = listing["_meta"]["hostvars"]
    assert sorted(hostvars) == ALL_NODES
    assert hostvars["db1.example.com"]["postgresql"]["databases"] == ["shop", "shop_reporting"]
    assert hostvars["db1.example.com"]["__reclass__"]["environment"] == "production"


def test_plugin_reports_reclass_errors(ansible_env: dict[str, str], tmp_path: Path) -> None:
    tool = require_tool("ansible-inventory")
    source = tmp_path / "broken.reclass_ng.yml"
    source.write_text(f"plugin: reclass_ng.reclass.inventory\n"
                      f"inventory_base_uri: {tmp_path / 'missing'}\n")
    result = run_tool([tool, "-i", str(source), "--list"], env=ansible_env)
    assert "No such directory" in result.stderr and str(tmp_path / "missing") in result.stderr


@pytest.mark.parametrize("kind", ["script", "plugin"])
def test_every_failing_node_is_reported_in_full(kind: str, ansible_env: dict[str, str],
                                                plugin_source: Path, tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(EXAMPLE_INVENTORY, broken)
    nginx = broken / "classes" / "service" / "nginx.yml"
    nginx.write_text(nginx.read_text().replace("${site:http_port}", "${site:http_prot}"))
    lb1 = broken / "nodes" / "production" / "lb1.example.com.yml"
    lb1.write_text(lb1.read_text().replace("- role.lb\n", "- role.lbb\n"))
    plugin_source.write_text(plugin_source.read_text().replace(str(EXAMPLE_INVENTORY),
                                                               str(broken)))
    source = adapter_command("reclass-ansible") if kind == "script" else str(plugin_source)
    result = run_tool([require_tool("ansible-inventory"), "-i", source, "--list"],
                      env={**ansible_env, "RECLASS_NG_INVENTORY": str(broken)})
    assert "-> lb1.example.com" in result.stderr, result.stderr
    assert "did you mean role.lb?" in result.stderr
    assert "-> web1.example.com" in result.stderr  # not only the first failing node
    assert f"written at {nginx}:7:18 (class service.nginx)" in result.stderr
    assert "did you mean ${site:http_port}?" in result.stderr
    assert "the same error in 2 more nodes: web1.staging.example.com, web2.example.com" in (
        result.stderr)


@pytest.mark.parametrize("kind", ["script", "plugin"])
def test_adhoc_debug_prints_a_host_var(kind: str, ansible_env: dict[str, str],
                                       plugin_source: Path) -> None:
    tool = require_tool("ansible")
    source = adapter_command("reclass-ansible") if kind == "script" else str(plugin_source)
    result = run_tool([tool, "web2.example.com", "-i", source, "-c", "local", "-m", "debug",
                       "-a", "var=nginx.worker_processes"], env=ansible_env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "web2.example.com | SUCCESS" in result.stdout
    assert '"nginx.worker_processes": 8' in result.stdout


GROUP_NAME_WARNINGS = ("Invalid characters were found in group names",
                       "Found both group and host with same name")


@pytest.mark.parametrize("kind", ["script", "plugin"])
def test_sanitized_group_names_give_no_ansible_warning(kind: str, ansible_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    tool = require_tool("ansible-inventory")
    inventory = tmp_path / "inventory"
    for relpath, text in {
            "classes/role/web.yml": "applications: [web-server]\n",
            "classes/db.yml": "applications: [postgresql]\n",
            "classes/9lives.yml": "parameters: {lives: 9}\n",
            "nodes/db.yml": "classes: [db]\n",
            "nodes/web1.example.com.yml": "classes: [role.web, 9lives]\n"}.items():
        (inventory / relpath).parent.mkdir(parents=True, exist_ok=True)
        (inventory / relpath).write_text(text)
    env = {**ansible_env, "RECLASS_NG_INVENTORY": str(inventory)}

    def listing(sanitize: bool) -> tuple[dict, str]:
        if kind == "script":
            script = tmp_path / ("sanitized" if sanitize else "plain")
            script.write_text(f"#!/bin/sh\nexec {adapter_command('reclass-ansible')} "
                              f"{'--sanitize-group-names' if sanitize else ''} \"$@\"\n")
            script.chmod(0o755)
            source = str(script)
        else:
            source = str(tmp_path / f"{'sanitized' if sanitize else 'plain'}.reclass_ng.yml")
            Path(source).write_text(f"plugin: reclass_ng.reclass.inventory\n"
                                    f"inventory_base_uri: {inventory}\n"
                                    f"sanitize_group_names: {str(sanitize).lower()}\n")
        result = run_tool([tool, "-i", source, "--list"], env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        return json.loads(result.stdout), result.stderr

    # the default keeps reclass's names, and Ansible warns about them
    plain, warnings = listing(sanitize=False)
    assert "role.web" in plain and "web-server_hosts" in plain
    assert GROUP_NAME_WARNINGS[0] in warnings
    groups, warnings = listing(sanitize=True)
    assert not [w for w in GROUP_NAME_WARNINGS if w in warnings], warnings
    assert members(groups, "role_web") == ["web1.example.com"]
    assert members(groups, "web_server_hosts") == ["web1.example.com"]
    assert members(groups, "_lives") == ["web1.example.com"]
    assert members(groups, "db_group") == ["db"]
