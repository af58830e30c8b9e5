"""The engine's provenance record (reclass_ng.observe.provenance) and the observer seam (observe).

`Inventory.provenance(node)` is driven through the public API, the way explain, lint, diff and
incremental rendering use it; the render it records must be the plain render, on the whole
conformance corpus.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.observe.provenance import EFFECTS, MISSING, NodeProvenance, values_written

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

# The corpus vendored with the tests (as tests/test_corpus.py reads it), so a clone runs this
# test too; RECLASS_NG_CONFORMANCE points at another copy.
CORPUS = Path(os.environ.get("RECLASS_NG_CONFORMANCE")
              or Path(__file__).resolve().parent / "conformance")

LAYERED = {
    "classes/a.yml": "parameters:\n  port: 80\n  ssh:\n    =root: false\n  pkgs: [curl]\n"
                     "  old:\n    before: 0\n",
    "classes/b.yml": "classes: [a]\nparameters:\n  port: 81\n  ssh:\n    root: true\n"
                     "  pkgs: [vim]\n",
    "classes/c.yml": "classes: [b]\nparameters:\n  ~port: ${real}\n  real: 90\n  ~old:\n"
                     "    kept: 1\n",
    "nodes/n1.yml": "classes: [c]\nparameters:\n  pkgs: [git]\n",
}


def summary(provenance: NodeProvenance, path: tuple, section: str = "parameters") -> list[tuple]:
    return [(w.source.name, ":".join(w.key), w.effect, w.by.source.name if w.by else None,
             w.final) for w in provenance.writes(path, section)]


def test_every_write_in_merge_order_with_what_became_of_it(load_inventory) -> None:
    inventory = load_inventory(LAYERED, strict_constant_parameters=False)
    provenance = inventory.provenance("n1")
    assert provenance.error is None and provenance.nodeinfo is not None
    assert summary(provenance, ("port",)) == [
        ("a", "port", "overridden", "b", False),
        ("b", "port", "replaced", "c", False),
        ("c", "port", "set", None, True),
    ]
    assert summary(provenance, ("ssh", "root")) == [
        ("a", "ssh:root", "set", None, True),
        ("b", "ssh:root", "ignored", "a", False),
    ]
    assert summary(provenance, ("pkgs",)) == [
        ("a", "pkgs", "set", None, True),
        ("b", "pkgs", "appended", None, True),
        ("n1", "pkgs", "appended", None, True),
    ]
    assert summary(provenance, ("old", "before")) == [
        ("a", "old:before", "removed", "c", False),
        ("c", "old", "removes", None, False),
    ]
    assert {w.effect for p in provenance.written_paths() for w in provenance.writes(p)} \
        <= set(EFFECTS)


def test_writes_carry_their_place_and_flags(load_inventory) -> None:
    inventory = load_inventory(LAYERED, strict_constant_parameters=False)
    provenance = inventory.provenance("n1")
    first, second, third = provenance.writes(("port",))
    assert first.file is not None and first.file.endswith("classes/a.yml")
    assert (first.location.line, first.location.column) == (2, 3)
    assert (third.flag, third.written.text, third.line) == ("~", "${real}", 3)
    [constant, _] = provenance.writes(("ssh", "root"))
    assert constant.flag == "=" and constant.line == 4
    assert provenance.references(("port",)) == ["real"]
    assert provenance.value(("port",)) == 90 and provenance.value(("nope",)) is MISSING


def test_a_reference_to_a_mapping_is_a_write_above_its_keys(load_inventory) -> None:
    inventory = load_inventory({
        "classes/defaults.yml": "parameters:\n  defaults:\n    port: 1\n    host: h\n",
        "classes/web.yml": "classes: [defaults]\nparameters:\n  web: ${defaults}\n",
        "nodes/n1.yml": "classes: [web]\nparameters:\n  web:\n    port: 2\n",
    })
    provenance = inventory.provenance("n1")
    port = provenance.writes(("web", "port"))
    assert [(w.source.name, w.key, w.via, w.effect) for w in port] == [
        ("web", ("web",), "${defaults}", "overridden"), ("n1", ("web", "port"), None, "set")]
    [host] = provenance.writes(("web", "host"))
    assert (host.via, host.final) == ("${defaults}", True)


def test_entities_in_merge_order_with_who_listed_them(load_inventory) -> None:
    inventory = load_inventory(LAYERED, strict_constant_parameters=False)
    entities = inventory.provenance("n1").entities
    assert [(m.entity.name, m.kind, m.listed_by.entity.name if m.listed_by else None)
            for m in entities] == [("n1", "automatic", None), ("a", "class", "b"),
                                   ("b", "class", "c"), ("c", "class", "n1"),
                                   ("n1", "node", None)]


def test_reads_name_the_files_classes_and_exports_a_node_depends_on(load_inventory) -> None:
    inventory = load_inventory({
        "classes/web.yml": "classes: [gone]\nexports:\n  ip: ${ip}\n",
        "nodes/w1.yml": "classes: [web]\nparameters:\n  ip: 1\n",
        "nodes/w2.yml": "classes: [web]\nparameters:\n  ip: 2\n",
        "nodes/lb.yml": "parameters:\n  backends: $[ exports:ip ]\n",
    }, ignore_class_notfound=True)
    reads = inventory.provenance("w1").reads
    assert reads.node_file is not None and reads.node_file.endswith("nodes/w1.yml")
    assert reads.classes["gone"] is None and reads.classes["web"].endswith("classes/web.yml")
    assert reads.files == [reads.node_file, reads.classes["web"]]
    assert reads.node_list is False
    lb = inventory.provenance("lb")
    assert lb.reads.node_list is True
    assert lb.nodeinfo["parameters"]["backends"] == {"w1": 1, "w2": 2}
    assert {node: paths for node, paths in lb.reads.exports.items() if node != "lb"} == {
        "w1": {("ip",)}, "w2": {("ip",)}}


def test_a_failing_node_keeps_what_was_merged_and_its_error(load_inventory) -> None:
    inventory = load_inventory(LAYERED)  # strict constants: b's write to ssh:root fails
    provenance = inventory.provenance("n1")
    assert provenance.nodeinfo is None
    assert "constant" in str(provenance.error)
    assert [m.entity.name for m in provenance.entities] == ["n1", "a"]
    [_, ignored] = provenance.writes(("ssh", "root"))
    assert (ignored.source.name, ignored.effect) == ("b", "ignored")


def test_explain_after_a_failed_inventory_render_still_sees_the_classes(load_inventory) -> None:
    inventory = load_inventory({"classes/web.yml": "parameters:\n  port: 80\n",
                                "nodes/a0.yml": "classes: [missing]\n",
                                **{f"nodes/a{i}.yml": "classes: [web]\n" for i in (1, 2, 3)}})
    with pytest.raises(ReclassError):
        inventory.inventory()  # fails at a0, leaving the shared walk of [web] half used
    assert summary(inventory.provenance("a1"), ("port",)) == [("web", "port", "set", None, True)]


def test_a_recorded_render_is_the_plain_render_on_the_whole_corpus() -> None:
    """Recording changes nothing: each node's nodeinfo (or error) is the plain one, and every
    written leaf is present exactly when some write is final."""
    assert CORPUS.is_dir(), f"the conformance corpus is missing: {CORPUS}"
    checked = 0
    for scenario in sorted(CORPUS.glob("*/scenario.json")):
        if json.loads(scenario.read_text()).get("args"):
            continue
        try:
            inventory = reclass_ng.load(str(scenario.parent / "inventory"), warn=lambda _: None)
            names = inventory.node_names
        except ReclassError:
            continue
        for name in names:
            try:
                plain: Any = inventory.nodeinfo(name)
            except ReclassError as err:
                plain = str(err)
            provenance = inventory.provenance(name)
            recorded = provenance.nodeinfo if provenance.error is None else str(provenance.error)
            for info in (plain, recorded):
                if isinstance(info, dict):
                    info["__reclass__"].pop("timestamp")
            assert recorded == plain, (scenario.parent.name, name)
            if provenance.error is None:
                for path in provenance.written_paths():
                    value = provenance.value(path)
                    finals = [w for w in provenance.writes(path) if w.final]
                    if not (isinstance(value, dict) and value):
                        assert (value is MISSING) == (not finals), (scenario.parent.name, path)
            checked += 1
    assert checked > 200


def _write_summary(write: Any) -> tuple:
    by = write.by
    return (write.source.name, write.path, write.key, write.flag, id(write.written), write.effect,
            write.final, write.via, write.order, write.line,
            (by.source.name, by.key, by.effect) if by is not None else None)


def test_key_writes_are_the_writes_at_each_written_key_on_the_whole_corpus() -> None:
    """The one-walk record of every write (what lint reads) says what writes() says, path by
    path, on every node of the corpus, failing nodes and exports included."""
    checked = contested_paths = 0
    for scenario in sorted(CORPUS.glob("*/scenario.json")):
        if json.loads(scenario.read_text()).get("args"):
            continue
        try:
            inventory = reclass_ng.load(str(scenario.parent / "inventory"), warn=lambda _: None)
            names = inventory.node_names
        except ReclassError:
            continue
        for name in names:
            for section in ("parameters", "exports"):
                provenance = inventory.provenance(name)
                walked = [(path, [_write_summary(w) for w in writes])
                          for path, writes in provenance.key_writes(section)]
                asked = [(path, [_write_summary(w) for w in provenance.writes(path, section)
                                 if w.key == path and w.effect != "removes"])
                         for path in provenance.written_paths((), section)]
                assert walked == asked, (scenario.parent.name, name, section)
                contested = {path: [_write_summary(w) for w in writes]
                             for path, writes in provenance.contested_key_writes(section)}
                assert contested == {path: writes for path, writes in walked
                                     if any(w[5] not in ("set", "merged") for w in writes)}, \
                    (scenario.parent.name, name, section)
                checked += len(walked)
                contested_paths += len(contested)
    assert checked > 1000 and contested_paths > 100


def test_a_layered_node_key_by_key(load_inventory) -> None:
    inventory = load_inventory(LAYERED, strict_constant_parameters=False)
    provenance = inventory.provenance("n1")
    walked = {path: [(w.source.name, w.effect, w.by.source.name if w.by else None, w.final)
                     for w in writes] for path, writes in provenance.key_writes()}
    assert walked[("port",)] == [("a", "overridden", "b", False), ("b", "replaced", "c", False),
                                 ("c", "set", None, True)]
    assert walked[("ssh", "root")] == [("a", "set", None, True), ("b", "ignored", "a", False)]
    assert walked[("pkgs",)] == [("a", "set", None, True), ("b", "appended", None, True),
                                 ("n1", "appended", None, True)]
    contested = {path for path, _ in provenance.contested_key_writes()}
    assert contested == {("port",), ("ssh", "root"), ("pkgs",), ("old", "before")}
    # The rest is each entity's own tree, as values_written walks it.
    [(_, a_tree)] = [(s, v) for s, v in provenance.entity_values() if s.name == "a"]
    assert [(path, flag) for path, _, flag in values_written(a_tree)] == [
        (("port",), ""), (("ssh",), ""), (("ssh", "root"), "="), (("pkgs",), ""),
        (("old",), ""), (("old", "before"), "")]


def test_a_mapped_class_names_the_first_class_mappings_entry_giving_it(load_inventory) -> None:
    inventory = load_inventory({
        "classes/web.yml": "parameters:\n  web: 1\n",
        "classes/base.yml": "parameters:\n  base: 1\n",
        "nodes/web1.yml": "classes: [base]\n",
    }, class_mappings=["db* base", r"/^(web)\d$/ \\1 base", "* base"])
    provenance = inventory.provenance("web1")
    web, base = provenance.mapped_class("web"), provenance.mapped_class("base")
    assert (web.name, web.index, web.entry) == ("web", 1, r"/^(web)\d$/ \\1 base")
    assert (base.index, base.entry) == (1, r"/^(web)\d$/ \\1 base")
    assert provenance.mapped_class("other") is None
    assert [m.entity.name for m in provenance.entities if m.listed_by
            and m.listed_by.kind == "automatic"] == ["web", "base"]
