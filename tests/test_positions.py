"""Where keys are written (reclass_ng.positions): the table of a file's keys, the lookup of
the deepest key written, and the position of one value for error messages."""

from __future__ import annotations

from reclass_ng.location import Location
from reclass_ng.positions import KeyPositions, file_positions, value_position

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
