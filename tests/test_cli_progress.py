"""The progress bar of `reclass --inventory`: on a terminal's stderr only, never in the output.

The terminal cases run `reclass` with stderr on a pseudo-terminal and read what a user would
see; the other cases use pipes, as scripts and CI do.
"""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from inventory_writer import write_inventory

from reclass_ng.cli.progress import MIN_NODES, ProgressBar, wants_progress
from tests.conftest import VENV_BIN

NODES = MIN_NODES + 50


def many_nodes(count: int = NODES) -> dict[str, str]:
    files = {"classes/base.yml": "applications: [ssh]\nparameters:\n  motd: hi ${name}\n"}
    for index in range(count):
        files[f"nodes/node{index:04d}.yml"] = f"classes: [base]\nparameters:\n  name: n{index}\n"
    return files


@pytest.fixture(scope="module")
def big_inventory(tmp_path_factory) -> Path:
    return write_inventory(tmp_path_factory.mktemp("progress") / "inv", many_nodes())


RECLASS = [sys.executable, "-m", "reclass_ng"]
RECLASS_NG = [str(VENV_BIN / "reclass-ng")]


def run_on_terminal(args: list[str], cwd: Path, command: list[str] = RECLASS
                    ) -> tuple[int, str, str]:
    """Run `reclass` (or `command`) with stderr on a pseudo-terminal: (exit status, stdout,
    terminal text)."""
    master, slave = pty.openpty()
    seen: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            seen.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = dict(os.environ, HOME=str(cwd))
    with subprocess.Popen([*command, *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave) as proc:
        os.close(slave)
        stdout, _ = proc.communicate(timeout=120)
    # The reader stops at EIO, once it has read everything the child wrote to the terminal.
    reader.join(timeout=120)
    assert not reader.is_alive(), "the terminal was not drained"
    os.close(master)
    return proc.returncode, stdout.decode(), b"".join(seen).decode()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bar_on_a_terminal(big_inventory: Path, jobs: str) -> None:
    code, stdout, terminal = run_on_terminal(
        ["-b", str(big_inventory), "--inventory", "-o", "json", "-j", jobs], big_inventory)
    assert code == 0, terminal
    assert f"rendering {NODES} nodes" in terminal
    assert "100%" in terminal and "[" in terminal and "#" in terminal
    # The bar is erased at the end: the last thing on the line is blank, cursor at column 0.
    last = terminal.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == "", repr(terminal[-200:])
    data = json.loads(stdout)  # stdout is the document, nothing else
    assert len(data["nodes"]) == NODES
    assert "\r" not in stdout and "rendering" not in stdout


def test_quiet_turns_the_bar_off(big_inventory: Path) -> None:
    code, stdout, terminal = run_on_terminal(
        ["-b", str(big_inventory), "--inventory", "-o", "json", "--quiet"], big_inventory)
    assert code == 0
    assert terminal == ""
    assert len(json.loads(stdout)["nodes"]) == NODES


def test_no_bar_when_stderr_is_a_pipe(big_inventory: Path, run_reclass) -> None:
    result = run_reclass(["-b", str(big_inventory), "--inventory", "-o", "json", "-j", "2"])
    assert result.returncode == 0
    assert result.stderr == ""


def test_no_bar_for_small_inventories(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "small", many_nodes(5))
    code, stdout, terminal = run_on_terminal(["-b", str(base), "--inventory"], base)
    assert code == 0 and terminal == ""


def test_warnings_and_errors_are_not_mixed_into_the_bar(tmp_path: Path) -> None:
    files = many_nodes()
    files["nodes/node0100.yml"] = "classes: [base, gone]\nparameters:\n  name: x\n"
    files["nodes/node0200.yml"] = "classes: [base]\nparameters:\n  v: ${missing}\n"
    base = write_inventory(tmp_path / "broken", files)
    code, stdout, terminal = run_on_terminal(["-b", str(base), "--inventory", "-z", "true"],
                                             base)
    assert code != 0 and stdout == ""
    lines = terminal.replace("\r\n", "\n").split("\n")
    warning = next(line for line in lines if "[WARNING]" in line)
    # Whatever the bar drew on that line was erased first: the warning is what remains.
    assert warning.rsplit("\r", 1)[-1].startswith("[WARNING] Reclass class not found: 'gone'")
    error = next(line for line in lines if "-> node0200" in line)
    assert error.rsplit("\r", 1)[-1] == "-> node0200"
    assert "Traceback" not in terminal


def _assert_bar_drawn_then_erased(terminal: str, label: str) -> None:
    assert label in terminal
    assert "100%" in terminal and "[" in terminal and "#" in terminal
    last = terminal.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == "", repr(terminal[-200:])


def test_lint_shows_the_bar_on_a_terminal(big_inventory: Path) -> None:
    code, stdout, terminal = run_on_terminal(["lint", "-b", str(big_inventory)], big_inventory,
                                             RECLASS_NG)
    assert code == 0, terminal
    _assert_bar_drawn_then_erased(terminal, f"lint: rendering {NODES} nodes")
    assert stdout.endswith(f"{NODES} nodes rendered\n") and "\r" not in stdout


def test_diff_shows_one_bar_for_both_sides_on_a_terminal(big_inventory: Path,
                                                         tmp_path: Path) -> None:
    files = many_nodes()
    files["nodes/node0007.yml"] = "classes: [base]\nparameters:\n  name: changed\n"
    other = write_inventory(tmp_path / "other", files)
    code, stdout, terminal = run_on_terminal(
        ["diff", "-b", str(other), "--from-dir", str(big_inventory)], other, RECLASS_NG)
    assert code == 1, terminal  # a change
    _assert_bar_drawn_then_erased(terminal, f"diff: rendering {NODES} nodes")
    # one bar over both sides: it never starts again from 0%
    percents = [int(part.split("]")[1].strip().rstrip("%"))
                for part in terminal.split("\r") if "] " in part]
    assert percents == sorted(percents) and percents[-1] == 100, terminal
    assert "parameters:name" in stdout and "\r" not in stdout


def test_lint_and_diff_draw_no_bar_into_a_pipe(big_inventory: Path) -> None:
    for args in (["lint", "-b", str(big_inventory)],
                 ["diff", "-b", str(big_inventory), "--from-dir", str(big_inventory)]):
        proc = subprocess.run([*RECLASS_NG, *args], capture_output=True, text=True,
                              timeout=300, check=False)
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)


