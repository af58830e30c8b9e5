"""The observer seam (reclass_ng/observe/seam.py): what an observer of one node's render is told."""

from __future__ import annotations

import pickle
from typing import Any

from reclass_ng.observe import ExportsPrefix, RenderObserver, WriteObserver


class CountingObserver(RenderObserver):
    def __init__(self) -> None:
        self.classes: list[str] = []
        self.merged: list[str] = []

    def class_read(self, name: str, path: str | None) -> None:
        self.classes.append(name)

    def entity_merged(self, entity: Any, listed_by: Any) -> None:
        self.merged.append(entity.name)


def test_an_observer_is_told_every_read_though_caches_and_shared_walks_saved_them(
        load_inventory) -> None:
    files = {f"nodes/n{i}.yml": "classes: [b]\n" for i in range(3)}
    inventory = load_inventory({**files, "classes/a.yml": "parameters: {x: 1}\n",
                                "classes/b.yml": "classes: [a]\n"})
    plain = inventory.inventory()["nodes"]  # shared walks and the class cache are now warm
    for name in ("n0", "n1"):
        observer = CountingObserver()
        node = inventory.renderer.merge(name, observer=observer)
        inventory.renderer.interpolate(node, observer=observer)
        assert observer.classes == ["b", "a"]
        assert observer.merged == [name, "a", "b", name]
        assert inventory.renderer.nodeinfo(node)["parameters"] == plain[name]["parameters"]


class PathLog(WriteObserver):
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def stacked(self, path: tuple, new_layers: Any, wrapped: Any) -> None:
        self.calls.append(("stacked", path))

    def appended(self, path: tuple) -> None:
        self.calls.append(("appended", path))


class ExportWrites(RenderObserver):
    def __init__(self) -> None:
        self.log = PathLog()

    def writes(self, section: str) -> WriteObserver | None:
        return self.log if section == "exports" else None


def test_export_writes_are_told_with_paths_inside_the_exports_section(load_inventory) -> None:
    inventory = load_inventory({"classes/a.yml": "exports:\n  ips: [1]\n  host: a\n",
                                "nodes/n1.yml": "classes: [a]\nexports:\n  ips: [2]\n"
                                                "  host: n\n"})
    observer = ExportWrites()
    node = inventory.renderer.merge("n1", observer=observer)
    assert observer.log.calls == [("appended", ("ips",)), ("stacked", ("host",))]
    assert isinstance(ExportsPrefix(observer.log), WriteObserver)
    assert node.exports["ips"] == [1, 2]


def test_the_default_observer_wants_nothing_and_pickles() -> None:
    observer = pickle.loads(pickle.dumps(RenderObserver()))
    assert observer.writes("parameters") is None and observer.queried_merge("n") is None
    assert RenderObserver.reads_only is False
