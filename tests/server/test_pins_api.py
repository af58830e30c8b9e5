"""Pin and unpin endpoints: a pin is a name condition OR'd into the group's rule in its file."""

from __future__ import annotations

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

WEB_RULE = ["or", ["~", "name", "^web[0-9]+\\."], ["=", ["fact", "role"], "web"]]
LB = "lb1.example.com"
LB_FACTS = {"fact": {"role": "lb"}, "trusted": {"certname": LB}}


@pytest.fixture
def server(tmp_path):
    """A fresh server per test: every test here writes to the groups."""
    with serve_example_copy(tmp_path) as running:
        yield running


def web_file(inventory) -> str:
    return (inventory / "groups" / "web-servers.yml").read_text()


def classified_groups(api, node: str = LB, body: dict = LB_FACTS) -> list[str]:
    response = api.post(f"/v1/classified/nodes/{node}", json=body)
    assert response.status_code == 200, response.text
    return response.json()["groups"]


def test_openapi_document_lists_the_pin_endpoints(api):
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/v1/groups/{group_id}/pin", "/v1/groups/{group_id}/unpin",
                 "/v1/commands/unpin-from-all"):
        assert "post" in paths[path]
    parameters = paths["/v1/groups/{group_id}/pin"]["post"]["parameters"]
    assert "nodes" in {p["name"] for p in parameters}


def test_pin_with_a_body_changes_classification_and_the_file(server, api):
    _, inventory = server
    before = web_file(inventory)
    assert WEB_ID not in classified_groups(api)
    response = api.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": [LB]})
    assert response.status_code == 204, response.text
    assert response.content == b""
    # The rule as the classifier would show it, in the API and in the file.
    expected_rule = [*WEB_RULE, ["=", "name", LB]]
    assert api.get(f"/v1/groups/{WEB_ID}").json()["rule"] == expected_rule
    text = web_file(inventory)
    assert yaml.safe_load(text)["rule"] == expected_rule
    assert text.splitlines()[0] == before.splitlines()[0]  # the file's comments are kept
    assert "# Merged with the parameters" in text
    result = api.post(f"/v1/classified/nodes/{LB}", json=LB_FACTS).json()
    assert WEB_ID in result["groups"]
    assert result["classes"]["nginx"]["worker_connections"] == 1024
    # Pinning again changes nothing.
    assert api.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": LB}).status_code == 204
    assert web_file(inventory) == text


def test_unpin_restores_the_rule_and_the_classification(server, api):
    _, inventory = server
    before = web_file(inventory)
    assert api.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": [LB]}).status_code == 204
    assert WEB_ID in classified_groups(api)
    response = api.post(f"/v1/groups/{WEB_ID}/unpin", json={"nodes": [LB]})
    assert response.status_code == 204, response.text
    assert api.get(f"/v1/groups/{WEB_ID}").json()["rule"] == WEB_RULE
    assert yaml.safe_load(web_file(inventory)) == yaml.safe_load(before)
    assert WEB_ID not in classified_groups(api)


def test_pin_with_the_query_form_and_to_a_group_without_an_or_rule(server, api):
    _, inventory = server
    response = api.post(f"/v1/groups/{LARGE_WEB_ID}/pin",
                        params={"nodes": "web1.example.com,web9.example.com"})
    assert response.status_code == 204, response.text
    rule = api.get(f"/v1/groups/{LARGE_WEB_ID}").json()["rule"]
    assert rule == ["or", [">=", ["fact", "processors", "count"], "8"],
                    ["=", "name", "web1.example.com"], ["=", "name", "web9.example.com"]]
    # Two processors, but pinned: Large web servers applies (its parent still matches by name).
    small = {"fact": {"role": "web", "processors": {"count": 2}},
             "trusted": {"certname": "web1.example.com"}}
    result = api.post("/v1/classified/nodes/web1.example.com", json=small).json()
    assert LARGE_WEB_ID in result["groups"]
    assert result["classes"]["nginx"]["worker_connections"] == 4096
    api.post(f"/v1/groups/{LARGE_WEB_ID}/unpin", params={"nodes": "web1.example.com"})
    result = api.post("/v1/classified/nodes/web1.example.com", json=small).json()
    assert LARGE_WEB_ID not in result["groups"]


def test_a_pin_still_needs_the_ancestors_rules(server, api):
    # lb1 pinned to "Large web servers" does not join it: its parent "Web servers" does not match.
    assert api.post(f"/v1/groups/{LARGE_WEB_ID}/pin", json={"nodes": [LB]}).status_code == 204
    assert LARGE_WEB_ID not in classified_groups(api)


def test_unpin_from_all_reports_the_groups_left(server, api):
    _, inventory = server
    node = "db1.staging.example.com"  # pinned to Database servers by `pinned:` in its file
    api.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": [node, LB]})
    response = api.post("/v1/commands/unpin-from-all",
                        json={"nodes": [node, LB, "never-pinned.example.com"]})
    assert response.status_code == 200, response.text
    by_node = {n["name"]: n["groups"] for n in response.json()["nodes"]}
    assert set(by_node) == {node, LB}  # a node pinned nowhere is left out
    assert sorted(g["id"] for g in by_node[node]) == sorted([DB_ID, WEB_ID])
    assert by_node[LB] == [{"id": WEB_ID, "name": "Web servers", "environment": "production"}]
    database = yaml.safe_load((inventory / "groups" / "database-servers.yml").read_text())
    assert "pinned" not in database
    assert api.get(f"/v1/groups/{WEB_ID}").json()["rule"] == WEB_RULE
    staging = {"fact": {"role": "web"}, "trusted": {"certname": node}}
    assert DB_ID not in classified_groups(api, node, staging)


def test_pin_errors_change_nothing(server, api):
    base, inventory = server
    files = group_files(inventory)
    assert_error(api.post("/v1/groups/not-a-uuid/pin", json={"nodes": [LB]}), 400,
                 "malformed-uuid")
    unknown = "11111111-2222-4333-8444-555555555555"
    assert_error(api.post(f"/v1/groups/{unknown}/pin", json={"nodes": [LB]}), 404, "not-found")
    assert_error(api.post(f"/v1/groups/{WEB_ID}/pin"), 400, "schema-violation")
    assert_error(api.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": [1]}), 400,
                 "schema-violation")
    assert_error(api.post(f"/v1/groups/{WEB_ID}/unpin", json={"node": [LB]}), 400,
                 "schema-violation")
    assert_error(api.post("/v1/commands/unpin-from-all", json=[LB]), 400, "schema-violation")
    assert_error(api.post("/v1/commands/unpin-from-all", content=b"{",
                          headers={"Content-Type": "application/json"}), 400, "malformed-request")
    with client(base, token=None) as anonymous:
        assert_error(anonymous.post(f"/v1/groups/{WEB_ID}/pin", json={"nodes": [LB]}), 401,
                     "user-unauthenticated")
    # Pinning to the root changes nothing: it matches every node already.
    assert api.post(f"/v1/groups/{ROOT_ID}/pin", json={"nodes": [LB]}).status_code == 204
    assert group_files(inventory) == files
