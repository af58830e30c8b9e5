"""Parallel rendering (reclass_ng.parallel, `reclass --inventory --jobs N`) against the serial path.

The contract: the same text byte for byte (timestamps aside), the same error and exit status
when nodes fail, the same warnings in the same order, with any executor and any chunk size.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

import reclass_ng
from reclass_ng import parallel
from reclass_ng.errors import ReclassError
from reclass_ng.output import dump
from reclass_ng.parallel.chunks import LanePlan
from reclass_ng.parallel.text_spool import SharedTextSpool
from reclass_ng.parallel.workers import MIN_NODES_ENV

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = REPO_ROOT / "inventory-example"
FORMATS = [("json", True), ("json", False), ("yaml", True), ("yaml", False)]

# `%c` in the C locale; flow-style YAML may break the line inside it.
_TIMESTAMP = re.compile(r"[A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+\d{4}")


def same_text(text: str) -> str:
    """Output with every timestamp replaced: the only part that may differ between runs."""
    return _TIMESTAMP.sub("TIMESTAMP", text)


def tricky_inventory(count: int = 14) -> dict[str, str]:
    """Nodes whose output exercises the serialisers: long strings YAML folds, unicode, dates,
    multi-line text, keys needing quotes, lists of dicts, exports and queries across nodes."""
    files = {
        "classes/common.yml": (
            "applications: [ssh, ntp]\n"
            "parameters:\n"
            "  motd: 'Welcome to ${_reclass_:name:short}, a host with a rather long message of"
            " the day that certainly wraps past eighty columns in YAML output'\n"
            "  released: 2024-05-01\n"
            "  'yes': true\n"
            "  '123': number key\n"
            "  text: |\n    line one\n    line two\n"
            "  users: [{name: ana, shell: /bin/zsh}, {name: bo}]\n"
            "  greek: \u03b1\u03b2\u03b3\n"
        ),
        "classes/web.yml": "classes: [common]\napplications: [nginx]\n"
                           "parameters:\n  port: 80\n  peers: $[ if exports:role == web ]\n"
                           "  ports: $[ exports:port ]\n",
        "classes/db.yml": "classes: [common]\napplications: [postgres]\n"
                          "parameters:\n  port: 5432\n",
    }
    for index in range(count):
        role = "web" if index % 3 else "db"
        env = "environment: staging\n" if index % 5 == 0 else ""
        files[f"nodes/n{index:02d}.yml"] = (
            f"{env}classes: [{role}]\nparameters:\n  index: {index}\n"
            f"exports:\n  role: {role}\n  port: ${{port}}\n")
    files["nodes/yes.yml"] = "classes: [db]\nexports:\n  role: db\n  port: ${port}\n"
    return files


@pytest.fixture(scope="module")
def pool() -> Executor:
    context = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        yield executor


@pytest.fixture(scope="module")
def threads() -> Executor:
    with ThreadPoolExecutor(max_workers=3) as executor:
        yield executor


def load(path: Path, **settings):
    warnings: list[str] = []
    inventory = reclass_ng.load(str(path), read_config=False, warn=warnings.append, **settings)
    inventory.warnings = warnings
    return inventory


def forked_render_text(base: Path, fmt: str) -> str:
    """The inventory at `base` rendered by a forked pool of two (the coordinator and one
    worker), as the command line's `--jobs 2` gets it: bytes, decoded."""
    inventory = load(base)
    with parallel.forked_process_pool(inventory.settings, 2, inventory.storage,
                                      inventory.speed) as (executor, key):
        return b"".join(parallel.render_inventory_bytes(inventory, executor, fmt, True,
                                                        key=key)).decode("utf-8")


# -- same output ------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, pretty", FORMATS)
@pytest.mark.parametrize("chunk_size", [1, 4, None])
def test_text_identical_to_serial(pool, make_inventory, fmt: str, pretty: bool,
                                  chunk_size: int | None) -> None:
    base = make_inventory(tricky_inventory())
    serial = dump(load(base).inventory(), fmt, pretty)
    text = parallel.render_inventory_text(load(base), pool, fmt, pretty, chunk_size=chunk_size)
    assert same_text(text) == same_text(serial)
    assert "TIMESTAMP" in same_text(text)  # the normalisation did not hide the whole document


def test_example_inventory_dicts_with_processes_and_threads(pool, threads) -> None:
    serial = load(EXAMPLE).inventory()
    for executor in (pool, threads):
        data = load(EXAMPLE).inventory(executor=executor, chunk_size=2)
        assert list(data["nodes"]) == list(serial["nodes"])
        for fmt, pretty in FORMATS:
            assert same_text(dump(data, fmt, pretty)) == same_text(dump(serial, fmt, pretty))


def test_settings_as_source_and_relative_base(pool, make_inventory, monkeypatch) -> None:
    base = make_inventory(tricky_inventory(4))
    monkeypatch.chdir(base.parent)
    settings = load(base).settings.updated({"inventory_base_uri": base.name})
    text = parallel.render_inventory_text(settings, pool, "json", True)
    assert same_text(text) == same_text(dump(load(base).inventory(), "json", True))


def test_empty_inventory(pool, make_inventory) -> None:
    base = make_inventory({})
    for fmt, pretty in FORMATS:
        serial = dump(load(base).inventory(), fmt, pretty)
        assert same_text(parallel.render_inventory_text(load(base), pool, fmt, pretty)) \
            == same_text(serial)


