"""`reclass-ng classify` and `reclass-ng groups validate`, run as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from classifier_helpers import group_data, run_cli, write_inventory

from reclass_ng.classifier import ROOT_GROUP_ID

EXAMPLE = Path(__file__).resolve().parents[2] / "inventory-example"
ROOT = {"id": ROOT_GROUP_ID, "name": "All Nodes", "variables": {"dc": "fra1"}}
WEB = group_data("Web", rule=[">=", ["fact", "processors", "count"], "4"],
                 environment="production", classes={"apache": {"workers": 8}})
SMALL = group_data("Small", rule=["<", ["fact", "processors", "count"], "8"],
                   environment="staging", classes={"apache": {"workers": 2}})


@pytest.fixture
def inventory(tmp_path):
    base = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT, "web.yml": WEB,
                                                      "small.yml": SMALL},
                           nodes={"web1": {"parameters": {"owner": "team-${dc}"}}})
    (tmp_path / "big.yaml").write_text("processors: {count: 16}\n")
    (tmp_path / "mid.json").write_text('{"processors": {"count": 4}}')
    return base


def test_classify_prints_the_classification(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts",
                   str(tmp_path / "big.yaml"), "-o", "json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout) == {
        "name": "web1", "groups": [ROOT_GROUP_ID, WEB["id"]], "environment": "production",
        "classes": {"apache": {"workers": 8}}, "parameters": {"dc": "fra1", "owner": "team-fra1"},
    }


def test_classify_yaml_is_the_default(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts", str(tmp_path / "big.yaml"))
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout)["environment"] == "production"


def test_a_conflict_exits_65_with_the_details(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts",
                   str(tmp_path / "mid.json"), "-o", "json")
    assert done.returncode == 65
    error = json.loads(done.stdout)
    assert error["kind"] == "classification-conflict"
    assert set(error["details"]) == {"environment", "classes"}
    workers = {d["value"]: d["defined_by"]["name"]
               for d in error["details"]["classes"]["apache"]["workers"]}
    assert workers == {8: "Web", 2: "Small"}
    assert "conflicting values for the environment" in done.stderr
    assert "Traceback" not in done.stderr


def test_explain_exits_0_even_with_conflicts(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts",
                   str(tmp_path / "mid.json"), "--explain", "-o", "json")
    assert done.returncode == 0, done.stderr
    explanation = json.loads(done.stdout)
    assert set(explanation["leaf_groups"]) == {WEB["id"], SMALL["id"]}
    assert "conflicts" in explanation
    web_match = explanation["match_explanations"][WEB["id"]]
    assert web_match["form"][1]["form"][1] == {"path": ["fact", "processors", "count"], "value": 4}


def test_explain_without_conflicts_has_both_results(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts",
                   str(tmp_path / "big.yaml"), "--explain", "-o", "json")
    explanation = json.loads(done.stdout)
    assert explanation["final_classification"]["variables"] == {"dc": "fra1"}
    assert explanation["classification"]["parameters"]["owner"] == "team-fra1"


def test_groups_only_skips_the_node_file(inventory, tmp_path):
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts",
                   str(tmp_path / "big.yaml"), "--groups-only", "-o", "json")
    assert json.loads(done.stdout)["parameters"] == {"dc": "fra1"}


def test_missing_facts_warns_when_rules_read_facts(inventory):
    done = run_cli("classify", "-b", str(inventory), "web1", "-o", "json")
    assert done.returncode == 0
    assert "no --facts given" in done.stderr
    assert json.loads(done.stdout)["groups"] == [ROOT_GROUP_ID]


def test_trusted_file_and_certname_default(inventory, tmp_path):
    write_inventory(inventory, groups={"t.yml": group_data(
        "Trusted", rule=["and", ["=", ["trusted", "certname"], "web1"],
                         ["=", ["trusted", "extensions", "pp_role"], "web"]])})
    (tmp_path / "trusted.yaml").write_text("certname: web1\nextensions: {pp_role: web}\n")
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts", str(tmp_path / "big.yaml"),
                   "--trusted", str(tmp_path / "trusted.yaml"), "--groups-only", "-o", "json")
    assert group_data("Trusted")["id"] in json.loads(done.stdout)["groups"]


@pytest.mark.parametrize("facts, fragment, code", [
    ("nope.yaml", "does not exist", 74),
    ("list.yaml", "facts must be a mapping", 65),
])
def test_bad_facts_are_clear_errors(inventory, tmp_path, facts, fragment, code):
    (tmp_path / "list.yaml").write_text("- a\n")
    done = run_cli("classify", "-b", str(inventory), "web1", "--facts", str(tmp_path / facts))
    assert done.returncode == code
    assert fragment in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_validate_accepts_a_good_tree(inventory):
    done = run_cli("groups", "validate", "-b", str(inventory))
    assert done.returncode == 0, done.stderr
    assert "3 groups, no problems" in done.stdout


def test_validate_lists_every_problem(inventory):
    write_inventory(inventory, groups={
        "copy.yml": {**WEB, "name": "Web copy"},
        "orphan.yml": group_data("Orphan", parent="44444444-4444-4444-8444-444444444444"),
        "bad-rule.yml": group_data("Bad", rule=[">=", ["fact", "ram"], 512]),
    })
    done = run_cli("groups", "validate", "-b", str(inventory))
    assert done.returncode == 65
    assert "3 problems" in done.stderr
    import re  # each problem names its file and the line of the field (groups/x.yml:N:)

    assert re.search(r"groups/orphan.yml:\d+: missing-parent: The parent group 44444444",
                     done.stderr)
    assert re.search(r"groups/bad-rule.yml:\d+: schema-violation: rule\[2\]", done.stderr)
    assert re.search(r"groups/web.yml:\d+: uniqueness-violation: id", done.stderr)
    assert "Traceback" not in done.stderr


def test_validate_json_lists_error_objects(inventory):
    write_inventory(inventory, groups={"cycle.yml": group_data("Loop", parent=group_data("Loop")["id"])})
    done = run_cli("groups", "validate", "-b", str(inventory), "-o", "json")
    assert done.returncode == 65
    [problem] = json.loads(done.stdout)
    assert problem["file"] == "groups/cycle.yml"
    assert problem["kind"] == "inheritance-cycle"
    assert problem["msg"] == "Detected group inheritance cycle: Loop -> Loop."


def test_validate_without_groups_directory(tmp_path):
    done = run_cli("groups", "validate", "-b", str(tmp_path))
    assert done.returncode == 74
    assert "No groups directory" in done.stderr


def test_the_example_inventory_groups_are_valid_and_classify():
    done = run_cli("groups", "validate", "-b", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    facts = EXAMPLE.parent / "tests" / "classifier" / "example-facts"
    done = run_cli("classify", "-b", str(EXAMPLE), "web1.staging.example.com", "--facts",
                   str(facts / "web1.staging.example.com.yaml"), "-o", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["environment"] == "staging"  # the Staging group trumps
    assert result["classes"]["nginx"]["worker_connections"] == 1024
    assert result["parameters"]["puppet_server"] == "puppet.staging.example.com"


def test_validate_problems_have_lines_in_text_and_json(inventory):
    (inventory / "groups" / "orphan.yml").write_text(
        "# a group whose parent is gone\nid: 55555555-5555-4555-8555-555555555555\n"
        "name: Orphan\nparent: 44444444-4444-4444-8444-444444444444\nrule: ['=', name, x]\n")
    (inventory / "groups" / "bad-rule.yml").write_text(
        "id: 33333333-3333-4333-8333-333333333333\nname: Bad\n"
        f"parent: {ROOT_GROUP_ID}\n\nrule: ['>=', [fact, ram], 512]\n")
    done = run_cli("groups", "validate", "-b", str(inventory))
    assert done.returncode == 65
    assert "   groups/orphan.yml:4: missing-parent: The parent group 4444" in done.stderr
    assert "   groups/bad-rule.yml:5: schema-violation: rule[2]" in done.stderr
    listed = json.loads(run_cli("groups", "validate", "-b", str(inventory), "-o", "json").stdout)
    assert sorted((p["file"], p["line"]) for p in listed) == [
        ("groups/bad-rule.yml", 5), ("groups/orphan.yml", 4)]
    errors = json.loads(run_cli("groups", "validate", "-b", str(inventory), "--errors",
                                "json").stderr)["errors"]
    assert sorted((e["file"], e["line"], e["key_path"], e["kind"], e["group"])
                  for e in errors) == [
        ("groups/bad-rule.yml", 5, "rule", "schema-violation", "Bad"),
        ("groups/orphan.yml", 4, "parent", "missing-parent", "Orphan")]


def test_a_conflict_wins_over_a_missing_node_file(inventory, tmp_path):
    """A node with no file under nodes/ whose groups conflict: the conflict is the error (as
    over HTTP), not `Node ... not found`."""
    done = run_cli("classify", "-b", str(inventory), "no-such-file.example.com", "--facts",
                   str(tmp_path / "mid.json"), "-o", "json")
    assert done.returncode == 65, done.stderr
    error = json.loads(done.stdout)
    assert error["kind"] == "classification-conflict"
    assert set(error["details"]) == {"environment", "classes"}
    assert "not found" not in done.stderr
    assert "Traceback" not in done.stderr


def test_array_contains_rules_through_classify_and_validate(tmp_path):
    """`<:` (the current classifier's "array contains"): true when an element of the array
    equals the value (numbers as text), false for a string fact; the console's `/:` is
    refused with how the API writes it."""
    roles = group_data("Web role", rule=["<:", ["fact", "roles"], "web"],
                       classes={"nginx": {}})
    port = group_data("Port 443", rule=["<:", ["fact", "ports"], "443"], classes={"tls": {}})
    base = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT, "roles.yml": roles,
                                                      "port.yml": port})
    assert run_cli("groups", "validate", "-b", str(base)).returncode == 0
    facts = {"listed.yaml": "roles: [db, web]\nports: [80, 443]\n",
             "string.yaml": "roles: web\nports: '443'\n",
             "other.yaml": "roles: [db, webserver]\nports: [4430]\n"}
    groups = {}
    for name, text in facts.items():
        (tmp_path / name).write_text(text)
        done = run_cli("classify", "-b", str(base), "n1", "--groups-only", "--facts",
                       str(tmp_path / name), "-o", "json")
        assert done.returncode == 0, done.stderr
        groups[name] = set(json.loads(done.stdout)["groups"]) - {ROOT_GROUP_ID}
    assert groups == {"listed.yaml": {roles["id"], port["id"]}, "string.yaml": set(),
                      "other.yaml": set()}
    (base / "groups" / "roles.yml").write_text(yaml.safe_dump(
        {**roles, "rule": ["/:", ["fact", "roles"], "web"]}))
    refused = run_cli("groups", "validate", "-b", str(base))
    assert refused.returncode == 65
    assert """the console's "/:" is ["not", ["<:", field, value]] in the API""" in refused.stderr
