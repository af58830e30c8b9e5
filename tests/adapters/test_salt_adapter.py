"""Salt adapter: pillar and top data, reclass's keyword options, propagated pillar data, CLI."""

from __future__ import annotations

import os

import pytest
import yaml
from adapter_helpers import EXAMPLE_INVENTORY, fake_nodeinfo, run_command, write_inventory

from reclass_ng.adapters import salt
from reclass_ng.adapters.salt_modules import loader_dirs
from reclass_ng.errors import ConfigError, ReclassError

EXAMPLE = str(EXAMPLE_INVENTORY)


def test_pillar_data_is_parameters_plus_reclass_meta() -> None:
    info = fake_nodeinfo("m1", environment="dev", classes=["a", "b"], applications=["ssh"],
                         parameters={"x": 1, "__reclass__": "replaced"})
    assert salt.pillar_data(info) == {
        "x": 1,
        "__reclass__": {"nodename": "m1", "applications": ["ssh"], "classes": ["a", "b"],
                        "environment": "dev"},
    }


def test_top_data_for_one_node_and_for_the_inventory() -> None:
    a = fake_nodeinfo("a", environment="dev", applications=["ssh", "web"])
    b = fake_nodeinfo("b", environment="base", applications=[])
    assert salt.node_top_data(a) == {"dev": ["ssh", "web"]}
    assert salt.inventory_top_data({"nodes": {"a": a, "b": b}}) == {
        "dev": {"a": ["ssh", "web"]}, "base": {"b": []}}


def test_ext_pillar_renders_an_example_minion() -> None:
    pillar = salt.ext_pillar("db1.example.com", {}, inventory_base_uri=EXAMPLE)
    assert pillar["postgresql"]["listen_addresses"] == ["localhost", "db1.example.com"]
    assert pillar["postgresql"]["databases"] == ["shop", "shop_reporting"]
    assert pillar["ssh"]["allowed_users"] == ["admin", "dba"]
    assert pillar["__reclass__"]["applications"] == ["ntp", "postgresql"]
    assert pillar["__reclass__"]["environment"] == "production"
    assert type(pillar["postgresql"]) is dict  # plain types: Salt sends pillars with msgpack


def test_ext_pillar_accepts_reclass_keyword_options_and_settings() -> None:
    pillar = salt.ext_pillar("web1.example.com", {}, storage_type="yaml_fs",
                             inventory_base_uri=EXAMPLE, nodes_uri="nodes",
                             classes_uri="classes", class_mappings=["web* service.ssh"],
                             compose_node_name=False, ignore_class_notfound=False)
    assert pillar["nginx"]["worker_processes"] == 4


def test_unknown_option_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="unexpected option: inventory_bsae_uri"):
        salt.ext_pillar("web1.example.com", {}, inventory_base_uri=EXAMPLE,
                        inventory_bsae_uri="typo")


PILLAR_INVENTORY = {
    "classes/app.yml": "parameters:\n  app:\n    password: ${secrets:app_password}\n",
    "nodes/m1.yml": "classes: [app]\nparameters:\n  secrets:\n    owner: reclass\n",
}


def test_propagated_pillar_data_is_merged_below_everything(tmp_path) -> None:
    base = str(write_inventory(tmp_path, PILLAR_INVENTORY))
    pillar = salt.ext_pillar("m1", {"secrets": {"app_password": "s3cret", "owner": "salt"}},
                             inventory_base_uri=base, propagate_pillar_data_to_reclass=True)
    assert pillar["app"]["password"] == "s3cret"
    # The node's own value wins over the pillar's: pillar data is the lowest layer.
    assert pillar["secrets"]["owner"] == "reclass"


def test_without_propagation_the_pillar_is_not_visible(tmp_path) -> None:
    base = str(write_inventory(tmp_path, PILLAR_INVENTORY))
    with pytest.raises(ReclassError, match=r"secrets:app_password"):
        salt.ext_pillar("m1", {"secrets": {"app_password": "s3cret"}}, inventory_base_uri=base)