@pytest.mark.parametrize("fmt, pretty", FORMATS)
def test_bytes_are_the_text_encoded(pool, make_inventory, fmt: str, pretty: bool) -> None:
    # What the command line writes: the workers' texts as UTF-8 bytes (unicode in YAML).
    base = make_inventory(tricky_inventory(6))
    text = parallel.render_inventory_text(load(base), pool, fmt, pretty, chunk_size=2)
    pieces = parallel.render_inventory_bytes(load(base), pool, fmt, pretty, chunk_size=2)
    assert all(type(piece) is bytes for piece in pieces)
    assert same_text(b"".join(pieces).decode("utf-8")) == same_text(text)


def test_inventory_changed_between_renders_is_read_again(pool, make_inventory) -> None:
    base = make_inventory(tricky_inventory(3))
    parallel.render_inventory(load(base), pool)
    (base / "nodes" / "n01.yml").write_text("parameters:\n  changed: true\n")
    data = parallel.render_inventory(load(base), pool)
    assert data["nodes"]["n01"]["parameters"]["changed"] is True


def grouped_inventory(groups: int, size: int) -> dict[str, str]:
    """`groups` runs of `size` nodes in node order, the nodes of a run listing the same
    classes (as the nodes of one cluster and role do)."""
    files = {"classes/common.yml": "parameters:\n  motd: hi ${name}\n  common: {a: 1, b: [x]}\n"}
    for group in range(groups):
        files[f"classes/role{group}.yml"] = (f"classes: [common]\nparameters:\n  role: r{group}\n"
                                             "  common:\n    c: ${role}\n")
        for index in range(size):
            files[f"nodes/g{group:03d}n{index:03d}.yml"] = (
                f"classes: [common, role{group}]\nparameters:\n  name: n{index}\n")
    return files


def worker_claims_first(monkeypatch) -> multiprocessing.synchronize.Event:
    """An event, clear at first, the forked worker sets when it claims a chunk, and the
    coordinator waits for (up to a minute) before it claims one: so the worker renders nodes
    in each render the event was cleared before. Without it a worker slow to wake (a busy CI
    machine) found every chunk of a 40-node render taken by the coordinator, and no text came
    back from it to count. Patched before the pool forks, as the workers inherit it."""
    claimed = multiprocessing.get_context("fork").Event()
    claim = LanePlan.claim

    def claim_after_the_worker(self, state):
        if os.getpid() != self.coordinator:
            claimed.set()
        elif not claimed.wait(60):
            raise AssertionError("the forked worker claimed no chunk within a minute")
        return claim(self, state)

    monkeypatch.setattr(LanePlan, "claim", claim_after_the_worker)
    return claimed


def test_forked_workers_share_class_walks_as_one_process(make_inventory, tmp_path: Path,
                                                         monkeypatch) -> None:
    # The nodes of a run (same classes) go to one worker, which walks their classes once, as
    # the serial render does; chunks handed out in turn split the runs between the workers,
    # which both walked them (60% more walks on the bench's mcp inventory: doc/performance.rst).
    from reclass_ng.classes.expansion import SharedClassWalks

    base = make_inventory(grouped_inventory(16, 12))
    walks = tmp_path / "walks"
    walk_alone = SharedClassWalks._walk_alone

    def counted(self, entity):  # also in the forked workers: one line a walk
        with open(walks, "a", encoding="ascii") as handle:
            handle.write(f"{os.getpid()}\n")
        return walk_alone(self, entity)

    monkeypatch.setattr(SharedClassWalks, "_walk_alone", counted)
    announced = tmp_path / "announced"
    claim = LanePlan.claim

    def counted_claim(self, state):  # a line for each claim that announces nodes
        claimed = claim(self, state)
        if claimed is not None and claimed[2] is not None:
            with open(announced, "a", encoding="ascii") as handle:
                handle.write(f"{os.getpid()}\n")
        return claimed

    monkeypatch.setattr(LanePlan, "claim", counted_claim)
    worker_claims_first(monkeypatch)  # so that the worker walks classes in the first render
    serial = load(base)
    expected = same_text(dump(serial.inventory(), "json", True))
    serial_walks = len(walks.read_text().split())
    walks.unlink()
    inventory = load(base)
    with parallel.forked_process_pool(inventory.settings, 2, inventory.storage,
                                      inventory.speed) as (executor, key):
        text = parallel.render_inventory_text(inventory, executor, "json", True, key=key)
        workers = walks.read_text().split()
        # Each process announces its lane once; any other announcement is a takeover.
        takeovers = len(announced.read_text().split()) - 2
        again = parallel.render_inventory_text(inventory, executor, "json", True, key=key)
        forked = [str(pid) for pid in executor._processes]
    assert same_text(text) == same_text(again) == expected
    assert serial_walks == 16
    # Two processes render: the coordinator (a lane of its own) and the one worker forked.
    assert len(forked) == 1
    assert set(workers) == {str(os.getpid()), *forked}
    # A worker that takes over another lane's last chunks walks the run the cut splits once
    # more; how often that happens depends on how the two processes are scheduled (a loaded
    # machine gave 5 takeovers), so the extra walks are counted against the takeovers made.
    # Chunks handed out in turn would split every run: 32 walks here.
    assert takeovers >= 0
    assert len(workers) <= serial_walks + takeovers, (len(workers), takeovers)


