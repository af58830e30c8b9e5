"""classifier.atomic_files: the one writer of files people keep (group and node files, the class
catalogue, tokens): temp file beside the target, fsync of the file and of the directory, rename."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reclass_ng.classifier import atomic_files
from reclass_ng.classifier.atomic_files import TEMP_PREFIX, atomic_write_text, replace_directory


@pytest.fixture
def fsynced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths os.fsync is called on, in order (the real fsync still runs)."""
    paths: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(atomic_files.os, "fsync", recording_fsync)
    return paths


def test_a_write_fsyncs_the_new_file_then_its_directory(tmp_path: Path, fsynced: list[str]):
    target = tmp_path / "groups" / "web.yml"
    atomic_write_text(target, "name: web\n")
    assert target.read_text() == "name: web\n"
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)
    # The data was flushed under the temporary name (renamed since), then the directory.
    assert Path(fsynced[0]).name.startswith(TEMP_PREFIX) and Path(fsynced[0]).parent == target.parent
    assert fsynced[1:] == [str(target.parent)]
    assert os.listdir(target.parent) == ["web.yml"]


def test_a_rewrite_keeps_the_mode_and_a_failed_one_the_old_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "tokens.yml"
    target.write_text("old\n")
    target.chmod(0o600)
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o600

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, "newer\n")
    assert target.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["tokens.yml"]  # no temporary file left


def test_replace_directory_fsyncs_the_new_tree_and_the_parent(tmp_path: Path,
                                                              fsynced: list[str]):
    target = tmp_path / "groups"
    target.mkdir()
    (target / "old.yml").write_text("old\n")
    replace_directory(target, {"all.yml": "a\n", "web/web.yml": "w\n"})
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*.yml")) == [
        "all.yml", "web/web.yml"]
    assert fsynced[-1] == str(tmp_path)  # the swap itself
    assert len(fsynced) == 2 + 2 + 1  # two files, the new tree's two directories, the parent
    assert sorted(os.listdir(tmp_path)) == ["groups"]
