"""Reading and validating groups: fields, the tree, and every problem reported with its kind."""

from __future__ import annotations

from classifier_helpers import group_data, make_group, root, write_inventory, write_yaml

from reclass_ng.classifier import (
    ROOT_GROUP_ID,
    GroupTree,
    GroupValidationError,
    group_from_data,
    load_groups,
    read_group_files,
    validate_group_data,
)
from reclass_ng.classifier.rule_evaluator import matches, node_map

ROOT = {"id": ROOT_GROUP_ID, "name": "All Nodes"}


def kinds(problems):
    return [p.kind for p in problems]


def test_defaults_follow_the_classifier():
    group = make_group("Web", rule=["=", "name", "w"])
    assert group.environment == "production"
    assert group.environment_trumps is False
    assert group.classes == {} and group.variables == {}
    assert group.to_data() == {
        "id": group.id, "name": "Web", "environment": "production", "environment_trumps": False,
        "parent": ROOT_GROUP_ID, "rule": ["=", "name", "w"], "classes": {}, "variables": {},
    }


def test_a_null_class_is_kept_to_delete_an_inherited_one():
    group = make_group("Web", classes={"apache": None, "ntp": {"servers": ["a"]}})
    assert group.classes == {"apache": None, "ntp": {"servers": ["a"]}}


def test_root_rule_is_fixed_and_root_is_its_own_parent():
    group = root()
    assert group.parent == ROOT_GROUP_ID
    assert group.rule_data == ["and", ["~", "name", ".*"]]
    _, problems = group_from_data({**ROOT, "rule": ["=", "name", "x"]})
    assert kinds(problems) == ["root-rule-edit"]
    _, problems = group_from_data({**ROOT, "parent": group_data("Other")["id"]})
    assert kinds(problems) == ["schema-violation"]


def test_field_problems_are_all_collected():
    _, problems = group_from_data({
        "id": "not-a-uuid", "name": "", "parent": "also-not", "rule": ["=", "name", 5],
        "environment_trumps": "yes", "classes": {"apache": "x"}, "variables": [], "colour": 1,
    }, "groups/bad.yml")
    assert sorted(kinds(problems)) == sorted([
        "schema-violation",  # unknown field
        "malformed-uuid",  # id
        "schema-violation",  # name
        "malformed-uuid",  # parent
        "schema-violation",  # environment_trumps
        "schema-violation",  # rule
        "schema-violation",  # classes
        "schema-violation",  # variables
    ])
    assert all(p.file == "groups/bad.yml" for p in problems)
    rule_problem = next(p for p in problems if "rule[2]" in p.message)
    assert "The rule is malformed" in rule_problem.message


def test_a_group_without_id_gets_a_suggestion():
    _, problems = group_from_data({"name": "x", "parent": ROOT_GROUP_ID})
    assert kinds(problems) == ["schema-violation"]
    assert "a fresh one you can use" in problems[0].message


def test_the_classes_parameter_name_is_reserved():
    _, problems = group_from_data(group_data("x", variables={"_classes_": {}}))
    assert kinds(problems) == ["schema-violation"]


def test_pinned_nodes_are_ored_into_the_rule():
    group = make_group("Pins", rule=["=", ["fact", "role"], "web"], pinned=["a", "b"])
    condition = group.own_condition()
    assert condition.to_data() == ["or", ["=", ["fact", "role"], "web"],
                                   ["=", "name", "a"], ["=", "name", "b"]]
    assert matches(condition, node_map("b", {}, {}))
    only_pins = make_group("Only pins", pinned=["a"])
    assert only_pins.own_condition().to_data() == ["or", ["=", "name", "a"]]


