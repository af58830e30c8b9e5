"""Every kind of error a render raises, table-driven: its type, exit code and what its message
must name (node, file, key path, the reference, suggestions).

The fragments are the facts a message must carry, not its whole wording, which the CLI tests
(test_cli_failures, test_cli_reclass) pin down. The messages' positions: a YAML syntax error
at the bracket or quote that was opened as well as where parsing stopped, a merge or
changed-constant error at file:line of both sides.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from reclass_ng import errors
from reclass_ng.errors.nesting import NestingTooDeepError

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
    ("reference bomb: strings doubled 30 times",
     {"nodes/n1.yml": "parameters:\n  s0: abcdefghijklmnopqrst\n" + "".join(
         f"  s{i}: '${{s{i - 1}}}${{s{i - 1}}}'\n" for i in range(1, 31))},
     {}, "n1", errors.ReferenceExpansionError, 65,
     ["n1", "reference bomb", "1,000,000", "${s", "nodes/n1.yml", "written at"]),
    ("values nested past the rendered-depth limit through a reference",
     {"nodes/n1.yml": "parameters:\n  a: " + "[" * 150 + "'${b}'" + "]" * 150 + "\n  b: "
      + "[" * 150 + "x" + "]" * 150 + "\n"},
     {}, "n1", NestingTooDeepError, 65,
     ["n1", "nest deeper than 256 levels", "${b}", "at a:0:0", "nodes/n1.yml", "written at"]),
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
    ("missing reference, errors not grouped",
     {"nodes/n1.yml": "parameters:\n  url: http://${prot}/\n"},
     {"group_errors": False}, "n1", errors.ResolveError, 65, ["n1", "url", "${prot}", "n1.yml:2"]),
    ("missing reference inside a reference",
     {"nodes/n1.yml": "parameters:\n  x: ${a:${missing}}\n  a: {}\n"},
     {"group_errors": False}, "n1", errors.BadReferencesError, 65,
     ["n1", "x", "${missing}", "nodes/n1.yml:2"]),
    ("reference default that is not YAML",
     {"nodes/n1.yml": "parameters:\n  x: ${b::[1,}\n"},
     {"reference_defaults": True}, "n1", errors.ReferenceDefaultError, 65,
     ["n1", "x", "${b::[1,}", "nodes/n1.yml:2"]),
    ("class name from a reference that does not resolve",
     {"nodes/n1.yml": "classes: [a]\n", "classes/a.yml": "classes: ['${nope}']\n"},
     {}, "n1", errors.ClassNameResolveError, 65, ["n1", "${nope}", "classes/a.yml:1"]),
    ("two files for one node name",
     {"nodes/n1.yml": "parameters: {}\n", "nodes/sub/n1.yml": "parameters: {}\n"},
     {}, "n1", errors.DuplicateNameError, 65, ["n1", "nodes/sub/n1.yml", "nodes/n1.yml"]),
    ("query test without an export",
     {"nodes/n1.yml": "parameters:\n  x: $[ exports:a if 1 == 1 ]\n"},
     {}, "n1", errors.NoExportError, 65, ["n1", "x", "1 == 1", "nodes/n1.yml:2"]),
    ("query test against a self: value that is null",
     {"nodes/n1.yml": "parameters:\n  b: null\n  x: $[ exports:a if exports:a == self:b ]\n"},
     {}, "n1", errors.ExpressionError, 65, ["n1", "x", "self:b", "null", "nodes/n1.yml:3"]),
    ("query reading exports that do not render",
     {"nodes/n1.yml": "parameters:\n  x: $[ exports:a ]\n",
      "nodes/n2.yml": "exports:\n  a: ${nope}\n"},
     {}, "n1", errors.InvQueryError, 65, ["n1", "$[ exports:a ]", "n2", "${nope}"]),
    ("query reading a node that does not merge",
     {"nodes/n1.yml": "parameters:\n  x: $[ exports:a ]\n", "nodes/n2.yml": "classes: [nope]\n"},
     {}, "n1", errors.InventoryQueryNodeError, 65, ["n1", "n2", "nope", "nodes/n2.yml"]),
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


def _two_node_errors(load_inventory: Any) -> errors.MultipleErrors:
    inventory = load_inventory({"nodes/n1.yml": "classes: [nope]\n",
                                "nodes/n2.yml": "parameters:\n  x: ${y}\n"})
    found = []
    for node in ("n1", "n2"):
        with pytest.raises(errors.ReclassError) as raised:
            inventory.nodeinfo(node)
        found.append(raised.value)
    return errors.MultipleErrors(found)


def _load_raising(make_inventory: Any, **settings: Any) -> Any:
    base = make_inventory({"nodes/n1.yml": "parameters: {}\n", "classes/a.yml": "{}\n"})
    import reclass_ng

    return reclass_ng.load(str(base), read_config=False, **settings)


# Errors raised outside one node's render: (what, a call raising it, type, exit code, fragments).
def _spool_into(directory: Any) -> None:
    """A node text spool that must move to a temporary file in `directory` (as TMPDIR)."""
    import tempfile

    from reclass_ng.output.streamed import NodeTextSpool

    saved = tempfile.tempdir
    tempfile.tempdir = str(directory)
    try:
        NodeTextSpool(in_memory=0).add(b"{}")
    finally:
        tempfile.tempdir = saved


OTHER_CASES: list[tuple[str, Any, type, int, list[str]]] = [
    ("a setting of the wrong type",
     lambda make, load: _load_raising(make, ignore_class_notfound="maybe"),
     errors.ConfigError, 78, ["ignore_class_notfound", "true or false", "'maybe'"]),
    ("a class mapping that does not parse",
     lambda make, load: _load_raising(make, class_mappings=["'n1 a"]),
     errors.MappingFormatError, 65, ["'n1 a", "missing closing quote"]),
    ("no classes directory",
     lambda make, load: _load_raising(make, classes_uri="nowhere"),
     errors.NotFoundError, 74, ["No such directory", "nowhere"]),
    ("an unknown output format",
     lambda make, load: __import__("reclass_ng.output").output.dump({}, "toml"),
     errors.UsageError, 2, ["toml", "json", "yaml"]),
    ("a class name that is a path, asked of the storage",
     lambda make, load: _load_raising(make).storage.class_uri("/etc/passwd"),
     errors.UnsafeClassNameError, 65, ["/etc/passwd", "not paths"]),
    ("a reclass-config.yml value of the wrong type, named with its file and line",
     lambda make, load: __import__("reclass_ng").load(str(make({
         "nodes/n1.yml": "parameters: {}\n", "classes/a.yml": "{}\n",
         "reclass-config.yml": "# settings\nignore_class_notfound: maybe\n"}))),
     errors.ConfigFileError, 78, ["reclass-config.yml:2", "ignore_class_notfound", "'maybe'"]),
    ("a misspelt storage_type in reclass-config.yml, at its file and line, with did you mean",
     lambda make, load: __import__("reclass_ng").load(str(make({
         "nodes/n1.yml": "parameters: {}\n", "classes/a.yml": "{}\n",
         "reclass-config.yml": "# settings\nstorage_type: yaml_fss\n"}))),
     errors.ConfigFileError, 78, ["reclass-config.yml:2", "'yaml_fss' is not supported",
                                  "did you mean yaml_fs?"]),
    ("a streamed --inventory whose temporary file cannot be made",
     lambda make, load: _spool_into(make({"nodes/n1.yml": "{}\n"}) / "no-such-directory"),
     errors.OutputSpoolError, 74, ["temporary file", "no-such-directory", "TMPDIR"]),
    ("the errors of several nodes together, the first one's exit code",
     lambda make, load: (_ for _ in ()).throw(_two_node_errors(load)),
     errors.MultipleErrors, 65, ["n1", "nope", "n2", "${y}"]),
]


@pytest.mark.parametrize(("what", "call", "kind", "code", "fragments"), OTHER_CASES,
                         ids=[case[0] for case in OTHER_CASES])
def test_error_kinds_outside_a_render(make_inventory, load_inventory, what: str, call: Any,
                                      kind: type, code: int, fragments: list[str]) -> None:
    with pytest.raises(errors.ReclassError) as raised:
        call(make_inventory, load_inventory)
    err = raised.value
    assert type(err) is kind, (type(err), err.message)
    assert err.exit_code == code
    message = "\n".join(err.report_lines())
    for fragment in fragments:
        assert fragment in message, (fragment, message)


# Kinds only ever raised as one of their subclasses (each in a table above).
BASE_KINDS = (errors.ReclassError, errors.LocatedError, errors.ValueAtPathError,
              errors.TwoSidedError)


def test_the_tables_cover_every_error_kind() -> None:
    import inspect

    import reclass_ng.errors.base
    import reclass_ng.errors.files
    import reclass_ng.errors.nesting
    import reclass_ng.errors.values

    defined = {cls for module in (reclass_ng.errors.base, reclass_ng.errors.files,
                                  reclass_ng.errors.values, reclass_ng.errors.nesting)
               for cls in vars(module).values()
               if inspect.isclass(cls) and issubclass(cls, errors.ReclassError)
               and cls.__module__ == module.__name__}
    tabled = {case[4] for case in CASES} | {case[2] for case in OTHER_CASES}
    assert len(defined) >= 30
    assert defined - tabled - set(BASE_KINDS) == set()
    for base in BASE_KINDS:
        assert any(issubclass(kind, base) for kind in tabled - {base}), base


# -- where messages point ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "stopped", "opened", "what"), [
    ("parameters:\n  a: [1, 2\n  b: 3\n  c: 4\n", "3:4", "line 2, column 6", "flow sequence"),
    ("parameters:\n  a: {x: 1\n  b: 3\n", "3:4", "line 2, column 6", "flow mapping"),
    ('parameters:\n  a: "abc\n  b: 3\n', "4:1", "line 2, column 6", "quoted scalar"),
])
def test_a_yaml_syntax_error_names_where_the_construct_opened(run_reclass, make_inventory,
                                                              text, stopped, opened, what):
    base = make_inventory({"nodes/n1.yml": text})
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert f"nodes/n1.yml:{stopped}: invalid YAML" in done.stderr
    assert f"{what} opened at {opened}" in done.stderr


def test_a_type_merge_error_names_file_and_line_of_both_sides(run_reclass, make_inventory):
    base = make_inventory({
        "classes/a.yml": "parameters:\n  web:\n    port: 80\n    hosts:\n      - a\n",
        "nodes/n1.yml": "classes: [a]\nparameters:\n  web:\n    hosts: b\n",
    })
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert "Cannot merge" in done.stderr and "at web:hosts" in done.stderr
    assert re.search(r"classes/a\.yml:5\b", done.stderr), done.stderr
    assert re.search(r"nodes/n1\.yml:4\b", done.stderr), done.stderr


def test_a_changed_constant_names_file_and_line_of_both_sides(run_reclass, make_inventory):
    base = make_inventory({
        "classes/a.yml": "parameters:\n  x: 1\n  =port: 22\n",
        "nodes/n1.yml": "classes: [a]\nparameters:\n  y: 2\n  port: 2222\n",
    })
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert "Attempt to change constant value" in done.stderr
    assert re.search(r"classes/a\.yml:3\b", done.stderr), done.stderr
    assert re.search(r"nodes/n1\.yml:4\b", done.stderr), done.stderr


# -- errors are values, complete when raised ----------------------------------------------------

def test_an_error_knows_its_files_as_records_and_names_them_only_in_its_message() -> None:
    from reclass_ng.values import Source

    a = Source("yaml_fs:///i/classes/a.yml", "a", "class", "/i/classes/a.yml")
    n = Source("yaml_fs:///i/nodes/n1.yml", "n1", "node", "/i/nodes/n1.yml")
    err = errors.ResolveError("${b}", ("x",), a, source=a, written="${b}", section="parameters",
                              chain=["x", "y"], suggest=lambda: ["${c}"])
    assert err.origins == (a,) and err.file() == "/i/classes/a.yml"
    assert err.detail_lines() == ["Cannot resolve ${b}, at x, in yaml_fs:///i/classes/a.yml"]
    assert (err.written, err.section, err.chain, err.suggestions()) == \
        ("${b}", "parameters", ["x", "y"], ["${c}"])
    merged = errors.TypeMergeError("dictionary", "scalar", ("x",), [a, n], n, a)
    assert merged.uri == "yaml_fs:///i/classes/a.yml; yaml_fs:///i/nodes/n1.yml"
    assert merged.source is n  # the later write is where the problem is written
    constant = errors.ChangedConstantError(("x",), [a, None], None, a)
    assert constant.uri == "yaml_fs:///i/classes/a.yml; ?"


def test_naming_the_node_gives_a_new_error_and_leaves_the_raised_one_alone() -> None:
    err = errors.ResolveError("${b}", ("x",), None)
    named = err.for_node("n1")
    assert named is not err and err.node is None
    assert (named.node, named.text, named.path) == ("n1", err.text, err.path)
    assert named.message.splitlines()[0] == "-> n1"
    assert named.for_node("n2") is named  # an inner step named the node already
