"""`puppet apply` classifies nodes through a running `reclass-ng serve`, reached by the ENC in
client mode (`external_nodes = reclass-puppet --server URL`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from puppet_helpers import SITE_MANIFEST, make_service_client_dirs, puppet_apply
from tool_helpers import require_tool

# The HTTP tests' helpers start the server as a real process on loopback.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import TOKEN, serve_example_copy  # noqa: E402

# postgresql_backup: the Database servers group's class; backup_agent: a group the test creates.
NEW_CLASS_MANIFEST = """
class postgresql_backup (String $start_time, Integer $keep_days) {
  notice("postgresql_backup at ${start_time}")
}
class backup_agent (String $target) {
  notice("backup_agent target=${target}")
}
"""


@pytest.fixture
def served(tmp_path: Path):
    """A service on a copy of inventory-example, and a Puppet confdir whose ENC asks it."""
    require_tool("puppet", "/opt/puppetlabs/bin")
    with serve_example_copy(tmp_path / "service") as (base, inventory):
        make_service_client_dirs(tmp_path, base, TOKEN, SITE_MANIFEST + NEW_CLASS_MANIFEST)
        yield tmp_path, base, inventory


def test_puppet_apply_gets_group_classes_from_the_service(served) -> None:
    dirs, base, _ = served
    result = puppet_apply(dirs, "web2.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # Large web servers (8 processors) set worker_connections; the root group declares motd.
    assert "nginx worker_connections=4096" in out
    assert "motd Managed by reclass-ng for Example Shop. Ask ops@example.com." in out
    assert "top-scope puppet_server=puppet.example.com" in out
    assert "Compiled catalog for web2.example.com in environment production" in out


def test_a_group_created_through_the_api_reaches_puppet(served) -> None:
    import httpx

    dirs, base, _ = served
    headers = {"X-Authentication": TOKEN}
    created = httpx.post(f"{base}/v1/groups", headers=headers, json={
        "name": "Backups", "parent": "00000000-0000-4000-8000-000000000000",
        "classes": {"backup_agent": {"target": "s3://backups/staging"}}})
    assert created.status_code == 303, created.text
    group_url = base + created.headers["Location"]
    assert httpx.post(group_url + "/pin", headers=headers,
                      json={"nodes": ["db1.staging.example.com"]}).status_code == 204
    result = puppet_apply(dirs, "db1.staging.example.com")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backup_agent target=s3://backups/staging" in result.stdout
    assert "in environment staging" in result.stdout
    assert "postgresql_backup at 03:00" in result.stdout  # pinned by `pinned:` in the file
    # The service recorded the check-in, with the facts the ENC posted.
    runtime = httpx.get(f"{base}/nodes/db1.staging.example.com/runtime", headers=headers).json()
    assert runtime["fact"]["role"] == "db"
    # A node not pinned there does not get the class.
    other = puppet_apply(dirs, "web2.example.com")
    assert other.returncode == 0, other.stdout + other.stderr
    assert "backup_agent" not in other.stdout


def test_puppet_apply_fails_when_the_service_refuses(served) -> None:
    dirs, base, _ = served
    conf = dirs / "conf" / "puppet.conf"
    conf.write_text(conf.read_text().replace(f"--token-file {dirs / 'token'} ", ""))
    result = puppet_apply(dirs, "web2.example.com")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Failed to find web2.example.com via exec" in output
    assert "Notice: Scope" not in result.stdout
