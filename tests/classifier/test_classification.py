"""Classification by groups alone, reproducing the classifier's documented and tested behaviour."""

from __future__ import annotations

import json

import pytest
from classifier_helpers import make_group, root, tree_of
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.classifier import (
    ROOT_GROUP_ID,
    ClassificationConflictError,
    classification_steps,
    classify,
    explain,
)
from reclass_ng.classifier.merge import merge_and_clean

EVERYONE = ["~", "name", ".*"]


def conflict_of(tree, name="node", facts=None):
    with pytest.raises(ClassificationConflictError) as caught:
        classify(tree, name, facts)
    return caught.value


def test_empty_classification_with_only_the_root():
    assert classify(tree_of(), "hellote") == {
        "name": "hellote", "groups": [ROOT_GROUP_ID], "environment": "production",
        "classes": {}, "parameters": {},
    }


def test_inheritance_child_wins_and_null_deletes():
    grandparent = make_group("grandparent", rule=EVERYONE,
                             classes={"thing": {"param": "haha", "why": "whynot"}})
    parent = make_group("parent", grandparent.id, rule=EVERYONE,
                        classes={"thing": {"other": "new", "remove": "me"}})
    child = make_group("child", parent.id, rule=EVERYONE,
                       classes={"thing": {"param": "overriding", "remove": None}})
    result = classify(tree_of(grandparent, parent, child), "n")
    assert result["classes"] == {"thing": {"param": "overriding", "other": "new", "why": "whynot"}}
    assert result["groups"] == [ROOT_GROUP_ID, grandparent.id, parent.id, child.id]


def test_null_deletes_a_whole_class_and_variables_merge_deeply():
    parent = make_group("parent", rule=EVERYONE, classes={"ssl": {"k": "v"}, "apache": {}},
                        variables={"ntp": {"servers": ["a"], "iburst": True}, "gone": 1})
    child = make_group("child", parent.id, rule=EVERYONE, classes={"ssl": None},
                       variables={"ntp": {"servers": ["b"]}, "gone": None})
    result = classify(tree_of(parent, child), "n")
    assert result["classes"] == {"apache": {}}
    assert result["parameters"] == {"ntp": {"servers": ["b"], "iburst": True}}


def test_leaf_environment_wins_over_ancestors():
    parent = make_group("parent", rule=EVERYONE, environment="staging")
    child = make_group("child", parent.id, rule=EVERYONE, environment="dev")
    assert classify(tree_of(parent, child), "n")["environment"] == "dev"


def test_leaves_are_the_unrelated_maxima():
    a = make_group("a", rule=EVERYONE)
    a1 = make_group("a1", a.id, rule=EVERYONE)
    a2 = make_group("a2", a.id, rule=["=", "name", "other"])
    b = make_group("b", rule=EVERYONE)
    steps = classification_steps(tree_of(a, a1, a2, b), "n")
    assert {g.name for g in steps.leaves} == {"a1", "b"}
    assert {g.name for g in steps.matched} == {"All Nodes", "a", "a1", "b"}


def test_groups_without_a_rule_match_no_node():
    ruleless = make_group("no rule", classes={"x": {}})
    assert classify(tree_of(ruleless), "n")["groups"] == [ROOT_GROUP_ID]


def test_an_ancestor_without_a_rule_does_not_block_its_children():
    folder = make_group("folder")
    child = make_group("child", folder.id, rule=EVERYONE, variables={"v": 1})
    result = classify(tree_of(folder, child), "n")
    assert result["groups"] == [ROOT_GROUP_ID, child.id]
    assert result["parameters"] == {"v": 1}


def test_disjoint_classes_from_unrelated_leaves_merge():
    left = make_group("left-child", rule=EVERYONE,
                      classes={"redclass": {"red": "the blood of angry men"}, "left": {}})
    right = make_group("right-child", rule=EVERYONE, classes={"blueclass": {"blue": "azure"}})
    grandchild = make_group("grandchild", right.id, rule=EVERYONE,
                            classes={"redclass": {"black": "the dark of ages past"}})
    result = classify(tree_of(left, right, grandchild), "n")
    assert result["classes"] == {
        "redclass": {"red": "the blood of angry men", "black": "the dark of ages past"},
        "left": {}, "blueclass": {"blue": "azure"},
    }


def test_identical_values_do_not_conflict():
    one = make_group("one", rule=EVERYONE, variables={"snowflake": "identical"},
                     classes={"c": {"p": [1, 2]}})
    two = make_group("two", rule=EVERYONE, variables={"snowflake": "identical"},
                     classes={"c": {"p": [1, 2]}})
    assert classify(tree_of(one, two), "n")["parameters"] == {"snowflake": "identical"}


def test_values_are_compared_with_their_json_types():
    one = make_group("one", rule=EVERYONE, variables={"v": 1})
    two = make_group("two", rule=EVERYONE, variables={"v": True})
    err = conflict_of(tree_of(one, two))
    assert [d["value"] for d in err.details["variables"]["v"]] == [1, True]


