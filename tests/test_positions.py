"""Where keys are written (reclass_ng.positions): the table of a file's keys, the lookup of
the deepest key written, and the position of one value for error messages."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.location import Location
from reclass_ng.positions import KeyPositions, file_positions, value_position
from reclass_ng.settings import SPEED_VARIABLE
from reclass_ng.storage.block_positions import block_key_positions
from reclass_ng.storage.positions import FLAG_PREFIXES, key_positions
from reclass_ng.storage.yaml_block import NotSimple, block_yaml_text
from tests.test_yaml_block import (
    COMMON_KEYS,
    COMMON_NODES,
    DOCUMENT_KEYS,
    LINES,
    NODES,
    _anchored_layout,
    _inventory_files,
    _layout,
    _line,
    fast,
)

TEXT = """\
classes:
  - common
  - .web
parameters:
  ~nginx:
    port: 80
    url: http://${host}:${port}/
  =fixed: 1
"""


def test_every_key_and_list_item_has_its_position(tmp_path) -> None:
    path = tmp_path / "a.yml"
    path.write_text(TEXT)
    table = file_positions(str(path))
    assert table[("classes",)] == (1, 1)
    assert table[("classes", "1")] == (3, 5)
    # Keys are found without their `~`/`=` prefixes.
    assert table[("parameters", "nginx", "port")] == (6, 5)
    assert table[("parameters", "fixed")] == (8, 3)


def test_the_deepest_key_written_is_found(tmp_path) -> None:
    path = tmp_path / "a.yml"
    path.write_text(TEXT)
    positions = KeyPositions(kept_files=1)
    assert positions.location(str(path), ("parameters", "nginx", "port")) == \
        Location(str(path), 6, 5)
    # A key below a value that is not written: the deepest one that is.
    assert positions.line(str(path), ("parameters", "nginx", "port", "missing")) == 6
    assert positions.location(str(path), ("nothing",)) == Location(str(path))
    assert positions.location(None, ("parameters",)) is None


def test_an_unreadable_file_has_no_positions(tmp_path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("a: [1, 2\n")
    assert file_positions(str(broken)) == {}
    assert file_positions(str(tmp_path / "missing.yml")) == {}
    assert value_position(str(broken), ("a",)) is None


def test_a_value_position_points_at_the_reference_and_the_list_entry(tmp_path) -> None:
    path = tmp_path / "a.yml"
    path.write_text(TEXT)
    assert value_position(str(path), ("parameters", "nginx", "url")) == (7, 10)
    assert value_position(str(path), ("parameters", "nginx", "url"), "${port}") == (7, 25)
    assert value_position(str(path), ("classes",),
                          pick=lambda item: item.value == ".web") == (3, 5)
    assert value_position(None, ("classes",)) is None


def test_an_aliased_value_is_found_where_its_anchor_is(tmp_path) -> None:
    path = tmp_path / "a.yml"
    path.write_text("a: &x\n  b: 1\nc: *x\n")
    table = file_positions(str(path))
    assert table[("a", "b")] == (2, 3)
    assert table[("c",)] == (3, 1)


def test_a_recursive_alias_does_not_hang(tmp_path) -> None:
    path = tmp_path / "a.yml"
    path.write_text("a: &x\n  - 1\n  - *x\n")
    table = file_positions(str(path))
    assert table.get(("a",)) in (None, (1, 1))  # the loader may refuse the file: no positions


# -- key tables read off the lines of block YAML (Speed.block_key_positions) -----------------

def _read_off_lines(text: str) -> dict | None:
    """The table block_key_positions reads off `text` where the block reader reads it, else
    None (as positions._key_table takes it)."""
    if fast(text) is NotSimple:
        return None
    prepared = block_yaml_text(text.encode())
    assert prepared is not None
    return block_key_positions(prepared.split("\n"), FLAG_PREFIXES)


def assert_read_off_as_composed(text: str) -> bool:
    """The table read off the lines is the composed one's, or none is; True when read."""
    table = _read_off_lines(text)
    if table is None:
        return False
    assert table == key_positions(yaml.compose(text), FLAG_PREFIXES), text
    return True


@settings(max_examples=400)
@given(st.lists(LINES, min_size=1, max_size=12))
def test_key_tables_of_generated_lines_are_read_off_as_composed(lines) -> None:
    assert_read_off_as_composed("\n".join(_line(*line) for line in lines) + "\n")


@settings(max_examples=400)
@given(st.lists(st.tuples(DOCUMENT_KEYS, NODES), min_size=1, max_size=5), st.integers(1, 4),
       st.booleans(), st.data())
def test_key_tables_of_generated_documents_are_read_off_as_composed(
        pairs, step, indentless, data) -> None:
    lines: list[str] = []
    _layout(("map", pairs), 0, step, indentless, data, lines)
    assert_read_off_as_composed("\n".join(lines) + "\n")


@settings(max_examples=150)
@given(st.lists(st.tuples(COMMON_KEYS, COMMON_NODES), min_size=1, max_size=5), st.integers(1, 4),
       st.data())
def test_key_tables_with_anchors_are_read_off_as_composed_or_composed(pairs, step, data) -> None:
    lines: list[str] = []
    _anchored_layout(("map", pairs), 0, step, data.draw,
                     {"open": [], "closed": [], "maps": [], "count": 0}, lines)
    assert_read_off_as_composed("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", [
    "k:\n- |\n  a\n\n   b\n- n\nm: >-\n  x\n  y\nz: 1\n",
    "a: [x, 'y', \"w\"]\nb: [1,  2]\nc:\n- [a]\n- {}\nd: {}\n",
    "---\n# c\nlist:\n- a: 1\n  b:\n  - x\n  -  y\n- c: |\n    t\n~k: 1\n'q': 2\n\"r\" : 3\n",
    "a:\n  text\n  continued\nb:\n- below\nc: 1\n",
    "a: 1\na: 2\nb:\n  x: 1\nb:\n  x: 2\n  y: 3\n"])
def test_block_yaml_key_tables_are_read_off_the_lines(text: str) -> None:
    # What the properties above check is not vacuous: these are read off their lines.
    assert assert_read_off_as_composed(text)


def test_key_tables_of_the_example_inventories_at_both_speeds(monkeypatch) -> None:
    read = 0
    for path in _inventory_files():
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        read += _read_off_lines(text) is not None
        fast_table = file_positions(path)
        monkeypatch.setenv(SPEED_VARIABLE, "reference")
        assert file_positions(path) == fast_table, path
        monkeypatch.delenv(SPEED_VARIABLE)
    assert read > 1000
