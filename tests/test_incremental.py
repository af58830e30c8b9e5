"""Incremental rendering (reclass_ng.incremental): after any edit, `Inventory.refresh()` and the
render that follows give exactly what a fresh render of the files gives (data, first error,
warnings), while rendering again only the nodes whose inputs changed."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.incremental import live, snapshot
from reclass_ng.settings import SPEED_VARIABLE
from tests.inventory_writer import write_inventory

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

CLASSES = [f"c{i}" for i in range(5)]
CLOCK_TICK = 0.02  # longer than a coarse file system timestamp tick (1-10 ms)
NODES = [f"n{i}" for i in range(4)]


def without_timestamps(data: Any) -> Any:
    """A rendered structure with every `timestamp` dropped (they differ between renders)."""
    if isinstance(data, dict):
        return {key: without_timestamps(value) for key, value in data.items()
                if key != "timestamp"}
    if isinstance(data, list):
        return [without_timestamps(value) for value in data]
    return data


def outcome(render: Any) -> tuple[Any, list[str]]:
    """(data or the error as type and text, warnings) of a render callback given a warn."""
    warnings: list[str] = []
    try:
        return ("ok", without_timestamps(render(warnings.append))), warnings
    except ReclassError as err:
        return ("error", type(err).__name__, str(err)), warnings


def fresh_inventory(base: Path) -> tuple[Any, list[str]]:
    return outcome(lambda warn: reclass_ng.load(str(base), warn=warn).inventory())


def fresh_nodeinfo(base: Path, name: str) -> tuple[Any, list[str]]:
    return outcome(lambda warn: reclass_ng.load(str(base), warn=warn).nodeinfo(name))


class LiveUnderTest:
    """One long-lived inventory, its warnings collected per render."""

    def __init__(self, base: Path) -> None:
        self.warnings: list[str] = []  # (no reference back to self: freed without the collector)
        self.inventory = reclass_ng.load(str(base), warn=self.warnings.append)

    def render(self, what: str = "inventory", node: str | None = None) -> tuple[Any, list[str]]:
        self.warnings.clear()
        try:
            if what == "inventory":
                self.inventory.refresh()
                data: Any = ("ok", without_timestamps(self.inventory.inventory()))
            else:
                assert node is not None
                self.inventory.refresh(node)
                data = ("ok", without_timestamps(self.inventory.nodeinfo(node)))
        except ReclassError as err:
            data = ("error", type(err).__name__, str(err))
        return data, list(self.warnings)


# -- generated inventories and edits -------------------------------------------------------

class_files = st.fixed_dictionaries({
    "classes": st.lists(st.sampled_from(CLASSES + ["absent"]), max_size=2, unique=True),
    "value": st.integers(0, 9),
    "ref": st.sampled_from([None, "${shared}", "${c0:v}", "${missing}"]),
    "app": st.booleans(),
})
node_files = st.fixed_dictionaries({
    # Few distinct lists, so that nodes often share one (their class walk is shared).
    "classes": st.sampled_from([[], ["c0"], ["c1", "c0"], ["c2"], ["absent", "c1"]]),
    "export": st.integers(0, 9),
    "query": st.sampled_from([None, "$[ exports:x ]", "$[ if exports:x == 1 ]"]),
    "environment": st.sampled_from([None, "base", "other"]),
})


def class_text(name: str, spec: dict[str, Any]) -> str:
    lines = [f"classes: [{', '.join(spec['classes'])}]", "parameters:",
             f"  {name}:", f"    v: {spec['value']}", f"  shared: {spec['value']}"]
    if spec["ref"]:
        lines.append(f"  ref_{name}: \"{spec['ref']}\"")
    if spec["app"]:
        lines.append(f"applications: [app_{name}]")
    return "\n".join(lines) + "\n"


def node_text(spec: dict[str, Any]) -> str:
    lines = [f"classes: [{', '.join(spec['classes'])}]", "exports:", f"  x: {spec['export']}"]
    if spec["query"]:
        lines += ["parameters:", f"  found: \"{spec['query']}\""]
    if spec["environment"]:
        lines.append(f"environment: {spec['environment']}")
    return "\n".join(lines) + "\n"


edits = st.one_of(
    st.tuples(st.just("class"), st.sampled_from(CLASSES), class_files),
    st.tuples(st.just("remove class"), st.sampled_from(CLASSES)),
    st.tuples(st.just("node"), st.sampled_from(NODES), node_files),
    st.tuples(st.just("remove node"), st.sampled_from(NODES)),
    st.tuples(st.just("settings"), st.booleans()),
    st.tuples(st.just("same size"), st.sampled_from(CLASSES + NODES)),
    st.tuples(st.just("move class"), st.sampled_from(CLASSES)),
)


def apply_edit(base: Path, edit: tuple) -> None:
    kind = edit[0]
    if kind == "class":
        for old in (base / "classes" / f"{edit[1]}.yml", base / "classes" / edit[1] / "init.yml"):
            old.unlink(missing_ok=True)
        (base / "classes" / f"{edit[1]}.yml").write_text(class_text(edit[1], edit[2]))
    elif kind == "remove class":
        for old in (base / "classes" / f"{edit[1]}.yml", base / "classes" / edit[1] / "init.yml"):
            old.unlink(missing_ok=True)
    elif kind == "move class":  # c.yml -> c/init.yml: the same class from another file
        flat = base / "classes" / f"{edit[1]}.yml"
        if flat.exists():
            (base / "classes" / edit[1]).mkdir(exist_ok=True)
            flat.rename(base / "classes" / edit[1] / "init.yml")
    elif kind == "node":
        (base / "nodes" / f"{edit[1]}.yml").write_text(node_text(edit[2]))
    elif kind == "remove node":
        (base / "nodes" / f"{edit[1]}.yml").unlink(missing_ok=True)
    elif kind == "settings":
        (base / "reclass-config.yml").write_text(f"ignore_class_notfound: {str(edit[1]).lower()}\n")
    elif kind == "same size":  # change one digit, put the modification time back
        directory = "classes" if edit[1].startswith("c") else "nodes"
        path = base / directory / f"{edit[1]}.yml"
        if path.exists():
            stat = path.stat()
            text = path.read_text()
            digit = next((ch for ch in text if ch.isdigit()), None)
            if digit is not None:
                at = text.index(digit)
                path.write_text(text[:at] + str((int(digit) + 1) % 10) + text[at + 1:])
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def start_inventory(base: Path) -> None:
    files = {f"classes/{name}.yml": class_text(name, {"classes": [], "value": i, "ref": None,
                                                       "app": i % 2 == 0})
             for i, name in enumerate(CLASSES)}
    files.update({f"nodes/{name}.yml": node_text({"classes": CLASSES[i // 2:i // 2 + 2], "export": i,
                                                   "query": None, "environment": None})
                  for i, name in enumerate(NODES)})
    write_inventory(base, files)


# The inotify variant is `slow` (tests/conftest.py): the inner loop keeps the signatures one.
@pytest.fixture(params=[pytest.param("inotify", marks=pytest.mark.slow), "signatures"])
def trusted_directory_signatures(request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick check of `refresh(node)` with kernel notifications, and with directory
    signatures trusted at once (not after RACY_SECONDS; every edit waits for the file system
    clock to move on). Nodes are rendered in batches as soon as one is asked for."""
    monkeypatch.setattr(live, "USE_INOTIFY", request.param == "inotify")
    monkeypatch.setattr(snapshot, "RACY_SECONDS", 0.0)
    monkeypatch.setattr(live, "BATCH_AFTER_MISSES", 0)  # a node asked for renders every node


