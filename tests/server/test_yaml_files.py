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