# -- the bar itself -------------------------------------------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_redraws_are_throttled_and_the_end_is_always_drawn() -> None:
    stream, clock = io.StringIO(), FakeClock()
    bar = ProgressBar(stream, 100, "work", interval=0.5, clock=clock)
    bar.update(1)
    for done in range(2, 40):  # 0.38 s in all
        clock.now += 0.01
        bar.update(done)
    assert stream.getvalue().count("\r") == 1  # only the first update within 0.5 s
    clock.now += 1
    bar.update(60)
    assert stream.getvalue().count("\r") == 2 and stream.getvalue().endswith(" 60%")
    bar.update(100)  # complete: drawn even though no time passed
    assert stream.getvalue().endswith("100%")
    assert "[" + "#" * 10 in stream.getvalue()


def test_clear_erases_the_line_and_print_above_keeps_the_message_whole() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, 10, "work", clock=FakeClock())
    bar.update(5)
    drawn = stream.getvalue()
    bar.print_above("[WARNING] something")
    text = stream.getvalue()[len(drawn):]
    assert text == "\r" + " " * (len(drawn) - 1) + "\r[WARNING] something\n"
    bar.clear()  # nothing drawn since: nothing to erase
    assert stream.getvalue().endswith("something\n")


def test_wants_progress() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_progress(Terminal(), MIN_NODES + 1, quiet=False)
    assert not wants_progress(Terminal(), MIN_NODES, quiet=False)
    assert not wants_progress(Terminal(), 10_000, quiet=True)
    assert not wants_progress(io.StringIO(), 10_000, quiet=False)
