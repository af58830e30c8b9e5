"""Locations (reclass_ng.location): a file, line and column, shown relative to the inventory."""

from __future__ import annotations

import os

from reclass_ng.location import Location, display_path


def test_a_file_inside_the_inventory_is_shown_relative_to_it(tmp_path) -> None:
    base = str(tmp_path)
    inside = os.path.join(base, "classes", "a.yml")
    assert display_path(inside, base) == os.path.join("classes", "a.yml")


def test_other_files_are_shown_as_they_are(tmp_path) -> None:
    base = str(tmp_path / "inventory")
    outside = str(tmp_path / "elsewhere" / "a.yml")
    assert display_path(outside, base) == outside
    assert display_path("relative/a.yml", base) == "relative/a.yml"
    assert display_path(outside, None) == outside


def test_a_location_as_text(tmp_path) -> None:
    path = str(tmp_path / "nodes" / "n1.yml")
    assert Location(path, 3, 5).text() == f"{path}:3:5"
    assert Location(path, 3).text(str(tmp_path)) == os.path.join("nodes", "n1.yml") + ":3"
    assert Location(path).text() == path
    assert Location(path, 3, 5) == Location(path, 3, 5) != Location(path, 3, 6)
