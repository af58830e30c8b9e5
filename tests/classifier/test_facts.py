"""Facts files: plain YAML/JSON and Puppet's YAML fact cache."""

from __future__ import annotations

import pytest
from classifier_helpers import make_group, tree_of

from reclass_ng.classifier import (
    FactsError,
    FactsNotFoundError,
    load_facts_file,
    read_puppet_facts,
    rules_need_facts,
)

# The layout Puppet's `yaml` facts terminus writes to <vardir>/yaml/facts/<certname>.yaml.
PUPPET_FACT_CACHE = """\
--- !ruby/object:Puppet::Node::Facts
name: web1.example.com
values:
  os:
    family: Debian
    release:
      major: "12"
  processors:
    count: 8
  is_virtual: true
  trusted:
    authenticated: remote
    certname: web1.example.com
    extensions:
      pp_role: web
  !ruby/sym _timestamp: 2024-05-01 10:00:00.123456000 +02:00
timestamp: 2024-05-01 10:00:00.123456000 +02:00
expiration: 2024-05-01 10:30:00.123456000 +02:00
"""


def test_puppet_fact_cache_document(tmp_path):
    path = tmp_path / "web1.example.com.yaml"
    path.write_text(PUPPET_FACT_CACHE)
    found = load_facts_file(path)
    assert found.name == "web1.example.com"
    assert found.facts["os"] == {"family": "Debian", "release": {"major": "12"}}
    assert found.facts["processors"] == {"count": 8}
    assert found.facts["_timestamp"].startswith("2024-05-01")  # dates become text
    assert found.trusted == {"authenticated": "remote", "certname": "web1.example.com",
                             "extensions": {"pp_role": "web"}}


def test_plain_yaml_and_json_facts(tmp_path):
    (tmp_path / "f.yaml").write_text("role: web\nram: 2048\n")
    (tmp_path / "f.json").write_text('{"role": "db", "nested": {"a": [1, 2]}}')
    assert load_facts_file(tmp_path / "f.yaml").facts == {"role": "web", "ram": 2048}
    assert load_facts_file(tmp_path / "f.json").facts == {"role": "db", "nested": {"a": [1, 2]}}
    assert load_facts_file(tmp_path / "f.json").trusted is None


@pytest.mark.parametrize("content, fragment", [
    ("- a\n- b\n", "must be a mapping"),
    ("a: [b\n", "f.yaml:2:1: not valid YAML"),
    ("--- !ruby/object:Puppet::Node::Facts\nname: x\nvalues: 3\n", "needs a `values` mapping"),
])
def test_bad_facts_files_are_clear_errors(tmp_path, content, fragment):
    (tmp_path / "f.yaml").write_text(content)
    with pytest.raises(FactsError) as caught:
        load_facts_file(tmp_path / "f.yaml")
    assert fragment in caught.value.message


def test_missing_facts_file(tmp_path):
    with pytest.raises(FactsNotFoundError) as caught:
        load_facts_file(tmp_path / "nope.yaml")
    assert caught.value.exit_code == 74


def test_rules_need_facts_unless_they_read_only_names():
    by_name = tree_of(make_group("a", rule=["~", "name", "web"]),
                      make_group("b", rule=["=", ["trusted", "certname"], "x"]),
                      make_group("c", pinned=["x"]))
    assert not rules_need_facts(by_name)
    assert rules_need_facts(tree_of(make_group("d", rule=["=", ["fact", "role"], "web"])))
    assert rules_need_facts(tree_of(make_group("e", rule=["=", ["trusted", "extensions"], "x"])))


def test_read_puppet_facts_from_the_cache_directory(tmp_path):
    (tmp_path / "web1.example.com.yaml").write_text(PUPPET_FACT_CACHE)
    found = read_puppet_facts(tmp_path, "web1.example.com")
    assert found.facts["os"]["family"] == "Debian"
    assert found.trusted["extensions"] == {"pp_role": "web"}


def test_cache_without_trusted_gets_the_certname(tmp_path):
    (tmp_path / "n1.yaml").write_text(
        "--- !ruby/object:Puppet::Node::Facts\nname: n1\nvalues:\n  role: web\n")
    assert read_puppet_facts(tmp_path, "n1").trusted == {"certname": "n1"}


def test_missing_cache_file_fails_only_when_rules_need_facts(tmp_path):
    needs = tree_of(make_group("d", rule=["=", ["fact", "role"], "web"]))
    with pytest.raises(FactsNotFoundError) as caught:
        read_puppet_facts(tmp_path, "n1", needs)
    assert f"{tmp_path}/n1.yaml does not exist" in caught.value.message
    assert "rules use facts" in caught.value.message
    by_name = tree_of(make_group("a", rule=["~", "name", "web"]))
    assert read_puppet_facts(tmp_path, "n1", by_name).facts == {}


@pytest.mark.parametrize("certname", ["../etc/passwd", "a/b", ".hidden", ""])
def test_unsafe_certnames_are_refused(tmp_path, certname):
    with pytest.raises(FactsError):
        read_puppet_facts(tmp_path, certname)
