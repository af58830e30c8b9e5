""""Did you mean" (reclass_ng.suggestions): names ranked by the whole name, key paths that exist."""

from __future__ import annotations

import pytest

from reclass_ng.suggestions import similar_names, similar_node_names, similar_paths


@pytest.mark.parametrize(("name", "names", "first"), [
    # Ranked by the whole name: the last dotted part only breaks ties.
    ("cluster.mk22_lab_basic.config",
     ["cluster.aaa.config", "cluster.mk22_lab_basic.configs", "system.config"],
     "cluster.mk22_lab_basic.configs"),
    ("service.ngnix", ["service.nginx", "nginx.service"], "service.nginx"),
    # No whole name is close: a class looked for in the wrong place is found by its own name.
    ("nginx", ["service.nginx", "service.apache"], "service.nginx"),
    ("web", ["db", "monitoring.agent"], None),
])
def test_did_you_mean_ranks_by_the_whole_name(name: str, names: list[str],
                                              first: str | None) -> None:
    found = similar_names(name, names)
    assert (found[0] if found else None) == first




NODES = ["web1.example.com", "web1.staging.example.com", "web2.example.com", "db1"]


@pytest.mark.parametrize(("name", "expected"), [
    ("web1", ["web1.example.com", "web1.staging.example.com"]),  # a short host name
    ("db1.example.com", ["db1"]),  # a full name of a node named by its short one
    ("web1.exmaple.com", ["web1.example.com", "web2.example.com"]),  # a misspelt one
    ("zzz", []),
])
def test_node_names_are_found_by_their_host_name(name: str, expected: list[str]) -> None:
    assert similar_node_names(name, NODES) == expected


def test_suggested_paths_exist() -> None:
    tree = {"nginx": {"port": 80, "workers": 4}, "ntp": {"servers": ["a"]}}
    assert similar_paths("nginx:prot", tree, ":") == ["nginx:port"]
    # `prot:tls` does not exist below `port`: only the part that exists is suggested.
    assert similar_paths("nginx:prot:tls", tree, ":") == ["nginx:port"]
    assert similar_paths("ngnix:workers", tree, ":") == ["nginx:workers"]
    assert similar_paths("zzz", tree, ":") == []
    assert similar_names("role.webb", ["role.web", "role.db", "service.web"])[0] == "role.web"
    assert similar_names("role.webb", ["common", "service.ntp"]) == []
    assert similar_names("profile.nginx", ["service.nginx", "role.db"]) == ["service.nginx"]