def test_forked_workers_share_rendered_subtrees_as_the_serial_command(make_inventory,
                                                                      tmp_path: Path,
                                                                      monkeypatch) -> None:
    # A worker keeps no node once its text is made, as the serial command line's streamed
    # render: it records the reads of the same containers (those with enough references to
    # render, see resolve.rendered_subtrees.STREAMED_MIN_DIRTY), not of every small one (the
    # workers of `--jobs 2` recorded 9,400 where the serial render recorded 70 at 2,000 `mcp`
    # nodes).
    from reclass_ng.resolve import shared_subtrees

    files = grouped_inventory(4, 12)
    files["classes/common.yml"] += ("  small: {a: '${role}', b: '${role}', c: '${name}'}\n"
                                    "  large: {" + ", ".join(f"k{index}: '${{role}}'"
                                                             for index in range(8)) + "}\n")
    base = make_inventory(files)
    recorded = tmp_path / "recorded"
    subtree_reads = shared_subtrees.SubtreeReads

    def counted(path):  # also in the forked worker: one line a container recorded
        with open(recorded, "a", encoding="ascii") as handle:
            handle.write(f"{os.getpid()} {'.'.join(map(str, path))}\n")
        return subtree_reads(path)

    monkeypatch.setattr(shared_subtrees, "SubtreeReads", counted)
    serial = load(base)
    expected = same_text(dump(serial.inventory(), "json", True))
    recorded.unlink(missing_ok=True)
    list(load(base).rendered_nodes(release_files=True))  # what the serial command renders
    serial_paths = [line.split()[1] for line in recorded.read_text().splitlines()]
    recorded.unlink()
    text = forked_render_text(base, "json")
    assert same_text(text) == expected
    forked_paths = [line.split()[1] for line in recorded.read_text().splitlines()]
    assert set(serial_paths) == {"large"}  # the small container is rendered plainly
    assert set(forked_paths) == {"large"}
    assert len(forked_paths) <= len(serial_paths) + 4  # each process meets it anew


def counted_read_backs(monkeypatch) -> list[int]:
    """The node counts of the chunk results whose texts are read back from the pool's text
    file, in this process (ChunkResult.texts_from_spool counted)."""
    from reclass_ng.parallel.chunks import ChunkResult

    read_back: list[int] = []
    texts_from_spool = ChunkResult.texts_from_spool

    def counted(self, spool):
        read_back.append(len(self.nodes))
        return texts_from_spool(self, spool)

    monkeypatch.setattr(ChunkResult, "texts_from_spool", counted)
    return read_back


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs memory files (Linux)")
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_forked_workers_texts_come_back_through_a_memory_file(make_inventory, monkeypatch,
                                                              fmt: str) -> None:
    # A forked worker puts its nodes' texts into the file the pool shares and sends
    # back where they are; the coordinator reads them back as the results arrive. Two renders
    # with the same pool: the file is emptied in between, the second text is whole too.
    base = make_inventory(tricky_inventory(40))
    expected = same_text(dump(load(base).inventory(), fmt, True))
    read_back = counted_read_backs(monkeypatch)
    worker_claims_first(monkeypatch)
    inventory = load(base)
    with parallel.forked_process_pool(inventory.settings, 2, inventory.storage,
                                      inventory.speed) as (executor, key):
        texts = [b"".join(parallel.render_inventory_bytes(inventory, executor, fmt, True,
                                                          key=key)).decode("utf-8")
                 for _ in range(2)]
    assert [same_text(text) for text in texts] == [expected, expected]
    assert sum(read_back) > 0  # the worker rendered nodes, and their texts came back so


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_the_command_prints_the_texts_from_the_pools_file(make_inventory, monkeypatch,
                                                          tmp_path: Path, fmt: str) -> None:
    # What `reclass --inventory --jobs 2` prints is not read back into the command: every
    # process's texts wait in the pool's file and go from there to the output (os.sendfile to
    # a file; read a chunk at a time for a stream without a descriptor), so its memory does
    # not grow with the output (tests/test_inventory_memory.py measures that).
    import io

    base = make_inventory(tricky_inventory(40))
    expected = same_text(dump(load(base).inventory(), fmt, True))
    read_back = counted_read_backs(monkeypatch)
    claimed = worker_claims_first(monkeypatch)
    inventory = load(base)
    printed = tmp_path / f"printed.{fmt}"
    held = io.StringIO()
    with parallel.forked_process_pool(inventory.settings, 2, inventory.storage,
                                      inventory.speed) as (executor, key):
        spooled = parallel.render_inventory_spooled(inventory, executor, fmt, True, key=key)
        with open(printed, "w", encoding="utf-8") as stream:
            spooled.write_to(stream)
        spooled.write_to(held)
        assert read_back == []
        # render_inventory_bytes hands the texts back: it reads the worker's.
        claimed.clear()
        handed_back = b"".join(parallel.render_inventory_bytes(inventory, executor, fmt, True,
                                                               key=key)).decode("utf-8")
    assert sum(read_back) > 0
    assert same_text(printed.read_text(encoding="utf-8")) == expected
    assert same_text(held.getvalue()) == expected
    assert same_text(handed_back) == expected


