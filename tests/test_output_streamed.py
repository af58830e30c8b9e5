"""output.streamed: `reclass --inventory` written as its nodes render, byte for byte the document
of the whole inventory, printed only once every node rendered, in memory that does not grow
with the number of nodes."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import run_reclass_in_process

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.output import write
from reclass_ng.output.streamed import NodeTextSpool, StreamedInventory, streams
from reclass_ng.render import timestamp

pytestmark = pytest.mark.usefixtures("both_speeds")

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "inventory-example"
RS_INVENTORY = REPO / "tests" / "conformance" / "model-reclass-rs-inventory" / "inventory"
FORMS = [("json", True), ("json", False), ("yaml", True)]
TIMESTAMP = re.compile(r'("?timestamp"?: ?)"?[^"\n,}]*"?')


def masked(text: str) -> str:
    return TIMESTAMP.sub(r"\1X", text)


def whole_document(base: Path, fmt: str, pretty: bool, *extra: str) -> str:
    """What output.write prints of the inventory rendered whole (the path before streaming)."""
    inventory = reclass_ng.load(str(base), ignore_class_notfound="-z" in extra)
    text = io.StringIO()
    write(inventory.inventory(), text, fmt, pretty, floats_exact=inventory.floats_json_exact,
          speed=inventory.speed)
    return text.getvalue()


@pytest.mark.parametrize("in_memory", [0, None], ids=["on-disk", "in-memory"])
@pytest.mark.parametrize("fmt, pretty", FORMS)
@pytest.mark.parametrize("base, extra", [(EXAMPLE, ()), (RS_INVENTORY, ("-z", "True"))],
                         ids=["inventory-example", "reclass-rs"])
def test_streamed_document_is_the_whole_one(base: Path, extra: tuple[str, ...], fmt: str,
                                            pretty: bool, in_memory: int | None,
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("reclass_ng.output.streamed.SPOOL_IN_MEMORY",
                        0 if in_memory == 0 else 8 * 1024 * 1024)
    if pretty:  # the command line (compact output needs `pretty_print: false` in a file)
        argv = ["-b", str(base), *extra, "--inventory", "-o", fmt]
        status, out, err = run_reclass_in_process(argv, base)
        assert status == 0, err
        assert masked(out) == masked(whole_document(base, fmt, pretty, *extra))
    inventory = reclass_ng.load(str(base), ignore_class_notfound=bool(extra))
    streamed = StreamedInventory(fmt, pretty, len(inventory.node_names), speed=inventory.speed,
                                 spool=NodeTextSpool(in_memory))
    for name, info in inventory.rendered_nodes():
        streamed.add(name, info)
    assert streamed.spool.on_disk == (in_memory == 0)
    text = io.StringIO()
    streamed.write_to(text, timestamp())
    assert masked(text.getvalue()) == masked(whole_document(base, fmt, pretty, *extra))


def test_flow_yaml_is_written_whole() -> None:
    assert not streams("yaml", False)
    assert streams("yaml", True) and streams("json", True) and streams("json", False)


PASSING = {"nodes/a.yml": "classes: [base]\n", "nodes/b.yml": "classes: [base]\n",
           "classes/base.yml": "parameters:\n  name: ${_reclass_:name:short}\n"
                               "  text: a value long enough to be spooled\n"}


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("failing, phrase", [
    ("classes: [base]\nparameters:\n  x: ${missing}\n", "missing"),
    ("classes: [base, absent]\n", "absent"),
])
def test_a_failing_last_node_leaves_stdout_empty(make_inventory, fmt: str, failing: str,
                                                  phrase: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """kapicorp-reclass prints nothing on stdout when a node fails; the spool (here on disk
    from the first byte) is dropped, not printed."""
    monkeypatch.setattr("reclass_ng.output.streamed.SPOOL_IN_MEMORY", 0)
    root = make_inventory({**PASSING, "nodes/z.yml": failing})
    status, out, err = run_reclass_in_process(["-b", str(root), "--inventory", "-o", fmt], root)
    assert status == 65, err
    assert out == ""
    assert phrase in err and "z" in err and "Traceback" not in err


def test_a_later_merge_error_is_reported_before_an_earlier_interpolation_error(
        make_inventory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes render one at a time, but the first error is the two-phase order's: every node's
    classes are merged before any interpolation error is reported."""
    monkeypatch.setattr("reclass_ng.output.streamed.SPOOL_IN_MEMORY", 0)
    root = make_inventory({**PASSING, "nodes/a.yml": "parameters:\n  x: ${missing}\n",
                           "nodes/z.yml": "classes: [absent]\n"})
    status, out, err = run_reclass_in_process(["-b", str(root), "--inventory", "-1"], root)
    assert (status, out) == (65, "")
    assert "absent" in err and "missing" not in err
    inventory = reclass_ng.load(str(root))
    with pytest.raises(ReclassError) as whole:
        inventory.inventory()
    with pytest.raises(ReclassError) as streamed:
        list(inventory.rendered_nodes())
    assert str(streamed.value) == str(whole.value)