def test_tree_problems_have_the_classifier_kinds():
    a = group_data("A")
    b = group_data("B", parent=group_data("A")["id"])
    orphan = group_data("Orphan", parent="11111111-1111-4111-8111-111111111111")
    orphan_child = group_data("Orphan child", parent=orphan["id"])
    yancy = group_data("yancy", parent=group_data("philip")["id"])
    philip = group_data("philip", parent=yancy["id"])
    below_cycle = group_data("below", parent=yancy["id"])
    self_parent = group_data("narcissus", parent=group_data("narcissus")["id"])
    same_name = group_data("A", id="22222222-2222-4222-8222-222222222222")
    same_id = group_data("Copy", id=a["id"])
    _, problems = validate_group_data(
        [ROOT, a, b, orphan, orphan_child, yancy, philip, below_cycle, self_parent, same_name,
         same_id])
    found = {(p.kind, p.group_name) for p in problems}
    assert found == {
        ("uniqueness-violation", "A"),
        ("uniqueness-violation", "Copy"),
        ("missing-parent", "Orphan"),
        ("unreachable-groups", "Orphan child"),
        ("inheritance-cycle", "yancy"),
        ("unreachable-groups", "below"),
        ("inheritance-cycle", "narcissus"),
    }
    cycle = next(p for p in problems if p.group_name == "yancy")
    assert cycle.message == "Detected group inheritance cycle: yancy -> philip -> yancy."
    assert [g["name"] for g in cycle.details] == ["yancy", "philip"]
    missing = next(p for p in problems if p.kind == "missing-parent")
    assert missing.message == ("The parent group 11111111-1111-4111-8111-111111111111 does not "
                               "exist.")
    unique = next(p for p in problems if p.group_name == "A")
    assert unique.details == {"conflict": {"name": "A", "environment_name": "production"},
                              "constraintName": "groups_name_environment_name_key"}
    assert unique.to_error()["kind"] == "uniqueness-violation"


def test_same_name_in_another_environment_is_fine():
    _, problems = validate_group_data([ROOT, group_data("A"),
                                       group_data("A", id=group_data("A2")["id"],
                                                  environment="staging")])
    assert problems == []


def test_missing_root_is_reported():
    _, problems = validate_group_data([group_data("A")])
    assert "missing-root" in kinds(problems)


def test_tree_walks_parents_first():
    a = make_group("A", rule=["=", "name", "a"])
    b = make_group("B", a.id)
    tree = GroupTree.build([root(), b, a])
    assert [g.name for g in tree.walk()] == ["All Nodes", "A", "B"]
    assert [g.name for g in tree.chain(b)] == ["B", "A", "All Nodes"]


def test_loading_files_reports_every_problem_with_its_file(tmp_path):
    inventory = write_inventory(tmp_path, groups={
        "all.yml": ROOT,
        "web.yml": group_data("Web", rule=["~", "name", "web"]),
        "copy-of-web.yml": group_data("Web"),
        "broken/rule.yml": group_data("Broken", rule=["=", "name"]),
        "lost.yml": group_data("Lost", parent="33333333-3333-4333-8333-333333333333"),
    })
    (inventory / "groups" / "bad-yaml.yml").write_text("name: [unclosed\n")
    (inventory / "groups" / ".hidden.yml").write_text("not: a group\n")
    (inventory / "groups" / "notes.txt").write_text("ignored\n")
    _, problems = read_group_files(inventory)
    # Files are read in sorted order, so the later copy (web.yml) is the one reported, twice:
    # its id and its (name, environment) are both taken.
    found = sorted((p.file.split(":")[0], p.kind) for p in problems)
    assert found == [
        ("groups/bad-yaml.yml", "schema-violation"),
        ("groups/broken/rule.yml", "schema-violation"),
        ("groups/lost.yml", "missing-parent"),
        ("groups/web.yml", "uniqueness-violation"),
        ("groups/web.yml", "uniqueness-violation"),
    ]
    yaml_problem = next(p for p in problems if "bad-yaml" in p.file)
    assert yaml_problem.file == "groups/bad-yaml.yml:2:1"
    try:
        load_groups(inventory)
    except GroupValidationError as err:
        message = err.message
    else:  # pragma: no cover - the inventory above is invalid
        raise AssertionError("load_groups accepted an invalid tree")
    assert "5 problems" in message
    assert "groups/lost.yml:3: missing-parent: The parent group" in message


def test_loading_a_valid_tree(tmp_path):
    write_yaml(tmp_path / "groups" / "root.yaml", ROOT)
    write_yaml(tmp_path / "groups" / "web.yml", group_data("Web", rule=["~", "name", "web"]))
    tree = load_groups(tmp_path)
    assert sorted(g.name for g in tree.groups) == ["All Nodes", "Web"]
    assert tree.get(group_data("Web")["id"]).file == "groups/web.yml"
