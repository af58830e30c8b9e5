"""What a recorded render says a node read (reclass_ng.observe.inputs, through the RenderObserver
seam): the facts incremental re-rendering depends on, including the three that a writes
observer does not need: a class file that fails to load, the classes of a shared walk, and the
files read by the merges of the nodes a query read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import reclass_ng
from reclass_ng.classes import SharedClassWalks
from reclass_ng.errors import ReclassError
from reclass_ng.observe.inputs import InputsRecorder
from tests.inventory_writer import write_inventory


def _inventory(tmp_path: Path, files: dict[str, str]) -> Any:
    return reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False,
                           warn=lambda message: None)


def _render(inventory: Any, recorder: InputsRecorder, names: list[str]) -> None:
    """Merge then interpolate `names`, as the incremental render does."""
    inventory.renderer.expect_nodes(names)
    merged = {}
    for name in names:
        observer = recorder.observer(name)
        merged[name] = (inventory.renderer.merge(name, observer=observer), observer)
    for node, observer in merged.values():
        inventory.interpolated_nodeinfo(node, observer)


def test_a_class_file_that_fails_to_load_is_an_input(tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, {"classes/ok.yml": "classes: [bad]\n",
                                      "classes/bad.yml": "parameters: {a: [\n",
                                      "nodes/n.yml": "classes: [ok]\n"})
    recorder = InputsRecorder()
    with pytest.raises(ReclassError):
        inventory.renderer.merge("n", observer=recorder.observer("n"))
    inputs = recorder.inputs("n")
    assert inputs is not None and inputs.node_file == str(tmp_path / "nodes/n.yml")
    assert [name for name, _ in inputs.class_files] == ["ok", "bad"]
    assert inputs.class_files[1][1] == str(tmp_path / "classes/bad.yml")


def test_a_recorded_render_keeps_the_shared_walks_and_records_their_classes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks = []
    walk_alone = SharedClassWalks._walk_alone
    monkeypatch.setattr(SharedClassWalks, "_walk_alone",
                        lambda self, entity: walks.append(entity.name) or walk_alone(self, entity))
    inventory = _inventory(tmp_path, {
        "classes/base.yml": "parameters: {a: 1}\n",
        "classes/role.yml": "classes: [base]\nparameters: {b: 2}\n",
        **{f"nodes/n{i}.yml": "classes: [role]\n" for i in range(3)}})
    recorder = InputsRecorder()
    _render(inventory, recorder, ["n0", "n1", "n2"])
    assert walks == ["n0"]
    for name in ("n0", "n1", "n2"):
        inputs = recorder.inputs(name)
        assert inputs is not None and inputs.queried_nodes is None
        assert dict(inputs.class_files) == {"role": str(tmp_path / "classes/role.yml"),
                                            "base": str(tmp_path / "classes/base.yml")}


def test_a_query_brings_the_inputs_of_the_nodes_it_merged(tmp_path: Path) -> None:
    inventory = _inventory(tmp_path, {
        "classes/web.yml": "exports: {ip: '${ip}'}\nparameters: {ip: 10.0.0.1}\n",
        "nodes/web.yml": "classes: [web]\n",
        "nodes/lb.yml": "parameters:\n  ips: $[ exports:ip ]\n  none: $[ if exports:x == 1 ]\n",
    })
    recorder = InputsRecorder()
    _render(inventory, recorder, ["lb"])  # web is merged only by lb's query
    lb, web = recorder.inputs("lb"), recorder.inputs("web")
    assert lb is not None and lb.queried_nodes is not None and set(lb.queried_nodes) == {
        "lb", "web"}
    assert web is not None and web.node_file == str(tmp_path / "nodes/web.yml")
    assert web.class_files == (("web", str(tmp_path / "classes/web.yml")),)



def test_a_queried_node_with_a_changed_constant_brings_every_class_it_read(
        tmp_path: Path) -> None:
    # web's merge changes a constant (c then d) that its exports never read: the query merges
    # web again keeping the constant (issue 36, finding 3), and that merge's reads, class e
    # after the change included, are web's inputs.
    inventory = _inventory(tmp_path, {
        "classes/c.yml": "parameters:\n  '=k': 1\n", "classes/d.yml": "parameters:\n  k: 2\n",
        "classes/e.yml": "exports: {ip: 1}\n",
        "nodes/web.yml": "classes: [c, d, e]\n",
        "nodes/lb.yml": "parameters:\n  ips: $[ exports:ip ]\n",
    })
    recorder = InputsRecorder()
    _render(inventory, recorder, ["lb"])
    assert inventory.nodeinfo("lb")["parameters"]["ips"] == {"web": 1}
    web = recorder.inputs("web")
    assert web is not None and [name for name, _ in web.class_files] == ["c", "d", "e"]
