"""Ansible adapter: groups, host variables, `_meta`, group-name sanitising, `reclass-ansible`."""

from __future__ import annotations

import json
import os

import pytest
from adapter_helpers import EXAMPLE_INVENTORY, fake_nodeinfo, run_command

from reclass_ng.adapters import ansible

EXAMPLE = str(EXAMPLE_INVENTORY)


@pytest.mark.parametrize(("name", "expected"), [
    ("role.web", "role_web"),
    ("plain_name", "plain_name"),
    ("with-dash and space", "with_dash_and_space"),
    ("9lives", "_lives"),
    ("ntp_hosts", "ntp_hosts"),
])
def test_sanitize_group_name(name: str, expected: str) -> None:
    assert ansible.sanitize_group_name(name) == expected


def _inventory(*infos: dict) -> dict:
    classes: dict[str, list[str]] = {}
    applications: dict[str, list[str]] = {}
    for info in infos:
        node = info["__reclass__"]["node"]
        for cls in info["classes"]:
            classes.setdefault(cls, []).append(node)
        for app in info["applications"]:
            applications.setdefault(app, []).append(node)
    return {"nodes": {i["__reclass__"]["node"]: i for i in infos}, "classes": classes,
            "applications": applications}


def test_groups_from_classes_and_postfixed_applications() -> None:
    inv = _inventory(fake_nodeinfo("a", classes=["base", "role.web"], applications=["nginx"]),
                     fake_nodeinfo("b", classes=["base"], applications=["nginx", "ntp"]))
    assert ansible.host_groups(inv) == {"base": ["a", "b"], "role.web": ["a"],
                                        "nginx_hosts": ["a", "b"], "ntp_hosts": ["b"]}
    assert ansible.host_groups(inv, applications_postfix="_app", sanitize=True) == {
        "base": ["a", "b"], "role_web": ["a"], "nginx_app": ["a", "b"], "ntp_app": ["b"]}


def test_empty_postfix_and_sanitising_collisions_share_one_group() -> None:
    inv = _inventory(fake_nodeinfo("a", classes=["ntp", "x.y"], applications=[]),
                     fake_nodeinfo("b", classes=["x_y"], applications=["ntp"]))
    groups = ansible.host_groups(inv, applications_postfix="", sanitize=True)
    assert groups == {"ntp": ["a", "b"], "x_y": ["a", "b"]}


def test_script_inventory_has_meta_hostvars_and_lists_lonely_hosts() -> None:
    a = fake_nodeinfo("a", classes=["base"], applications=["ntp"], parameters={"p": {"q": 1}})
    lonely = fake_nodeinfo("lonely")
    listing = ansible.script_inventory(_inventory(a, lonely))
    assert listing["base"] == {"hosts": ["a"]}
    assert listing["ntp_hosts"] == {"hosts": ["a"]}
    assert listing["ungrouped"] == {"hosts": ["lonely"]}
    assert listing["_meta"]["hostvars"]["a"]["p"] == {"q": 1}
    meta = listing["_meta"]["hostvars"]["a"]["__reclass__"]
    assert meta["classes"] == ["base"] and meta["applications"] == ["ntp"]
    assert meta["node"] == "a" and meta["environment"] == "production"


def test_host_vars_are_plain_types() -> None:
    class Tracked(dict):
        pass

    variables = ansible.host_vars(fake_nodeinfo(parameters={"d": Tracked(x=Tracked(y=1))}))
    assert type(variables["d"]) is dict and type(variables["d"]["x"]) is dict


def test_command_list() -> None:
    result = run_command("reclass-ansible", "-b", EXAMPLE, "--list")
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    assert listing["role.lb"] == {"hosts": ["lb1.example.com"]}
    assert listing["nginx_hosts"]["hosts"] == [
        "web1.example.com", "web1.staging.example.com", "web2.example.com"]
    hostvars = listing["_meta"]["hostvars"]
    assert sorted(hostvars) == ["db1.example.com", "db1.staging.example.com", "lb1.example.com",
                                "web1.example.com", "web1.staging.example.com",
                                "web2.example.com"]
    assert hostvars["web2.example.com"]["nginx"]["worker_processes"] == 8


def test_command_list_with_postfix_and_sanitised_names() -> None:
    result = run_command("reclass-ansible", "-b", EXAMPLE, "--list", "--sanitize-group-names",
                         "--applications-postfix", "_servers")
    assert result.returncode == 0, result.stderr
    groups = set(json.loads(result.stdout))
    assert {"role_lb", "env_production", "haproxy_servers"} <= groups
    assert not any("." in group for group in groups)


def test_command_host() -> None:
    result = run_command("reclass-ansible", "-b", EXAMPLE, "--host", "lb1.example.com")
    assert result.returncode == 0, result.stderr
    variables = json.loads(result.stdout)
    assert variables["haproxy"]["backend_port"] == 8080
    assert variables["__reclass__"]["applications"] == ["ntp", "haproxy"]


def test_command_unknown_host_fails_cleanly() -> None:
    result = run_command("reclass-ansible", "-b", EXAMPLE, "--host", "nope")
    assert result.returncode != 0 and result.stdout == ""
    assert "nope" in result.stderr and "Traceback" not in result.stderr


def test_collections_path_holds_the_plugin() -> None:
    result = run_command("reclass-ansible", "--collections-path")
    assert result.returncode == 0, result.stderr
    plugin = os.path.join(result.stdout.strip(), "ansible_collections", "reclass_ng", "reclass",
                          "plugins", "inventory", "inventory.py")
    with open(plugin, encoding="utf-8") as handle:
        assert 'NAME = "reclass_ng.reclass.inventory"' in handle.read()


def test_sanitized_group_named_like_a_host_gets_a_suffix() -> None:
    inv = {"nodes": {"db": {}, "web1": {}}, "classes": {"db": ["db"], "role.web": ["web1"]},
           "applications": {}}
    assert ansible.host_groups(inv, sanitize=True) == {"db_group": ["db"], "role_web": ["web1"]}
    assert ansible.host_groups(inv) == {"db": ["db"], "role.web": ["web1"]}
