"""`config_data` of groups (current PE): stored, merged by deltas, inherited, classified,
explained and in conflicts, over HTTP against a real server process."""

from __future__ import annotations

import pytest
import yaml
from server_helpers import ROOT_ID, WEB_ID, assert_error, group_files, serve_example_copy

CHILD_ID = "6a0f4c39-1e51-4a63-9f2e-4f3f7c7b1a01"
OTHER_ID = "6a0f4c39-1e51-4a63-9f2e-4f3f7c7b1a02"
WEB_FACTS = {"fact": {"role": "web", "processors": {"count": 2}},
             "trusted": {"certname": "web1.example.com"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("config-data")) as running:
        yield running


def test_config_data_is_stored_merged_and_inherited(api, server):
    _, inventory = server
    parent = api.post(f"/v1/groups/{WEB_ID}",
                      json={"config_data": {"nginx": {"gzip": True, "tls": {"min": "1.2"}}}})
    assert parent.status_code == 200, parent.text
    assert parent.json()["config_data"] == {"nginx": {"gzip": True, "tls": {"min": "1.2"}}}
    stored = yaml.safe_load((inventory / "groups" / "web-servers.yml").read_text())
    assert stored["config_data"] == {"nginx": {"gzip": True, "tls": {"min": "1.2"}}}
    # A delta merges config_data as it merges classes: null removes a key.
    merged = api.post(f"/v1/groups/{WEB_ID}",
                      json={"config_data": {"nginx": {"gzip": None, "tls": {"max": "1.3"}}}})
    assert merged.json()["config_data"] == {"nginx": {"tls": {"min": "1.2", "max": "1.3"}}}
    child = api.put(f"/v1/groups/{CHILD_ID}", json={
        "name": "Web children", "parent": WEB_ID, "rule": ["~", "name", "^web1\\."],
        "config_data": {"nginx": {"tls": {"min": "1.3"}}, "ntp": {"servers": ["a"]}}})
    assert child.status_code == 201, child.text
    own = api.get(f"/v1/groups/{CHILD_ID}").json()
    assert own["config_data"] == {"nginx": {"tls": {"min": "1.3"}}, "ntp": {"servers": ["a"]}}
    inherited = api.get(f"/v1/groups/{CHILD_ID}", params={"inherited": "true"}).json()
    assert inherited["config_data"] == {"nginx": {"tls": {"min": "1.3", "max": "1.3"}},
                                        "ntp": {"servers": ["a"]}}


def test_classification_and_explanation_carry_config_data(api):
    response = api.post("/v1/classified/nodes/web1.example.com", json=WEB_FACTS)
    assert response.status_code == 200, response.text
    assert response.json()["config_data"] == {"nginx": {"tls": {"min": "1.3", "max": "1.3"}},
                                              "ntp": {"servers": ["a"]}}
    v2 = api.post("/v2/classified/nodes/web1.example.com", json=WEB_FACTS).json()
    assert v2["config_data"] == response.json()["config_data"]
    explanation = api.post("/v1/classified/nodes/web1.example.com/explanation",
                           json=WEB_FACTS).json()
    assert explanation["final_classification"]["config_data"]["ntp"] == {"servers": ["a"]}
    assert explanation["inherited_classifications"][CHILD_ID]["config_data"]["ntp"] == \
        {"servers": ["a"]}


def test_unrelated_groups_conflict_on_config_data(api):
    other = api.put(f"/v1/groups/{OTHER_ID}", json={
        "name": "Other ntp", "parent": ROOT_ID, "rule": ["~", "name", "^web1\\."],
        "config_data": {"ntp": {"servers": ["b"]}}})
    assert other.status_code == 201, other.text
    try:
        conflict = assert_error(api.post("/v1/classified/nodes/web1.example.com",
                                         json=WEB_FACTS), 500, "classification-conflict")
        values = {d["value"][0] for d in conflict["details"]["config_data"]["ntp"]["servers"]}
        assert values == {"a", "b"}
        assert "configuration data for \"ntp\" classes" in conflict["msg"]
    finally:
        assert api.delete(f"/v1/groups/{OTHER_ID}").status_code == 204


def test_malformed_config_data_is_refused_and_writes_nothing(api, server):
    _, inventory = server
    before = group_files(inventory)
    for bad in ({"nginx": "not a mapping"}, ["nginx"], {"": {"x": 1}}):
        refused = assert_error(api.post(f"/v1/groups/{WEB_ID}", json={"config_data": bad}),
                               400, "schema-violation")
        assert "config_data" in refused["msg"] and "unknown field" not in refused["msg"]
        assert_error(api.post("/v1/validate/group", json={
            "name": "x", "parent": ROOT_ID, "config_data": bad}), 400, "schema-violation")
    assert group_files(inventory) == before
