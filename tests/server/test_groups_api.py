"""The groups endpoints of `reclass-ng serve`, over HTTP against a real server process."""

from __future__ import annotations

import concurrent.futures
import uuid
from pathlib import Path

import pytest
import yaml
from server_helpers import (
    DB_ID,
    LARGE_WEB_ID,
    ROOT_ID,
    WEB_ID,
    assert_error,
    client,
    group_files,
    serve_example_copy,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("groups-api")) as running:
        yield running


def new_group(name: str, parent: str = ROOT_ID, **fields) -> dict:
    return {"name": name, "parent": parent, **fields}


def test_openapi_document_lists_the_endpoints(api):
    document = api.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    for path in ("/v1/groups", "/v1/groups/{group_id}", "/v1/validate/group",
                 "/v1/classified/nodes/{name}", "/v1/classified/nodes/{name}/explanation"):
        assert path in document["paths"]


def test_reads_need_the_token(server):
    base, _ = server
    with client(base, token=None) as anonymous:
        assert_error(anonymous.get("/v1/groups"), 401, "user-unauthenticated")
    with client(base, token="wrong") as wrong:
        assert_error(wrong.get("/v1/groups"), 403, "permission-denied")
    with client(base, bearer=True) as bearer:
        assert bearer.get("/v1/groups").status_code == 200


def test_list_groups_reads_the_files(api):
    response = api.get("/v1/groups")
    assert response.status_code == 200
    names = {g["name"] for g in response.json()}
    assert {"All Nodes", "Web servers", "Large web servers", "Database servers"} <= names


def test_inherited_view_merges_ancestors(api):
    groups = {g["id"]: g for g in api.get("/v1/groups", params={"inherited": "true"}).json()}
    large = groups[LARGE_WEB_ID]
    assert large["rule"] == ["and", [">=", ["fact", "processors", "count"], "8"],
                             ["or", ["~", "name", "^web[0-9]+\\."], ["=", ["fact", "role"], "web"]],
                             ["and", ["~", "name", ".*"]]]
    assert large["classes"]["nginx"] == {"worker_connections": 4096}
    assert "motd" in large["classes"]  # from the root
    assert large["variables"]["http_cache"] is True  # from Web servers
    plain = api.get(f"/v1/groups/{LARGE_WEB_ID}", params={"inherited": "false"}).json()
    assert "motd" not in plain["classes"]


def test_get_one_group_with_etag(api):
    response = api.get(f"/v1/groups/{WEB_ID}")
    assert response.status_code == 200
    assert response.json()["name"] == "Web servers"
    assert response.headers["ETag"].startswith('"')


def test_get_malformed_and_unknown_ids(api):
    body = assert_error(api.get("/v1/groups/not-a-uuid"), 400, "malformed-uuid")
    assert body["details"] == "not-a-uuid"
    unknown = str(uuid.uuid4())
    body = assert_error(api.get(f"/v1/groups/{unknown}"), 404, "not-found")
    assert body["details"] == f"/v1/groups/{unknown}"


def test_validate_group_writes_nothing(api, server):
    before = group_files(server[1])
    response = api.post("/v1/validate/group", json=new_group("Checked only", rule=["=", "name", "x"]))
    assert response.status_code == 200
    assert uuid.UUID(response.json()["id"])
    assert response.json()["environment"] == "production"
    missing = str(uuid.uuid4())
    assert_error(api.post("/v1/validate/group", json=new_group("Orphan", parent=missing)),
                 422, "missing-parent")
    body = assert_error(api.post("/v1/validate/group", json=new_group("Bad", rule=["is", "x"])),
                        400, "schema-violation")
    assert "rule" in body["msg"]
    assert group_files(server[1]) == before


def test_malformed_json_body(api):
    response = api.post("/v1/validate/group", content=b"{not json",
                        headers={"Content-Type": "application/json"})
    body = assert_error(response, 400, "malformed-request")
    assert body["details"]["body"] == "{not json"


def test_put_creates_then_identical_then_overwrites(api, server):
    group_id = str(uuid.uuid4())
    data = new_group("Put test", rule=["=", ["fact", "put_test"], "yes"],
                     variables={"answer": 42})
    created = api.put(f"/v1/groups/{group_id}", json=data)
    assert created.status_code == 201, created.text
    assert created.json()["id"] == group_id
    written = server[1] / "groups" / "put-test.yml"
    assert yaml.safe_load(written.read_text())["variables"] == {"answer": 42}
    assert api.put(f"/v1/groups/{group_id}", json=data).status_code == 200
    changed = api.put(f"/v1/groups/{group_id}", json={**data, "variables": {"answer": 43}})
    assert changed.status_code == 201
    assert api.get(f"/v1/groups/{group_id}").json()["variables"] == {"answer": 43}


def test_put_errors(api, server):
    group_id = str(uuid.uuid4())
    other = str(uuid.uuid4())
    body = assert_error(api.put(f"/v1/groups/{group_id}", json=new_group("X", id=other)),
                        400, "conflicting-ids")
    assert body["details"] == {"submitted": other, "fromUrl": group_id}
    assert_error(api.put(f"/v1/groups/{group_id}", json=new_group("X", parent="nope")),
                 400, "malformed-uuid")
    assert_error(api.put("/v1/groups/nope", json=new_group("X")), 400, "malformed-uuid")
    body = assert_error(api.put(f"/v1/groups/{group_id}", json=new_group("Web servers")),
                        422, "uniqueness-violation")
    assert body["details"]["conflict"] == {"name": "Web servers", "environment_name": "production"}
    assert_error(api.put(f"/v1/groups/{group_id}", json=new_group("X", parent=str(uuid.uuid4()))),
                 422, "missing-parent")
    assert api.get(f"/v1/groups/{group_id}").status_code == 404


