"""The current API's read views of a group (`/v1/group-children`, `/v1/groups/<id>/rules`,
`/v1/groups/<id>/nodes`) and v2 classification, over HTTP against a real server process."""

from __future__ import annotations

import pytest
from server_helpers import (
    DB_ID,
    LARGE_WEB_ID,
    ROOT_ID,
    WEB_ID,
    assert_error,
    serve_example_copy,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("group-views")) as running:
        yield running


def test_group_children_nests_the_subtree_with_child_counts(api):
    response = api.get(f"/v1/group-children/{ROOT_ID}")
    assert response.status_code == 200, response.text
    [root] = response.json()
    assert root["id"] == ROOT_ID
    assert root["immediate_child_count"] == 4
    web = next(c for c in root["children"] if c["id"] == WEB_ID)
    assert web["immediate_child_count"] == 1
    assert [c["id"] for c in web["children"]] == [LARGE_WEB_ID]
    assert web["children"][0] == {**web["children"][0], "children": [],
                                  "immediate_child_count": 0}


def test_group_children_depth_limits_the_levels_not_the_counts(api):
    [alone] = api.get(f"/v1/group-children/{ROOT_ID}", params={"depth": 0}).json()
    assert alone["children"] == [] and alone["immediate_child_count"] == 4
    [one] = api.get(f"/v1/group-children/{ROOT_ID}", params={"depth": 1}).json()
    web = next(c for c in one["children"] if c["id"] == WEB_ID)
    assert web["children"] == [] and web["immediate_child_count"] == 1


def test_group_children_errors(api):
    assert_error(api.get(f"/v1/group-children/{ROOT_ID}", params={"depth": "-1"}), 400,
                 "malformed-request")
    assert_error(api.get(f"/v1/group-children/{ROOT_ID}", params={"depth": "two"}), 400,
                 "malformed-request")
    assert_error(api.get("/v1/group-children/not-a-uuid"), 400, "malformed-uuid")
    assert_error(api.get("/v1/group-children/11111111-2222-4333-8444-555555555555"), 404,
                 "not-found")


def test_rules_shows_own_inherited_and_translated(api):
    response = api.get(f"/v1/groups/{LARGE_WEB_ID}/rules")
    assert response.status_code == 200, response.text
    rules = response.json()
    own = [">=", ["fact", "processors", "count"], "8"]
    web = ["or", ["~", "name", "^web[0-9]+\\."], ["=", ["fact", "role"], "web"]]
    assert rules["rule"] == own
    assert rules["rule_with_inherited"] == ["and", own, web, ["and", ["~", "name", ".*"]]]
    # PuppetDB's nodes format has no structured facts; its inventory format does.
    assert rules["translated"]["nodes_query_format"] is None
    inventory = rules["translated"]["inventory_query_format"]
    assert inventory[1] == [">=", "facts.processors.count", 8]


def test_rules_of_a_group_with_pins_or_them_in(api):
    rules = api.get(f"/v1/groups/{DB_ID}/rules").json()
    assert rules["rule"] == ["or", ["=", ["fact", "role"], "db"],
                             ["=", "name", "db1.staging.example.com"]]
    assert rules["translated"]["nodes_query_format"][0] == "and"
    assert_error(api.get("/v1/groups/11111111-2222-4333-8444-555555555555/rules"), 404,
                 "not-found")


def test_group_nodes_come_from_reported_facts_and_pins(api):
    assert api.put("/nodes/web7.example.com/runtime",
                   json={"fact": {"role": "web", "processors": {"count": 16}}}).status_code == 200
    assert api.put("/nodes/small-web.example.com/runtime",
                   json={"fact": {"role": "web", "processors": {"count": 2}}}).status_code == 200
    assert api.put("/nodes/db9.example.com/runtime",
                   json={"fact": {"role": "db"}}).status_code == 200
    large = api.get(f"/v1/groups/{LARGE_WEB_ID}/nodes")
    assert large.status_code == 200, large.text
    assert [n["name"] for n in large.json()["nodes"]] == ["web7.example.com"]
    web = [n["name"] for n in api.get(f"/v1/groups/{WEB_ID}/nodes").json()["nodes"]]
    assert web == ["small-web.example.com", "web7.example.com"]
    db = {n["name"]: n for n in api.get(f"/v1/groups/{DB_ID}/nodes").json()["nodes"]}
    assert db["db9.example.com"]["pinned"] is False and db["db9.example.com"]["last_seen"]
    assert db["db1.staging.example.com"] == {"name": "db1.staging.example.com", "pinned": True,
                                             "last_seen": None}