@pytest.mark.slow  # 40 edit sequences, each rendered live and fresh: 1.5 minutes per variant
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(edits, min_size=1, max_size=8), st.sampled_from(NODES))
def test_incremental_render_equals_a_fresh_render_after_any_edit(
        trusted_directory_signatures: None, edit_list: list[tuple], asked: str) -> None:
    if os.environ.get(SPEED_VARIABLE) == "reference":
        # 40 examples of up to 8 edits, each waiting for the file system clock: at the
        # reference speed too this doubled the module's time; the other tests here and
        # tests/test_incremental_corpus.py run the incremental render at both speeds.
        pytest.skip("run at the fast speed only (its time)")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "inventory"
        start_inventory(base)
        for_inventory = LiveUnderTest(base)
        for_one_node = LiveUnderTest(base)
        assert for_inventory.render() == fresh_inventory(base)
        assert for_one_node.render("nodeinfo", asked) == fresh_nodeinfo(base, asked)
        for edit in edit_list:
            time.sleep(CLOCK_TICK)
            apply_edit(base, edit)
            assert for_inventory.render() == fresh_inventory(base), edit
            assert for_one_node.render("nodeinfo", asked) == fresh_nodeinfo(base, asked), edit


def test_refresh_renders_again_only_the_nodes_a_change_affects(tmp_path: Path) -> None:
    base = tmp_path / "inventory"
    start_inventory(base)  # n0 and n1 list c0 c1, n2 and n3 c1 c2
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    inventory.inventory()
    assert inventory.refresh().stale == ()
    (base / "classes" / "c2.yml").write_text(class_text("c2", {"classes": [], "value": 7,
                                                              "ref": None, "app": False}))
    assert inventory.refresh().stale == ("n2", "n3")
    assert inventory.inventory()["nodes"]["n3"]["parameters"]["c2"] == {"v": 7}
    # A class that was not found, and now exists.
    (base / "nodes" / "n0.yml").write_text("classes: [later]\n")
    assert inventory.refresh().stale == ("n0",)
    try:
        inventory.inventory()
        raise AssertionError("a missing class must fail the render")
    except ReclassError as err:
        assert "later" in str(err)
    (base / "classes" / "later.yml").write_text("parameters: {late: 1}\n")
    assert inventory.refresh().stale == ("n0",)
    assert inventory.inventory()["nodes"]["n0"]["parameters"]["late"] == 1


