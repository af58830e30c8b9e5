"""Puppet ENC: the classes/parameters/environment hash, and `reclass-puppet` as Puppet runs it."""

from __future__ import annotations

import datetime

import pytest
import yaml
from adapter_helpers import EXAMPLE_INVENTORY, fake_nodeinfo, run_command, write_inventory
from puppet_facts import write_fact_cache
from server_process import refusing_port

from reclass_ng.adapters import puppet


def test_applications_become_classes_with_their_parameter_subtree() -> None:
    info = fake_nodeinfo(applications=["ntp", "apache::vhost", "motd"], parameters={
        "ntp": {"servers": ["a", "b"]},
        "apache::vhost": {"port": 80},
        "motd": "a string, not a mapping",
        "other": 1,
    })
    data = puppet.enc_data(info)
    assert data["classes"] == {"ntp": {"servers": ["a", "b"]}, "apache::vhost": {"port": 80},
                               "motd": {}}
    assert list(data["classes"]) == ["ntp", "apache::vhost", "motd"]


def test_all_parameters_are_top_scope_variables_and_environment_is_set() -> None:
    info = fake_nodeinfo(environment="staging", applications=["ntp"],
                         parameters={"ntp": {"servers": ["a"]}, "site": {"domain": "x"}})
    data = puppet.enc_data(info)
    assert data["parameters"] == {"ntp": {"servers": ["a"]}, "site": {"domain": "x"}}
    assert data["environment"] == "staging"


def test_rule_none_declares_classes_without_parameters() -> None:
    info = fake_nodeinfo(applications=["ntp"], parameters={"ntp": {"servers": ["a"]}})
    assert puppet.enc_data(info, class_parameter_rule="none")["classes"] == {"ntp": {}}


def test_environment_can_be_left_to_the_agent() -> None:
    assert "environment" not in puppet.enc_data(fake_nodeinfo(), include_environment=False)


@pytest.mark.parametrize("name", ["trusted", "facts", "server_facts"])
def test_reserved_top_scope_names_are_refused(name: str) -> None:
    with pytest.raises(puppet.ReservedVariableError) as caught:
        puppet.enc_data(fake_nodeinfo("db7", parameters={name: {"x": 1}}))
    assert caught.value.message.startswith("-> db7\n")
    assert f"'{name}'" in caught.value.message


def test_dates_reach_puppet_as_text() -> None:
    info = fake_nodeinfo(parameters={"since": datetime.date(2024, 5, 1)})
    text = puppet.enc_yaml(puppet.enc_data(info))
    assert "since: '2024-05-01'" in text


def test_enc_yaml_quotes_words_yaml_would_turn_into_booleans() -> None:
    info = fake_nodeinfo(parameters={"mode": "on", "flag": "no"})
    assert yaml.safe_load(puppet.enc_yaml(puppet.enc_data(info)))["parameters"] == {
        "mode": "on", "flag": "no"}


def test_command_prints_the_enc_hash_of_an_example_node() -> None:
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--no-groups",
                         "web1.staging.example.com")
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert data["environment"] == "staging"
    # `~servers` in env.staging replaced the pool servers; the class gets the subtree.
    assert data["classes"]["ntp"] == {"servers": ["ntp.staging.example.com"], "iburst": True}
    # server_name is a reference chain resolved in the staging domain.
    assert data["classes"]["nginx"]["server_name"] == "shop.staging.example.com"
    assert data["parameters"]["monitoring"]["contact"] == "ops@staging.example.com"
    assert set(data) == {"classes", "parameters", "environment"}


def test_command_class_parameter_rule_and_environment_switches() -> None:
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--no-groups",
                         "--class-parameters", "none", "--no-environment", "db1.example.com")
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert data["classes"] == {"ntp": {}, "postgresql": {}}
    assert "environment" not in data


def test_unknown_node_fails_with_message_and_empty_stdout() -> None:
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--no-groups",
                         "nope.example.com")
    assert result.returncode != 0
    assert result.stdout == ""
    assert "nope.example.com" in result.stderr and "not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_reserved_parameter_in_inventory_fails_the_command(tmp_path) -> None:
    inventory = write_inventory(tmp_path, {"nodes/n1.yml": "parameters:\n  facts: {a: 1}\n"})
    result = run_command("reclass-puppet", "-b", str(inventory), "n1")
    assert result.returncode == 65
    assert result.stdout == ""
    assert "-> n1" in result.stderr and "'facts'" in result.stderr and "reserved" in result.stderr


