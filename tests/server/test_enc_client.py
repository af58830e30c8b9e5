"""`reclass-puppet --server URL NODE`: the ENC in client mode, against a real `reclass-ng serve`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from puppet_facts import write_fact_cache
from server_helpers import TOKEN, serve_example_copy
from server_process import refusing_port

RECLASS_PUPPET = str(Path(sys.executable).parent / "reclass-puppet")

NODES = {"web2.example.com": ("web", 8), "web1.staging.example.com": ("web", 2),
         "db1.example.com": ("db", 4)}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("enc-client")) as running:
        yield running


@pytest.fixture(scope="module")
def facts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    facts = tmp_path_factory.mktemp("facts")
    for name, (role, processors) in NODES.items():
        write_fact_cache(facts, name, role, processors)
    return facts


def reclass_puppet(*args: str, token: str | None = TOKEN) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RECLASS_NG_TOKEN", "RECLASS_NG_INVENTORY")}
    if token is not None:
        env["RECLASS_NG_TOKEN"] = token
    return subprocess.run([RECLASS_PUPPET, *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


@pytest.mark.parametrize("node", sorted(NODES))
def test_client_mode_prints_what_the_local_groups_mode_prints(server, facts_dir, node):
    base, inventory = server
    remote = reclass_puppet("--server", base, "--facts-dir", str(facts_dir), node)
    assert remote.returncode == 0, remote.stderr
    local = reclass_puppet("-b", str(inventory), "--facts-dir", str(facts_dir), node)
    assert local.returncode == 0, local.stderr
    assert remote.stdout == local.stdout
    assert remote.stdout.startswith("---\n")
    assert set(yaml.safe_load(remote.stdout)) == {"classes", "parameters", "environment"}


def test_client_mode_posts_the_cached_facts(server, facts_dir, api):
    base, _ = server
    result = reclass_puppet("--server", base + "/", "--facts-dir", str(facts_dir),
                            "db1.example.com")
    assert result.returncode == 0, result.stderr
    runtime = api.get("/nodes/db1.example.com/runtime").json()
    assert runtime["fact"]["role"] == "db"
    assert runtime["trusted"] == {"certname": "db1.example.com"}
    assert api.get("/v1/nodes/db1.example.com").json()["check_ins"]


def test_token_file_and_no_environment(server, facts_dir, tmp_path):
    base, _ = server
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    result = reclass_puppet("--server", base, "--token-file", str(token_file), "--facts-dir",
                            str(facts_dir), "--no-environment", "web2.example.com", token=None)
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert "environment" not in data
    assert data["classes"]["nginx"]["worker_connections"] == 4096


def assert_clean_failure(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_wrong_or_missing_token(server, facts_dir):
    base, _ = server
    url = f"{base}/v1/classified/nodes/web2.example.com"
    wrong = reclass_puppet("--server", base, "--facts-dir", str(facts_dir), "web2.example.com",
                           token="wrong")
    assert_clean_failure(wrong, url, "web2.example.com", "403", "permission-denied")
    missing = reclass_puppet("--server", base, "--facts-dir", str(facts_dir),
                             "web2.example.com", token=None)
    assert_clean_failure(missing, url, "401", "user-unauthenticated")


def test_server_down(facts_dir):
    with refusing_port() as port:
        base = f"http://127.0.0.1:{port}"
        result = reclass_puppet("--server", base, "--facts-dir", str(facts_dir),
                                "web2.example.com")
    assert_clean_failure(result, f"{base}/v1/classified/nodes/web2.example.com",
                         "Cannot reach the classifier", "web2.example.com")
    assert result.returncode == 74


def test_no_cached_facts(server, tmp_path):
    base, _ = server
    result = reclass_puppet("--server", base, "--facts-dir", str(tmp_path), "web2.example.com")
    assert_clean_failure(result, str(tmp_path / "web2.example.com.yaml"), base)


def test_options_that_need_the_inventory_are_refused(server, facts_dir):
    base, _ = server
    result = reclass_puppet("--server", base, "--facts-dir", str(facts_dir), "--no-groups",
                            "web2.example.com")
    assert_clean_failure(result, "--server")
    assert result.returncode == 2
    bad_url = reclass_puppet("--server", "127.0.0.1:1261", "--facts-dir", str(facts_dir),
                             "web2.example.com")
    assert_clean_failure(bad_url, "http://")


def test_classification_conflict_fails_with_the_servers_message(tmp_path, facts_dir):
    with serve_example_copy(tmp_path) as (base, _):
        headers = {"X-Authentication": TOKEN}
        # An unrelated group that also sets Web servers' variable: a conflict for pinned nodes.
        created = httpx.post(f"{base}/v1/groups", headers=headers, json={
            "name": "Cache off", "parent": "00000000-0000-4000-8000-000000000000",
            "rule": ["=", "name", "web2.example.com"], "variables": {"http_cache": False}})
        assert created.status_code == 303, created.text
        result = reclass_puppet("--server", base, "--facts-dir", str(facts_dir),
                                "web2.example.com")
        # The service's message names the groups that disagree.
        assert_clean_failure(result, "HTTP 500 classification-conflict", "web2.example.com",
                             "Cache off", "http_cache")