def test_post_creates_with_see_other(api, server):
    response = api.post("/v1/groups", json=new_group("Posted", rule=["=", "name", "posted1"]))
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith("/v1/groups/")
    fetched = api.get(location)
    assert fetched.status_code == 200
    assert fetched.json()["name"] == "Posted"
    assert (server[1] / "groups" / "posted.yml").exists()


def test_delta_merges_and_nulls_remove(api, server):
    response = api.post(f"/v1/groups/{WEB_ID}", json={
        "classes": {"nginx": {"worker_connections": None, "gzip": True}, "haproxy": {"mode": "http"}},
        "variables": {"http_cache": None, "tier": "front"},
        "description": "Changed by the delta test",
    })
    assert response.status_code == 200, response.text
    group = response.json()
    assert group["classes"] == {"nginx": {"gzip": True}, "haproxy": {"mode": "http"}}
    assert group["variables"] == {"tier": "front"}
    response = api.post(f"/v1/groups/{WEB_ID}", json={"classes": {"haproxy": None}})
    assert response.json()["classes"] == {"nginx": {"gzip": True}}
    text = (server[1] / "groups" / "web-servers.yml").read_text()
    # Comments and key order survive the round trip.
    assert text.startswith("# A classification group: web servers by name")
    assert "# Merged with the parameters reclass gives application `nginx`" in text
    keys = list(yaml.safe_load(text))
    assert keys[:4] == ["id", "name", "description", "parent"]
    assert_error(api.post(f"/v1/groups/{uuid.uuid4()}", json={"name": "x"}), 404, "not-found")


def test_root_rule_edit_is_refused(api, server):
    before = group_files(server[1])
    body = assert_error(api.post(f"/v1/groups/{ROOT_ID}",
                                 json={"rule": ["=", "name", "x"], "description": "d"}),
                        422, "root-rule-edit")
    assert body["details"] == {"rule": ["=", "name", "x"], "description": "d"}
    root = api.get(f"/v1/groups/{ROOT_ID}").json()
    assert_error(api.put(f"/v1/groups/{ROOT_ID}", json={**root, "rule": ["=", "name", "y"]}),
                 422, "root-rule-edit")
    assert group_files(server[1]) == before


def test_cycle_is_refused_and_files_stay(api, server):
    before = group_files(server[1])
    body = assert_error(api.post(f"/v1/groups/{WEB_ID}", json={"parent": LARGE_WEB_ID}),
                        422, "inheritance-cycle")
    assert {g["id"] for g in body["details"]} == {WEB_ID, LARGE_WEB_ID}
    assert group_files(server[1]) == before


def test_delete(api, server):
    body = assert_error(api.delete(f"/v1/groups/{WEB_ID}"), 422, "children-present")
    assert [c["id"] for c in body["details"]["children"]] == [LARGE_WEB_ID]
    assert_error(api.delete(f"/v1/groups/{ROOT_ID}"), 422, "root-delete")
    group_id = str(uuid.uuid4())
    assert api.put(f"/v1/groups/{group_id}", json=new_group("Doomed")).status_code == 201
    path = server[1] / "groups" / "doomed.yml"
    assert path.exists()
    assert api.delete(f"/v1/groups/{group_id}").status_code == 204
    assert not path.exists()
    assert_error(api.delete(f"/v1/groups/{group_id}"), 404, "not-found")


def test_same_etag_one_wins_one_gets_409(server):
    base, inventory = server
    with client(base) as first, client(base) as second:
        etag = first.get(f"/v1/groups/{DB_ID}").headers["ETag"]

        def update(http, value):
            return http.post(f"/v1/groups/{DB_ID}", json={"variables": {"winner": value}},
                             headers={"If-Match": etag})

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda a: update(*a), [(first, "one"), (second, "two")]))
    statuses = sorted(r.status_code for r in results)
    assert statuses == [200, 409], [r.text for r in results]
    loser = next(r for r in results if r.status_code == 409)
    assert_error(loser, 409, "stale-write")
    winner = next(r for r in results if r.status_code == 200).json()["variables"]["winner"]
    stored = yaml.safe_load((inventory / "groups" / "database-servers.yml").read_text())
    assert stored["variables"] == {"winner": winner}
    # A fresh ETag works again.
    with client(base) as http:
        fresh = http.get(f"/v1/groups/{DB_ID}").headers["ETag"]
        ok = http.post(f"/v1/groups/{DB_ID}", json={"variables": {"winner": None}},
                       headers={"If-Match": fresh})
        assert ok.status_code == 200
        assert ok.headers["ETag"] != fresh


def test_body_over_limit_gets_413(api, server):
    before = group_files(server[1])
    huge = new_group("Huge", variables={"blob": "x" * 1_000_001})
    assert_error(api.put(f"/v1/groups/{uuid.uuid4()}", json=huge), 413, "request-too-large")
    assert group_files(server[1]) == before


def test_hand_edits_are_seen_without_restart(api, server):
    path: Path = server[1] / "groups" / "staging.yml"
    text = path.read_text()
    path.write_text(text.replace("Nodes in the staging domain", "Edited by hand"))
    staging = next(g for g in api.get("/v1/groups").json() if g["name"] == "Staging")
    assert staging["description"].startswith("Edited by hand")
    path.write_text(text)
