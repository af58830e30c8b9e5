"""storage/dir_entries.py: what a directory's entries are to every scan of a yaml_fs tree."""

from __future__ import annotations

from reclass_ng.storage import dir_entries


def test_directory_listing_is_the_one_rule_of_every_scan(tmp_path):
    for name in ("walked", ".hidden", "CVS", "SCCS", "b.yml"):
        (tmp_path / name).mkdir()
    for name in ("file.yml", "a.yaml", "notes.txt", "c.yml~"):
        (tmp_path / name).write_text("")
    (tmp_path / "to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / ".to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / "dangling.yml").symlink_to(tmp_path / "missing")
    (tmp_path / "linked.yml").symlink_to(tmp_path / "file.yml")
    listing = dir_entries.directory_listing(str(tmp_path))
    assert listing is not None
    files, walked = listing
    # Sorted by name; a directory named like a YAML file is walked, not read; a dangling
    # symlink counts as a file (os.walk's rule).
    assert files == ["a.yaml", "dangling.yml", "file.yml", "linked.yml"]
    assert [entry.name for entry in walked] == ["b.yml", "to-walked", "walked"]


def test_an_unreadable_directory_has_no_listing(tmp_path):
    assert dir_entries.directory_listing(str(tmp_path / "missing")) is None