def test_the_text_file_takes_more_texts_than_one_write_can() -> None:
    # A chunk's texts are written with one pwritev call of up to IOV_MAX (1,024) buffers at a
    # time: a chunk of 600 JSON nodes and their separators, more than that, was refused
    # (EINVAL), and its texts went through the pipe instead.

    spool = SharedTextSpool.made()
    assert spool is not None
    try:
        texts = [f"text {index},".encode() for index in range(3000)]
        first = spool.append(texts[:1])
        offset = spool.append(texts[1:])
        assert (first, offset) == (0, len(texts[0]))
        whole = b"".join(texts)
        assert spool.read(0, len(whole)) == whole
    finally:
        spool.close()


def test_the_text_file_is_truncated_only_when_texts_were_written(monkeypatch) -> None:
    # Each render starts by emptying the spool. A file truncated to size 0 on ext4 has its
    # pages written to disk when closed, and the close waits (0.11 s at the end of every
    # `--jobs 2` run with 136 MB of texts): a spool nothing was written to yet is left alone.

    truncated: list[int] = []
    ftruncate = os.ftruncate
    monkeypatch.setattr(os, "ftruncate",
                        lambda fd, size: truncated.append(size) or ftruncate(fd, size))
    spool = SharedTextSpool.made()
    assert spool is not None
    try:
        spool.reset()
        assert truncated == []
        spool.append([b"a node's text"])
        spool.reset()
        assert truncated == [0]
        assert os.fstat(spool.descriptor).st_size == 0
        assert spool.append([b"the next render's"]) == 0
        assert spool.read(0, 17) == b"the next render's"
    finally:
        spool.close()


def test_tasks_left_once_every_chunk_is_claimed_are_not_run(make_inventory, tmp_path,
                                                            monkeypatch) -> None:
    # The pool gets a task for each chunk, the coordinator renders chunks too: once it finds
    # none left, the tasks no worker has taken would each only find that out, one round trip
    # after another at the end of the render. A slow worker leaves the coordinator to render
    # most chunks: the worker runs few tasks, not one a chunk.
    from reclass_ng.parallel import chunks

    coordinator = os.getpid()
    tasks = tmp_path / "tasks"
    render_chunk, worker_state = chunks._render_chunk, chunks._worker_state

    def slow_in_the_worker(job, state):
        if os.getpid() != coordinator:
            time.sleep(0.1)
        return render_chunk(job, state)

    def counted(*args, **kwargs):  # once a task (and a coordinator's claim), in any process
        if os.getpid() != coordinator:
            with open(tasks, "a") as handle:
                handle.write("task\n")
        return worker_state(*args, **kwargs)

    monkeypatch.setattr(chunks, "_render_chunk", slow_in_the_worker)
    monkeypatch.setattr(chunks, "_worker_state", counted)
    base = make_inventory(tricky_inventory(24))
    expected = same_text(dump(load(base).inventory(), "json", True))
    assert same_text(forked_render_text(base, "json")) == expected
    texts = SharedTextSpool.made()
    assert texts is not None
    plan = LanePlan([f"n{index}" for index in range(24)], 2, texts)
    plan.close()
    # no file: the worker took no task at all (the coordinator claimed every chunk first)
    taken = len(tasks.read_text().splitlines()) if tasks.exists() else 0
    assert taken < plan.total // 2


