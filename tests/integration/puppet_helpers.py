"""Puppet in a throw-away configuration for the integration tests: the example's classes as a
site manifest, a fact cache as Puppet Server keeps it, a confdir whose ENC is `reclass-puppet`,
and `puppet apply` run in it."""

from __future__ import annotations

from pathlib import Path

from puppet_facts import write_fact_cache
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


def write_fact_caches(facts: Path, nodes: tuple[tuple[str, str, int], ...]) -> Path:
    """A fact cache directory with (name, role, processor count) of each node; returns it."""
    for name, role, processors in nodes:
        write_fact_cache(facts, name, role, processors)
    return facts


# The nodes the classifier-service tests classify by their facts.
SERVICE_FACTS = (("web2.example.com", "web", 8), ("db1.staging.example.com", "db", 2))


def make_service_client_dirs(tmp_path: Path, base: str, token: str, manifest: str) -> Path:
    """A confdir whose ENC asks the classifier service at `base` (client mode), with the token
    in a file and SERVICE_FACTS in a fact cache."""
    facts = write_fact_caches(tmp_path / "facts", SERVICE_FACTS)
    token_file = tmp_path / "token"
    token_file.write_text(token)
    return make_puppet_dirs(tmp_path, f"--token-file {token_file} --facts-dir {facts}",
                            enc_source=f"--server {base}", manifest=manifest)


def puppet_apply(dirs: Path, certname: str):
    """`puppet apply` of the confdir's site.pp as `certname` (skipped when Puppet is missing)."""
    puppet = require_tool("puppet", "/opt/puppetlabs/bin")
    return run_tool([puppet, "apply", "--color", "false", "--confdir", str(dirs / "conf"),
                     "--certname", certname, str(dirs / "site.pp")])
