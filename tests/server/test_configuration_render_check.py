"""PUT /nodes/<name>/configuration refuses (422) a node file with which the node would not
render, and writes nothing; a stale If-Match names the node file, not a group."""

from __future__ import annotations

import pytest
from server_helpers import assert_error, serve_example_copy

NODE = "web1.example.com"
NODE_FILE = "nodes/production/web1.example.com.yml"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("render-check")) as running:
        yield running


def test_a_configuration_that_would_not_render_is_refused(api, server):
    before = (server[1] / NODE_FILE).read_bytes()
    response = api.put(f"/nodes/{NODE}/configuration",
                       json={"classes": ["role.webserver"],
                             "parameters": {"nginx": {"worker_processes": 8}}})
    error = assert_error(response, 422, "node-render-error")
    assert "role.webserver" in error["msg"] and "nothing was written" in error["msg"]
    assert (server[1] / NODE_FILE).read_bytes() == before
    broken_reference = {"environment": "production", "classes": ["role.web", "env.production"],
                        "parameters": {"motd": "${site:nmae}"}}
    error = assert_error(api.put(f"/nodes/{NODE}/configuration", json=broken_reference),
                         422, "node-render-error")
    assert "${site:nmae}" in error["msg"]
    assert (server[1] / NODE_FILE).read_bytes() == before
    assert api.get(f"/nodes/{NODE}/configuration").headers["ETag"]


def test_a_configuration_that_renders_is_written(api, server):
    wanted = {"environment": "production", "classes": ["role.web", "env.production"],
              "parameters": {"nginx": {"worker_processes": 6}}}
    response = api.put(f"/nodes/{NODE}/configuration", json=wanted)
    assert response.status_code == 200, response.text
    assert "worker_processes: 6" in (server[1] / NODE_FILE).read_text()


def test_a_stale_if_match_names_the_node_file(api):
    error = assert_error(api.put(f"/nodes/{NODE}/configuration", json={"classes": []},
                                 headers={"If-Match": '"stale"'}), 409, "stale-write")
    assert error["msg"].startswith("The node file changed since you read it")
