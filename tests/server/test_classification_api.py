"""Classification, explanation and check-in endpoints, and the server's access modes."""

from __future__ import annotations

import uuid

import pytest
from server_helpers import (
    ROOT_ID,
    WEB_ID,
    assert_error,
    client,
    copy_inventory,
    group_files,
    running_server,
    serve_example_copy,
)

WEB1 = {"fact": {"role": "web", "processors": {"count": 2}},
        "trusted": {"certname": "web1.example.com"}, "transaction_uuid": "t-1"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("classify-api")) as running:
        yield running


def test_classify_node(api):
    response = api.post("/v1/classified/nodes/web1.example.com", json=WEB1)
    assert response.status_code == 200, response.text
    result = response.json()
    assert set(result) == {"name", "groups", "environment", "classes", "parameters"}
    assert ROOT_ID in result["groups"] and WEB_ID in result["groups"]
    assert result["environment"] == "production"
    assert result["classes"]["nginx"]["worker_connections"] == 1024
    assert result["parameters"]["http_cache"] is True


def test_check_ins_are_recorded(api):
    api.post("/v1/classified/nodes/web2.example.com", json={**WEB1, "transaction_uuid": "t-42"})
    node = api.get("/v1/nodes/web2.example.com").json()
    assert node["name"] == "web2.example.com"
    last = node["check_ins"][-1]
    assert last["transaction_uuid"] == "t-42"
    assert WEB_ID in last["explanation"]
    assert last["explanation"][WEB_ID]["value"] is True
    assert "web2.example.com" in {n["name"] for n in api.get("/v1/nodes").json()}
    assert_error(api.get("/v1/nodes/never.example.com"), 404, "not-found")


def test_classify_request_errors(api):
    assert_error(api.post("/v1/classified/nodes/x", json={"facts": {}}), 400, "schema-violation")
    assert_error(api.post("/v1/classified/nodes/x", json={"fact": []}), 400, "schema-violation")
    assert_error(api.post("/v1/classified/nodes/x", content=b"[",
                          headers={"Content-Type": "application/json"}), 400, "malformed-request")
    assert_error(api.post("/v1/classified/nodes/x", json={"fact": {"x": "y" * 1_000_001}}),
                 413, "request-too-large")


def test_conflict_is_500_and_explained(api):
    rule = ["=", ["fact", "conflict_test"], "yes"]
    for name, value in (("Conflict A", "a"), ("Conflict B", "b")):
        response = api.put(f"/v1/groups/{uuid.uuid4()}",
                           json={"name": name, "parent": ROOT_ID, "rule": rule,
                                 "variables": {"colour": value}})
        assert response.status_code == 201, response.text
    node = {"fact": {"conflict_test": "yes"}, "trusted": {"certname": "c1.example.com"}}
    body = assert_error(api.post("/v1/classified/nodes/c1.example.com", json=node),
                        500, "classification-conflict")
    values = {d["value"] for d in body["details"]["variables"]["colour"]}
    assert values == {"a", "b"}
    explanation = api.post("/v1/classified/nodes/c1.example.com/explanation", json=node)
    assert explanation.status_code == 200
    document = explanation.json()
    assert "conflicts" in document and "final_classification" not in document
    check_in = api.get("/v1/nodes/c1.example.com").json()["check_ins"][-1]
    assert "classification" not in check_in  # stored without one, as the classifier does


def test_explanation_without_conflict(api):
    response = api.post("/v1/classified/nodes/web1.example.com/explanation", json=WEB1)
    assert response.status_code == 200
    document = response.json()
    assert document["node_as_received"]["name"] == "web1.example.com"
    assert WEB_ID in document["match_explanations"]
    assert WEB_ID in document["leaf_groups"]
    assert document["final_classification"]["environment"] == "production"
    assert document["classification"]["classes"]["nginx"]["worker_connections"] == 1024


def test_unknown_path_and_method(api):
    assert_error(api.get("/v2/nothing"), 404, "not-found")
    assert_error(api.patch(f"/v1/groups/{WEB_ID}", json={}), 405, "method-not-allowed")


def test_read_only_mode(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    before = group_files(inventory)
    with running_server(inventory, tmp_path / "s.sqlite3", "--read-only") as base, \
            client(base) as http:
        assert http.get("/v1/groups").status_code == 200
        assert_error(http.post(f"/v1/groups/{WEB_ID}", json={"description": "x"}),
                     403, "read-only")
        assert_error(http.delete(f"/v1/groups/{WEB_ID}"), 403, "read-only")
        assert http.post("/v1/classified/nodes/web1.example.com", json=WEB1).status_code == 200
    assert group_files(inventory) == before
    assert not (inventory / ".reclass-ng.lock").exists()  # not even the lock file is made


def test_without_token_reads_are_open_and_writes_refused(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    with running_server(inventory, tmp_path / "s.sqlite3", token=None) as base, \
            client(base, token=None) as http:
        assert http.get("/v1/groups").status_code == 200
        assert_error(http.post("/v1/groups", json={"name": "n", "parent": ROOT_ID}),
                     403, "permission-denied")


def test_open_reads_and_token_file(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file\n")
    with running_server(inventory, tmp_path / "s.sqlite3", "--open-reads",
                        token_file=token_file) as base:
        with client(base, token=None) as anonymous:
            assert anonymous.get("/v1/groups").status_code == 200
            assert_error(anonymous.post(f"/v1/groups/{WEB_ID}", json={}), 401,
                         "user-unauthenticated")
        with client(base, token="from-a-file", bearer=True) as http:
            assert http.post(f"/v1/groups/{WEB_ID}", json={"description": "ok"}).status_code == 200