# Run in a fresh interpreter (the test session has imported the writers already): renders
# with a forked pool, the coordinator waiting for the worker's first claim so that the worker
# renders nodes, and prints the modules the worker imported after the fork.
_IMPORTS_AFTER_THE_FORK = """
import json, multiprocessing, os, sys
import reclass_ng
from reclass_ng import parallel
from reclass_ng.parallel import chunks

at_fork = []
os.register_at_fork(after_in_child=lambda: at_fork.append(set(sys.modules)))
coordinator = os.getpid()
render_chunk = chunks._render_chunk
claim = chunks.LanePlan.claim
claimed = multiprocessing.get_context("fork").Event()

rendered = []

def counted_in_the_worker(job, state):
    if os.getpid() != coordinator:
        rendered.append(len(job.names))
    return render_chunk(job, state)

def claim_after_the_worker(self, state):
    # the worker renders nodes however slow it is to wake (tests/test_parallel.py:
    # worker_claims_first)
    if os.getpid() != coordinator:
        claimed.set()
    elif not claimed.wait(60):
        raise AssertionError("the forked worker claimed no chunk within a minute")
    return claim(self, state)

def imported_since_the_fork():
    return sum(rendered), sorted(set(sys.modules) - at_fork[0])

chunks._render_chunk = counted_in_the_worker
chunks.LanePlan.claim = claim_after_the_worker
base, fmt = sys.argv[1], sys.argv[2]
inventory = reclass_ng.load(base, read_config=False, output=fmt, warn=lambda message: None)
with parallel.forked_process_pool(inventory.settings, 2, inventory.storage,
                                  inventory.speed) as (executor, key):
    parallel.render_inventory_bytes(inventory, executor, fmt, True, key=key)
    print(json.dumps(executor.submit(imported_since_the_fork).result()))
"""


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_forked_worker_imports_no_writer_after_the_fork(make_inventory, fmt: str) -> None:
    # The node texts' writer (for JSON orjson, with dataclasses, inspect and ast: 45 M
    # instructions) is imported before the fork, once for both processes, not by each at its
    # first node.
    files = {f"nodes/n{index:02d}.yml": f"classes: [base]\nparameters:\n  i: {index}\n"
             for index in range(24)}
    files["classes/base.yml"] = "parameters:\n  text: some words\n  ratio: 0.5\n"
    base = make_inventory(files)
    done = subprocess.run([sys.executable, "-c", _IMPORTS_AFTER_THE_FORK, str(base), fmt],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stderr
    rendered, imported = json.loads(done.stdout.splitlines()[-1])
    assert rendered > 0  # the worker rendered nodes
    assert [name for name in imported if name.startswith(("reclass_ng.output", "orjson"))] \
        == []


def test_forked_tasks_do_not_carry_the_settings(make_inventory, monkeypatch) -> None:
    # A task of a forked pool's render names the render (its key): the worker finds the
    # inventory it inherited from the fork by it. Pickled with every task, the settings were
    # also unpickled, hashed and compared by the worker, about 0.1 ms a task.
    from reclass_ng.settings import Settings

    pickled = []
    reduce_ex = Settings.__reduce_ex__

    def counted(self, protocol):
        pickled.append(protocol)
        return reduce_ex(self, protocol)

    monkeypatch.setattr(Settings, "__reduce_ex__", counted)
    base = make_inventory(tricky_inventory(24))
    expected = same_text(dump(load(base).inventory(), "json", True))
    assert same_text(forked_render_text(base, "json")) == expected
    assert pickled == []


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs memory files (Linux)")
def test_texts_the_memory_file_cannot_take_come_through_the_pipe(make_inventory,
                                                                monkeypatch) -> None:
    # A memory file counts against the memory a cgroup allows: a worker whose write fails
    # sends the texts in its result, as where memory files do not exist.
    import errno


    def full(self, texts):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SharedTextSpool, "append", full)  # also in the forked worker
    base = make_inventory(tricky_inventory(30))
    expected = same_text(dump(load(base).inventory(), "yaml", True))
    text = forked_render_text(base, "yaml")
    assert same_text(text) == expected


@pytest.mark.parametrize("tiny", [False, True])
def test_forked_json_is_searched_for_floats_only_where_files_hold_such(make_inventory, tmp_path,
                                                                       monkeypatch, tiny) -> None:
    # orjson prints floats below 1e-4 otherwise than json: the text of a node is searched for
    # them only when a file read holds one (as the serial command line does), also in the
    # workers, where names with "e-" in them had every node's text searched.
    from reclass_ng.output import fast_json

    files = {f"nodes/node-{index:02d}.yml": f"classes: [base]\nparameters:\n  i: {index}\n"
             for index in range(24)}
    files["classes/base.yml"] = "parameters:\n  ratio: 0.5\n" + \
        ("  tiny: 0.00001\n" if tiny else "")
    base = make_inventory(files)
    searches = tmp_path / "searches"
    has_small_float = fast_json._has_small_float

    def counted(data):  # also in the forked worker: one line a search
        with open(searches, "a", encoding="ascii") as handle:
            handle.write("search\n")
        return has_small_float(data)

    monkeypatch.setattr(fast_json, "_has_small_float", counted)
    expected = same_text(dump(load(base).inventory(), "json", True))
    text = forked_render_text(base, "json")
    assert same_text(text) == expected
    assert ("0.00001" in text or "1e-05" in text) is tiny
    searched = len(searches.read_text().split()) if searches.exists() else 0
    assert (searched > 0) is tiny, searched


# -- same errors and warnings -------------------------------------------------------------------

def failing_inventory() -> dict[str, str]:
    files = {f"nodes/n{index:02d}.yml": f"parameters:\n  v: {index}\n" for index in range(12)}
    files["nodes/n02.yml"] = "parameters:\n  v: ${missing:one}\n"
    files["nodes/n07.yml"] = "parameters:\n  v: ${missing:two}\n"
    return files


def serial_error(base: Path, **settings) -> ReclassError:
    with pytest.raises(ReclassError) as caught:
        load(base, **settings).inventory()
    return caught.value


@pytest.mark.parametrize("chunk_size", [1, 3, 100])
def test_first_interpolation_error_in_node_order(pool, make_inventory, chunk_size) -> None:
    base = make_inventory(failing_inventory())
    expected = serial_error(base)
    assert "n02" in expected.message
    with pytest.raises(ReclassError) as caught:
        parallel.render_inventory(load(base), pool, chunk_size=chunk_size)
    assert type(caught.value) is type(expected)
    assert caught.value.message == expected.message
    assert caught.value.exit_code == expected.exit_code


@pytest.mark.parametrize("chunk_size", [1, 3, 100])
def test_class_errors_come_before_interpolation_errors(pool, make_inventory, chunk_size) -> None:
    files = failing_inventory()
    files["nodes/n10.yml"] = "classes: [no.such.class]\n"
    files["nodes/n11.yml"] = "classes: [another.missing]\n"
    base = make_inventory(files)
    expected = serial_error(base)
    assert "no.such.class" in expected.message
    with pytest.raises(ReclassError) as caught:
        parallel.render_inventory_text(load(base), pool, "yaml", True, chunk_size=chunk_size)
    assert caught.value.message == expected.message
    assert caught.value.exit_code == expected.exit_code


