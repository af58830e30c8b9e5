"""storage/dir_entries.py: what a directory entry is to every scan of a yaml_fs tree."""

from __future__ import annotations

import os

from reclass_ng.storage import dir_entries


def test_entry_kind_is_the_one_rule_of_every_scan(tmp_path):
    for name in ("walked", ".hidden", "CVS", "SCCS"):
        (tmp_path / name).mkdir()
    (tmp_path / "file.yml").write_text("")
    (tmp_path / "to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / ".to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / "dangling.yml").symlink_to(tmp_path / "missing")
    kinds = {entry.name: dir_entries.entry_kind(entry) for entry in os.scandir(tmp_path)}
    assert kinds == {
        "walked": dir_entries.WALKED_DIRECTORY, "to-walked": dir_entries.WALKED_DIRECTORY,
        ".hidden": dir_entries.SKIPPED_DIRECTORY, ".to-walked": dir_entries.SKIPPED_DIRECTORY,
        "CVS": dir_entries.SKIPPED_DIRECTORY, "SCCS": dir_entries.SKIPPED_DIRECTORY,
        "file.yml": dir_entries.FILE, "dangling.yml": dir_entries.FILE}
