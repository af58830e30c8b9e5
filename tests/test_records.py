"""Immutable value records (reclass_ng/records.py): equality, hashing, repr, pickling."""

from __future__ import annotations

import pickle

import pytest

from reclass_ng.entity import Entity
from reclass_ng.values import Source


def test_records_are_equal_by_fields_and_type_and_hash_alike():
    one, two = Source("u", "n", "class", "/p"), Source("u", "n", "class", "/p")
    assert one == two and hash(one) == hash(two) and one != Source("u", "n", "node", "/p")
    assert Entity("n", "u") != Source("u", "n", "class")
    assert repr(Entity("n", "u")).startswith("Entity(name='n', uri='u'")


def test_records_refuse_changes_and_survive_pickling():
    source = Source("u", "n", "class", "/p")
    with pytest.raises(AttributeError, match="immutable"):
        source.uri = "v"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del source.uri  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(source)) == source