def warning_inventory(nested: bool = False) -> dict[str, str]:
    """Missing classes (ignored with a warning) in nodes and in the nodes queries look at, and
    overwritten undefined references in parameters and in queried exports: the same text in
    two export paths (e, f) and, with `nested`, in nested paths read by two queries (t, t:x)."""
    files = {
        "classes/a.yml": "parameters:\n  p: ${undefined_p}\nexports:\n  e: ${undefined_e}\n"
                         "  f: ${undefined_e}\n  t:\n    x: ${undefined_x}\n"
                         "    y: ${undefined_y}\n",
    }
    queries = {3: "  q: $[ exports:e ]\n", 7: "  q: $[ exports:f ]\n  r: $[ exports:e ]\n",
               4: "  s: $[ exports:t:y ]\n"}
    if nested:
        queries[8] = "  s: $[ exports:t ]\n"
    for index in range(10):
        files[f"nodes/n{index:02d}.yml"] = (
            f"classes: [a, gone{index % 3}]\nparameters:\n  p: {index}\n"
            f"{queries.get(index, '')}exports:\n  e: {index}\n  f: {index}\n"
            f"  t:\n    x: 1\n    y: 2\n")
    return files


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 100])
def test_warnings_replayed_in_serial_order(pool, threads, make_inventory, chunk_size) -> None:
    base = make_inventory(warning_inventory())
    serial = load(base, ignore_class_notfound=True)
    serial.inventory()
    assert any("gone1" in w for w in serial.warnings)
    assert any("undefined_e" in w for w in serial.warnings)
    for executor in (pool, threads):
        inventory = load(base, ignore_class_notfound=True)
        inventory.inventory(executor=executor, chunk_size=chunk_size)
        assert inventory.warnings == serial.warnings


def test_warnings_of_nested_export_paths_all_shown(pool, threads, make_inventory) -> None:
    # Known limit: which node's turn shows them may differ when a worker rendered the wider
    # path (exports:t) before the narrower one (exports:t:y); every warning still shows (when
    # the nested paths warn with different texts, as here).
    base = make_inventory(warning_inventory(nested=True))
    serial = load(base, ignore_class_notfound=True)
    serial.inventory()
    for executor in (pool, threads):
        for chunk_size in (1, 4):
            inventory = load(base, ignore_class_notfound=True)
            inventory.inventory(executor=executor, chunk_size=chunk_size)
            assert sorted(inventory.warnings) == sorted(serial.warnings)


def test_warnings_before_an_error_are_replayed(pool, make_inventory) -> None:
    files = warning_inventory()
    files["nodes/n05.yml"] = "classes: [gone9]\nparameters:\n  v: ${nope}\n"
    base = make_inventory(files)
    serial = load(base, ignore_class_notfound=True)
    with pytest.raises(ReclassError) as expected:
        serial.inventory()
    inventory = load(base, ignore_class_notfound=True)
    with pytest.raises(ReclassError) as caught:
        inventory.inventory(executor=pool, chunk_size=2)
    assert caught.value.message == expected.value.message
    assert inventory.warnings == serial.warnings


def test_not_an_inventory_is_refused(pool) -> None:
    with pytest.raises(TypeError):
        parallel.render_inventory("inventory-example", pool)


# -- the command line ---------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def workers_for_any_inventory(monkeypatch) -> None:
    """The command's workers even for these small inventories (it renders them serially by
    default: reclass_ng.parallel.workers), so that the tests below compare the two paths."""
    monkeypatch.setenv(MIN_NODES_ENV, "0")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_cli_jobs_output_identical(run_reclass, make_inventory, fmt: str) -> None:
    base = make_inventory(tricky_inventory())
    one = run_reclass(["-b", str(base), "--inventory", "-o", fmt])
    two = run_reclass(["-b", str(base), "--inventory", "-o", fmt, "--jobs", "2"])
    assert one.returncode == two.returncode == 0, two.stderr
    assert same_text(two.stdout) == same_text(one.stdout)
    assert two.stderr == one.stderr == ""


def test_cli_jobs_errors_and_warnings_identical(run_reclass, make_inventory) -> None:
    files = warning_inventory()
    files.update({name: text for name, text in failing_inventory().items()
                  if name in ("nodes/n02.yml", "nodes/n07.yml")})
    base = make_inventory(files)
    args = ["-b", str(base), "--inventory", "-z", "true", "-1"]
    one = run_reclass(args)
    two = run_reclass([*args, "-j", "2"])
    assert one.returncode != 0
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    assert "Traceback" not in two.stderr


def test_cli_jobs_more_than_nodes_and_example(run_reclass, tmp_path: Path) -> None:
    base = tmp_path / "example"
    shutil.copytree(EXAMPLE, base)
    one = run_reclass(["-b", str(base), "--inventory", "-o", "json"])
    many = run_reclass(["-b", str(base), "--inventory", "-o", "json", "-j", "16"])
    assert many.returncode == 0, many.stderr
    assert same_text(many.stdout) == same_text(one.stdout)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_cli_jobs_must_be_positive(run_reclass, make_inventory, value: str) -> None:
    base = make_inventory(tricky_inventory(2))
    result = run_reclass(["-b", str(base), "--inventory", "--jobs", value])
    assert result.returncode == 2
    assert "--jobs" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


