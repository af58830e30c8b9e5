"""`puppet apply` classifies nodes through `reclass-puppet` (node_terminus = exec)."""

from __future__ import annotations

from pathlib import Path

import pytest
from puppet_helpers import make_puppet_dirs, puppet_apply, write_fact_caches


@pytest.fixture
def puppet_dirs(tmp_path: Path) -> Path:
    """Classification by reclass alone (inventory-example also has node groups)."""
    return make_puppet_dirs(tmp_path, "--no-groups")


@pytest.fixture
def groups_puppet_dirs(tmp_path: Path) -> Path:
    """Node-classifier mode, with a fact cache as Puppet Server keeps it."""
    facts = write_fact_caches(tmp_path / "facts", (("web2.example.com", "web", 8),
                                                   ("web1.staging.example.com", "web", 2)))
    return make_puppet_dirs(tmp_path, f"--facts-dir {facts}")


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