def test_conflicts_report_from_and_defined_by():
    left = make_group("left-child", rule=EVERYONE, environment="production",
                      classes={"noisy": {"volume": "11"}}, variables={"snowflake": "left"})
    right = make_group("right-child", rule=EVERYONE, environment="staging",
                       classes={"noisy": {"volume": "3"}}, variables={"snowflake": "right"})
    grandchild = make_group("grandchild", right.id, rule=EVERYONE, environment="staging")
    err = conflict_of(tree_of(left, right, grandchild))
    details = err.details
    assert set(details) == {"environment", "classes", "variables"}
    volume = {d["value"]: d for d in details["classes"]["noisy"]["volume"]}
    assert volume["11"]["from"]["name"] == "left-child"
    assert volume["11"]["defined_by"]["name"] == "left-child"
    # The leaf is the grandchild, but the value was set by its parent.
    assert volume["3"]["from"]["name"] == "grandchild"
    assert volume["3"]["defined_by"]["name"] == "right-child"
    assert volume["3"]["from"] == grandchild.to_data()
    snowflake = {d["value"]: d["defined_by"]["name"] for d in details["variables"]["snowflake"]}
    assert snowflake == {"left": "left-child", "right": "right-child"}
    environment = {d["value"]: d["defined_by"]["name"] for d in details["environment"]}
    assert environment == {"production": "left-child", "staging": "grandchild"}
    assert err.to_error()["kind"] == "classification-conflict"
    assert err.msg.startswith('The node was classified into groups named "left-child" and '
                              '"grandchild" that defined conflicting values for the environment, '
                              'class parameters for "noisy" classes, variables named "snowflake".')


def test_nested_conflicts_are_reported_with_the_whole_values():
    one = make_group("one", rule=EVERYONE, variables={"db": {"host": "a", "port": 5432}})
    two = make_group("two", rule=EVERYONE, variables={"db": {"host": "b"}})
    three = make_group("three", rule=EVERYONE, variables={"db": {"user": "x"}})
    err = conflict_of(tree_of(one, two, three))
    assert list(err.details) == ["variables"]
    assert [d["value"] for d in err.details["variables"]["db"]] == [
        {"host": "a", "port": 5432}, {"host": "b"}]


def test_ancestors_never_conflict_with_descendants():
    parent = make_group("parent", rule=EVERYONE, environment="staging", variables={"v": "p"})
    child = make_group("child", parent.id, rule=EVERYONE, environment="dev", variables={"v": "c"})
    result = classify(tree_of(parent, child), "n")
    assert (result["environment"], result["parameters"]) == ("dev", {"v": "c"})


def test_environment_conflict_without_trumps_stays():
    a = make_group("a", rule=EVERYONE, environment="production")
    b = make_group("b", rule=EVERYONE, environment="staging")
    assert list(conflict_of(tree_of(a, b)).details) == ["environment"]


def test_one_trumping_environment_wins():
    a = make_group("a", rule=EVERYONE, environment="production", classes={"x": {"p": 1}})
    b = make_group("b", rule=EVERYONE, environment="bugfix", environment_trumps=True)
    result = classify(tree_of(a, b), "n")
    assert result["environment"] == "bugfix"
    assert result["classes"] == {"x": {"p": 1}}


def test_one_trump_does_not_settle_other_conflicts():
    a = make_group("a", rule=EVERYONE, environment="production", variables={"v": 1})
    b = make_group("b", rule=EVERYONE, environment="bugfix", environment_trumps=True,
                   variables={"v": 2})
    assert list(conflict_of(tree_of(a, b)).details) == ["variables"]


def test_two_trumping_environments_conflict_on_those_environments():
    a = make_group("a", rule=EVERYONE, environment="production")
    b = make_group("b", rule=EVERYONE, environment="bugfix-1", environment_trumps=True)
    c = make_group("c", rule=EVERYONE, environment="bugfix-2", environment_trumps=True)
    details = conflict_of(tree_of(a, b, c)).details
    assert sorted(d["value"] for d in details["environment"]) == ["bugfix-1", "bugfix-2"]


def test_several_trumps_with_the_same_environment_are_fine():
    groups = [
        make_group("t1", rule=EVERYONE, environment="bugfix-4385", environment_trumps=True),
        make_group("t2", rule=EVERYONE, environment="bugfix-4385", environment_trumps=True),
        make_group("p", rule=EVERYONE, environment="production"),
        make_group("s", rule=EVERYONE, environment="staging"),
    ]
    assert classify(tree_of(*groups), "n")["environment"] == "bugfix-4385"


def test_rules_inherit():
    drones = make_group("drones", rule=["=", ["fact", "assimilated"], "true"],
                        classes={"cybernetics": {}})
    klingon_drones = make_group("klingon drones", drones.id,
                                rule=["=", ["fact", "species"], "klingon"])
    tree = tree_of(drones, klingon_drones)
    unassimilated = classify(tree, "worf", {"species": "klingon", "assimilated": False})
    assert unassimilated["groups"] == [ROOT_GROUP_ID]
    assimilated = classify(tree, "worf", {"species": "klingon", "assimilated": True})
    assert assimilated["groups"] == [ROOT_GROUP_ID, drones.id, klingon_drones.id]