def test_queries_are_rendered_again_when_an_export_they_read_changes(tmp_path: Path) -> None:
    base = tmp_path / "inventory"
    write_inventory(base, {
        "nodes/a.yml": "classes: [ca]\n",
        "nodes/b.yml": "exports: {x: 1}\n",
        "nodes/q.yml": "parameters: {all: '$[ exports:x ]'}\n",
        "classes/ca.yml": "exports: {x: 2}\n",
    })
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    assert inventory.inventory()["nodes"]["q"]["parameters"]["all"] == {"a": 2, "b": 1}
    (base / "classes" / "ca.yml").write_text("exports: {x: 3}\n")
    assert inventory.refresh().stale == ("a", "q")
    assert inventory.nodeinfo("q")["parameters"]["all"] == {"a": 3, "b": 1}


def test_a_query_that_failed_on_a_missing_class_of_another_node_is_rendered_again(
        tmp_path: Path) -> None:
    """A query whose view of another node failed read that node's inputs too: when the
    missing class appears, the querying node is rendered again (found by the property test)."""
    base = tmp_path / "inventory"
    write_inventory(base, {
        "nodes/a.yml": "classes: [ca]\n",
        "nodes/q.yml": "parameters: {all: '$[ exports:x ]'}\n",
    })
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    try:
        inventory.nodeinfo("q")
        raise AssertionError("the query reads a node whose class is missing")
    except ReclassError as err:
        assert "ca" in str(err)
    (base / "classes" / "ca.yml").write_text("exports: {x: 2}\n")
    assert inventory.refresh().stale == ("a", "q")
    assert inventory.nodeinfo("q")["parameters"]["all"] == {"a": 2}


