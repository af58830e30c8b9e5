"""`reclass-ng watch`, run as a user runs it: a process polling an inventory that is edited."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from inventory_writer import replace_file, write_inventory


class WatchProcess:
    def __init__(self, base: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reclass_ng.cli.main", "watch", "-b", str(base),
             "--interval", "0.1", *options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def next_line(self) -> str:
        return self.lines.get(timeout=60)

    def lines_through(self, last: str) -> list[str]:
        """The lines printed up to and including `last` (each waited for at most 60 s)."""
        seen = [self.next_line()]
        while seen[-1] != last:
            seen.append(self.next_line())
        return seen

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def test_watch_prints_the_nodes_each_change_affects(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {
        "classes/common.yml": "parameters: {ntp: a}\n",
        "classes/web.yml": "parameters: {port: 80}\n",
        "nodes/w1.yml": "classes: [common, web]\n",
        "nodes/w2.yml": "classes: [common, web]\n",
        "nodes/db.yml": "classes: [common]\n",
    })
    watcher = WatchProcess(base)
    try:
        assert watcher.next_line().startswith("reclass-ng watch: 3 nodes rendered")
        web = base / "classes" / "web.yml"
        stat = web.stat()
        # Same size, same mtime afterwards. Written over in place without truncating it first,
        # so a round polling meanwhile reads the old or the new text, never an empty class.
        with web.open("r+b") as stream:
            stream.write(b"parameters: {port: 81}\n")
        os.utime(web, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert watcher.next_line() == "changed: w1, w2"
        replace_file(base / "nodes" / "db.yml", "classes: [common, missing]\n")
        assert watcher.next_line() == "failing: db"
        replace_file(base / "classes" / "missing.yml", "parameters: {extra: 1}\n")
        error = watcher.lines_through("fixed: db")
        assert "Class missing not found" in "\n".join(error)
        # Added before removed: whether a round sees both changes or only the first, the lines
        # come in this order.
        replace_file(base / "nodes" / "new.yml", "classes: [common]\n")
        (base / "nodes" / "w2.yml").unlink()
        assert [watcher.next_line(), watcher.next_line()] == ["added: new", "removed: w2"]
    finally:
        watcher.stop()


BROKEN_START = {
    "classes/common.yml": "parameters: {ntp: a}\n",
    "classes/web.yml": "parameters: {port: 80}\n",
    "classes/broken.yml": "parameters: {a: [}\n",  # a YAML mistake two nodes share
    "nodes/w1.yml": "classes: [common, web]\n",
    "nodes/w2.yml": "classes: [common, web]\n",
    "nodes/b1.yml": "classes: [common, broken]\n",
    "nodes/b2.yml": "classes: [common, broken]\n",
    "nodes/b3.yml": "parameters:\n  x: ${nope}\n",
}


def test_watch_reports_every_node_whatever_fails_elsewhere(tmp_path: Path) -> None:
    """The issue's session: broken nodes at start, edits to healthy nodes, a new node, one
    broken node fixed, the last error fixed, a node deleted; each step reported."""
    base = write_inventory(tmp_path / "inv", BROKEN_START)
    watcher = WatchProcess(base)
    try:
        start = watcher.lines_through("failing: b1, b2, b3")
        assert start[0] == ("reclass-ng watch: 2 nodes rendered, 3 failing; "
                            "watching (Ctrl-C to stop)")
        errors = [watcher.next_line() for _ in range(6)]
        # The shared YAML mistake once, with the other node it fails; then b3's own error.
        assert errors[0] == "-> b1"
        assert "broken.yml:1:18: invalid YAML" in errors[1]
        assert errors[2].strip() == "the same error in 1 more node: b2 (-v lists each node's errors)"
        assert errors[3] == "-> b3"
        assert errors[4].strip().startswith("Cannot resolve ${nope}, at x")
        assert errors[5].strip() == f"written at {base}/nodes/b3.yml:2:6 (node b3)"

        replace_file(base / "classes" / "web.yml", "parameters: {port: 81}\n")
        assert watcher.next_line() == "changed: w1, w2"
        replace_file(base / "nodes" / "new.yml", "classes: [common]\n")
        assert watcher.next_line() == "added: new"
        replace_file(base / "nodes" / "b3.yml", "parameters:\n  x: fine\n")
        assert [watcher.next_line(), watcher.next_line()] == ["fixed: b3",
                                                              "still failing: b1, b2"]
        replace_file(base / "classes" / "broken.yml", "parameters: {a: []}\n")
        assert watcher.next_line() == "fixed: b1, b2"  # not `added`: they were there all along
        (base / "nodes" / "w2.yml").unlink()
        assert watcher.next_line() == "removed: w2"
        replace_file(base / "nodes" / "w1.yml", "classes: [common, web, nosuch]\n")
        assert watcher.lines_through("failing: w1")[-1] == "failing: w1"
        assert "Class nosuch not found" in "".join(watcher.next_line() for _ in range(3))
    finally:
        watcher.stop()


def test_watch_json_reports_one_object_per_line(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", BROKEN_START)
    watcher = WatchProcess(base, "--errors", "json")
    try:
        first = json.loads(watcher.next_line())
        assert first["first"] is True and first["rendered"] == 2
        assert first["failing"] == ["b1", "b2", "b3"]
        shared, own = first["errors"]
        assert (shared["kind"], shared["node_count"], shared["nodes"]) == (
            "invalid_yaml", 2, ["b1", "b2"])
        assert (own["node"], own["kind"], own["line"], own["key_path"]) == (
            "b3", "missing_reference", 2, "x")
        replace_file(base / "nodes" / "b3.yml", "parameters:\n  x: fine\n")
        fixed = json.loads(watcher.next_line())
        assert (fixed["first"], fixed["fixed"], fixed["failing"], fixed["still_failing"],
                fixed["errors"]) == (False, ["b3"], [], ["b1", "b2"], [])
    finally:
        watcher.stop()


def test_watch_keeps_watching_an_inventory_that_cannot_be_read(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {"classes/common.yml": "parameters: {a: 1}\n",
                                              "nodes/n1.yml": "classes: [common]\n"})
    watcher = WatchProcess(base)
    try:
        assert watcher.next_line() == ("reclass-ng watch: 1 nodes rendered; "
                                       "watching (Ctrl-C to stop)")
        replace_file(base / "reclass-config.yml", "storage_type: yaml_fss\n")
        assert watcher.next_line() == (
            f"error: {base}/reclass-config.yml:1: Storage type 'yaml_fss' is not supported; "
            "reclass-ng reads yaml_fs, yaml_git and mixed inventories (did you mean yaml_fs?)")
        replace_file(base / "nodes" / "n2.yml", "classes: [common]\n")
        (base / "reclass-config.yml").unlink()
        assert [watcher.next_line(), watcher.next_line()] == [
            "the inventory can be read again: 2 nodes rendered", "added: n2"]
    finally:
        watcher.stop()
