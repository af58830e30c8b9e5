"""Entities (reclass_ng.entity): where an entity, and its class list, come from."""

from __future__ import annotations

from reclass_ng.entity import Entity
from reclass_ng.values import Source


def test_an_entity_from_a_file_comes_from_its_file() -> None:
    source = Source("yaml_fs:///i/nodes/n.yml", "n", "node", "/i/nodes/n.yml")
    entity = Entity("n", source.uri, source=source)
    assert entity.origin is source
    assert entity.classes_origin is source


def test_an_entity_given_through_the_api_comes_from_its_uri() -> None:
    entity = Entity("extra", "api://extra")
    assert entity.origin == Source("api://extra", "extra", "extra")
    assert entity.origin.path is None


def test_the_class_list_of_a_nodes_automatic_entity_comes_from_the_class_mappings() -> None:
    # Its parameters are the automatic ones; its classes are what class_mappings give.
    source = Source("automatic parameters", "n", "automatic")
    entity = Entity("n", "class_mappings in /i/reclass-config.yml", source=source)
    assert entity.origin is source
    assert entity.classes_origin.uri == "class_mappings in /i/reclass-config.yml"