def test_inventory_from_environment_variable(tmp_path) -> None:
    result = run_command("reclass-puppet", "--no-groups", "lb1.example.com", cwd=tmp_path,
                         env={"RECLASS_NG_INVENTORY": str(EXAMPLE_INVENTORY)})
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["classes"]["haproxy"]["backends"] == [
        "web1.example.com", "web2.example.com"]


def test_inventory_from_reclass_config_in_working_directory(tmp_path) -> None:
    (tmp_path / "reclass-config.yml").write_text(f"inventory_base_uri: {EXAMPLE_INVENTORY}\n")
    result = run_command("reclass-puppet", "--no-groups", "lb1.example.com", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout)["environment"] == "production"


def test_b_wins_over_environment_variable(tmp_path) -> None:
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--no-groups",
                         "lb1.example.com",
                         env={"RECLASS_NG_INVENTORY": str(tmp_path / "missing")})
    assert result.returncode == 0, result.stderr


def test_no_inventory_anywhere_is_a_configuration_error(tmp_path) -> None:
    result = run_command("reclass-puppet", "n1", cwd=tmp_path, env={"HOME": str(tmp_path)})
    if result.returncode == 0:  # pragma: no cover - a machine-wide /etc/reclass config exists
        pytest.skip("/etc/reclass/reclass-config.yml names an inventory on this machine")
    assert result.returncode == 78
    assert result.stdout == ""
    assert "-b DIR" in result.stderr and "RECLASS_NG_INVENTORY" in result.stderr


# Node-classifier mode: inventory-example has groups/, whose rules read facts that Puppet Server
# caches as `<facts dir>/<certname>.yaml` (tests/puppet_facts.py writes them).


def test_groups_mode_classifies_with_cached_facts(tmp_path) -> None:
    write_fact_cache(tmp_path, "web2.example.com", "web", processors=8)
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--facts-dir",
                         str(tmp_path), "web2.example.com")
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    # Group classes merged over the application's parameter subtree; the large-web-servers
    # group matched on the processors fact.
    assert data["classes"]["nginx"] == {"worker_processes": 8, "listen_port": 8080,
                                        "server_name": "shop.example.com",
                                        "worker_connections": 4096}
    assert data["classes"]["motd"] == {
        "message": "Managed by reclass-ng for Example Shop. Ask ops@example.com."}
    assert data["parameters"]["puppet_server"] == "puppet.example.com"
    assert data["environment"] == "production"
    assert set(data) == {"classes", "parameters", "environment"}


def test_groups_mode_without_cached_facts_fails(tmp_path) -> None:
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--facts-dir",
                         str(tmp_path), "web2.example.com")
    assert result.returncode != 0 and result.stdout == ""
    assert str(tmp_path / "web2.example.com.yaml") in result.stderr


def test_groups_mode_refuses_the_none_rule(tmp_path) -> None:
    write_fact_cache(tmp_path, "db1.example.com", "db")
    result = run_command("reclass-puppet", "-b", str(EXAMPLE_INVENTORY), "--facts-dir",
                         str(tmp_path), "--class-parameters", "none", "db1.example.com")
    assert result.returncode == 2 and result.stdout == ""
    assert "--no-groups" in result.stderr


# Client mode (`--server URL`): tests against a running service are in tests/server/
# test_enc_client.py and tests/integration/test_puppet_server.py; these need no server.
def test_client_mode_with_nothing_listening_names_url_and_node(tmp_path) -> None:
    write_fact_cache(tmp_path, "web2.example.com", "web")
    with refusing_port() as port:
        result = run_command("reclass-puppet", "--server", f"http://127.0.0.1:{port}",
                             "--facts-dir", str(tmp_path), "web2.example.com")
    assert result.returncode == 74 and result.stdout == ""
    assert f"http://127.0.0.1:{port}/v1/classified/nodes/web2.example.com" in result.stderr
    assert "Traceback" not in result.stderr


def test_client_mode_refuses_a_url_without_scheme(tmp_path) -> None:
    write_fact_cache(tmp_path, "web2.example.com", "web")
    result = run_command("reclass-puppet", "--server", "localhost:1261", "--facts-dir",
                         str(tmp_path), "web2.example.com")
    assert result.returncode == 2 and result.stdout == ""
    assert "http://" in result.stderr and "localhost:1261" in result.stderr


@pytest.mark.parametrize("text", ["03:00", "00:30", "1:30", "-01:15", "0:30.5"])
def test_enc_yaml_quotes_times_ruby_reads_as_base_60_numbers(text: str) -> None:
    info = fake_nodeinfo(applications=["backup"], parameters={"backup": {"start": text}})
    out = puppet.enc_yaml(puppet.enc_data(info))
    assert f"start: '{text}'" in out
    assert yaml.safe_load(out)["classes"]["backup"]["start"] == text
