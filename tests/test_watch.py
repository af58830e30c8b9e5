"""`reclass-ng watch`, run as a user runs it: a process polling an inventory that is edited."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from inventory_writer import replace_file, write_inventory


class WatchProcess:
    def __init__(self, base: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reclass_ng.cli.main", "watch", "-b", str(base),
             "--interval", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def next_line(self) -> str:
        return self.lines.get(timeout=60)

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
        error = [watcher.next_line()]
        assert error[0].startswith("error: ")
        replace_file(base / "classes" / "missing.yml", "parameters: {extra: 1}\n")
        while (line := watcher.next_line()) != "changed: db":
            error.append(line)
        assert "missing" in "\n".join(error)
        # Added before removed: whether a round sees both changes or only the first, the lines
        # come in this order.
        replace_file(base / "nodes" / "new.yml", "classes: [common]\n")
        (base / "nodes" / "w2.yml").unlink()
        assert [watcher.next_line(), watcher.next_line()] == ["added: new", "removed: w2"]
    finally:
        watcher.stop()
