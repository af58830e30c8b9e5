"""The public entry points (reclass_ng/api.py): `load()` and the Inventory it returns."""

from __future__ import annotations

from inventory_writer import write_inventory

import reclass_ng


def test_load_reads_the_config_file_and_keyword_settings_win(make_inventory):
    base = make_inventory({
        "reclass-config.yml": "ignore_class_notfound: true\nnot_a_setting: 1\n"
                              "automatic_parameters: false\n",
        "nodes/n1.yml": "classes: [missing]\nparameters:\n  x: 1\n",
    })
    warnings: list[str] = []
    inventory = reclass_ng.load(str(base), warn=warnings.append, automatic_parameters=True)
    assert inventory.settings.ignore_class_notfound is True
    assert inventory.node_names == ["n1"]
    info = inventory.nodeinfo("n1")
    assert info["parameters"]["x"] == 1 and "_reclass_" in info["parameters"]
    assert set(inventory.inventory()["nodes"]) == {"n1"}
    assert isinstance(inventory.provenance("n1"), reclass_ng.NodeProvenance)


def test_without_read_config_the_config_file_is_not_read(make_inventory):
    base = make_inventory({"reclass-config.yml": "ignore_class_notfound: true\n",
                           "nodes/n1.yml": "parameters: {}\n"})
    inventory = reclass_ng.load(str(base), read_config=False)
    assert inventory.settings.ignore_class_notfound is False


def test_float_exactness_belongs_to_the_inventory_that_read_the_files(make_inventory, tmp_path):
    # Whether a float orjson prints unlike json was loaded (below 1e-4, NaN, infinity) was a
    # process global, set by any inventory and never reset: one inventory's files made every
    # other one's JSON be searched. Now each inventory knows what its own files held.
    inexact = reclass_ng.load(str(make_inventory({
        "nodes/tiny.yml": "parameters: {tiny: 0.00001, nan: .nan}\n"})))
    exact = reclass_ng.load(str(write_inventory(tmp_path / "exact", {
        "nodes/plain.yml": "parameters: {ratio: 2.5, count: 3}\n"})))
    assert exact.floats_json_exact is True  # nothing read yet
    assert inexact.inventory()["nodes"]["tiny"]["parameters"]["tiny"] == 1e-05
    assert exact.inventory()["nodes"]["plain"]["parameters"]["ratio"] == 2.5
    assert (inexact.floats_json_exact, exact.floats_json_exact) == (False, True)


def test_a_live_inventory_counts_the_floats_of_results_it_keeps(make_inventory):
    base = make_inventory({"nodes/tiny.yml": "parameters: {tiny: 0.00001}\n"})
    live = reclass_ng.load(str(base))
    live.refresh()
    assert live.nodeinfo("tiny")["parameters"]["tiny"] == 1e-05
    assert live.floats_json_exact is False
    (base / "nodes" / "plain.yml").write_text("parameters: {ratio: 2.5}\n")
    live.refresh()  # a new generation: tiny's result is kept, its file not read again
    assert live.nodeinfo("plain")["parameters"]["ratio"] == 2.5
    assert live.floats_json_exact is False
