"""Inventory queries `$[ ... ]` (spec section 6, deviations D8-D10) through the Python API."""

from __future__ import annotations

import pytest

from reclass_ng.errors import (
    ExpressionError,
    InventoryQueryNodeError,
    InvQueryError,
    ParseError,
    QueryPositionError,
)

OTHERS = {
    "nodes/n2.yml": "exports:\n  v: 7\n  role: web\n  t: {x: 1}\n",
    "nodes/n3.yml": "environment: other\nexports:\n  v: 8\n  role: web\n",
    "nodes/n4.yml": "exports:\n  v: 7.0\n  role: db\n",
}


def with_query(query: str, extra: str = "", **more: str) -> dict[str, str]:
    """n1 (env base, v: 6, role: web) has parameter q holding the query."""
    files = dict(OTHERS)
    files["nodes/n1.yml"] = ("exports:\n  v: 6\n  role: web\nparameters:\n"
                             f"  q: '{query}'\n{extra}")
    files.update(more)
    return files


def q(params, query: str, extra: str = "", node: str = "n1", **settings):
    return params(with_query(query, extra), node, **settings)["q"]


def test_value_query_sees_own_environment_including_self(params) -> None:
    assert q(params, "$[ exports:v ]") == {"n1": 6, "n2": 7, "n4": 7.0}


def test_value_query_nested_path_and_missing_path(params) -> None:
    assert q(params, "$[ exports:t:x ]") == {"n2": 1}
    assert q(params, "$[ exports:nothere ]") == {}


def test_value_if_query(params) -> None:
    assert q(params, "$[ exports:v if exports:role == web ]") == {"n1": 6, "n2": 7}


def test_list_if_query(params) -> None:
    assert q(params, "$[ if exports:role == web ]") == ["n1", "n2"]
    assert q(params, "$[ if exports:role != web ]") == ["n4"]


@pytest.mark.parametrize("operand, nodes", [
    ("7", ["n2", "n4"]), ("7.0", ["n2", "n4"]), ("6", ["n1"]), ("seven", []),
])
def test_comparison_uses_python_equality(params, operand: str, nodes: list[str]) -> None:
    assert q(params, f"$[ if exports:v == {operand} ]") == nodes


def test_boolean_operands(params) -> None:
    files = with_query("$[ if exports:flag == TRUE ]",
                       **{"nodes/n5.yml": "exports: {flag: true}\n",
                          "nodes/n6.yml": "exports: {flag: 'true'}\n"})
    assert params(files)["q"] == ["n5"]


def test_and_or_are_evaluated_left_to_right(params) -> None:
    # n2: role web, v 7. (role==web or v==6) and v==99 -> False for everyone; with `and`
    # binding tighter it would be role==web or (v==6 and v==99) -> n1, n2.
    assert q(params, "$[ if exports:role == web or exports:v == 6 and exports:v == 99 ]") == []
    assert q(params, "$[ if exports:v == 99 and exports:v == 6 or exports:role == db ]") == ["n4"]


def test_self_operand_is_rendered_from_own_parameters(params) -> None:
    extra = "  wanted: ${base_role}\n  base_role: db\n"
    assert q(params, "$[ if exports:role == self:wanted ]", extra) == ["n4"]


def test_missing_self_operand_is_an_error(render) -> None:
    with pytest.raises(Exception, match=r"\$\{nope\}"):
        render(with_query("$[ if exports:role == self:nope ]"))


def test_test_without_export_side_is_an_expression_error(render) -> None:
    with pytest.raises(ExpressionError, match="No export") as info:
        render(with_query("$[ if self:a == 1 ]", "  a: 1\n"))
    assert info.value.exit_code == 65


def test_malformed_query_is_a_parse_error(render) -> None:
    with pytest.raises(ParseError) as info:
        render(with_query("$[ if exports:v = 1 ]"))
    assert "at q" in str(info.value)


def test_all_envs_widens_only_its_own_query_d8(params) -> None:
    extra = "  q2: $[ exports:v ]\n"
    result = params(with_query("$[ +AllEnvs exports:v ]", extra))
    assert result["q"] == {"n1": 6, "n2": 7, "n3": 8, "n4": 7.0}
    assert result["q2"] == {"n1": 6, "n2": 7, "n4": 7.0}