# -- a Dask distributed cluster ------------------------------------------------------------------

def test_dask_cluster_renders_example_identically(make_inventory) -> None:
    """Fleets that outgrow one machine: the same API on a Dask cluster's executor."""
    distributed = pytest.importorskip("dask.distributed")
    base = make_inventory(warning_inventory())
    serial_example = load(EXAMPLE).inventory()
    serial_warnings = load(base, ignore_class_notfound=True)
    serial_warnings.inventory()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, timeout="60s") as client:
        # The workers register with the scheduler on their own; on a loaded machine they may
        # not have when the cluster is returned. Wait for both, then ask the scheduler itself
        # (client.run) which workers exist: scheduler_info() is a copy the client refreshes
        # only every few seconds and listed no workers once under load.
        client.wait_for_workers(2, timeout=120)
        executor = client.get_executor()
        data = load(EXAMPLE).inventory(executor=executor, chunk_size=2)
        text = parallel.render_inventory_text(load(EXAMPLE), executor, "yaml", True)
        inventory = load(base, ignore_class_notfound=True)
        inventory.inventory(executor=executor, chunk_size=3)
        worker_pids = client.run(os.getpid)
    assert len(worker_pids) == 2 and os.getpid() not in worker_pids.values(), worker_pids
    assert same_text(dump(data, "json", True)) == same_text(dump(serial_example, "json", True))
    assert same_text(text) == same_text(dump(serial_example, "yaml", True))
    assert inventory.warnings == serial_warnings.warnings


# -- the conformance corpus, serial against parallel -------------------------------------------

CORPUS = REPO_ROOT / "tests" / "conformance"


def corpus_inventories() -> list:
    import json

    cases = []
    for scenario_file in sorted(CORPUS.glob("*/scenario.json")):
        scenario = json.loads(scenario_file.read_text())
        if scenario.get("mode") == "inventory" and (scenario_file.parent / "inventory").is_dir():
            cases.append(pytest.param(scenario_file.parent / "inventory", scenario["args"],
                                      id=scenario["name"]))
    return cases


def render_both_ways(base: Path, args: list[str], pool: Executor):
    from reclass_ng.cli.reclass import build_parser, settings_from_args

    settings = settings_from_args(build_parser().parse_args([*args, "--inventory"]))
    outcomes = []
    for executor in (None, pool):
        warnings: list[str] = []
        try:
            inventory = reclass_ng.load(str(base), warn=warnings.append, **settings)
            if executor is None:
                text = dump(inventory.inventory(), "json", True)
            else:
                text = parallel.render_inventory_text(inventory, executor, "json", True,
                                                      chunk_size=1)
            outcomes.append((same_text(text), warnings))
        except ReclassError as err:
            outcomes.append((type(err).__name__, err.message, err.exit_code, warnings))
    return outcomes


