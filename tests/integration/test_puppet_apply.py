"""`puppet apply` classifies nodes through `reclass-puppet` (node_terminus = exec)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_helpers import EXAMPLE_INVENTORY, adapter_command, require_tool, run_tool

# Classes with the parameters the example inventory's subtrees provide; notice() shows what
# Puppet received: class parameters from the ENC's `classes` hash, top-scope variables from its
# `parameters` hash.
SITE_MANIFEST = """\
class ntp (Array[String] $servers, Boolean $iburst) {
  notice("ntp servers=${servers.join(',')} iburst=${iburst}")
}
class nginx (Integer $worker_processes, Integer $listen_port, String $server_name,
             Integer $worker_connections = 512) {
  notice("nginx server_name=${server_name} workers=${worker_processes} port=${listen_port}")
  notice("nginx worker_connections=${worker_connections}")
}
class motd (String $message) {
  notice("motd ${message}")
}
class postgresql (Integer $version, Integer $port, Array[String] $listen_addresses,
                  Array[String] $databases = []) {
  notice("postgresql ${version} listen=${listen_addresses.join(',')}")
}
class haproxy (Integer $frontend_port, Integer $backend_port, Array[String] $backends) {
  notice("haproxy backends=${backends.join(',')} port=${backend_port}")
}
notice("top-scope domain=${::site['domain']} contact=${monitoring['contact']} env=${environment}")
if $puppet_server { notice("top-scope puppet_server=${puppet_server}") }
"""

# Puppet Server's fact cache format (what the ENC reads in node-classifier mode).
FACT_CACHE = """\
--- !ruby/object:Puppet::Node::Facts
name: {name}
values:
  role: {role}
  processors:
    count: {processors}
timestamp: 2026-11-22 08:00:00.000000000 +00:00
expiration: 2026-11-22 08:30:00.000000000 +00:00
"""


def make_puppet_dirs(tmp_path: Path, enc_options: str,
                     enc_source: str = f"-b {EXAMPLE_INVENTORY}",
                     manifest: str = SITE_MANIFEST) -> Path:
    """A private Puppet confdir with puppet.conf set up as doc/adapters.rst tells users to
    (`enc_source`: the inventory, or `--server URL` for the classifier service)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    for env in ("production", "staging"):  # the environments the example inventory uses
        (tmp_path / "code" / "environments" / env / "manifests").mkdir(parents=True)
    (conf / "puppet.conf").write_text(
        "[main]\n"
        f"vardir = {tmp_path / 'var'}\n"
        f"logdir = {tmp_path / 'log'}\n"
        f"rundir = {tmp_path / 'run'}\n"
        f"codedir = {tmp_path / 'code'}\n"
        "node_terminus = exec\n"
        f"external_nodes = {adapter_command('reclass-puppet')} {enc_source} {enc_options}\n")
    (tmp_path / "site.pp").write_text(manifest)
    return tmp_path


@pytest.fixture
def puppet_dirs(tmp_path: Path) -> Path:
    """Classification by reclass alone (inventory-example also has node groups)."""
    return make_puppet_dirs(tmp_path, "--no-groups")


@pytest.fixture
def groups_puppet_dirs(tmp_path: Path) -> Path:
    """Node-classifier mode, with a fact cache as Puppet Server keeps it."""
    facts = tmp_path / "facts"
    facts.mkdir()
    for name, role, processors in (("web2.example.com", "web", 8),
                                   ("web1.staging.example.com", "web", 2)):
        (facts / f"{name}.yaml").write_text(
            FACT_CACHE.format(name=name, role=role, processors=processors))
    return make_puppet_dirs(tmp_path, f"--facts-dir {facts}")


def puppet_apply(dirs: Path, certname: str):
    puppet = require_tool("puppet", "/opt/puppetlabs/bin")
    return run_tool([puppet, "apply", "--color", "false", "--confdir", str(dirs / "conf"),
                     "--certname", certname, str(dirs / "site.pp")])


def test_puppet_apply_gets_class_parameters_and_top_scope_variables(puppet_dirs: Path) -> None:
    result = puppet_apply(puppet_dirs, "web2.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # Class parameters: the nginx subtree, with the node's override and a reference chain.
    assert "nginx server_name=shop.example.com workers=8 port=8080" in out
    assert "ntp servers=0.pool.ntp.org,1.pool.ntp.org iburst=true" in out
    # Top-scope variables from reclass parameters.
    assert "top-scope domain=example.com contact=ops@example.com" in out
    assert "Compiled catalog for web2.example.com in environment production" in out


def test_puppet_apply_uses_the_reclass_environment(puppet_dirs: Path) -> None:
    result = puppet_apply(puppet_dirs, "db1.staging.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "postgresql 15 listen=localhost,db1.staging.example.com" in out
    assert "ntp servers=ntp.staging.example.com iburst=true" in out
    assert "top-scope domain=staging.example.com contact=ops@staging.example.com" in out
    assert "in environment staging" in out


def test_puppet_apply_fails_for_an_unknown_node(puppet_dirs: Path) -> None:
    result = puppet_apply(puppet_dirs, "unknown.example.com")
    assert result.returncode != 0
    assert "Failed to find unknown.example.com via exec" in result.stdout + result.stderr
    assert "Notice: Scope" not in result.stdout


def test_puppet_apply_with_node_groups(groups_puppet_dirs: Path) -> None:
    result = puppet_apply(groups_puppet_dirs, "web2.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # The application's reclass parameters plus the groups' class parameter (8 processors).
    assert "nginx server_name=shop.example.com workers=8 port=8080" in out
    assert "nginx worker_connections=4096" in out
    # A class only the groups declare, with a reference into reclass parameters.
    assert "motd Managed by reclass-ng for Example Shop. Ask ops@example.com." in out
    # A group variable as a top-scope variable.
    assert "top-scope puppet_server=puppet.example.com" in out


def test_puppet_apply_with_node_groups_in_staging(groups_puppet_dirs: Path) -> None:
    result = puppet_apply(groups_puppet_dirs, "web1.staging.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # Two processors: only the web-servers group's worker_connections.
    assert "nginx worker_connections=1024" in out
    assert "nginx server_name=shop.staging.example.com workers=4 port=8080" in out
    assert "motd Managed by reclass-ng for Example Shop. Ask ops@staging.example.com." in out
    assert "top-scope puppet_server=puppet.staging.example.com" in out
    assert "in environment staging" in out


def test_puppet_apply_with_node_groups_fails_without_facts(groups_puppet_dirs: Path) -> None:
    result = puppet_apply(groups_puppet_dirs, "web1.example.com")  # no cached facts
    assert result.returncode != 0
    assert "Failed to find web1.example.com via exec" in result.stdout + result.stderr
