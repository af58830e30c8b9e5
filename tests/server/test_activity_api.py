"""The activity log over HTTP against a real server process: who changed what, PE's events
API and its filters, CSV, refused writes leaving no entry, concurrent writers, a server killed
with SIGKILL while writing, and a commit per write in a real git repository."""

from __future__ import annotations

import concurrent.futures
import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml
from server_helpers import (
    DB_ID,
    ROOT_ID,
    WEB_ID,
    assert_error,
    client,
    copy_inventory,
    running_server,
    running_server_process,
)

EVENTS = "/activity-api/v1/events"
NEW_ID = "7d9e5b7c-43f1-4c8e-9d0a-2b6f1a3c5e01"


def add_token(tokens_file: Path, name: str, role: str, *options: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "reclass_ng.cli.main", "tokens", "add", str(tokens_file),
         "--name", name, "--role", role, *options], capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory):
    """A server with tokens named alice (admin), bob (operator), web-viewer (viewer of Web)."""
    root = tmp_path_factory.mktemp("activity")
    inventory = copy_inventory(root / "inventory")
    tokens_file = root / "tokens.yml"
    tokens = {"alice": add_token(tokens_file, "alice", "admin"),
              "bob": add_token(tokens_file, "bob", "operator"),
              "web-viewer": add_token(tokens_file, "web-viewer", "viewer", "--group", WEB_ID)}
    with running_server(inventory, root / "state.sqlite3", "--tokens-file",
                        str(tokens_file)) as base:
        yield base, inventory, tokens, root / "state.sqlite3"


