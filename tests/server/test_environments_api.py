"""`PUT /v1/environments/<name>` over HTTP against a real server process: declared in
puppet-classes.yml (comments kept), logged, refused without a catalogue."""

from __future__ import annotations

import pytest
import yaml
from server_helpers import assert_error, client, copy_inventory, running_server

MANUAL = "# Classes declared by hand.\nproduction:\n  ntp: {servers: null}  # required\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("environments")
    inventory = copy_inventory(root / "inventory")
    (inventory / "puppet-classes.yml").write_text(MANUAL)
    with running_server(inventory, root / "state.sqlite3") as base:
        yield base, inventory


def test_put_declares_an_environment_keeping_the_file(api, server):
    _, inventory = server
    created = api.put("/v1/environments/feature_42")
    assert created.status_code == 201, created.text
    assert created.json()["name"] == "feature_42"
    assert api.get("/v1/environments/feature_42").status_code == 200
    assert api.get("/v1/environments/feature_42/classes").json() == []
    text = (inventory / "puppet-classes.yml").read_text()
    assert text.startswith("# Classes declared by hand.") and "# required" in text
    assert yaml.safe_load(text) == {"production": {"ntp": {"servers": None}},
                                    "feature_42": {}}
    again = api.put("/v1/environments/feature_42")
    assert again.status_code == 200
    assert (inventory / "puppet-classes.yml").read_text() == text
    log = api.get("/activity-api/v1/events", params={"service_id": "classifier",
                                                      "object_type": "class_catalogue"}).json()
    assert log["total-rows"] == 1
    assert log["commits"][0]["events"][0]["what"] == "feature_42"


def test_bad_names_and_roles_are_refused(api, server):
    _, inventory = server
    before = (inventory / "puppet-classes.yml").read_bytes()
    for bad in ("with-dash", "sp%20ace", "x" * 256, "caf%C3%A9"):
        assert_error(api.put(f"/v1/environments/{bad}"), 400, "schema-violation")
    with client(server[0], token=None) as anonymous:
        assert_error(anonymous.put("/v1/environments/other"), 401, "user-unauthenticated")
    assert (inventory / "puppet-classes.yml").read_bytes() == before


def test_without_a_catalogue_nothing_is_created(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        assert_error(http.put("/v1/environments/feature_42"), 409, "no-catalogue")
    assert not (inventory / "puppet-classes.yml").exists()