def test_a_same_size_edit_that_restores_the_mtime_is_seen(tmp_path: Path) -> None:
    base = tmp_path / "inventory"
    write_inventory(base, {"nodes/n.yml": "parameters: {v: 1}\n"})
    inventory = reclass_ng.load(str(base))
    inventory.refresh("n")
    assert inventory.nodeinfo("n")["parameters"]["v"] == 1
    path = base / "nodes" / "n.yml"
    stat = path.stat()
    path.write_text("parameters: {v: 2}\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    inventory.refresh("n")
    assert inventory.nodeinfo("n")["parameters"]["v"] == 2


def test_a_query_sees_a_node_that_moves_into_its_environment(
        tmp_path: Path, trusted_directory_signatures: None) -> None:
    base = tmp_path / "inventory"
    write_inventory(base, {
        "nodes/q.yml": "parameters: {all: '$[ exports:x ]'}\n",
        "nodes/x.yml": "environment: other\nexports: {x: 1}\n",
    })
    inventory = reclass_ng.load(str(base))
    inventory.refresh("q")
    assert inventory.nodeinfo("q")["parameters"]["all"] == {"q": None} or \
        inventory.nodeinfo("q")["parameters"]["all"] == {}
    time.sleep(CLOCK_TICK)
    (base / "nodes" / "x.yml").write_text("environment: base\nexports: {x: 1}\n")
    inventory.refresh("q")
    assert inventory.nodeinfo("q")["parameters"]["all"] == fresh_nodeinfo(base, "q")[0][1][
        "parameters"]["all"]


def test_refresh_of_a_node_reads_the_settings_again_only_when_a_config_file_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "RACY_SECONDS", 0.0)  # stat data trusted at once
    base = tmp_path / "inventory"
    write_inventory(base, {"nodes/n.yml": "parameters: {v: 1}\n",
                           "reclass-config.yml": "default_environment: one\n"})
    inventory = reclass_ng.load(str(base))
    inventory.refresh("n")
    assert inventory.nodeinfo("n")["environment"] == "one"
    reads: list[str | None] = []
    load_settings = live.load_settings

    def counted(base_dir: str | None, *args: Any, **kwargs: Any) -> Any:
        reads.append(base_dir)
        return load_settings(base_dir, *args, **kwargs)

    monkeypatch.setattr(live, "load_settings", counted)
    inventory.refresh("n")
    inventory.refresh("n")
    # The config files' stat data as when they were read: not read again (but on a file
    # system whose stat data is never trusted, snapshot.LOCAL_FILE_SYSTEMS).
    device = (base / "reclass-config.yml").stat().st_dev
    assert (reads == []) == ((os.major(device), os.minor(device)) in snapshot.local_devices())
    (base / "reclass-config.yml").write_text("default_environment: twelve\n")
    inventory.refresh("n")
    assert inventory.nodeinfo("n")["environment"] == "twelve" and reads
    monkeypatch.setattr(snapshot, "RACY_SECONDS", 3600.0)  # every stamp too recent to trust
    reads.clear()
    inventory.refresh("n")
    assert reads  # read again


@pytest.mark.parametrize("inotify", [True, False])
def test_a_file_changed_while_its_node_is_rendered_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool) -> None:
    monkeypatch.setattr(live, "USE_INOTIFY", inotify)  # the kernel's events, or digests
    base = tmp_path / "inventory"
    write_inventory(base, {"classes/c.yml": "parameters: {v: 1}\n",
                           "nodes/n.yml": "classes: [c]\n"})
    inventory = reclass_ng.load(str(base))
    inventory.refresh()
    render_results = live.render_results
    edits: list[Path] = []

    def edited_meanwhile(*args: Any, **kwargs: Any) -> Any:
        rendered = render_results(*args, **kwargs)
        if not edits:
            edits.append(base / "classes" / "c.yml")
            edits[0].write_text("parameters: {v: 22}\n")
        return rendered

    monkeypatch.setattr(live, "render_results", edited_meanwhile)
    assert inventory.nodeinfo("n")["parameters"]["v"] == 22
