"""Rendered file containers shared between the nodes of an inventory render
(resolve/rendered_subtrees.py): the render with the memo must write exactly what the plain render
writes, warnings and errors included, and must reuse a subtree only when its inputs match."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory
from speeds import at_speed

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees, read_key
from reclass_ng.settings import Speed
from reclass_ng.values import OwnedDict

# -- the memo against the plain render, on generated inventories ---------------------------

KEYS = st.sampled_from(["a", "b", "c"])
# References to node-specific values (_param, _reclass_), nested ones, one into another
# top-level key, a missing one, a query, text around references, and plain scalars that
# compare equal across types (1, 1.0, True, "1").
LEAVES = st.one_of(
    st.sampled_from([None, 1, 1.0, True, "1", "x", -0.0, 0.0]),
    st.sampled_from(["${_param:a}", "${_param:b}", "p${_param:a}q", "${_param:${_param:k}}",
                     "${_reclass_:name:short}", "${other:a}", "${more:a}", "${_param:m}",
                     "${_param:a::fallback}", "$[ exports:e ]", "${_param:d}", "${_param:l}"]),
)
TREES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(KEYS, KEYS.map(lambda k: "~" + k), KEYS.map(lambda k: "=" + k)),
                    inner, max_size=3)), max_leaves=10)
# svc and more are mappings in every class: merged, when a node lists several classes.
CLASS_PARAMS = st.fixed_dictionaries({"svc": st.dictionaries(KEYS, TREES, max_size=3),
                                      "more": st.dictionaries(KEYS, TREES, max_size=2)},
                                     optional={"other": TREES})
NODE_PARAMS = st.fixed_dictionaries({
    "a": st.sampled_from(["1", "2"]), "b": st.sampled_from([1, 1.0, True, "1"]),
    "k": st.sampled_from(["a", "b"]), "d": st.sampled_from([{"x": 1}, {"x": 1.0}, [1]]),
    "l": st.sampled_from([[1, 2], [2, 1]])},
    optional={"m": st.just("here")})
OPTIONS = st.sampled_from([{}, {"ignore_overwritten_missing_references": False},
                           {"group_errors": False}, {"reference_defaults": True},
                           {"allow_scalar_over_dict": True, "allow_none_override": True}])


def _render(root: Path, share: bool, options: dict[str, Any], fast: bool = True,
            max_unused: int = 16) -> tuple[Any, list[str]]:
    warnings: list[str] = []
    inventory = reclass_ng.load(str(root), read_config=False, warn=warnings.append,
                                speed=Speed(rendered_subtrees=share, rendered_references=fast),
                                **options)
    try:
        # Every file container with a key to render goes through the memo; with max_unused
        # 1, containers are given up on (rendered plainly, the memo skipped) early too.
        nodes = inventory.render_serially(
            memo=RenderedSubtrees(min_dirty=1, max_unused=max_unused))["nodes"]
    except ReclassError as err:
        return (type(err).__name__, str(err)), warnings
    for info in nodes.values():
        info["__reclass__"].pop("timestamp")
    # Bytes, not ==: key order and 1 / 1.0 / True must come out the same too.
    return orjson.dumps(nodes, default=str), warnings


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=st.lists(CLASS_PARAMS, min_size=1, max_size=3),
       nodes=st.lists(st.tuples(st.lists(st.integers(0, 2), min_size=1, max_size=2),
                                NODE_PARAMS, st.sampled_from(["u", "v"]),
                                st.one_of(st.none(), st.dictionaries(KEYS, TREES, max_size=1))),
                      min_size=3, max_size=7),
       options=OPTIONS, max_unused=st.sampled_from([1, 16]))
def test_sharing_subtrees_changes_nothing(classes: list[dict], nodes: list[tuple],
                                          options: dict[str, Any], max_unused: int) -> None:
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        include = [f"c{index + 1}"] if index + 1 < len(classes) and index % 2 else []
        files[f"classes/c{index}.yml"] = {"classes": include, "parameters": params}
    for index, (listed, node_params, export, svc) in enumerate(nodes):
        params: dict[str, Any] = {"_param": node_params}
        if svc is not None:
            params["svc"] = svc  # merged into the classes' svc: the node's own containers
        files[f"nodes/n{index}.yml"] = {
            "classes": [f"c{i % len(classes)}" for i in listed], "parameters": params,
            "exports": {"e": export}}
    with tempfile.TemporaryDirectory() as tmp:
        root = write_inventory(Path(tmp), {path: yaml.safe_dump(doc, sort_keys=False)
                                           for path, doc in files.items()})
        plain = _render(root, False, options, fast=False)  # every reference the full way
        assert _render(root, True, options, max_unused=max_unused) == plain
        assert _render(root, False, options) == plain


# -- when a subtree is reused, and when not ------------------------------------------------

SERVICE = ("parameters:\n  svc:\n    conf:\n      host: ${_param:host}\n      port: ${_param:port}\n"
           "      path: /srv/${_param:host}\n")


def _svc_confs(tmp_path: Path, nodes: dict[str, str], service: str = SERVICE,
               memo: RenderedSubtrees | None = None) -> dict[str, Any]:
    files = {"classes/service.yml": service}
    files.update({f"nodes/{name}.yml": text for name, text in nodes.items()})
    inventory = reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False)
    nodes_out = inventory.render_serially(memo=memo)["nodes"]
    return {name: info["parameters"]["svc"]["conf"] for name, info in nodes_out.items()}


def _node(host: str, port: Any = 80) -> str:
    return f"classes: [service]\nparameters:\n  _param: {{host: {host}, port: {port}}}\n"


def test_nodes_reading_the_same_values_share_the_rendered_container(tmp_path: Path) -> None:
    # Kept from the second meeting on (most containers met once are never met again).
    confs = _svc_confs(tmp_path, {"n1": _node("h1"), "n2": _node("h1"), "n3": _node("h1"),
                                  "n4": _node("h2")})
    assert confs["n2"] is confs["n3"]
    assert confs["n4"] is not confs["n2"]
    assert confs["n4"] == {"host": "h2", "port": 80, "path": "/srv/h2"}


def test_containers_with_fewer_keys_to_render_than_min_dirty_are_not_shared(tmp_path: Path
                                                                            ) -> None:
    big = SERVICE + "".join(f"      k{i}: ${{_param:host}}\n" for i in range(4))  # 7 keys
    nodes = {"n1": _node("h1"), "n2": _node("h1"), "n3": _node("h1")}
    confs = _svc_confs(tmp_path / "small", nodes, memo=RenderedSubtrees(min_dirty=7))
    assert confs["n2"] is not confs["n3"] and confs["n2"] == confs["n3"]
    confs = _svc_confs(tmp_path / "big", nodes, big, memo=RenderedSubtrees(min_dirty=7))
    assert confs["n2"] is confs["n3"]
    assert confs["n3"]["k3"] == "h1"


def test_a_streamed_render_shares_only_containers_with_many_keys_to_render(tmp_path: Path
                                                                          ) -> None:
    # The command line's `--inventory` (rendered_nodes) keeps no node once written: the
    # nodes' own copies of small containers cost no peak memory there, and rendering them
    # costs less than the memo (STREAMED_MIN_DIRTY). Its output is render_serially's.
    big = SERVICE + "".join(f"      k{i}: ${{_param:host}}\n" for i in range(4))  # 7 keys
    nodes = {f"nodes/n{i}.yml": _node("h1") for i in range(3)}
    for service, shared in ((SERVICE, False), (big, True)):
        root = write_inventory(tmp_path / str(shared), {"classes/service.yml": service, **nodes})
        inventory = reclass_ng.load(str(root), read_config=False)
        streamed = {name: info["parameters"]["svc"]["conf"]
                    for name, info in inventory.rendered_nodes()}
        assert (streamed["n1"] is streamed["n2"]) is shared
        serial = inventory.render_serially()["nodes"]
        assert {name: serial[name]["parameters"] for name in serial} == {
            name: reclass_ng.load(str(root), read_config=False).nodeinfo(name)["parameters"]
            for name in serial}
        assert streamed == {name: serial[name]["parameters"]["svc"]["conf"] for name in serial}


@pytest.mark.parametrize("port", ["80.0", "'80'", "true"])
def test_equal_values_of_another_type_are_not_the_same_inputs(tmp_path: Path, port: str
                                                              ) -> None:
    confs = _svc_confs(tmp_path, {"n1": _node("h1"), "n2": _node("h1"), "n3": _node("h1", port)})
    assert confs["n3"] is not confs["n2"]
    assert orjson.dumps(confs["n3"]["port"]) == orjson.dumps(yaml.safe_load(port))


@pytest.mark.parametrize("service", [
    # the node's own name
    "parameters:\n  svc:\n    conf:\n      a: ${_reclass_:name:short}\n      b: 1\n",
    # an inventory query
    "parameters:\n  svc:\n    conf:\n      a: $[ exports:e ]\n      b: ${_param:host}\n",
])
def test_node_specific_inputs_are_never_shared(tmp_path: Path, service: str) -> None:
    node = "classes: [service]\nparameters:\n  _param: {host: h}\nexports: {e: 1}\n"
    confs = _svc_confs(tmp_path, {"n1": node, "n2": node, "n3": node}, service)
    assert confs["n2"] is not confs["n3"]


def _merged_more(tmp_path: Path, c1: str, nodes: dict[str, str]) -> dict[str, Any]:
    files = {"classes/c1.yml": c1, "classes/c2.yml": "parameters:\n  more: {b: 1}\n"}
    files.update({f"nodes/{name}.yml": "classes: [c1, c2]\nparameters:\n  _param: "
                  f"{{a: {value}}}\n" for name, value in nodes.items()})
    inventory = reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False)
    return {name: info["parameters"] for name, info in inventory.inventory()["nodes"].items()}


def test_merged_mappings_are_rendered_per_node(tmp_path: Path) -> None:
    params = _merged_more(tmp_path, "parameters:\n  more: {a: '${_param:a}', c: x}\n",
                          {"n1": "v1", "n2": "v1", "n3": "v1"})
    assert params["n2"]["more"] is not params["n3"]["more"]
    assert params["n3"]["more"] == {"a": "v1", "c": "x", "b": 1}


def test_a_merged_mapping_rendered_early_by_a_reference_is_rendered_plainly(tmp_path: Path
                                                                            ) -> None:
    # svc comes first: its reference renders more:a before the walk reaches `more`, so what
    # more:a read is not seen by the walk; the next node must not reuse it.
    params = _merged_more(tmp_path, "parameters:\n  svc: {x: '${more:a}'}\n"
                          "  more: {a: '${_param:a}', c: x}\n",
                          {"n1": "v1", "n2": "v1", "n3": "v3"})
    assert params["n3"]["more"] == {"a": "v3", "c": "x", "b": 1}
    assert params["n3"]["svc"] == {"x": "v3"}


def test_a_warning_is_printed_for_every_node(tmp_path: Path) -> None:
    service = ("parameters:\n  svc:\n    conf:\n      a: ${missing}\n      b: 1\n"
               "  svc2:\n    conf:\n      a: 2\n")
    files = {"classes/service.yml": service,
             "classes/over.yml": "classes: [service]\nparameters:\n  svc:\n    conf:\n      a: 3\n"}
    files.update({f"nodes/n{i}.yml": "classes: [over]\n" for i in range(3)})
    warnings: list[str] = []
    reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False,
                    warn=warnings.append).inventory()
    assert warnings == ["[WARNING] Reference '${missing}' undefined"] * 3


def test_a_container_never_reused_is_given_up_and_rendered_plainly(tmp_path: Path) -> None:
    # `conf` reads each node's host, `same` the value every node has.
    service = SERVICE + "    same:\n      port: ${_param:port}\n      x: ${_param:port}\n"
    files = {"classes/service.yml": service}
    files.update({f"nodes/n{i}.yml": _node(f"h{i}") for i in range(6)})
    inventory = reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False)
    subtrees = RenderedSubtrees(max_unused=2)
    out = {}
    misses_after_giving_up = []
    for name in inventory.node_names:
        info = inventory.interpolated_nodeinfo(inventory.renderer.merge(name), subtrees=subtrees)
        out[name] = info["parameters"]["svc"]
        if subtrees.given_up == 2:
            misses_after_giving_up.append(subtrees.misses)
    # conf and svc around it, each after two kept copies nobody reused
    assert subtrees.given_up == 2
    # from then on they are rendered without asking the memo (no more misses)
    assert len(misses_after_giving_up) >= 2 and len(set(misses_after_giving_up)) == 1
    assert [out[f"n{i}"]["conf"]["host"] for i in range(6)] == [f"h{i}" for i in range(6)]
    assert out["n1"]["same"] is out["n5"]["same"]  # still shared
    plain = at_speed(inventory, Speed(rendered_subtrees=False)).render_serially()["nodes"]
    assert out == {name: info["parameters"]["svc"] for name, info in plain.items()}


def test_an_observed_render_shares_copies_and_is_told_what_their_render_told(
        tmp_path: Path) -> None:
    # The observer of writes of n3, which reuses n2's copy, is told what its own render of
    # the container would tell it (observe/subtree_recording.py).
    from test_provenance_recorder import ParametersLog

    inventory = reclass_ng.load(str(write_inventory(tmp_path, {
        "classes/service.yml": SERVICE, "nodes/n1.yml": _node("h1"),
        "nodes/n2.yml": _node("h1"), "nodes/n3.yml": _node("h1")})), read_config=False)
    told: dict[bool, list[list[tuple]]] = {}
    for shared in (False, True):
        subtrees = RenderedSubtrees() if shared else None
        confs, told[shared] = [], []
        for name in ("n1", "n2", "n3"):
            observer = ParametersLog()
            node = inventory.renderer.merge(name)
            info = inventory.interpolated_nodeinfo(node, observer, subtrees=subtrees)
            confs.append(info["parameters"]["svc"]["conf"])
            told[shared].append(observer.log.calls)
        assert (confs[1] is confs[2]) is shared and confs[1] == confs[2]
    assert subtrees is not None and subtrees.hits == 1
    assert told[True] == told[False]
    assert ("reference", ("svc", "conf", "host"), "_param:host") in told[True][2]


# -- the keys of the memo ------------------------------------------------------------------

PLAIN = {"a": 1}


@pytest.mark.parametrize("a, b, same", [
    (1, 1, True), (1, 1.0, False), (1, True, False), ("1", 1, False), (0.0, -0.0, False),
    (None, None, True), (float("nan"), float("nan"), True), ("x", "x", True),
    (PLAIN, PLAIN, True), (PLAIN, {"a": 1}, False), ([1], [1], False),
])
def test_read_keys_are_equal_only_for_values_written_the_same(a: Any, b: Any, same: bool
                                                               ) -> None:
    assert (read_key([a]) == read_key([b])) is same


def test_a_node_s_own_containers_cannot_be_keyed() -> None:
    assert read_key([1, OwnedDict({"a": 1})]) is None


def test_the_key_of_the_values_read_now_is_their_read_key() -> None:
    # Resolver._read_key_now (one pass, parts kept per node) against read_key, the reference.
    from reclass_ng.merge import Merger
    from reclass_ng.resolve import Resolver
    from reclass_ng.settings import Settings

    root = OwnedDict({"a": 1, "b": {"c": "x"}, "f": -0.0, "l": PLAIN, "o": OwnedDict({"p": 1})})
    resolver = Resolver(root, Merger(Settings()), subtrees=RenderedSubtrees())
    assert resolver._read_key_now(("a", "b:c", "f", "l")) == read_key([1, "x", -0.0, PLAIN])
    assert resolver._read_key_now(("l", "a")) == read_key([PLAIN, 1])  # parts found before
    assert resolver._read_key_now(("a", "o")) is None  # the node's own container: no key
    assert resolver._read_key_now(("a", "missing")) is None
