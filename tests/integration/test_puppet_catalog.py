"""A real `puppet apply` through the ENC and `reclass-ng serve` with a class catalogue synced
from the same Puppet code the agent compiles: the checks refuse what Puppet would fail on, and
what they let through compiles."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import httpx
import pytest
from puppet_helpers import make_service_client_dirs, puppet_apply
from tool_helpers import require_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from catalog_helpers import EXAMPLE_MODULES, write_module  # noqa: E402
from server_helpers import ROOT_ID, TOKEN, WEB_ID, copy_inventory, running_server  # noqa: E402

# Every class the example's groups and nodes give, as modules (test_puppet_apply.py has them in
# site.pp); nginx's first three parameters come from the nodes' reclass parameters.
MODULES = {
    **EXAMPLE_MODULES,
    "nginx": """class nginx (Integer $worker_processes, Integer $listen_port, String $server_name,
             Integer $worker_connections = 512) {
  notice("nginx worker_connections=${worker_connections} port=${listen_port}")
}
""",
    "ntp": "class ntp (Array[String] $servers, Boolean $iburst) { }\n",
    "postgresql": "class postgresql (Integer $version, Integer $port, "
                  "Array[String] $listen_addresses, Array[String] $databases = []) { }\n",
    "haproxy": "class haproxy (Integer $frontend_port, Integer $backend_port, "
               "Array[String] $backends) { }\n",
}
# Parameters reclass (or Hiera) supplies are declared optional by hand, so groups using the
# class need not set them (doc/node-groups.rst, "Class catalogue").
HAND_DECLARED = """\
production:
  nginx: {worker_processes: from reclass, listen_port: from reclass, server_name: from reclass}
"""
TOP_SCOPE = 'notice("top-scope puppet_server=${puppet_server}")\n'


@pytest.fixture
def served(tmp_path: Path):
    require_tool("puppet", "/opt/puppetlabs/bin")
    inventory = copy_inventory(tmp_path / "inventory")
    (inventory / "puppet-classes.yml").write_text(HAND_DECLARED)
    code = tmp_path / "code"
    for environment in ("production", "staging"):
        for name, manifest in MODULES.items():
            write_module(code, environment, name, manifest)
    with running_server(inventory, tmp_path / "state.sqlite3", "--puppet-code-dir",
                        str(code)) as base:
        make_service_client_dirs(tmp_path, base, TOKEN, TOP_SCOPE)
        with httpx.Client(base_url=base, headers={"X-Authentication": TOKEN},
                          timeout=120) as http:
            assert http.post("/v1/update-classes").status_code == 201
            yield tmp_path, http, code


def test_puppet_apply_with_a_synced_catalogue(served) -> None:
    dirs, http, code = served
    result = puppet_apply(dirs, "web2.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "nginx worker_connections=4096" in result.stdout  # the module's class, group value
    assert "motd Managed by reclass-ng for Example Shop." in result.stdout
    # The catalogue refuses a group Puppet could not compile (backup_agent needs `target`) ...
    refused = http.post("/v1/groups", json={"name": "Backups", "parent": ROOT_ID,
                                            "classes": {"backup_agent": {}}})
    assert refused.status_code == 422 and refused.json()["kind"] == "unspecified-parameters"
    # ... and accepts one it can, which then reaches Puppet.
    created = http.post("/v1/groups", json={"name": "Backups", "parent": ROOT_ID,
                                            "classes": {"backup_agent": {"target": "s3://b"}}})
    assert created.status_code == 303, created.text
    assert http.post(created.headers["Location"] + "/pin",
                     json={"nodes": ["db1.staging.example.com"]}).status_code == 204
    result = puppet_apply(dirs, "db1.staging.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backup_agent target=s3://b" in result.stdout
    assert "postgresql_backup at 03:00 keep 14" in result.stdout
    # A group may use nginx without the parameters reclass supplies (declared by hand).
    assert http.post("/v1/groups", json={"name": "Proxies", "parent": ROOT_ID,
                                         "classes": {"nginx": {}}}).status_code == 303
    # Removing a class from the code and syncing marks the groups that use it.
    shutil.rmtree(code / "environments" / "production" / "modules" / "postgresql_backup")
    assert http.post("/v1/update-classes").status_code == 201
    db = http.get("/v1/groups/5291d4d6-c981-4347-bddf-233a06d84e3b").json()
    assert db["deleted"] == {"postgresql_backup": {"puppetlabs.classifier/deleted": True}}
    assert "deleted" not in http.get(f"/v1/groups/{WEB_ID}").json()
