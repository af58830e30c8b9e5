"""output/fragments.py: a node's fragment of an indented JSON inventory is written by the
whole-inventory writer (output.fast_json) and is the text the exact per-node writer gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.output import dump, fast_pretty_json, json_key
from reclass_ng.output.fragments import assemble_inventory, node_fragment

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([1e-5, 0.00001234, 1e-300, 2.5, -0.0, 1e16])
           | st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)
NODE_NAMES = st.text(min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(name=NODE_NAMES, parameters=VALUES)
def test_json_fragment_is_the_exact_writers_text(name: str, parameters: object) -> None:
    info = {"classes": ["a"], "applications": [], "parameters": {"p": parameters}}
    assert node_fragment(name, info, "json", True) == \
        json_key(name) + ": " + fast_pretty_json(info, "    ")


@settings(max_examples=30, deadline=None)
@given(nodes=st.dictionaries(NODE_NAMES, VALUES, min_size=1, max_size=4))
def test_assembled_json_inventory_is_the_dumped_document(nodes: dict[str, object]) -> None:
    infos = {name: {"classes": ["c"], "applications": ["app"], "parameters": {"v": value}}
             for name, value in nodes.items()}
    parts = [(name, ["c"], ["app"], node_fragment(name, info, "json", True))
             for name, info in infos.items()]
    text = "".join(assemble_inventory(parts, "json", True))
    stamp = text.split('"timestamp": ')[1].split("\n")[0]
    expected = dump({"__reclass__": {"timestamp": None}, "nodes": infos,
                     "classes": {"c": list(infos)}, "applications": {"app": list(infos)}},
                    "json", True)
    assert text == expected.replace('"timestamp": null', '"timestamp": ' + stamp)


def test_assembled_json_indexes_are_written_by_orjson(monkeypatch) -> None:
    # As the serial command line's (output.streamed): the exact writer took a third longer,
    # serially, after every node of a --jobs render was in. The reference speed keeps it.
    from reclass_ng.output import fast_json
    from reclass_ng.settings import Speed

    calls = []
    pieces = fast_json.inventory_json_pieces
    monkeypatch.setattr(fast_json, "inventory_json_pieces",
                        lambda *args, **kwargs: calls.append(1) or pieces(*args, **kwargs))
    info = {"classes": ["c"], "applications": ["app"], "parameters": {"v": "\u00e9"}}
    parts = [(name, ["c"], ["app"], node_fragment(name, info, "json", True))
             for name in ("n1", "n\u00e92")]
    fast = "".join(assemble_inventory(parts, "json", True))
    assert calls == [1]
    exact = "".join(assemble_inventory(parts, "json", True, speed=Speed.reference()))
    assert calls == [1]
    strip = lambda text: text.split('"timestamp": ')[1].split("\n", 1)[1]  # noqa: E731
    assert strip(fast) == strip(exact)