def events(http: httpx.Client, **params) -> dict:
    response = http.get(EVENTS, params={"service_id": "classifier", **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_every_kind_of_write_is_logged_with_who_and_what(named):
    base, inventory, tokens, _ = named
    with client(base, tokens["alice"]) as alice, client(base, tokens["bob"]) as bob:
        created = alice.put(f"/v1/groups/{NEW_ID}", json={
            "name": "Audited", "parent": ROOT_ID, "rule": ["=", "name", "a1"],
            "variables": {"tier": "gold"}})
        assert created.status_code == 201, created.text
        assert bob.post(f"/v1/groups/{NEW_ID}",
                        json={"variables": {"tier": "silver"}}).status_code == 200
        assert bob.post(f"/v1/groups/{NEW_ID}/pin", json={"nodes": ["a2"]}).status_code == 204
        configuration = {"name": "web1.example.com", "environment": "production",
                         "classes": ["role.web", "env.production"],
                         "parameters": {"site": {"tier": "gold"}}}
        node = alice.put("/nodes/web1.example.com/configuration", json=configuration)
        assert node.status_code == 200, node.text
        assert alice.delete(f"/v1/groups/{NEW_ID}").status_code == 204
        log = events(alice, order="asc")
    commits = log["commits"]
    assert log["total-rows"] == len(commits) == 5
    assert [c["subject"]["name"] for c in commits] == ["alice", "bob", "bob", "alice", "alice"]
    create, edit, pin, node, delete = commits
    assert create["object"] == {"id": NEW_ID, "name": "Audited", "type": "node_group"}
    assert create["message"] == f'Created the "Audited" group with id {NEW_ID}'
    [tier] = edit["events"]
    # PE's event fields: the action, what it touched, the two joined, a message.
    assert (tier["type"], tier["what"], tier["description"]) == ("edit", "variables",
                                                                 "edit_variables")
    assert tier["message"] == 'Changed variables of the "Audited" group'
    assert {e["type"] for e in create["events"]} == {"create"}
    assert "create_rule" in {e["description"] for e in create["events"]}
    assert (tier["old_value"], tier["new_value"]) == ({"tier": "gold"}, {"tier": "silver"})
    assert edit["message"] == 'Changed variables of the "Audited" group'
    [rule] = pin["events"]
    assert rule["new_value"] == ["or", ["=", "name", "a1"], ["=", "name", "a2"]]
    assert node["object"]["type"] == "node" and node["object"]["id"] == "web1.example.com"
    assert delete["message"].startswith('Deleted the "Audited" group')
    assert all(c["timestamp"].endswith("+00:00") for c in commits)


def test_filters_paging_and_order(named):
    base, _, tokens, _ = named
    with client(base, tokens["alice"]) as alice:
        for value in ("one", "two", "three"):
            assert alice.post(f"/v1/groups/{DB_ID}",
                              json={"variables": {"f": value}}).status_code == 200
        mine = events(alice, object_type="node_groups", object_id=DB_ID)
        assert mine["total-rows"] == 3
        assert [c["events"][0]["new_value"]["f"] for c in mine["commits"]] == \
            ["three", "two", "one"]  # newest first by default
        page = events(alice, object_type="node_groups", object_id=DB_ID, offset=1, limit=1,
                      order="asc")
        assert page["total-rows"] == 3 and page["offset"] == 1 and page["limit"] == 1
        assert [c["events"][0]["new_value"]["f"] for c in page["commits"]] == ["two"]
        assert events(alice, subject_type="users", subject_id="nobody")["commits"] == []
        assert events(alice, service_id="rbac")["total-rows"] == 0
        later = events(alice, after_service_commit_time="2999-01-01T00:00:00Z")
        assert later["commits"] == []
        for bad in ({"service_id": ""}, {"object_id": DB_ID}, {"order": "up"},
                    {"limit": "-1"}, {"object_type": "tables"},
                    {"after_service_commit_time": "yesterday"}):
            params = {"service_id": "classifier", **bad}
            assert_error(alice.get(EVENTS, params=params), 400, "malformed-request")
        assert_error(alice.get(EVENTS), 400, "malformed-request")


def test_csv_has_a_row_per_changed_field(named):
    base, _, tokens, _ = named
    with client(base, tokens["alice"]) as alice:
        assert alice.post(f"/v1/groups/{DB_ID}", json={
            "variables": {"f": "=cmd"}, "description": "CSV"}).status_code == 200
        response = alice.get(EVENTS + ".csv", params={
            "service_id": "classifier", "object_type": "node_groups", "object_id": DB_ID,
            "limit": 1})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    header, *_ = response.text.splitlines()
    assert header == ("Submit Time,Subject Type,Subject Id,Subject Name,Object Type,Object Id,"
                      "Object Name,Type,What,Description,Message,Old Value,New Value")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert {r["What"] for r in rows} == {"description", "variables"}
    assert {(r["Subject Type"], r["Subject Id"], r["Subject Name"]) for r in rows} == {
        ("users", "alice", "alice")}
    assert {(r["Object Type"], r["Object Id"], r["Type"]) for r in rows} == {
        ("node_groups", DB_ID, "edit")}
    assert {r["Description"] for r in rows} == {"edit_description", "edit_variables"}
    assert all(not r["New Value"].startswith("=") for r in rows)


def test_refused_writes_leave_no_entry(named):
    base, _, tokens, _ = named
    with client(base, tokens["alice"]) as alice:
        before = events(alice)["total-rows"]
        assert_error(alice.post(f"/v1/groups/{DB_ID}", json={"variables": []}), 400,
                     "schema-violation")
        assert_error(alice.post(f"/v1/groups/{DB_ID}", json={"parent": NEW_ID}), 422,
                     "missing-parent")
        unchanged = alice.get(f"/v1/groups/{DB_ID}").json()
        assert alice.put(f"/v1/groups/{DB_ID}", json={
            k: v for k, v in unchanged.items() if k != "serial_number"}).status_code == 200
        assert events(alice)["total-rows"] == before


def test_a_subtree_viewer_sees_only_its_groups_history(named):
    base, _, tokens, _ = named
    with client(base, tokens["alice"]) as alice:
        assert alice.post(f"/v1/groups/{WEB_ID}",
                          json={"description": "seen by the web viewer"}).status_code == 200
    with client(base, tokens["web-viewer"]) as viewer:
        seen = events(viewer)
        assert seen["commits"] and {c["object"]["id"] for c in seen["commits"]} == {WEB_ID}
        assert events(viewer, object_type="node_groups", object_id=DB_ID)["commits"] == []


def _entries_in(state_db: Path) -> list[tuple]:
    with sqlite3.connect(state_db) as db:
        return db.execute("SELECT state, file, subject FROM activity ORDER BY id").fetchall()


def test_concurrent_writers_each_get_exactly_one_entry(named):
    base, inventory, tokens, _ = named
    token = tokens["alice"]
    with client(base, token) as alice:
        before = events(alice, object_type="node_groups", object_id=WEB_ID)["total-rows"]

    def write(n: int) -> int:
        with client(base, token) as http:
            return http.post(f"/v1/groups/{WEB_ID}",
                             json={"variables": {"writer": n}}).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(write, range(40)))
    assert statuses == [200] * 40
    with client(base, token) as alice:
        log = events(alice, object_type="node_groups", object_id=WEB_ID, limit=1000)
    assert log["total-rows"] == before + 40
    written = [c["events"][0]["new_value"]["writer"] for c in log["commits"][:40]]
    assert sorted(written) == list(range(40))
    # Each entry's "before" is the previous entry's "after": no write was lost or doubled.
    ordered = list(reversed(log["commits"][:40]))
    for previous, current in zip(ordered, ordered[1:], strict=False):
        assert current["events"][0]["old_value"] == previous["events"][0]["new_value"]
    current = yaml.safe_load((inventory / "groups" / "web-servers.yml").read_text())
    assert current["variables"]["writer"] == ordered[-1]["events"][0]["new_value"]["writer"]


def test_a_server_killed_while_writing_loses_neither_writes_nor_entries(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    state_db = tmp_path / "state.sqlite3"
    acknowledged: list[int] = []
    attempted: list[int] = []
    stop = threading.Event()
    with running_server_process(inventory, state_db) as (base, process):
        def writer(first: int) -> None:
            n = first
            with client(base) as http:
                while not stop.is_set():
                    attempted.append(n)
                    try:
                        response = http.post(f"/v1/groups/{WEB_ID}",
                                             json={"variables": {"k": n}})
                    except httpx.HTTPError:
                        return
                    if response.status_code == 200:
                        acknowledged.append(n)
                    n += 2

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 15 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert len(acknowledged) >= 15
    # The next server settles what the killed one left pending, before it answers.
    with running_server(inventory, state_db) as base, client(base) as http:
        log = events(http, object_type="node_groups", object_id=WEB_ID, order="asc",
                     limit=10000)
    logged = [c["events"][0]["new_value"]["k"] for c in log["commits"]]
    assert len(logged) == len(set(logged)), "an entry was doubled"
    assert set(acknowledged) <= set(logged), "an acknowledged write has no entry"
    assert set(logged) <= set(attempted), "an entry describes a write nobody asked for"
    on_disk = yaml.safe_load((inventory / "groups" / "web-servers.yml").read_text())
    assert on_disk["variables"]["k"] == logged[-1], "the last entry is not what is on disk"
    assert all(state == "done" for state, _, _ in _entries_in(state_db))


def test_a_pending_entry_left_by_a_killed_write_is_settled_at_start(tmp_path):
    """The two crash windows made deterministic: an entry recorded before a file write that
    happened, and one whose write never happened."""
    inventory = copy_inventory(tmp_path / "inventory")
    state_db = tmp_path / "state.sqlite3"
    with running_server(inventory, state_db) as base, client(base) as http:
        assert http.post(f"/v1/groups/{DB_ID}", json={"description": "x"}).status_code == 200
    web = inventory / "groups" / "web-servers.yml"
    db_file = inventory / "groups" / "database-servers.yml"
    with sqlite3.connect(state_db) as db:
        for relative, path in (("groups/web-servers.yml", web),
                               ("groups/database-servers.yml", db_file)):
            db.execute("INSERT INTO activity (write_id, state, time, subject, file, before, "
                       "before_present) VALUES ('w-killed', 'pending', "
                       "'2026-01-01T00:00:00.000+00:00', 'alice', ?, ?, 1)",
                       (relative, path.read_bytes()))
    web.write_text(web.read_text().replace("Every shop web server", "Changed before the kill"))
    with running_server(inventory, state_db) as base, client(base) as http:
        log = events(http, order="asc")
    assert [c["object"]["name"] for c in log["commits"]] == ["Database servers", "Web servers"]
    killed = log["commits"][-1]
    assert killed["subject"]["name"] == "alice"
    assert killed["events"][0]["new_value"].startswith("Changed before the kill")
    assert [state for state, _, _ in _entries_in(state_db)] == ["done", "done"]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True,
                          timeout=60, env={**os.environ, "GIT_AUTHOR_NAME": "setup",
                                           "GIT_AUTHOR_EMAIL": "s@x", "GIT_COMMITTER_NAME": "s",
                                           "GIT_COMMITTER_EMAIL": "s@x"})
    return done.stdout.decode()


def test_git_commit_per_write(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    _git(inventory, "init", "-q", "-b", "main")
    _git(inventory, "add", "-A")
    _git(inventory, "commit", "-q", "-m", "initial")
    tokens_file = tmp_path / "tokens.yml"
    token = add_token(tokens_file, "carol", "admin")
    # A colleague's unfinished edit elsewhere must not ride along in the service's commit.
    readme = inventory / "classes" / "NOTES.txt"
    readme.write_text("work in progress\n")
    with running_server(inventory, tmp_path / "state.sqlite3", "--git-commit",
                        "--tokens-file", str(tokens_file)) as base, client(base, token) as http:
        changed = http.post(f"/v1/groups/{WEB_ID}", json={"variables": {"tls": "enabled"}})
        assert changed.status_code == 200, changed.text
        assert http.put(f"/v1/groups/{NEW_ID}", json={
            "name": "From git", "parent": ROOT_ID}).status_code == 201
        assert http.delete(f"/v1/groups/{NEW_ID}").status_code == 204
    history = _git(inventory, "log", "--format=%an|%s").splitlines()
    assert history[0].startswith('carol|Deleted the "From git" group')
    assert history[1].startswith('carol|Created the "From git" group')
    assert history[2] == 'carol|Changed variables of the "Web servers" group'
    assert _git(inventory, "show", "--name-only", "--format=", "HEAD~2").split() == \
        ["groups/web-servers.yml"]
    assert "NOTES.txt" in _git(inventory, "status", "--porcelain")
    assert _git(inventory, "status", "--porcelain", "--", "groups") == ""


def _activity_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", "activity", *args],
                          capture_output=True, text=True, check=False, timeout=60)


def test_activity_command_prints_the_log(named):
    base, inventory, tokens, state_db = named
    with client(base, tokens["bob"]) as bob:
        assert bob.post(f"/v1/groups/{DB_ID}",
                        json={"variables": {"cli": "shown"}}).status_code == 200
    done = _activity_cli("-b", str(inventory), "--state-db", str(state_db), "--group", DB_ID,
                         "--limit", "1")
    assert done.returncode == 0, done.stderr
    first, field = done.stdout.splitlines()[:2]
    assert first.endswith('bob  Changed variables of the "Database servers" group')
    assert field.startswith("    variables: ")
    assert '"cli": "shown"' in field.split(" -> ")[1] and '"cli"' not in field.split(" -> ")[0]
    as_json = json.loads(_activity_cli("-b", str(inventory), "--state-db", str(state_db),
                                       "--subject", "bob", "-o", "json").stdout)
    assert as_json["commits"] and {c["subject"]["name"] for c in as_json["commits"]} == {"bob"}
    missing = _activity_cli("-b", str(inventory), "--state-db", str(inventory / "none.db"))
    assert missing.returncode == 66
    assert "none.db" in missing.stderr and "Traceback" not in missing.stderr


def test_explorer_shows_a_groups_history(named):
    base, _, tokens, _ = named
    with client(base, tokens["alice"]) as alice:
        assert alice.post(f"/v1/groups/{DB_ID}",
                          json={"description": "<b>escaped</b> history"}).status_code == 200
        listing = alice.get("/ui/groups")
        assert listing.status_code == 200
        assert f'href="/ui/groups/{DB_ID}/history"' in listing.text
        page = alice.get(f"/ui/groups/{DB_ID}/history")
        assert page.status_code == 200, page.text
        assert "History of Database servers" in page.text
        assert "Changed description of the &quot;Database servers&quot; group" in page.text
        assert "&lt;b&gt;escaped&lt;/b&gt; history" in page.text and "<b>escaped" not in page.text
        assert alice.get("/ui/groups/not-a-uuid/history").status_code == 400
        assert alice.get("/ui/groups/11111111-2222-4333-8444-555555555555/history"
                         ).status_code == 404
        assert alice.get(f"/ui/groups/{DB_ID}/history", params={"page": "x"}).status_code == 400
    with client(base, tokens["web-viewer"]) as viewer:
        assert viewer.get(f"/ui/groups/{DB_ID}/history").status_code == 403
        assert viewer.get(f"/ui/groups/{WEB_ID}/history").status_code == 200


def test_a_write_through_a_symlinked_group_file_is_logged_as_that_group(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    (inventory / "shared").mkdir()
    link = inventory / "groups" / "web-servers.yml"
    link.rename(inventory / "shared" / "web.yml")
    link.symlink_to(Path("..") / "shared" / "web.yml")
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        changed = http.post(f"/v1/groups/{WEB_ID}", json={"variables": {"linked": "through"}})
        assert changed.status_code == 200, changed.text
        [entry] = events(http)["commits"]
    assert link.is_symlink()
    assert entry["object"] == {"id": WEB_ID, "name": "Web servers", "type": "node_group"}
    assert entry["file"] == "shared/web.yml"


def test_a_long_read_of_the_log_never_blocks_a_write(named):
    """A reader holding a read transaction open (a slow report, `reclass-ng activity` on a
    huge log) must not hold up writes: the log's writes land beside it (SQLite WAL)."""
    base, _, tokens, state_db = named
    reader = sqlite3.connect(state_db, timeout=1)
    try:
        reader.execute("BEGIN")
        before = reader.execute("SELECT COUNT(*) FROM activity").fetchone()[0]
        with client(base, tokens["alice"]) as alice:
            started = time.monotonic()
            response = alice.post(f"/v1/groups/{DB_ID}", json={"variables": {"read": "open"}},
                                  timeout=10)
            assert response.status_code == 200, response.text
            assert time.monotonic() - started < 5
            assert events(alice)["commits"][0]["events"][0]["new_value"]["read"] == "open"
        # The reader still sees its own snapshot.
        assert reader.execute("SELECT COUNT(*) FROM activity").fetchone()[0] == before
    finally:
        reader.rollback()
        reader.close()
