"""Preparing a file's document (reclass_ng/prepare.py): checked once, names made absolute,
`~`/`=` prefixes turned into flagged layers."""

from __future__ import annotations

import pytest

from reclass_ng.errors import EntityFormatError
from reclass_ng.prepare import EntityPreparer, absolute_class_name
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