def test_top_for_a_minion_and_for_everything() -> None:
    assert salt.top("lb1.example.com", inventory_base_uri=EXAMPLE) == {
        "production": ["ntp", "haproxy"]}
    everything = salt.top(inventory_base_uri=EXAMPLE)
    assert sorted(everything) == ["production", "staging"]
    assert everything["staging"]["db1.staging.example.com"] == ["ntp", "postgresql"]


def test_loader_dirs_hold_modules_named_reclass_ng() -> None:
    dirs = loader_dirs()
    pillar_module = os.path.join(dirs["pillar"][0], "reclass_ng_adapter.py")
    tops_module = os.path.join(dirs["tops"][0], "reclass_ng_adapter.py")
    for path in (pillar_module, tops_module):
        with open(path, encoding="utf-8") as handle:
            assert '__virtualname__ = "reclass_ng"' in handle.read()


def test_command_pillar() -> None:
    result = run_command("reclass-salt", "-b", EXAMPLE, "--pillar", "web2.example.com")
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert data["nginx"]["worker_processes"] == 8
    assert data["__reclass__"]["nodename"] == "web2.example.com"


def test_command_top_for_all_and_one_node() -> None:
    result = run_command("reclass-salt", "-b", EXAMPLE, "--top")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["production"]["web1.example.com"] == ["ntp", "nginx"]
    result = run_command("reclass-salt", "-b", EXAMPLE, "--top", "web1.staging.example.com",
                         "-o", "json")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == {"staging": ["ntp", "nginx"]}


def test_command_needs_a_mode_and_reports_unknown_nodes() -> None:
    assert run_command("reclass-salt", "-b", EXAMPLE).returncode == 2
    result = run_command("reclass-salt", "-b", EXAMPLE, "--pillar", "nope")
    assert result.returncode != 0 and result.stdout == ""
    assert "nope" in result.stderr and "Traceback" not in result.stderr


ENV_INVENTORY = {
    "nodes/m1.yml": "environment: prod\nclasses: [site]\nexports: {role: app}\n",
    "nodes/m2.yml": "environment: prod\nexports: {role: db}\n",
    "nodes/d1.yml": "environment: dev\nexports: {role: sandbox}\n",
    "classes/site.yml": "applications: [web]\nparameters:\n"
                        "  env: ${_reclass_:environment}\n  roles: $[ exports:role ]\n",
}


def test_pillarenv_overrides_the_environment_only_when_allowed(tmp_path) -> None:
    base = str(write_inventory(tmp_path / "inv", ENV_INVENTORY))
    kept = salt.ext_pillar("m1", {}, pillarenv="dev", inventory_base_uri=base)
    assert kept["env"] == "prod" and kept["__reclass__"]["environment"] == "prod"
    moved = salt.ext_pillar("m1", {}, pillarenv="dev", inventory_base_uri=base,
                            allow_adapter_env_override=True)
    assert moved["env"] == "dev" and moved["__reclass__"]["environment"] == "dev"
    # queries still look at the nodes of the node's own environment (salt-formulas reclass)
    assert moved["roles"] == {"m1": "app", "m2": "db"}
    assert salt.top("m1", pillarenv="dev", inventory_base_uri=base,
                    allow_adapter_env_override=True) == {"dev": ["web"]}
    assert salt.top("m1", pillarenv=None, inventory_base_uri=base,
                    allow_adapter_env_override=True) == {"prod": ["web"]}


def test_reclass_salt_environment_option(tmp_path) -> None:
    base = write_inventory(tmp_path / "inv", {
        **ENV_INVENTORY, "reclass-config.yml": "allow_adapter_env_override: true\n"})
    result = run_command("reclass-salt", "-b", str(base), "--pillar", "m1", "-e", "dev",
                         "-o", "json")
    assert result.returncode == 0, result.stderr
    assert '"environment": "dev"' in result.stdout
    result = run_command("reclass-salt", "-b", str(base), "--top", "m1", "--environment", "dev")
    assert result.stdout.strip() == "dev:\n- web"
