"""Salt's ext_pillar and master_tops keep one live inventory per configuration between calls
(as a master process calls them, once per minion): every call still sees the files as they are."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from inventory_writer import write_inventory
from test_plain_data import same

import reclass_ng
from reclass_ng.adapters import salt
from reclass_ng.adapters.inventory_source import open_inventory
from reclass_ng.incremental.adapter_pool import LiveInventoryPool


def fresh_pillar(base: Path, minion: str) -> dict:
    return salt.pillar_data(reclass_ng.load(str(base)).nodeinfo(minion))


def test_successive_ext_pillar_calls_see_every_change(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {
        "nodes/m1.yml": "classes: [common]\nparameters: {role: web}\n",
        "nodes/m2.yml": "classes: [common]\n",
        "classes/common.yml": "applications: [ntp]\nparameters: {ntp: {server: a}}\n",
    })
    options = {"inventory_base_uri": str(base)}
    for minion in ("m1", "m2"):
        assert salt.ext_pillar(minion, {}, **options) == fresh_pillar(base, minion)
    common = base / "classes" / "common.yml"
    stat = common.stat()
    common.write_text("applications: [ntp]\nparameters: {ntp: {server: b}}\n")  # same size
    os.utime(common, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert salt.ext_pillar("m2", {}, **options)["ntp"] == {"server": "b"}
    (base / "nodes" / "m3.yml").write_text("classes: [extra]\n")
    (base / "classes" / "extra.yml").write_text("applications: [nginx]\n")
    assert salt.ext_pillar("m3", {}, **options) == fresh_pillar(base, "m3")
    assert salt.top("m3", **options) == {"base": ["nginx"]}
    (base / "reclass-config.yml").write_text("default_environment: prod\n")
    assert salt.top(None, **options) == {"prod": {"m1": ["ntp"], "m2": ["ntp"], "m3": ["nginx"]}}
    assert salt.ext_pillar("m1", {}, **options) == fresh_pillar(base, "m1")


def test_the_pool_keeps_a_bounded_number_of_configurations(tmp_path: Path) -> None:
    opened: list[str] = []

    def open_inventory(base_uri: str | None, **settings: object) -> reclass_ng.Inventory:
        opened.append(str(base_uri))
        return reclass_ng.load(base_uri)

    pool = LiveInventoryPool(open_inventory, limit=2)
    bases = [write_inventory(tmp_path / f"inv{i}", {"nodes/n.yml": f"parameters: {{i: {i}}}\n"})
             for i in range(3)]
    for base in bases + bases[-1:]:
        assert pool.use(str(base), {}, "n", lambda inv: inv.nodeinfo("n"))["parameters"]["i"] \
            == bases.index(base)
    assert len(pool) == 2
    assert opened == [str(b) for b in bases]  # the last one was served from the pool


TYPED_NODE = """\
parameters:
  count: 3
  ratio: 3.0
  flag: true
  unset: null
  since: 2024-01-02
  nested: {list: [1, 2.5, {deep: [x]}], map: {a: {b: c}}}
"""


def test_changing_what_ext_pillar_returned_never_changes_a_later_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = write_inventory(tmp_path / "inv", {
        "nodes/typed.yml": TYPED_NODE,  # a date: the pickled copy
        "nodes/plain.yml": TYPED_NODE.replace("  since: 2024-01-02\n", ""),  # the JSON copy
        "nodes/nan.yml": TYPED_NODE.replace("3.0", ".nan").replace("  since: 2024-01-02\n", ""),
    })
    cache = tmp_path / "cache"
    for restart in range(2):  # the second time, a new "process" served from cache_dir
        monkeypatch.setattr(salt, "LIVE_INVENTORIES", LiveInventoryPool(open_inventory))
        for minion in ("typed", "plain", "nan"):
            expected = fresh_pillar(base, minion)
            for _ in range(3):
                pillar = salt.ext_pillar(minion, {}, inventory_base_uri=str(base),
                                         cache_dir=str(cache))
                assert same(pillar, expected), (restart, minion)
                pillar["nested"]["list"][2]["deep"].append("changed")
                pillar["nested"]["map"]["a"]["b"] = "changed"
                pillar["__reclass__"]["classes"].append("changed")
                pillar["_reclass_"]["name"].clear()
                del pillar["count"]
        assert any(path.name.startswith("live-") for path in cache.iterdir())


def test_one_inventorys_floats_never_change_how_anothers_pillars_are_copied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A NaN read by one configuration once made the master process read back and compare
    # the pillar JSON of every configuration (a process global, never reset); whether floats
    # may differ is now known per inventory, and the NaN one's pillar is still exact.
    nan_base = write_inventory(tmp_path / "nan", {
        "nodes/n.yml": "parameters: {missing: .nan, tiny: 0.00001}\n"})
    plain_base = write_inventory(tmp_path / "plain", {"nodes/p.yml": "parameters: {x: 2.5}\n"})
    read_back: list[bool] = []
    real_plain_json = salt.plain_json

    def recording_plain_json(value: object, nan_possible: bool = True) -> bytes | None:
        read_back.append(nan_possible)
        return real_plain_json(value, nan_possible)

    monkeypatch.setattr(salt, "plain_json", recording_plain_json)
    monkeypatch.setattr(salt, "LIVE_INVENTORIES", LiveInventoryPool(open_inventory))
    monkeypatch.setattr(salt, "PILLARS", salt.PillarCopies())
    nan_pillar = salt.ext_pillar("n", {}, inventory_base_uri=str(nan_base))
    assert math.isnan(nan_pillar["missing"]) and nan_pillar["tiny"] == 1e-05
    assert salt.ext_pillar("p", {}, inventory_base_uri=str(plain_base))["x"] == 2.5
    assert read_back == [True, False]
