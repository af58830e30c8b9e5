"""Rendering (reclass_ng/render.py): a node from its files to nodeinfo, the whole inventory."""

from __future__ import annotations

from speeds import at_speed

from reclass_ng.render import automatic_parameters, inventory_document
from reclass_ng.settings import Speed
from reclass_ng.values import Source

FILES = {
    "classes/web.yml": "applications: [nginx]\nparameters:\n  port: ${base}\n",
    "classes/lab/init.yml": "parameters:\n  base: 80\n",
    "classes/lab/web.yml": "parameters:\n  lab: true\n",
    "nodes/lab/web1.yml": "classes: [lab]\n",
    "nodes/db1.yml": "parameters:\n  base: 1\n",
}


def test_automatic_parameters_are_kapicorps_in_its_key_order():
    assert automatic_parameters("web1.lab.example", "prod") == {"_reclass_": {
        "name": {"full": "web1.lab.example", "short": "example",
                 "path": "web1/lab/example", "parts": ["web1", "lab", "example"]},
        "environment": "prod"}}


def test_the_inventory_document_lists_the_nodes_of_each_class_and_application():
    nodes = {"a": {"classes": ["x", "y"], "applications": ["app"]},
             "b": {"classes": ["y"], "applications": []}}
    document = inventory_document(nodes)
    assert document["classes"] == {"x": ["a"], "y": ["a", "b"]}
    assert document["applications"] == {"app": ["a"]}
    assert document["nodes"] is nodes and "timestamp" in document["__reclass__"]


def test_class_mappings_match_the_name_or_with_match_path_the_file_path(load_inventory):
    by_name = load_inventory(FILES, class_mappings=["web* web"])
    assert by_name.nodeinfo("web1")["classes"] == ["web", "lab"]
    by_path = load_inventory(FILES, class_mappings=["lab/* web"],
                             class_mappings_match_path=True)
    assert by_path.nodeinfo("web1")["parameters"]["port"] == 80
    assert by_path.nodeinfo("db1")["classes"] == []


def test_a_prepared_entity_is_merged_as_a_file_with_relative_names_and_references(
        load_inventory):
    inventory = load_inventory(FILES)
    extra = inventory.prepared_entity(
        {"classes": [".web"], "parameters": {"from_extra": "${base}"}},
        Source("groups://lab", "groups of web1", "extra"), relative_base="lab.init")
    info = inventory.nodeinfo("web1", extra=[extra])
    assert info["classes"] == ["lab.web", "lab"]
    assert info["parameters"]["from_extra"] == 80 and info["parameters"]["lab"] is True


def test_the_inventory_with_shared_subtrees_is_the_one_rendered_node_by_node(load_inventory):
    inventory = load_inventory({**FILES, "nodes/web2.yml": "classes: [web, lab]\n",
                                "nodes/web3.yml": "classes: [web, lab]\n"})
    shared = inventory.render_serially()
    alone = at_speed(inventory, Speed(rendered_subtrees=False)).render_serially()
    for document in (shared, alone):
        document.pop("__reclass__")
        for info in document["nodes"].values():
            info["__reclass__"].pop("timestamp")
    assert shared == alone and shared["nodes"]["web2"]["parameters"]["port"] == 80


def test_a_rendered_node_is_freed_by_reference_counting(make_inventory) -> None:
    """The cycle collector is off during renders (reclass_ng.collector): a node the caller lets
    go of must not wait in a reference cycle (its resolvers', Resolver.release) until exit, or a
    streamed `--inventory` would hold every node anyway."""
    import gc

    import reclass_ng

    root = make_inventory({"classes/c.yml": "parameters:\n  a: ${b}\n  b: {x: [1, 2]}\n",
                           "nodes/n1.yml": "classes: [c]\nparameters:\n  d: ${a:x}\n",
                           "nodes/n2.yml": "classes: [c]\nexports:\n  e: ${b}\n"})
    inventory = reclass_ng.load(str(root))
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in inventory.rendered_nodes():
            pass
        inventory.nodeinfo("n1")
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
