"""Every kind of error a render raises, table-driven: its type, exit code and what its message
must name (node, file, key path, the reference, suggestions).

The fragments are the facts a message must carry, not its whole wording, which the CLI tests
(test_diagnostics, test_cli_reclass) pin down.
"""

from __future__ import annotations

from typing import Any

import pytest

from reclass_ng import errors
from reclass_ng.suggestions import similar_names

# (files, settings, node, error type, exit code, fragments the message holds)
CASES: list[tuple[str, dict[str, str], dict[str, Any], str, type, int, list[str]]] = [
    ("class not found, with the nearest name first",
     {"nodes/n1.yml": "classes: [cluster.mk22_lab_basic.config]\n",
      "classes/cluster/aaa/config.yml": "parameters: {}\n",
      "classes/cluster/mk22_lab_basic/configs.yml": "parameters: {}\n"},
     {}, "n1", errors.ClassNotFound, 65,
     ["n1", "cluster.mk22_lab_basic.config", "nodes/n1.yml",
      "did you mean cluster.mk22_lab_basic.configs"]),
    ("missing reference, with the key path and a suggestion",
     {"nodes/n1.yml": "parameters:\n  port: 80\n  url: http://${prot}/\n"},
     {}, "n1", errors.ResolveErrorList, 65, ["n1", "url", "${prot}", "nodes/n1.yml", "${port}"]),
    ("changed constant",
     {"nodes/n1.yml": "classes: [a]\nparameters:\n  x: 2\n", "classes/a.yml":
      "parameters:\n  =x: 1\n"},
     {}, "n1", errors.ChangedConstantError, 65, ["n1", "x", "classes/a.yml", "nodes/n1.yml"]),
    ("dict over scalar",
     {"nodes/n1.yml": "classes: [a]\nparameters:\n  x: {y: 1}\n", "classes/a.yml":
      "parameters:\n  x: 1\n"},
     {}, "n1", errors.TypeMergeError, 65, ["n1", "x", "dictionary", "scalar"]),
    ("reference loop",
     {"nodes/n1.yml": "parameters:\n  a: ${b}\n  b: ${a}\n"},
     {}, "n1", errors.InfiniteRecursionError, 65, ["n1", "a", "b", "loop"]),
    ("class include cycle",
     {"nodes/n1.yml": "classes: [a]\n", "classes/a.yml": "classes: [b]\n",
      "classes/b.yml": "classes: [a]\n"},
     {}, "n1", errors.ClassIncludeCycle, 65, ["n1", "a", "b"]),
    ("invalid class name",
     {"nodes/n1.yml": "classes: ['a b']\n"},
     {}, "n1", errors.InvalidClassnameError, 65, ["a b"]),
    ("YAML syntax error, with the file",
     {"nodes/n1.yml": "parameters:\n  a: [1, 2\n"},
     {}, "n1", errors.YamlFileError, 65, ["nodes/n1.yml"]),
    ("a file that is not a mapping",
     {"nodes/n1.yml": "- a\n- b\n"},
     {}, "n1", errors.EntityFormatError, 65, ["nodes/n1.yml", "mapping"]),
    ("unknown node",
     {"nodes/n1.yml": "parameters: {}\n"},
     {}, "n2", errors.NodeNotFound, 74, ["n2"]),
    ("query inside a longer string",
     {"nodes/n1.yml": "parameters:\n  x: a $[ exports:b ]\n"},
     {}, "n1", errors.QueryPositionError, 65, ["n1", "x", "whole value"]),
    ("reference syntax error, with a caret under the column",
     {"nodes/n1.yml": "parameters:\n  x: abc ${a:b\n"},
     {}, "n1", errors.ParseError, 65, ["x", "nodes/n1.yml", "abc ${a:b\n", " " * 9 + "^"]),
    ("query syntax error, with a caret in the query",
     {"nodes/n1.yml": "parameters:\n  y: $[ exports:a iff exports:b == 1 ]\n"},
     {}, "n1", errors.ParseError, 65, ["y", " exports:a iff exports:b == 1 \n", " " * 10 + "^"]),
]


@pytest.mark.parametrize(("what", "files", "settings", "node", "kind", "code", "fragments"),
                         CASES, ids=[case[0] for case in CASES])
def test_error_kinds(load_inventory, what: str, files: dict[str, str],
                     settings: dict[str, Any], node: str, kind: type, code: int,
                     fragments: list[str]) -> None:
    inventory = load_inventory(files, **settings)
    with pytest.raises(errors.ReclassError) as raised:
        inventory.nodeinfo(node)
    err = raised.value
    assert isinstance(err, kind), (type(err), err.message)
    assert err.exit_code == code
    message = "\n".join(err.report_lines())  # with where it is written, chain, suggestions
    for fragment in fragments:
        assert fragment in message, (fragment, message)


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
