"""The tree types and helpers of reclass_ng.values: the one plain-data conversion and the files
a merge error lists."""

from __future__ import annotations

import datetime

from reclass_ng.values import Layer, OwnedDict, OwnedList, Source, layer_files, to_plain


def test_plain_data_is_built_from_the_built_in_types_only() -> None:
    tree = OwnedDict({"a": OwnedList([1, (2, 3)]), "b": {"c": OwnedDict({"d": None})}})
    plain = to_plain(tree)
    assert plain == {"a": [1, [2, 3]], "b": {"c": {"d": None}}}
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is list
    assert type(plain["b"]["c"]) is dict
    plain["a"].append(4)
    assert tree["a"] == [1, (2, 3)]  # a copy


def test_dates_as_text_and_json_compatible_data() -> None:
    day = datetime.date(2024, 5, 1)
    assert to_plain({"d": day}) == {"d": day}
    assert to_plain({"d": [day]}, dates_as_text=True) == {"d": ["2024-05-01"]}
    # Data read from outside (Puppet facts): keys, dates and bytes become text as well.
    assert to_plain({1: day, "b": b"\xffok", "t": (True, 2.5)}, json_compatible=True) == \
        {"1": "2024-05-01", "b": "\ufffdok", "t": [True, 2.5]}


def test_a_merge_error_lists_each_file_once_in_merge_order() -> None:
    a = Source("yaml_fs:///i/classes/a.yml", "a", "class", "/i/classes/a.yml")
    n = Source("yaml_fs:///i/nodes/n.yml", "n", "node", "/i/nodes/n.yml")
    layers = [Layer(1, a), Layer(2, None), Layer(3, n), Layer(4, a)]
    assert layer_files(layers) == [a, n]
    assert layer_files([]) == []
