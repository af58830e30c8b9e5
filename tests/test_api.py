"""The public entry points (reclass_ng/api.py): `load()` and the Inventory it returns."""

from __future__ import annotations

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