def test_v2_classification_names_the_groups(api):
    body = {"fact": {"role": "web", "processors": {"count": 16}},
            "trusted": {"certname": "web1.example.com"}}
    v1 = api.post("/v1/classified/nodes/web1.example.com", json=body).json()
    response = api.post("/v2/classified/nodes/web1.example.com", json=body)
    assert response.status_code == 200, response.text
    v2 = response.json()
    names = [g["name"] for g in v2["groups"]]
    assert names == sorted(names)
    assert {g["id"] for g in v2["groups"]} == set(v1["groups"])
    assert "Large web servers" in names
    assert {k: v for k, v in v2.items() if k != "groups"} == \
        {k: v for k, v in v1.items() if k not in ("groups", "name")}
    assert_error(api.post("/v2/classified/nodes/x", json={"facts": {}}), 400, "schema-violation")


def test_rules_with_numeric_path_components(api):
    rule = ["=", ["fact", "processors", "models", 0], "EPYC"]
    assert api.post("/v1/rules/translate", params={"format": "inventory"},
                    json=rule).json() == ["=", "facts.processors.models[0]", "EPYC"]
    body = {"fact": {"role": "web", "processors": {"models": ["EPYC", "Xeon"]}}}
    explanation = api.post("/v1/classified/nodes/web1.example.com/explanation",
                           json={**body, "trusted": {"certname": "web1.example.com"}})
    assert explanation.status_code == 200
    gid = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
    created = api.put(f"/v1/groups/{gid}", json={"name": "EPYC", "parent": ROOT_ID,
                                                  "rule": rule})
    assert created.status_code == 201, created.text
    try:
        classified = api.post("/v1/classified/nodes/web1.example.com",
                              json={**body, "trusted": {"certname": "web1.example.com"}})
        assert classified.status_code == 200, classified.text
        assert gid in classified.json()["groups"]
        other = {"fact": {"processors": {"models": ["Xeon", "EPYC"]}}}
        assert gid not in api.post("/v1/classified/nodes/web1.example.com",
                                   json=other).json()["groups"]
    finally:
        assert api.delete(f"/v1/groups/{gid}").status_code == 204
    assert_error(api.put(f"/v1/groups/{gid}", json={
        "name": "bad", "parent": ROOT_ID, "rule": ["=", ["fact", "x", -1], "a"]}), 400,
        "schema-violation")


def test_rules_with_array_contains(api):
    """`<:`: a group whose rule asks whether an array fact holds a value, classified,
    explained and translated over HTTP; the console's negations are refused with a hint."""
    rule = ["<:", ["fact", "roles"], "web"]
    gid = "1e2f3a4b-5c6d-4e7f-8091-a2b3c4d5e6f7"
    created = api.put(f"/v1/groups/{gid}", json={"name": "Has web role", "parent": ROOT_ID,
                                                  "rule": rule})
    assert created.status_code == 201, created.text
    try:
        def groups(fact):
            found = api.post("/v1/classified/nodes/web1.example.com", json={
                "fact": {"role": "web", **fact}, "trusted": {"certname": "web1.example.com"}})
            assert found.status_code == 200, found.text
            return found.json()["groups"]

        assert gid in groups({"roles": ["db", "web"]})
        assert gid not in groups({"roles": "web"})  # a string is no array
        assert gid not in groups({"roles": ["webserver"]})  # elements compared whole
        explained = api.post("/v1/classified/nodes/web1.example.com/explanation",
                             json={"fact": {"roles": ["db", "web"]}}).json()
        own = explained["match_explanations"][gid]["form"][1]  # then the root's rule
        assert own == {"value": True, "form": [
            "<:", {"path": ["fact", "roles"], "value": ["db", "web"]}, "web"]}
    finally:
        assert api.delete(f"/v1/groups/{gid}").status_code == 204
    assert api.post("/v1/rules/translate", params={"format": "inventory"},
                    json=rule).json() == [
        "in", "certname", ["extract", ["certname"], ["select_fact_contents", [
            "and", ["~>", "path", ["^roles$", "^[0-9]+$"]], ["=", "value", "web"]]]]]
    assert_error(api.post("/v1/rules/translate", json=rule), 422, "untranslatable-rule")
    refused = api.put(f"/v1/groups/{gid}", json={"name": "bad", "parent": ROOT_ID,
                                                  "rule": ["!=", "name", "a"]})
    assert_error(refused, 400, "schema-violation")
    assert '["not", ["=", field, value]]' in refused.json()["msg"] + str(
        refused.json().get("details"))
