"""Tokens with roles (`--tokens-file`), over HTTP against a real `reclass-ng serve`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from server_helpers import (
    DB_ID,
    LARGE_WEB_ID,
    ROOT_ID,
    TOKEN,
    WEB_ID,
    assert_error,
    client,
    copy_inventory,
    running_server,
)

UNICODE_TOKEN = "tökén-ünïcode-секрет-密码-0123456789"


def add_token(tokens_file: Path, name: str, role: str, *options: str,
              stdin: str | None = None) -> str:
    """`reclass-ng tokens add`, as an administrator runs it; returns the printed token."""
    done = subprocess.run(
        [sys.executable, "-m", "reclass_ng.cli.main", "tokens", "add", str(tokens_file),
         "--name", name, "--role", role, *options],
        input=stdin.encode() if stdin is not None else None, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return stdin.strip() if stdin is not None else done.stdout.decode().strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("roles")
    inventory = copy_inventory(root / "inventory")
    tokens_file = root / "tokens.yml"  # next to the inventory, not in it
    tokens = {
        "admin": add_token(tokens_file, "admin", "admin"),
        "viewer": add_token(tokens_file, "viewer", "viewer"),
        "web": add_token(tokens_file, "web-team", "operator", "--group", WEB_ID,
                         "--permission", "classify"),
        "web-viewer": add_token(tokens_file, "web-viewer", "viewer", "--group", WEB_ID),
        "agent": add_token(tokens_file, "agent", "viewer", "--permission", "facts",
                           "--permission", "classify"),
        "unicode": add_token(tokens_file, "unicode", "operator", "--token-stdin",
                             stdin=UNICODE_TOKEN + "\n"),
    }
    with running_server(inventory, root / "state.sqlite3", "--tokens-file",
                        str(tokens_file)) as base:
        yield base, inventory, tokens_file, tokens


def as_(server, who: str) -> httpx.Client:
    base, _, _, tokens = server
    return client(base, TOKEN if who == "legacy" else tokens[who])


def test_tokens_are_stored_hashed(server) -> None:
    _, _, tokens_file, tokens = server
    text = tokens_file.read_text()
    for token in tokens.values():
        assert token not in text
    entries = yaml.safe_load(text)["tokens"]
    assert {e["name"]: e["role"] for e in entries}["web-team"] == "operator"
    assert all(len(e["sha256"]) == 64 for e in entries)
    assert oct(tokens_file.stat().st_mode & 0o777) == "0o600"


def test_the_single_token_still_works_as_admin(server) -> None:
    with as_(server, "legacy") as http:
        assert http.get("/v1/groups").status_code == 200
        assert http.post(f"/v1/groups/{DB_ID}", json={"description": "legacy"}).status_code == 200
        assert http.post("/v1/import-hierarchy", json=http.get("/v1/groups").json()
                         ).status_code == 204


def test_viewer_reads_only(server) -> None:
    with as_(server, "viewer") as http:
        assert len(http.get("/v1/groups").json()) == 6
        assert http.get(f"/v1/groups/{ROOT_ID}").status_code == 200
        assert http.get("/v1/environments").status_code == 200
        body = assert_error(http.post(f"/v1/groups/{WEB_ID}", json={"description": "x"}), 403,
                            "permission-denied")
        assert "viewer" in body["msg"]
        assert_error(http.post("/v1/classified/nodes/web1.example.com", json={}), 403,
                     "permission-denied")
        assert_error(http.put("/nodes/web1.example.com/runtime", json={"fact": {}}), 403,
                     "permission-denied")
        assert_error(http.post("/v1/update-classes"), 403, "permission-denied")


def test_operator_of_a_subtree(server) -> None:
    with as_(server, "web") as http:
        listed = {g["id"] for g in http.get("/v1/groups").json()}
        assert listed == {WEB_ID, LARGE_WEB_ID}
        assert {g["id"] for g in http.get("/v1/groups", params={"inherited": "1"}).json()} == \
            listed
        assert http.get(f"/v1/groups/{LARGE_WEB_ID}").status_code == 200
        for outside in (ROOT_ID, DB_ID):
            assert_error(http.get(f"/v1/groups/{outside}"), 403, "permission-denied")
            assert_error(http.post(f"/v1/groups/{outside}", json={"description": "x"}), 403,
                         "permission-denied")
        # Inside the subtree: edit, create below, pin.
        assert http.post(f"/v1/groups/{LARGE_WEB_ID}",
                         json={"description": "by the web team"}).status_code == 200
        created = http.post("/v1/groups", json={"name": "Web canaries", "parent": WEB_ID,
                                                 "rule": ["~", "name", "canary"]})
        assert created.status_code == 303, created.text
        assert http.post(f"/v1/groups/{WEB_ID}/pin",
                         json={"nodes": ["web9.example.com"]}).status_code == 204
        # Not: creating outside, moving a group out of the subtree, deleting outside.
        assert_error(http.post("/v1/groups", json={"name": "Rogue", "parent": ROOT_ID}), 403,
                     "permission-denied")
        assert_error(http.post(f"/v1/groups/{LARGE_WEB_ID}", json={"parent": ROOT_ID}), 403,
                     "permission-denied")
        assert_error(http.delete(f"/v1/groups/{DB_ID}"), 403, "permission-denied")
        assert_error(http.post("/v1/commands/unpin-from-all", json={"nodes": ["x"]}), 403,
                     "permission-denied")
        assert_error(http.post("/v1/import-hierarchy", json=[]), 403, "permission-denied")
        assert_error(http.put("/nodes/web1.example.com/configuration", json={}), 403,
                     "permission-denied")
        # Its extra permission: classification.
        assert http.post("/v1/classified/nodes/web1.example.com", json={}).status_code == 200
        # Facts are not its business.
        assert_error(http.put("/nodes/web1.example.com/runtime", json={"fact": {}}), 403,
                     "permission-denied")


def test_viewer_of_a_subtree(server) -> None:
    with as_(server, "web-viewer") as http:
        assert {g["id"] for g in http.get("/v1/groups").json()} >= {WEB_ID, LARGE_WEB_ID}
        assert ROOT_ID not in {g["id"] for g in http.get("/v1/groups").json()}
        assert_error(http.get(f"/v1/groups/{DB_ID}"), 403, "permission-denied")
        assert_error(http.post(f"/v1/groups/{WEB_ID}", json={"description": "x"}), 403,
                     "permission-denied")


def test_fact_and_classification_permissions(server) -> None:
    with as_(server, "agent") as http:
        stored = http.put("/nodes/db1.staging.example.com/runtime",
                          json={"fact": {"role": "db"}, "trusted": {}})
        assert stored.status_code == 200, stored.text
        assert http.post("/v1/classified/nodes/db1.staging.example.com",
                         json={"fact": {"role": "db"}}).status_code == 200
        assert_error(http.post(f"/v1/groups/{DB_ID}", json={"description": "x"}), 403,
                     "permission-denied")


def test_a_non_ascii_token_sent_as_utf8(server) -> None:
    base, _, _, _ = server
    headers = {"X-Authentication": UNICODE_TOKEN.encode("utf-8")}
    response = httpx.get(base + "/v1/groups", headers=headers)
    assert response.status_code == 200, response.text
    response = httpx.post(base + f"/v1/groups/{WEB_ID}", headers=headers,
                          json={"description": "ünïcode"})
    assert response.status_code == 200, response.text
    bearer = {"Authorization": b"Bearer " + UNICODE_TOKEN.encode("utf-8")}
    assert httpx.get(base + "/v1/groups", headers=bearer).status_code == 200
    # The same characters sent as Latin-1 bytes are a different token.
    latin = {"X-Authentication": "tökén-0123456789abc".encode("latin-1")}
    assert_error(httpx.get(base + "/v1/groups", headers=latin), 403, "permission-denied")


def test_unknown_and_missing_tokens(server) -> None:
    base, _, _, _ = server
    with client(base, token=None) as anonymous:
        assert_error(anonymous.get("/v1/groups"), 401, "user-unauthenticated")
    with client(base, token="not-a-token-at-all") as wrong:
        assert_error(wrong.get("/v1/groups"), 403, "permission-denied")


def test_revoking_a_token_takes_effect_without_restart(server) -> None:
    _, _, tokens_file, _ = server
    extra = add_token(tokens_file, "temporary", "viewer")
    with as_(server, "admin") as admin:
        base = str(admin.base_url).rstrip("/")
    with client(base, extra) as http:
        assert http.get("/v1/groups").status_code == 200
        data = yaml.safe_load(tokens_file.read_text())
        data["tokens"] = [t for t in data["tokens"] if t["name"] != "temporary"]
        tokens_file.write_text(yaml.safe_dump(data))
        assert_error(http.get("/v1/groups"), 403, "permission-denied")


def test_a_broken_tokens_file_stops_the_server_with_a_message(tmp_path: Path) -> None:
    inventory = copy_inventory(tmp_path / "inventory")
    tokens_file = tmp_path / "tokens.yml"
    tokens_file.write_text("tokens:\n  - name: x\n    sha256: secret-in-clear\n    role: admin\n")
    done = subprocess.run(
        [sys.executable, "-m", "reclass_ng.cli.main", "serve", "-b", str(inventory),
         "--listen", "127.0.0.1:1", "--tokens-file", str(tokens_file)],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "sha256" in done.stderr and "tokens[0]" in done.stderr
    assert "Traceback" not in done.stderr
