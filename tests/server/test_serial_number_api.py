"""`serial_number`: the classifier's optimistic-concurrency field, derived from the group file."""

from __future__ import annotations

import pytest
from server_helpers import WEB_ID, assert_error, group_files, serve_example_copy


@pytest.fixture
def server(tmp_path):
    with serve_example_copy(tmp_path) as running:
        yield running


def read_web(api) -> dict:
    response = api.get(f"/v1/groups/{WEB_ID}")
    assert response.status_code == 200
    return response.json()


def test_groups_carry_a_serial_number(api):
    group = read_web(api)
    assert isinstance(group["serial_number"], int) and 0 <= group["serial_number"] < 2 ** 53
    listed = {g["id"]: g for g in api.get("/v1/groups").json()}
    assert listed[WEB_ID]["serial_number"] == group["serial_number"]
    inherited = {g["id"]: g for g in api.get("/v1/groups", params={"inherited": "1"}).json()}
    assert inherited[WEB_ID]["serial_number"] == group["serial_number"]


def test_a_write_changes_the_serial_number_and_answers_with_it(api):
    group = read_web(api)
    response = api.post(f"/v1/groups/{WEB_ID}", json={"variables": {"tier": "gold"},
                                                      "serial_number": group["serial_number"]})
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["variables"]["tier"] == "gold"
    assert updated["serial_number"] != group["serial_number"]
    assert read_web(api)["serial_number"] == updated["serial_number"]


def test_stale_serial_number_gets_409_and_changes_nothing(server, api):
    _, inventory = server
    group = read_web(api)
    stale = group["serial_number"]
    assert api.post(f"/v1/groups/{WEB_ID}", json={"description": "first"}).status_code == 200
    files = group_files(inventory)
    body = assert_error(api.post(f"/v1/groups/{WEB_ID}",
                                 json={"description": "second", "serial_number": stale}),
                        409, "stale-write")
    assert body["details"]["serial_number"] == stale
    put_body = {**group, "description": "third"}  # what GET returned, edited: a stale serial
    assert_error(api.put(f"/v1/groups/{WEB_ID}", json=put_body), 409, "stale-write")
    assert group_files(inventory) == files
    # Re-reading gives the current serial, and the write goes through.
    fresh = read_web(api)
    response = api.put(f"/v1/groups/{WEB_ID}", json={**fresh, "description": "third"})
    assert response.status_code == 201, response.text
    # An identical PUT (serial included, as GET returned it) is 200.
    again = read_web(api)
    assert api.put(f"/v1/groups/{WEB_ID}", json=again).status_code == 200


def test_a_hand_edit_makes_the_serial_number_stale(server, api):
    _, inventory = server
    stale = read_web(api)["serial_number"]
    path = inventory / "groups" / "web-servers.yml"
    path.write_text(path.read_text() + "# edited by hand\n")
    assert_error(api.post(f"/v1/groups/{WEB_ID}", json={"description": "x",
                                                        "serial_number": stale}),
                 409, "stale-write")
    assert path.read_text().endswith("# edited by hand\n")


def test_serial_number_must_be_an_integer(api):
    for bad in ("12", 1.5, True, [1]):
        assert_error(api.post(f"/v1/groups/{WEB_ID}", json={"serial_number": bad}), 400,
                     "schema-violation")
