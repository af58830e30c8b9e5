"""Desired state (nodes/ YAML) apart from observed state (facts in SQLite), as in the Chef RFC."""

from __future__ import annotations

import pytest
import yaml
from server_helpers import assert_error, client, serve_example_copy

NODE = "web1.example.com"
NODE_FILE = "nodes/production/web1.example.com.yml"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    def add_comment(inventory):
        path = inventory / NODE_FILE
        path.write_text("# Shop front end, keep in sync with the load balancer.\n" + path.read_text())

    with serve_example_copy(tmp_path_factory.mktemp("nodes-api"), add_comment) as running:
        yield running


def test_configuration_is_the_node_file(api):
    response = api.get(f"/nodes/{NODE}/configuration")
    assert response.status_code == 200
    assert response.json() == {"name": NODE, "environment": "production",
                               "classes": ["role.web", "env.production"]}
    assert response.headers["ETag"]
    assert_error(api.get("/nodes/nobody.example.com/configuration"), 404, "not-found")


def test_put_configuration_keeps_comments_and_leaves_runtime(api, server):
    facts = {"name": NODE, "fact": {"role": "web"}, "trusted": {"certname": NODE}}
    assert api.put(f"/nodes/{NODE}/runtime", json=facts).status_code == 200
    wanted = {"name": NODE, "environment": "production",
              "classes": ["role.web", "env.production"], "parameters": {"site": {"tier": "gold"}}}
    response = api.put(f"/nodes/{NODE}/configuration", json=wanted)
    assert response.status_code == 200, response.text
    text = (server[1] / NODE_FILE).read_text()
    assert text.startswith("# Shop front end")
    assert yaml.safe_load(text)["parameters"] == {"site": {"tier": "gold"}}
    runtime = api.get(f"/nodes/{NODE}/runtime").json()
    assert runtime["fact"] == {"role": "web"}
    both = api.get(f"/nodes/{NODE}").json()
    assert both["configuration"]["parameters"] == {"site": {"tier": "gold"}}
    assert both["runtime"]["fact"] == {"role": "web"}


def test_put_runtime_never_touches_the_inventory(api, server):
    before = (server[1] / NODE_FILE).read_bytes()
    response = api.put(f"/nodes/{NODE}/runtime",
                       json={"fact": {"role": "db", "environment": "evil"}, "trusted": {}})
    assert response.status_code == 200
    assert response.json()["fact"]["role"] == "db"
    assert (server[1] / NODE_FILE).read_bytes() == before


def test_configuration_errors(api, server):
    before = (server[1] / NODE_FILE).read_bytes()
    assert_error(api.put(f"/nodes/{NODE}/configuration", json={"classes": "role.web"}),
                 400, "schema-violation")
    assert_error(api.put(f"/nodes/{NODE}/configuration", json={"facts": {}}),
                 400, "schema-violation")
    assert_error(api.put(f"/nodes/{NODE}/configuration", json={"name": "other"}),
                 400, "conflicting-ids")
    assert_error(api.put("/nodes/nobody.example.com/configuration", json={"classes": []}),
                 404, "not-found")
    assert_error(api.put(f"/nodes/{NODE}/configuration", json={"parameters": {"x": "y" * 1_000_001}}),
                 413, "request-too-large")
    assert_error(api.put(f"/nodes/{NODE}/configuration", json={"classes": []},
                         headers={"If-Match": '"stale"'}), 409, "stale-write")
    assert (server[1] / NODE_FILE).read_bytes() == before


def test_runtime_errors_and_combined_404(api):
    assert_error(api.get("/nodes/nobody.example.com/runtime"), 404, "not-found")
    assert_error(api.get("/nodes/nobody.example.com"), 404, "not-found")
    assert_error(api.put("/nodes/x/runtime", json={"fact": "no"}), 400, "schema-violation")
    assert_error(api.put("/nodes/x/runtime", json={"fact": {"y": "z" * 1_000_001}}),
                 413, "request-too-large")


def test_writes_need_the_token(server):
    with client(server[0], token=None) as anonymous:
        assert_error(anonymous.put(f"/nodes/{NODE}/runtime", json={"fact": {}}),
                     401, "user-unauthenticated")
    with client(server[0], token="wrong") as wrong:
        assert_error(wrong.put(f"/nodes/{NODE}/configuration", json={"classes": []}),
                     403, "permission-denied")
