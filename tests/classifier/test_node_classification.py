"""Groups, then the node's own file with reclass semantics, then `${}` references."""

from __future__ import annotations

import pytest
from classifier_helpers import group_data, write_inventory

from reclass_ng.classifier import (
    ROOT_GROUP_ID,
    ClassificationConflictError,
    FactsNotFoundError,
    classify_for_enc,
    classify_node,
    explain_node,
)
from reclass_ng.errors import ReclassError

ROOT = {"id": ROOT_GROUP_ID, "name": "All Nodes", "reclass_classes": ["site"],
        "classes": {"motd": {"message": "Welcome to ${site:name}"}},
        "variables": {"ntp_servers": ["0.pool.ntp.org"], "admin": "ops@${site:domain}"}}
WEB = group_data("Web", rule=["=", ["fact", "role"], "web"],
                 classes={"apache": {"keepalive_timeout": 5, "docroot": "/srv/${site:name}"}},
                 variables={"http_port": 8080}, reclass_classes=["nginx"])
TRUMPING_STAGING = group_data("Staging", rule=["~", "name", "staging"], environment="staging",
                              environment_trumps=True)
CLASSES = {
    "site": {"parameters": {"site": {"name": "shop", "domain": "example.com"}}},
    "nginx": {"applications": ["nginx"],
              "parameters": {"nginx": {"port": "${http_port}", "workers": 2}}},
}


@pytest.fixture
def inventory(tmp_path):
    return write_inventory(
        tmp_path,
        groups={"all.yml": ROOT, "web.yml": WEB, "staging.yml": TRUMPING_STAGING},
        classes=CLASSES,
        nodes={
            "web1": {"parameters": {
                "_classes_": {"apache": {"keepalive_timeout": 10}},
                "ntp_servers": ["ntp.local"],
                "site": {"name": "web1-shop"}}},
            "web1.staging": {"environment": "production"},
            "db1": {"environment": "dev", "parameters": {"admin": "dba@${site:domain}"}},
        },
    )


def test_node_file_applies_last_and_references_resolve(inventory):
    result = classify_node(inventory, "web1", {"role": "web"})
    assert result["groups"] == [ROOT_GROUP_ID, WEB["id"]]
    assert result["environment"] == "production"
    # The node overrides one class parameter; the group's others stay; references see the
    # node's site name because references resolve after all merging.
    assert result["classes"]["apache"] == {"keepalive_timeout": 10, "docroot": "/srv/web1-shop"}
    assert result["classes"]["motd"] == {"message": "Welcome to web1-shop"}
    # Applications become classes with their same-named parameters (the ENC's subtree rule).
    assert result["classes"]["nginx"] == {"port": 8080, "workers": 2}
    # reclass merges lists: the node's entry is appended to the group's.
    assert result["parameters"]["ntp_servers"] == ["0.pool.ntp.org", "ntp.local"]
    assert result["parameters"]["admin"] == "ops@example.com"
    assert "_classes_" not in result["parameters"]
    assert "_reclass_" not in result["parameters"]


def test_node_without_a_file_is_classified_by_its_groups(inventory):
    result = classify_node(inventory, "web7", {"role": "web"})
    assert result["classes"]["apache"] == {"keepalive_timeout": 5, "docroot": "/srv/shop"}
    assert result["parameters"]["site"] == {"name": "shop", "domain": "example.com"}
    assert set(result["classes"]) == {"apache", "motd", "nginx"}


def test_reclass_classes_are_only_expanded_for_matching_nodes(inventory):
    result = classify_node(inventory, "db7", {"role": "db"})
    assert set(result["classes"]) == {"motd"}
    assert "nginx" not in result["parameters"]


def test_node_file_environment_wins_unless_a_group_trumps(inventory):
    assert classify_node(inventory, "db1", {})["environment"] == "dev"
    assert classify_node(inventory, "web1.staging", {})["environment"] == "staging"
    assert classify_node(inventory, "web9.staging", {})["environment"] == "staging"


def test_conflicts_stop_before_reclass(inventory, tmp_path):
    other = group_data("Other web", rule=["=", ["fact", "role"], "web"],
                       classes={"apache": {"keepalive_timeout": 99}})
    write_inventory(inventory, groups={"other.yml": other})
    with pytest.raises(ClassificationConflictError) as caught:
        classify_node(inventory, "web1", {"role": "web"})
    assert set(caught.value.details["classes"]["apache"]) == {"keepalive_timeout"}


def test_explain_node_adds_the_rendered_classification(inventory):
    explanation = explain_node(inventory, "web1", {"role": "web"})
    assert explanation["final_classification"]["classes"]["apache"]["keepalive_timeout"] == 5
    assert explanation["classification"]["classes"]["apache"]["keepalive_timeout"] == 10


def test_classes_parameter_must_stay_a_mapping(inventory):
    write_inventory(inventory, nodes={"bad": {"parameters": {"_classes_": {"apache": "on"}}},
                                      "worse": {"parameters": {"_classes_": ["apache"]}}})
    with pytest.raises(ReclassError) as caught:
        classify_node(inventory, "bad", {})
    assert "_classes_:apache must be a mapping of class parameters" in caught.value.message
    assert "nodes/bad.yml" in caught.value.message
    with pytest.raises(ReclassError) as caught:
        classify_node(inventory, "worse", {})
    assert "Cannot merge list over dictionary, at _classes_" in caught.value.message


def test_classify_for_enc_reads_the_puppet_fact_cache(inventory, tmp_path):
    facts_dir = tmp_path / "yaml" / "facts"
    facts_dir.mkdir(parents=True)
    (facts_dir / "web1.yaml").write_text(
        "--- !ruby/object:Puppet::Node::Facts\nname: web1\nvalues:\n  role: web\n")
    result = classify_for_enc(inventory, "web1", facts_dir)
    assert result["classes"]["apache"]["keepalive_timeout"] == 10
    with pytest.raises(FactsNotFoundError) as caught:
        classify_for_enc(inventory, "web2", facts_dir)
    assert "web2.yaml does not exist" in caught.value.message