def test_small_floats_read_after_the_writer_started_print_as_json_prints_them(
        make_inventory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Enough values a node that the orjson writer is chosen; whether it may skip checking for
    # floats orjson prints differently (1e-05, which it writes 0.00001) is known only once the
    # files are read: asked when the writer was made, before any file, it said none.
    monkeypatch.setenv("HOME", str(tmp_path))
    values = ", ".join(str(i) for i in range(300))
    base = make_inventory({f"nodes/n{i}.yml": f"parameters:\n  small: 0.00001\n  v: [{values}]\n"
                           for i in range(40)})
    status, out, err = run_reclass_in_process(["-b", str(base), "--inventory", "-o", "json"],
                                              base)
    assert status == 0, err
    assert '"small": 1e-05' in out
    assert masked(out) == masked(whole_document(base, "json", True))


def test_the_frame_of_names_is_not_searched_for_floats(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON frame around the nodes (timestamp, class and application indexes) holds strings
    only, so orjson's text of it is taken as it is: names that look like the floats orjson
    prints otherwise (`e-`, `0.0000`, `null`) send it to no search."""
    from reclass_ng.output.fragments import inventory_frame

    nodes = [("web-e-1", ["mail.e-mail", "v0.0000"], ["null", "e-"]), ("db", ["v0.0000"], [])]
    exact = inventory_frame(nodes, "json", True, "NOW")

    def searched(*args: object) -> bool:
        raise AssertionError("the frame was searched for floats")

    monkeypatch.setattr("reclass_ng.output.fast_json._has_small_float", searched)
    monkeypatch.setattr("reclass_ng.output.fast_json._has_non_finite_float", searched)
    assert inventory_frame(nodes, "json", True, "NOW", fast_json=True) == exact


# Run in a process of its own: pytest itself imports tempfile.
SPOOL_PROBE = """
import os, sys
from reclass_ng.output.streamed import NodeTextSpool
spool = NodeTextSpool(in_memory=0)
spool.add(b"node texts")
where = os.readlink(f"/proc/self/fd/{spool._file.fileno()}")
imported = "tempfile" in sys.modules
sent = spool.send_to(sys.stdout, "<", ">")
import tempfile
print("", imported, where.startswith(os.path.join(tempfile.gettempdir(), "")), sent)
"""


@pytest.mark.skipif(not (hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")),
                    reason="unnamed files are tempfile's to make here")
@pytest.mark.parametrize("tmpdir, made_here", [("spool", True), ("no-such-directory", False)])
def test_the_spool_file_is_made_where_tempfile_makes_it(tmp_path: Path, tmpdir: str,
                                                        made_here: bool) -> None:
    """An --inventory that outgrows the spool's memory moves it to an unnamed file in the
    directory tempfile chooses ($TMPDIR here), made without importing tempfile (with shutil,
    random, bz2 and lzma: 0.7% of a 200-node render); where $TMPDIR cannot take it, tempfile
    makes it, in the next directory it tries."""
    (tmp_path / "spool").mkdir()
    done = subprocess.run([sys.executable, "-c", SPOOL_PROBE], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path,
                          env={**os.environ, "TMPDIR": str(tmp_path / tmpdir),
                               "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["<node", "texts>", str(not made_here), "True", "True"]
