"""Preparing a file's document (reclass_ng/prepare.py): checked once, names made absolute,
`~`/`=` prefixes turned into flagged layers."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.errors import EntityFormatError, ReclassError
from reclass_ng.prepare import EntityPreparer, absolute_class_name
from reclass_ng.settings import Speed
from reclass_ng.storage import load_settings
from reclass_ng.syntax.grammar import ValueParser
from reclass_ng.values import Interpolation, Source, Stack


@pytest.mark.parametrize("name, base, expected", [
    ("app.web", "cluster.lab.node", "app.web"),
    (".web", "cluster.lab.init", "cluster.lab.web"),
    ("..web", "cluster.lab.init", "cluster.web"),
    ("....web", "cluster.lab", "web"),
    (".web", "", "web"),
    ("../web", "cluster.lab", "../web"),  # not a class name: left as written for the error
])
def test_a_relative_class_name_is_resolved_against_the_entity_listing_it(name, base, expected):
    assert absolute_class_name(name, base) == expected


def preparer() -> EntityPreparer:
    settings = load_settings(None, {}, read_config=False)
    parser = ValueParser(settings.reference_sentinels, settings.export_sentinels,
                         settings.escape_character)
    return EntityPreparer(settings, parser)


SOURCE = Source("yaml_fs:///inv/classes/lab/init.yml", "lab.init", "class",
                "/inv/classes/lab/init.yml")


def test_a_document_becomes_an_entity_with_references_parsed_and_flags_layered():
    entity = preparer().entity({"classes": [".web", "base", "base"], "environment": 3,
                                "parameters": {"~a": {"b": 1}, "ref": "${a:b}", "n": 2}},
                               SOURCE, "lab.init")
    assert entity.classes == ("lab.web", "base")
    assert entity.environment == "3"
    assert type(entity.parameters["a"]) is Stack and entity.parameters["a"].layers[0].override
    assert type(entity.parameters["ref"]) is Interpolation
    assert entity.parameters["n"] == 2 and entity.source is SOURCE


@pytest.mark.parametrize("document, message", [
    (["not", "a", "mapping"], "a node or class file must be a mapping"),
    ({"classes": "base"}, "'classes' must be a list of names"),
    ({"classes": [1]}, "1 is not a string"),
    ({"parameters": [1]}, "'parameters' must be a mapping"),
])
def test_a_malformed_document_is_refused_naming_its_file(document, message):
    with pytest.raises(EntityFormatError) as caught:
        preparer().entity(document, SOURCE, "lab.init")
    assert message in str(caught.value) and "init.yml" in str(caught.value)


def prepared_shape(value: Any) -> Any:
    """Everything a prepared value says, as plain data: types, a mapping's keys to render,
    each string's template and file, each layer's flags."""
    kind = type(value)
    if kind is Interpolation:
        return ("interpolation", value.text, value.template, value.source, value.reference_path)
    if kind is Stack:
        return ("stack", value.shared, [(prepared_shape(layer.value), layer.source,
                                         layer.override, layer.constant)
                                        for layer in value.layers])
    if isinstance(value, dict):
        return (kind.__name__, getattr(value, "dirty", None), getattr(value, "merged", None),
                [(type(k).__name__, k, prepared_shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return (kind.__name__, getattr(value, "dirty", None), getattr(value, "merged", None),
                [prepared_shape(v) for v in value])
    return (kind.__name__, value)


# What a file holds: names with and without `~`/`=`, numbers as keys, plain text, references,
# queries, escapes, and mappings and lists inside one another.
_KEYS = st.sampled_from(["a", "b", "~a", "=b", "~=c", "1", "", "~"]) | st.integers(0, 2)
_STRINGS = st.sampled_from(["plain", "${a}", "x ${a:b} y", "\\${a}", "$[ exports:a ]",
                            "${a}${b}", "$"])
_SCALARS = _STRINGS | st.integers(-1, 1) | st.booleans() | st.none()
_DOCUMENTS = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=12)


def prepared_or_error(speed: Speed, document: Any) -> tuple[Any, set[str]]:
    settings = load_settings(None, {}, read_config=False)
    parser = ValueParser(settings.reference_sentinels, settings.export_sentinels,
                         settings.escape_character)
    preparer = EntityPreparer(settings, parser, speed)
    try:
        entity = preparer.entity({"parameters": document}, SOURCE, "lab.init")
    except ReclassError as err:
        return ("error", type(err).__name__, str(err)), preparer.kept_prefixes
    return prepared_shape(entity.parameters), preparer.kept_prefixes


@settings(max_examples=100)
@given(st.dictionaries(_KEYS, _DOCUMENTS, max_size=4))
def test_keeping_unchanged_mappings_prepares_what_copying_every_one_prepares(document):
    # Speed.shared_file_mappings against its reference (EntityPreparer._mapping): the same
    # types, values, keys to render, layers and errors, and the same kept prefixes.
    document_before = copy.deepcopy(document)
    fast = prepared_or_error(Speed(), document)
    assert fast == prepared_or_error(Speed.reference(), document)
    assert document == document_before  # the parsed document is never changed


def test_a_mapping_that_needs_no_change_is_kept_as_parsed_and_one_that_does_is_copied():
    plain = {"port": 80, "hosts": ["a", "b"], "nested": {"x": "text"}}
    items = [{"name": "web"}, "${host}"]
    document = {"parameters": {"plain": plain, "items": items, "ref": {"to": "${plain:port}"}}}
    parameters = preparer().entity(document, SOURCE, "lab.init").parameters
    assert parameters["plain"] is plain  # shared with the parsed document: nothing to do
    assert parameters["items"] is not items and parameters["items"][0] is items[0]
    assert parameters["items"].dirty == (1,)
    assert parameters["ref"].dirty == ("to",) and document["parameters"]["ref"]["to"] == \
        "${plain:port}"
    reference = EntityPreparer(load_settings(None, {}, read_config=False),
                               ValueParser(), Speed.reference())
    assert reference.entity(document, SOURCE, "lab.init").parameters["plain"] is not plain
    # A document given through the API stays its caller's: nothing of it is kept.
    given = preparer().entity(document, SOURCE, "lab.init", copy=True).parameters
    assert given["plain"] == plain and given["plain"] is not plain