def test_a_pinned_node_still_needs_the_ancestors_rules():
    linux = make_group("linux", rule=["=", ["fact", "kernel"], "Linux"])
    pinned = make_group("special", linux.id, rule=["=", ["fact", "role"], "never"],
                        pinned=["win1", "lin1"], variables={"special": True})
    tree = tree_of(linux, pinned)
    assert classify(tree, "win1", {"kernel": "windows"})["groups"] == [ROOT_GROUP_ID]
    result = classify(tree, "lin1", {"kernel": "Linux"})
    assert result["groups"] == [ROOT_GROUP_ID, linux.id, pinned.id]
    assert result["parameters"] == {"special": True}


def test_facts_and_trusted_facts_drive_rules():
    web = make_group("web", rule=["and", ["~", ["trusted", "certname"], "www"],
                                  [">=", ["fact", "total_ram"], "512"]])
    tree = tree_of(web)
    assert classify(tree, "n", {"total_ram": "1024"}, {"certname": "www1"})["groups"][-1] == web.id
    assert classify(tree, "n", {"total_ram": "256"}, {"certname": "www1"})["groups"] == [
        ROOT_GROUP_ID]


def test_reclass_classes_of_leaf_chains_root_side_first():
    parent = make_group("parent", rule=EVERYONE, reclass_classes=["common", "profile.base"])
    child = make_group("child", parent.id, rule=EVERYONE, reclass_classes=["role.web", "common"])
    other = make_group("other", rule=EVERYONE, reclass_classes=["site.munich"])
    tree = tree_of(root(reclass_classes=["base"]), parent, child, other)
    steps = classification_steps(tree, "n")
    # Leaves in tree order (siblings by name): "other" comes before "parent"'s child.
    assert steps.reclass_classes == ("base", "site.munich", "common", "profile.base", "role.web")


def test_explanation_shape_with_a_final_classification():
    web = make_group("web", rule=[">=", ["fact", "spunk"], "5"], classes={"apache": {"p": 1}})
    explanation = explain(tree_of(web), "n", {"spunk": "10"})
    assert list(explanation) == ["node_as_received", "match_explanations", "leaf_groups",
                                 "inherited_classifications", "final_classification"]
    assert explanation["node_as_received"] == {"name": "n", "fact": {"spunk": "10"},
                                               "trusted": {}}
    assert explanation["match_explanations"][web.id] == {
        "value": True,
        "form": ["and",
                 {"value": True, "form": [">=", {"path": ["fact", "spunk"], "value": "10"}, "5"]},
                 {"value": True, "form": ["and", {"value": True, "form": [
                     "~", {"path": "name", "value": "n"}, ".*"]}]}],
    }
    assert explanation["leaf_groups"] == {web.id: web.to_data()}
    assert explanation["inherited_classifications"] == {
        web.id: {"environment": "production", "variables": {}, "classes": {"apache": {"p": 1}}}}
    assert explanation["final_classification"] == {
        "environment": "production", "classes": {"apache": {"p": 1}}, "variables": {}}


def test_explanation_of_a_conflict_does_not_raise():
    a = make_group("a", rule=EVERYONE, environment="production")
    b = make_group("b", rule=EVERYONE, environment="staging")
    explanation = explain(tree_of(a, b), "n")
    assert "final_classification" not in explanation
    assert {d["from"]["name"] for d in explanation["conflicts"]["environment"]} == {"a", "b"}
    assert set(explanation["leaf_groups"]) == {a.id, b.id}


_values = st.none() | st.integers(-3, 3) | st.sampled_from(["a", "b"]) | st.lists(
    st.integers(0, 2), max_size=2)
_variables = st.dictionaries(st.sampled_from(["x", "y", "z"]),
                             _values | st.dictionaries(st.sampled_from(["p", "q"]), _values,
                                                       max_size=2),
                             max_size=3)


@settings(deadline=None)
@given(st.lists(_variables, min_size=1, max_size=4))
def test_a_single_line_of_descent_never_conflicts(chain_variables):
    groups, parent = [], ROOT_GROUP_ID
    for index, variables in enumerate(chain_variables):
        group = make_group(f"g{index}", parent, rule=EVERYONE, variables=variables)
        groups.append(group)
        parent = group.id
    result = classify(tree_of(*groups), "n")
    assert result["parameters"] == merge_and_clean(*chain_variables)
    assert json.dumps(result["parameters"]).count("null") == 0


@settings(deadline=None)
@given(_variables, st.integers(2, 4))
def test_unrelated_groups_with_identical_values_never_conflict(variables, copies):
    groups = [make_group(f"copy{i}", rule=EVERYONE, variables=variables) for i in range(copies)]
    assert classify(tree_of(*groups), "n")["parameters"] == merge_and_clean(variables)
