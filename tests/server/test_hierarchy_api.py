"""`POST /v1/import-hierarchy` and `POST /v1/rules/translate` over HTTP against a real server."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
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


@pytest.fixture
def served(tmp_path: Path):
    with serve_example_copy(tmp_path) as (base, inventory), client(base) as http:
        yield http, inventory


def exported(http) -> list[dict]:
    response = http.get("/v1/groups")
    assert response.status_code == 200
    return response.json()


def test_importing_the_exported_groups_changes_nothing(served) -> None:
    http, inventory = served
    (inventory / "groups" / "README").write_text("not a group file\n")
    before = group_files(inventory)
    response = http.post("/v1/import-hierarchy", json=exported(http))
    assert response.status_code == 204, response.text
    assert response.content == b""
    assert group_files(inventory) == before  # same bytes: comments and key order kept
    assert (inventory / "groups" / "README").read_text() == "not a group file\n"


def test_import_replaces_every_group(served) -> None:
    http, inventory = served
    groups = [g for g in exported(http) if g["id"] not in (LARGE_WEB_ID, DB_ID)]
    web = next(g for g in groups if g["id"] == WEB_ID)
    web["variables"] = {"http_cache": False}
    groups.append({"id": "6f9619ff-8b86-4d01-b42d-00cf4fc964ff", "name": "Mail servers",
                   "parent": ROOT_ID, "environment": "production", "environment_trumps": False,
                   "rule": ["=", ["fact", "role"], "mail"], "classes": {"postfix": {}},
                   "variables": {}})
    assert http.post("/v1/import-hierarchy", json=groups).status_code == 204
    names = {g["name"] for g in exported(http)}
    assert names == {"All Nodes", "Production", "Staging", "Web servers", "Mail servers"}
    files = sorted(p.name for p in (inventory / "groups").iterdir())
    assert "mail-servers.yml" in files and "large-web-servers.yml" not in files
    web_file = (inventory / "groups" / "web-servers.yml").read_text()
    assert "http_cache: false" in web_file
    assert "# A classification group" in web_file  # the existing file was edited in place
    assert not [p for p in inventory.iterdir() if p.name.startswith(".groups")]  # no leftovers


def test_import_refuses_the_whole_set_on_any_problem(served) -> None:
    http, inventory = served
    before = group_files(inventory)
    groups = exported(http)
    # 400: groups lacking fields; details list only those.
    broken = copy.deepcopy(groups)
    del broken[1]["classes"]
    body = assert_error(http.post("/v1/import-hierarchy", json=broken), 400, "schema-violation")
    assert body["details"]["submitted"] == [broken[1]]
    assert_error(http.post("/v1/import-hierarchy", json={"not": "a list"}), 400,
                 "schema-violation")
    assert_error(http.post("/v1/import-hierarchy", content=b"[{"), 400, "malformed-request")
    # 422 inheritance-cycle: Web servers under Large web servers, its own child.
    cycle = copy.deepcopy(groups)
    next(g for g in cycle if g["id"] == WEB_ID)["parent"] = LARGE_WEB_ID
    body = assert_error(http.post("/v1/import-hierarchy", json=cycle), 422, "inheritance-cycle")
    assert "Detected group inheritance cycle" in body["msg"]
    # 422 missing-parent: Large web servers without Web servers.
    orphan = [g for g in copy.deepcopy(groups) if g["id"] != WEB_ID]
    assert_error(http.post("/v1/import-hierarchy", json=orphan), 422, "missing-parent")
    # No root at all.
    rootless = [g for g in copy.deepcopy(groups) if g["id"] != ROOT_ID]
    assert http.post("/v1/import-hierarchy", json=rootless).status_code == 422
    assert group_files(inventory) == before


def test_import_reports_unreachable_groups(served) -> None:
    http, _ = served
    groups = exported(http)
    loop_a, loop_b = "aaaaaaaa-0000-4000-8000-00000000000a", "bbbbbbbb-0000-4000-8000-00000000000b"
    below = "cccccccc-0000-4000-8000-00000000000c"
    common = {"environment": "production", "environment_trumps": False, "classes": {},
              "variables": {}}
    groups += [{"id": loop_a, "name": "A", "parent": loop_b, **common},
               {"id": loop_b, "name": "B", "parent": loop_a, **common},
               {"id": below, "name": "Below", "parent": loop_a, **common}]
    body = assert_error(http.post("/v1/import-hierarchy", json=groups), 422, "inheritance-cycle")
    kinds = [p["kind"] for p in body["details"]["problems"]]
    assert "unreachable-groups" in kinds


@pytest.mark.parametrize(("rule", "query"), [
    ([">=", ["fact", "holodecks"], "5"], ["and", ["=", "name", "holodecks"], [">=", "value", "5"]]),
    (["=", "name", "web1.example.com"], ["=", "name", "web1.example.com"]),
    (["and", ["~", "name", "^web"], ["not", ["=", ["fact", "role"], "db"]]],
     ["and", ["~", "name", "^web"],
      ["not", ["and", ["=", "name", "role"], ["=", "value", "db"]]]]),
])
def test_translate_rules_to_puppetdb(served, rule, query) -> None:
    http, _ = served
    response = http.post("/v1/rules/translate", json=rule)
    assert response.status_code == 200, response.text
    assert response.json() == query


def test_translate_errors_and_inventory_format(served) -> None:
    http, _ = served
    for rule in (["=", ["fact", "os", "family"], "Debian"], ["=", ["trusted", "certname"], "x"]):
        body = assert_error(http.post("/v1/rules/translate", json=rule), 422,
                            "untranslatable-rule")
        assert body["details"] == rule
    assert_error(http.post("/v1/rules/translate", content=b"[\"=\","), 400, "malformed-request")
    body = assert_error(http.post("/v1/rules/translate", json=["==", "name", "x"]), 400,
                        "schema-violation")
    assert "The rule is malformed" in body["msg"]
    inventory = http.post("/v1/rules/translate", params={"format": "inventory"}, json=[
        "and", ["=", ["fact", "os", "family"], "Debian"], [">=", ["fact", "memory"], "512"],
        ["~", ["trusted", "certname"], "^web"], ["=", "name", "x"]])
    assert inventory.status_code == 200, inventory.text
    assert inventory.json() == ["and", ["=", "facts.os.family", "Debian"],
                                [">=", "facts.memory", 512], ["~", "trusted.certname", "^web"],
                                ["=", "certname", "x"]]
    assert_error(http.post("/v1/rules/translate", params={"format": "pql"},
                           json=["=", "name", "x"]), 400, "schema-violation")


def test_import_refuses_values_that_cannot_be_written(served) -> None:
    """A lone surrogate cannot be written as UTF-8 YAML: the whole import is refused, as a
    single group write would be, and no file changes."""
    http, inventory = served
    before = group_files(inventory)
    groups = exported(http)
    web = next(g for g in groups if g["id"] == WEB_ID)
    web["variables"] = {"motd": "\ud800"}
    response = http.post("/v1/import-hierarchy",
                         content=json.dumps(groups).encode(),
                         headers={"Content-Type": "application/json"})
    assert_error(response, 422, "unrepresentable-value")
    assert group_files(inventory) == before