# Every corpus scenario again, serially and in the pool (like tests/test_incremental_corpus.py
# through the incremental paths): about 20 s of the inner loop. The tests above compare the
# pool with a serial render on their own inventories.
@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance corpus not found")
@pytest.mark.parametrize("base, args", corpus_inventories())
def test_corpus_inventories_render_the_same_in_parallel(pool, base: Path, args: list[str],
                                                        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no reclass-config.yml of the developer
    monkeypatch.chdir(tmp_path)
    serial, in_parallel = render_both_ways(base, args, pool)
    assert in_parallel == serial


def test_cli_nodeinfo_refuses_jobs(run_reclass) -> None:
    # --jobs renders --inventory only; given with --nodeinfo it is a usage error, not ignored.
    args = ["-b", str(EXAMPLE), "--nodeinfo", "web1.example.com", "-o", "json"]
    with_jobs = run_reclass([*args, "-j", "2"])
    assert with_jobs.returncode == 2
    assert "--jobs applies to --inventory only" in with_jobs.stderr
    assert with_jobs.stdout == ""


# The command where no file can be shared (neither an unnamed temporary file nor a memory
# file, os.memfd_create): the workers send their nodes' texts through the pool's result pipe
# (parallel.text_spool).
WITHOUT_SPOOL_FILES = ["-c", "import os, runpy, tempfile; del os.memfd_create, os.O_TMPFILE; "
                             "tempfile.TemporaryFile = lambda *args, **kwargs: "
                             "(_ for _ in ()).throw(OSError(28, 'No space left on device')); "
                             "runpy.run_module('reclass_ng', run_name='__main__')"]


def start_parallel_reclass(base: Path, tmp_path: Path, python_args: tuple[str, ...] = ("-m",
                           "reclass_ng"), **env: str) -> subprocess.Popen:
    """`reclass --inventory -j 2` in a process group of its own, as a shell starts it; with
    Python's fault handler on, so that SIGABRT prints the stack of every thread (a hang)."""
    return subprocess.Popen(
        [sys.executable, *python_args, "-b", str(base), "--inventory", "-j", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        env=dict(os.environ, HOME=str(tmp_path), PYTHONFAULTHANDLER="1", **env),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def children_of(pid: int) -> list[int]:
    try:
        return [int(child) for child in
                Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:  # gone
        return []


def wait_for_workers(proc: subprocess.Popen, count: int = 1) -> list[int]:
    """The worker processes of a `-j 2` run once started: one (the command renders a lane
    itself)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        workers = children_of(proc.pid)
        if len(workers) >= count:
            return workers
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"the workers never started: {proc.communicate()[1].decode()[-2000:]}")


def thread_states(pids: list[int]) -> str:
    """Each thread of the processes: its state and the kernel function it waits in."""
    lines = []
    for pid in pids:
        for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
            try:
                state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
                lines.append(f"pid {pid} thread {task.name}: {state} in "
                             f"{(task / 'wchan').read_text() or '?'}")
            except OSError:
                continue
    return "\n".join(lines)


def exits_130_at_once(proc: subprocess.Popen) -> None:
    """The interrupted run exits 130 within seconds, without a traceback nor a worker left;
    a run that hangs fails with the stacks of the command and of its workers."""
    started = time.monotonic()
    try:
        _, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        pids = [proc.pid, *children_of(proc.pid)]
        states = thread_states(pids)
        for pid in pids:  # the fault handler prints every thread's stack
            os.kill(pid, signal.SIGABRT)
            time.sleep(0.2)
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        pytest.fail(f"no exit 30 s after Ctrl-C; threads:\n{states}\n"
                    f"stacks:\n{stderr.decode()[-20000:]}")
    assert proc.returncode == 130, stderr.decode()[-3000:]
    # Generous bounds, so that a loaded 2-core machine passes: what is checked is that the
    # command exits 130 without a traceback and leaves no worker behind.
    assert time.monotonic() - started < 10
    assert "Traceback" not in stderr.decode()
    gone_by = time.monotonic() + 5
    while True:
        left = subprocess.run(["ps", "-o", "pid=", "-g", str(proc.pid)], capture_output=True,
                              text=True, timeout=30).stdout.split()
        if not left or time.monotonic() > gone_by:
            break
        time.sleep(0.1)
    assert left == []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_ctrl_c_stops_the_workers_quickly(make_inventory, tmp_path: Path) -> None:
    proc = start_parallel_reclass(make_inventory(tricky_inventory(600)), tmp_path)
    wait_for_workers(proc)  # the worker and the command are rendering
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    exits_130_at_once(proc)


def wchan_shown() -> bool:
    with subprocess.Popen(["sleep", "10"]) as sleeper:
        time.sleep(0.1)
        shown = Path(f"/proc/{sleeper.pid}/wchan").read_text() not in ("", "0")
        sleeper.kill()
    return shown


def writing_worker(workers: list[int]) -> int | None:
    """The worker blocked writing a result into the pool's result pipe, if any."""
    for pid in workers:
        try:
            if "pipe_write" in Path(f"/proc/{pid}/wchan").read_text():
                return pid
        except OSError:
            continue
    return None


@pytest.mark.slow  # the real command, its pool and a stop: 2-4 s
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_ctrl_c_while_a_worker_sends_its_result(make_inventory, tmp_path: Path) -> None:
    # The moment CI hung at once in 3,450 tests: a worker stopped in the middle of writing a
    # chunk's result (larger than a pipe holds) left the pool's thread reading the rest for
    # ever. Made certain here: the nodes' texts are large, so that a worker writes a chunk's
    # in many pieces (1.2 MB a node: with 125 KB, workers sending bytes were not seen writing
    # in one run of six or more); once one is seen writing, the command is stopped (SIGSTOP) so the
    # worker waits in the middle of it; Ctrl-C comes then, and the command goes on. Where
    # a file can be shared the texts do not cross the pipe (parallel.text_spool): the command
    # runs as where none can.
    if not wchan_shown():
        pytest.skip("/proc/PID/wchan does not show where a process waits")
    files = tricky_inventory(32)
    files["classes/common.yml"] += "  notes: [" + ", ".join(
        f"note {index} of the day" for index in range(50_000)) + "]\n"
    proc = start_parallel_reclass(make_inventory(files), tmp_path, tuple(WITHOUT_SPOOL_FILES),
                                  **{MIN_NODES_ENV: "0"})
    workers = wait_for_workers(proc)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, \
            "no worker was seen writing a result"
        if writing_worker(workers) is None:
            time.sleep(0.001)
            continue
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.05)
        if writing_worker(workers) is not None:  # and waits for the stopped command to read
            break
        os.kill(proc.pid, signal.SIGCONT)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    exits_130_at_once(proc)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_pool_stopped_with_cancelled_tasks_prints_no_traceback(monkeypatch) -> None:
    # The command cancels the tasks no worker took yet once its own lane is done; a Ctrl-C
    # then stops the workers, and the pool's manager thread, finding the pool broken, fails
    # every pending task, the cancelled ones included: before Python 3.12 (gh-107219) it
    # died of InvalidStateError, its traceback on stderr (once in CI's 4,000 tests).
    import threading

    from reclass_ng.parallel import chunks

    died_of: list[type] = []  # what threading's hook is told (it prints the traceback)

    def told(args) -> None:
        died_of.append(args.exc_type)

    monkeypatch.setattr(threading, "excepthook", told)
    executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
    futures = [executor.submit(time.sleep, 0.5) for _ in range(20)]
    time.sleep(0.1)  # the first one running, the next one queued, the rest pending
    assert [future.cancel() for future in futures[5:]] == [True] * 15
    chunks._stop_pool(executor)
    assert died_of == []
    assert all(future.done() for future in futures)
    assert threading.excepthook is told  # put back once the manager thread ended
