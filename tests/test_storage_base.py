"""The storage interface (reclass_ng/storage/base.py): a storage is one module of
reclass_ng.storage that `storage_type` names. This one keeps its files in memory."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from inventory_writer import write_inventory

import reclass_ng

FILES = {
    "nodes/web1.yml": "environment: prod\nclasses: [role.web]\nparameters: {host: web1}\n",
    "nodes/db1.yml": "classes: [common]\nparameters: {host: db1}\n",
    "classes/common.yml": "applications: [ssh]\nparameters:\n  motd: ${host} (${stage})\n"
                          "  stage: any\n",
    "classes/role/web.yml": "classes: [common]\napplications: [nginx]\n",
}
# Environment prod reads its classes from another set of files.
PROD_CLASSES = {"classes/common.yml": "applications: [ssh]\nparameters:\n"
                                      "  motd: ${host} (${stage})\n  stage: production\n"}


class MemoryNode:
    def __init__(self, name: str, path: str) -> None:
        self.name, self.path, self.pathname = name, path, path[len("nodes/"):-len(".yml")]

    @property
    def uri(self) -> str:
        return "memory://" + self.path


class MemoryClasses:
    """One environment's class files: class name -> path, path -> text."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.class_paths = {path[len("classes/"):-len(".yml")].replace("/", "."): path
                            for path in files if path.startswith("classes/")}
        self.classes_uri = "memory://classes"

    def class_path(self, name: str) -> str | None:
        return self.class_paths.get(name)

    def check_classes(self) -> None:
        pass

    def parsed(self, path: str) -> Any:
        return yaml.safe_load(self.files[path])

    def origin(self, path: str) -> str:
        return "memory://" + path


class MemoryStorage(MemoryClasses):
    def __init__(self, files: Mapping[str, str], by_environment: dict[str, MemoryClasses]
                 ) -> None:
        super().__init__(files)
        self.nodes = {path[len("nodes/"):-len(".yml")]: MemoryNode(
            path[len("nodes/"):-len(".yml")], path) for path in files if path.startswith("nodes/")}
        self.nodes_uri = "memory://nodes"
        self.by_environment = by_environment

    def classes_for(self, environment: str) -> MemoryClasses:
        return self.by_environment.get(environment, self)


@pytest.fixture
def memory_storage_module() -> Iterator[types.ModuleType]:
    """The module `storage_type: memory_for_tests` loads; its `files` are what it serves."""
    module = types.ModuleType("reclass_ng.storage.memory_for_tests")
    module.files = dict(FILES)  # type: ignore[attr-defined]

    def open_storage(settings: Any, reuse: object = None) -> MemoryStorage:
        files = module.files  # type: ignore[attr-defined]
        return MemoryStorage(files, {"prod": MemoryClasses({**files, **PROD_CLASSES})})

    module.open_storage = open_storage  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_a_storage_is_one_module_named_by_storage_type(memory_storage_module: types.ModuleType,
                                                       tmp_path: Path) -> None:
    rendered = reclass_ng.load(None, read_config=False,
                               storage_type="memory_for_tests").inventory()
    on_disk = reclass_ng.load(str(write_inventory(tmp_path / "inv", FILES)),
                              read_config=False).inventory()
    db1 = rendered["nodes"]["db1"]
    assert db1["__reclass__"]["uri"] == "memory://nodes/db1.yml"
    assert {k: v for k, v in db1.items() if k != "__reclass__"} == {
        k: v for k, v in on_disk["nodes"]["db1"].items() if k != "__reclass__"}
    # the prod node reads the prod classes
    assert rendered["nodes"]["web1"]["parameters"]["motd"] == "web1 (production)"
    assert on_disk["nodes"]["web1"]["parameters"]["motd"] == "web1 (any)"


def test_errors_name_the_origins_the_storage_gives(memory_storage_module: types.ModuleType
                                                   ) -> None:
    memory_storage_module.files["classes/role/web.yml"] = "classes: [commn]\n"  # a typo
    inventory = reclass_ng.load(None, read_config=False, storage_type="memory_for_tests")
    with pytest.raises(reclass_ng.ReclassError) as failed:
        inventory.nodeinfo("web1")
    message = failed.value.message
    assert "Class commn not found under memory://classes" in message, message
    assert "memory://classes/role/web.yml" in message, message
