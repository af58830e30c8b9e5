"""Hostile clients and repositories against a real `reclass-ng serve` (issue 27): input that
once answered 500 or broke a group gets a clear 4xx, and a symlinked group file is written
through to its target, never replaced by a copy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from server_helpers import ROOT_ID, WEB_ID, assert_error, client, group_files, serve_example_copy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with serve_example_copy(tmp_path_factory.mktemp("hostile-clients")) as running:
        yield running


@pytest.mark.parametrize("query", ["limit=²", "offset=²", "limit=٣", "limit=1²", "offset=-0",
                                   "limit=" + "9" * 40])
def test_paging_parameters_are_ascii_integers(api, query):
    body = assert_error(api.get(f"/v1/nodes?{query}"), 400, "malformed-request")
    assert "ASCII digits" in body["msg"]


def test_explorer_page_numbers_are_ascii_integers(tmp_path):
    with serve_example_copy(tmp_path) as (base, _), client(base) as http:
        for path in ("/ui/nodes?page=²", "/ui/classes/role.web?page=²"):
            response = http.get(path)
            assert response.status_code == 400, (path, response.status_code)
            assert "ASCII digits" in response.text
        assert http.get("/ui/nodes?page=2").status_code == 200
        assert http.get("/ui/nodes?page=").status_code == 200


def test_a_regex_re2_refuses_is_a_4xx_with_its_reason(api, server):
    _, inventory = server
    before = group_files(inventory)
    nested = "(" * 1000 + "a"
    for pattern, reason in ((nested, "missing )"), ("(?=web)", "backtracking engine")):
        for method, path in (("POST", f"/v1/groups/{WEB_ID}"), ("POST", "/v1/validate/group")):
            body = {"rule": ["~", "name", pattern]}
            if path.endswith("validate/group"):
                body.update(name="r", parent=ROOT_ID)
            response = api.request(method, path, json=body)
            error = assert_error(response, 400, "schema-violation")
            assert reason in error["msg"], error["msg"]
            assert len(error["msg"]) < 2000  # RE2's echo of the pattern is cut
    assert group_files(inventory) == before


BLANK_KEYS = {
    "class name": {"classes": {"": {}}},
    "blank class name": {"classes": {"  ": {}}},
    "class parameter": {"classes": {"nginx": {"": 1}}},
    "deep class parameter": {"classes": {"nginx": {"vhosts": [{"site": {" \t": 1}}]}}},
    "variable": {"variables": {"": "x"}},
    "deep variable": {"variables": {"ntp": {"servers": {" ": 1}}}},
}


@pytest.mark.parametrize("fields", BLANK_KEYS.values(), ids=BLANK_KEYS.keys())
def test_blank_keys_in_a_group_are_refused(api, server, fields):
    _, inventory = server
    before = group_files(inventory)
    for response in (api.post(f"/v1/groups/{WEB_ID}", json=fields),
                     api.post("/v1/validate/group", json={"name": "v", "parent": ROOT_ID,
                                                          **fields}),
                     api.post("/v1/groups", json={"name": "Blank", "parent": ROOT_ID,
                                                  **fields})):
        body = assert_error(response, 400, "schema-violation")
        assert "empty or only whitespace" in body["msg"], body
    assert group_files(inventory) == before
    assert api.post("/v1/classified/nodes/web1.example.com").status_code == 200


def test_a_group_file_with_a_blank_key_is_reported_by_file(tmp_path):
    def plant(inventory: Path) -> None:
        web = inventory / "groups" / "web-servers.yml"
        data = yaml.safe_load(web.read_text())
        data["variables"][""] = "x"
        web.write_text(yaml.safe_dump(data))

    with serve_example_copy(tmp_path, plant) as (base, _), client(base) as http:
        response = http.post("/v1/classified/nodes/web1.example.com")
        assert response.status_code == 500
        assert "groups/web-servers.yml" in response.text
        assert "empty or only whitespace" in response.text


def _symlinked_web_group(inventory: Path, target: Path, mode: int) -> Path:
    link = inventory / "groups" / "web-servers.yml"
    target.write_bytes(link.read_bytes())
    target.chmod(mode)
    link.unlink()
    link.symlink_to(target)
    return link


def test_a_symlinked_group_file_is_written_through_keeping_its_mode(tmp_path):
    inventory_holder: list[Path] = []

    def plant(inventory: Path) -> None:
        shared = inventory / "shared"
        shared.mkdir()
        inventory_holder.append(_symlinked_web_group(inventory, shared / "web.yml", 0o640))

    with serve_example_copy(tmp_path, plant) as (base, inventory), client(base) as http:
        link = inventory_holder[0]
        response = http.post(f"/v1/groups/{WEB_ID}", json={"description": "through the link"})
        assert response.status_code == 200, response.text
        assert link.is_symlink()
        target = inventory / "shared" / "web.yml"
        assert os.readlink(link) == str(target)
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert yaml.safe_load(target.read_text())["description"] == "through the link"
        assert http.get(f"/v1/groups/{WEB_ID}").json()["description"] == "through the link"


def test_a_group_file_linked_outside_the_inventory_is_not_written(tmp_path):
    outside = tmp_path / "outside.yml"

    def plant(inventory: Path) -> None:
        _symlinked_web_group(inventory, outside, 0o666)

    with serve_example_copy(tmp_path, plant) as (base, inventory), client(base) as http:
        before = outside.read_bytes()
        response = http.post(f"/v1/groups/{WEB_ID}", json={"description": "x"})
        body = assert_error(response, 409, "unwritable-file")
        assert "outside the inventory" in body["msg"]
        assert outside.read_bytes() == before
        link = inventory / "groups" / "web-servers.yml"
        assert link.is_symlink() and os.readlink(link) == str(outside)