def test_inventory_mode_scopes_each_node_to_its_environment_d8(load_inventory) -> None:
    files = with_query("$[ if exports:role == web ]")
    files["nodes/n3.yml"] = "environment: other\nexports: {v: 8, role: web}\n" \
                            "parameters:\n  q: $[ if exports:role == web ]\n"
    nodes = load_inventory(files).inventory()["nodes"]
    assert nodes["n1"]["parameters"]["q"] == ["n1", "n2"]
    assert nodes["n3"]["parameters"]["q"] == ["n3"]


def test_inventory_mode_matches_nodeinfo_mode(load_inventory) -> None:
    inv = load_inventory(with_query("$[ exports:v if exports:role == web ]"))
    assert inv.inventory()["nodes"]["n1"]["parameters"] == inv.nodeinfo("n1")["parameters"]


BROKEN = {"nodes/n5.yml": "exports:\n  v: ${missing}\n  role: web\n  good: 1\n"}


def test_failing_other_node_names_query_node_and_cause(render) -> None:
    with pytest.raises(InvQueryError) as info:
        render(with_query("$[ exports:v ]", **BROKEN))
    message = str(info.value)
    assert "Failed inv query $[ exports:v ]" in message
    assert "-> n5" in message and "Cannot resolve ${missing}" in message
    assert message.startswith("-> n1")
    assert info.value.exit_code == 65


def test_only_needed_exports_of_other_nodes_are_rendered(params) -> None:
    assert params(with_query("$[ exports:good ]", **BROKEN))["q"] == {"n5": 1}


@pytest.mark.parametrize("query", ["$[ +IgnoreErrors exports:v ]", "$[ +ignoreerrors exports:v ]"])
def test_ignore_errors_drops_failing_nodes(params, query: str) -> None:
    assert params(with_query(query, **BROKEN))["q"] == {"n1": 6, "n2": 7, "n4": 7.0}


def test_inventory_ignore_failed_render_acts_like_ignore_errors_d9(params) -> None:
    files = with_query("$[ exports:v if exports:role == web ]", **BROKEN)
    with pytest.raises(InvQueryError):
        params(files)
    assert params(files, inventory_ignore_failed_render=True)["q"] == {"n1": 6, "n2": 7}


def test_list_query_needs_only_the_tested_exports(params) -> None:
    # n5's broken `v` is not looked at by a test on `role`, so n5 matches.
    assert q(params, "$[ if exports:role == web ]", **{}) == ["n1", "n2"]
    files = with_query("$[ if exports:role == web ]", **BROKEN)
    assert params(files)["q"] == ["n1", "n2", "n5"]


def test_missing_class_in_other_node(render) -> None:
    with pytest.raises(InventoryQueryNodeError) as info:
        render(with_query("$[ exports:v ]", **{"nodes/n5.yml": "classes: [gone]\n"}))
    message = str(info.value)
    assert "Inventory Queries:" in message and "-> n5" in message
    assert "Class gone not found" in message


def test_broken_yaml_in_other_node_can_be_skipped(render) -> None:
    broken = {"nodes/n5.yml": "exports:\n  v: [unclosed\n"}
    with pytest.raises(InventoryQueryNodeError, match="n5.yml"):
        render(with_query("$[ exports:v ]", **broken))
    info = render(with_query("$[ exports:v ]", **broken), inventory_ignore_failed_node=True)
    assert "n5" not in info["parameters"]["q"]


def test_query_embedded_in_text_is_an_error_d10(render) -> None:
    with pytest.raises(QueryPositionError) as info:
        render(with_query("nodes: $[ exports:v ]"))
    assert "must be the whole value" in str(info.value)
    assert "at q" in str(info.value) and info.value.exit_code == 65


def test_escaped_query_is_literal(params) -> None:
    assert q(params, "\\$[ exports:v ]") == "$[ exports:v ]"


def test_query_result_merges_like_any_value(params) -> None:
    files = with_query("$[ if exports:role == db ]",
                       **{"classes/base.yml": "parameters:\n  q: [first]\n"})
    files["nodes/n1.yml"] = "classes: [base]\n" + files["nodes/n1.yml"]
    assert params(files)["q"] == ["first", "n4"]


def test_exports_of_the_node_are_rendered_against_parameters(render) -> None:
    info = render({"nodes/n1.yml": "classes: [a]\nparameters: {p: 1}\n"
                                   "exports:\n  e: ${p}\n  l: [1]\n",
                   "classes/a.yml": "exports:\n  l: [0]\n"})
    assert info["exports"] == {"l": [0, 1], "e": 1}
