"""Atomic writes and the cross-process lock, checked with real processes."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import textwrap
from pathlib import Path

from reclass_ng.server.yaml_files import LOCK_FILE_NAME, render_update


def test_write_killed_midway_leaves_old_file(tmp_path: Path):
    target = tmp_path / "group.yml"
    target.write_text("name: old\n")
    # The writer dies (SIGKILL, no cleanup) after writing the temporary file, before the rename.
    script = textwrap.dedent(f"""
        import os, signal
        from reclass_ng.server import yaml_files
        def die(*args):
            os.kill(os.getpid(), signal.SIGKILL)
        yaml_files.os.replace = die
        yaml_files.atomic_write({str(target)!r}, "name: new\\n" * 1000)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert result.returncode == -9
    assert target.read_text() == "name: old\n"


def test_lock_holds_across_processes(tmp_path: Path):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from reclass_ng.server.yaml_files import inventory_lock
            with inventory_lock({str(tmp_path)!r}):
                print("locked", flush=True)
                sys.stdin.readline()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with open(tmp_path / LOCK_FILE_NAME) as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                got_it = True
            except BlockingIOError:
                got_it = False
        assert not got_it
    finally:
        holder.communicate("\n", timeout=10)


def test_render_update_keeps_comments_and_order():
    text = "# head\nname: a  # trailing\nrule: [\"=\", \"name\", \"x\"]\nclasses:\n  # c\n  n: {}\n"
    updated = render_update(text, {"name": "a", "rule": ["=", "name", "y"],
                                   "classes": {"n": {}, "m": {"p": 1}}})
    assert updated.startswith("# head\nname: a  # trailing\n")
    assert 'rule: ["=", "name", "y"]' in updated
    assert "  # c\n  n: {}\n" in updated
    assert updated.index("rule") < updated.index("classes")


def test_emptying_a_mapping_whose_first_entry_had_a_comment_keeps_valid_yaml():
    import yaml as pyyaml

    text = ("id: x\nclasses:\n  # about nginx\n  nginx:\n    workers: 4\n"
            "variables:\n  # about a\n  a: 1\n")
    updated = render_update(text, {"id": "x", "classes": {}, "variables": {"a": 1}})
    assert pyyaml.safe_load(updated) == {"id": "x", "classes": {}, "variables": {"a": 1}}
    assert "# about a" in updated and "# about nginx" not in updated
    emptied_list = render_update("id: x\nl:\n  # first\n  - 1\n", {"id": "x", "l": []})
    assert pyyaml.safe_load(emptied_list) == {"id": "x", "l": []}


def test_checked_render_refuses_what_would_not_read_back():
    import pytest

    from reclass_ng.server.errors import ApiError
    from reclass_ng.server.yaml_files import checked_render

    for wanted in ({"name": "a\u0085b"}, {"v": float("nan")}, {"v": "\ud800"}):
        with pytest.raises(ApiError) as raised:
            checked_render("name: a\n", wanted, "groups/a.yml")
        assert raised.value.status == 422 and raised.value.kind == "unrepresentable-value"
    assert checked_render("# c\nname: a\n", {"name": "b"}, "groups/a.yml") == "# c\nname: b\n"
