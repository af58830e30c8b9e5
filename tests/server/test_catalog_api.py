"""The class catalogue over HTTP: environments and classes endpoints, update-classes from real
Puppet code, missing-referents / unspecified-parameters on group writes, and `deleted`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from catalog_helpers import write_example_code, write_module
from server_helpers import (
    DB_ID,
    LARGE_WEB_ID,
    ROOT_ID,
    WEB_ID,
    assert_error,
    client,
    copy_inventory,
    group_files,
    running_server,
)

MARKER = "puppetlabs.classifier/deleted"


@pytest.fixture(scope="module")
def puppet() -> str:
    found = shutil.which("puppet") or shutil.which("puppet", path="/opt/puppetlabs/bin")
    if found is None:  # `make test` installs it; a missing Puppet is a failure, not a skip
        pytest.fail("puppet is not installed; `make test` installs it "
                    "(scripts/install-test-tools.sh)")
    return found


@pytest.fixture
def served(tmp_path: Path, puppet: str):
    """A server on a copy of inventory-example with Puppet code for its classes (not synced)."""
    inventory = copy_inventory(tmp_path / "inventory")
    code = write_example_code(tmp_path / "code")
    write_module(code, "qa", "motd", "class motd (String $message) { }\n")  # no nginx in qa
    with running_server(inventory, tmp_path / "state.sqlite3",
                        "--puppet-code-dir", str(code)) as base, client(base) as http:
        yield http, inventory, code


def sync(http) -> None:
    response = http.post("/v1/update-classes")
    assert response.status_code == 201, response.text
    assert response.content == b""


def test_without_a_catalogue_environments_come_from_the_groups(served) -> None:
    http, inventory, _ = served
    response = http.get("/v1/environments")
    assert response.status_code == 200
    assert response.headers["X-Reclass-Ng-Catalog"] == "none"
    assert [e["name"] for e in response.json()] == ["production", "staging"]
    assert http.get("/v1/classes").json() == []
    assert http.get("/v1/last-class-update").json() == {"last_update": None}
    # No catalogue: no checks, so any class may be used.
    created = http.post("/v1/groups", json={"name": "Anything", "parent": ROOT_ID,
                                             "classes": {"no_such_class": {"x": 1}}})
    assert created.status_code == 303, created.text


def test_update_classes_syncs_every_environment(served) -> None:
    http, inventory, _ = served
    sync(http)
    assert (inventory / "puppet-classes.synced.yml").is_file()
    assert http.get("/v1/environments").json() == [
        {"name": "production", "sync_succeeded": True}, {"name": "qa", "sync_succeeded": True},
        {"name": "staging", "sync_succeeded": True}]
    assert http.get("/v1/environments/qa").json() == {"name": "qa", "sync_succeeded": True}
    nginx = http.get("/v1/environments/production/classes/nginx")
    assert nginx.status_code == 200
    assert nginx.json() == {"name": "nginx", "environment": "production",
                            "parameters": {"worker_connections": 512, "worker_processes": 2}}
    backup = http.get("/v1/environments/staging/classes/postgresql_backup").json()
    assert backup["parameters"] == {"start_time": None, "keep_days": 7}  # null: required
    assert [c["name"] for c in http.get("/v1/environments/qa/classes").json()] == ["motd"]
    every = http.get("/v1/classes").json()
    assert {(c["environment"], c["name"]) for c in every} >= {("qa", "motd"),
                                                               ("staging", "nginx")}
    assert len(every) == 9
    last = http.get("/v1/last-class-update").json()["last_update"]
    assert last.startswith("20") and last.endswith("+00:00")
    # The classifier's 404s here have empty bodies.
    for path in ("/v1/environments/nowhere", "/v1/environments/nowhere/classes",
                 "/v1/environments/production/classes/nope"):
        missing = http.get(path)
        assert missing.status_code == 404 and missing.content == b"", path


def test_missing_referents_on_writes(served) -> None:
    http, inventory, _ = served
    sync(http)
    before = group_files(inventory)
    body = assert_error(http.post("/v1/groups", json={
        "name": "Caches", "parent": ROOT_ID,
        "classes": {"varnish": {}, "nginx": {"worker_connections": 8, "listen": 80}}}),
        422, "missing-referents")
    assert body["details"] == [
        {"kind": "missing-parameter", "missing": ["nginx", "listen"], "environment": "production",
         "group": "Caches", "defined_by": "Caches"},
        {"kind": "missing-class", "missing": "varnish", "environment": "production",
         "group": "Caches", "defined_by": "Caches"}]
    assert "varnish" in body["msg"]
    # The same checks without writing.
    assert_error(http.post("/v1/validate/group", json={
        "name": "Caches", "parent": ROOT_ID, "classes": {"varnish": {}}}), 422,
        "missing-referents")
    # Inherited classes count: a child of Web servers in qa (which has no nginx) inherits
    # nginx, defined by Web servers.
    body = assert_error(http.put("/v1/groups/7d2f0c52-3f0b-4f5e-9a56-0b6b0f3d5e11", json={
        "name": "QA web", "parent": WEB_ID, "environment": "qa", "classes": {}}),
        422, "missing-referents")
    assert body["details"] == [{"kind": "missing-class", "missing": "nginx", "environment": "qa",
                                "group": "QA web", "defined_by": "Web servers"}]
    # The subtree is checked too, each group in its own environment: moving Web servers to qa
    # breaks it, not its child Large web servers (still in production).
    body = assert_error(http.post(f"/v1/groups/{WEB_ID}", json={"environment": "qa"}),
                        422, "missing-referents")
    assert {(d["group"], d["defined_by"]) for d in body["details"]} == {
        ("Web servers", "Web servers")}
    # A delta adding a class the environment lacks is refused.
    assert_error(http.post(f"/v1/groups/{DB_ID}", json={"classes": {"haproxy": {}}}), 422,
                 "missing-referents")
    assert group_files(inventory) == before  # nothing was written
    # Re-parenting checks the whole subtree with inherited values: moving a qa folder group
    # under Database servers gives it and its child postgresql_backup, which qa lacks.
    folder, child = "1f0e7a8e-6f55-4d77-9c1b-5d2b0c8e9a01", "2a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    assert http.put(f"/v1/groups/{folder}", json={
        "name": "QA", "parent": ROOT_ID, "environment": "qa", "classes": {}}).status_code == 201
    assert http.put(f"/v1/groups/{child}", json={
        "name": "QA child", "parent": folder, "environment": "qa",
        "classes": {}}).status_code == 201
    body = assert_error(http.post(f"/v1/groups/{folder}", json={"parent": DB_ID}), 422,
                        "missing-referents")
    assert body["details"] == [
        {"kind": "missing-class", "missing": "postgresql_backup", "environment": "qa",
         "group": group, "defined_by": "Database servers"} for group in ("QA", "QA child")]


def test_unspecified_parameters(served) -> None:
    http, inventory, _ = served
    sync(http)
    body = assert_error(http.post("/v1/groups", json={
        "name": "Backups", "parent": ROOT_ID, "classes": {"backup_agent": {}}}),
        422, "unspecified-parameters")
    assert body["details"] == [{"kind": "unspecified-parameters", "group": "Backups",
                                "environment": "production", "class": "backup_agent",
                                "unspecified": ["target"], "defined_by": "Backups"}]
    created = http.post("/v1/groups", json={
        "name": "Backups", "parent": ROOT_ID,
        "classes": {"backup_agent": {"target": "s3://b"}}})
    assert created.status_code == 303, created.text
    # A required parameter set by an ancestor counts as set for its children.
    child = http.post("/v1/groups", json={
        "name": "More backups", "parent": created.headers["Location"].rsplit("/", 1)[1],
        "classes": {"backup_agent": {}}})
    assert child.status_code == 303, child.text


def test_deleted_after_removing_code_and_hand_declared_classes(served) -> None:
    http, inventory, code = served
    sync(http)
    assert "deleted" not in http.get(f"/v1/groups/{WEB_ID}").json()
    # Remove nginx from production and keep_days from postgresql_backup, then resync.
    shutil.rmtree(code / "environments" / "production" / "modules" / "nginx")
    write_module(code, "production", "postgresql_backup",
                 "class postgresql_backup (String $start_time) { }\n")
    sync(http)
    web = http.get(f"/v1/groups/{WEB_ID}").json()
    assert web["deleted"] == {"nginx": {MARKER: True}}
    assert web["classes"]["nginx"] == {"worker_connections": 1024}  # the group is unchanged
    db = http.get(f"/v1/groups/{DB_ID}").json()
    assert db["deleted"] == {"postgresql_backup": {
        MARKER: False, "keep_days": {MARKER: True, "value": 14}}}
    listed = {g["id"]: g for g in http.get("/v1/groups").json()}
    assert listed[LARGE_WEB_ID]["deleted"] == {"nginx": {MARKER: True}}
    assert "deleted" not in listed[ROOT_ID]
    # A group with deleted referents can still be edited (the change adds no error) ...
    edited = http.post(f"/v1/groups/{WEB_ID}", json={"variables": {"tier": "gold"}})
    assert edited.status_code == 200, edited.text
    # ... but not given a new missing parameter.
    assert_error(http.post(f"/v1/groups/{DB_ID}", json={
        "classes": {"postgresql_backup": {"compress": True}}}), 422, "missing-referents")
    # Declaring nginx by hand brings it back, and a sync never removes a hand-declared class.
    (inventory / "puppet-classes.yml").write_text(yaml.safe_dump(
        {"production": {"nginx": {"worker_connections": 512}}}))
    assert "deleted" not in http.get(f"/v1/groups/{WEB_ID}").json()
    sync(http)
    assert "deleted" not in http.get(f"/v1/groups/{WEB_ID}").json()
    assert http.get("/v1/environments/production/classes/nginx").json()["parameters"] == {
        "worker_connections": 512}


def test_a_syntax_error_keeps_the_previous_classes(served) -> None:
    http, inventory, code = served
    sync(http)
    write_module(code, "staging", "nginx", "class nginx ( $a = ) {\n")
    sync(http)
    environments = {e["name"]: e for e in http.get("/v1/environments").json()}
    assert environments["staging"]["sync_succeeded"] is False
    assert environments["production"]["sync_succeeded"] is True
    # staging keeps nginx from the previous sync instead of reporting it deleted.
    assert http.get("/v1/environments/staging/classes/nginx").status_code == 200
    synced = yaml.safe_load((inventory / "puppet-classes.synced.yml").read_text())
    assert "Syntax error" in synced["errors"]["staging"][0]["error"]
    assert synced["errors"]["staging"][0]["file"].endswith("nginx/manifests/init.pp")


def test_update_classes_without_code_dir(tmp_path: Path) -> None:
    inventory = copy_inventory(tmp_path / "inventory")
    with running_server(inventory, tmp_path / "s.sqlite3") as base, client(base) as http:
        body = assert_error(http.post("/v1/update-classes"), 409, "no-code-dir")
        assert "--puppet-code-dir" in body["msg"]
