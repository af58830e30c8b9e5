"""Rendering a whole inventory in chunks on any `concurrent.futures.Executor` (process pool, Dask, ...).

What travels: each task is the settings (an immutable, picklable record) and a chunk of node
names; each worker process loads the inventory once (cached per process under the settings and
a key naming one render) and renders its chunks; results come back as plain dicts or, for the
CLI, as ready-made YAML/JSON text of each node, so the coordinator only concatenates.

The result is the serial `Inventory.inventory()` one, byte for byte once printed:

* nodes, classes and applications in node order;
* errors: a chunk interpolates each node after its merge, only merges the nodes after its
  first interpolation error and stops at its first class-expansion (merge) error; the
  coordinator reports the first class-expansion error in node order, else the first
  interpolation error, as the serial path does;
* warnings: workers record them per node and phase instead of printing them; the coordinator
  replays them in the serial order. Queried nodes (`$[ ]`) are merged once per serial run, so
  the warnings of that merge are replayed at the first node that queries them, once; the same
  for each export path a query reads (known limit: nested paths, see doc/usage.rst).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from reclass_ng.collector import cycle_collection_paused
from reclass_ng.errors import ReclassError
from reclass_ng.output.fragments import (
    FRAGMENT_FORMS,
    assemble_inventory,
    node_fragment,
    node_fragment_bytes,
    printed_frame,
)
from reclass_ng.parallel.fork_shared import SharedCounters
from reclass_ng.parallel.text_spool import SharedTextSpool
from reclass_ng.parallel.warning_replay import (
    Warn,
    WarningReplay,
    WorkerWarnings,
    recording,
    recording_warn,
)
from reclass_ng.records import Record
from reclass_ng.render import (
    INTERPOLATION,
    MERGE,
    InventoryRenderer,
    inventory_document,
    render_nodes,
)
from reclass_ng.resolve.rendered_subtrees import STREAMED_MIN_DIRTY, RenderedSubtrees
from reclass_ng.settings import Settings, Speed
from reclass_ng.storage.base import floats_json_exact
from reclass_ng.values import to_plain

# Neither typing nor attrs at run time: with their class bodies they cost `--jobs` a third of
# what importing this module costs (before the fork, so in the serial part of every render);
# nor concurrent.futures and multiprocessing, imported where a pool is made or waited for:
# the command line's forked lanes (parallel.forked_lanes) use neither (16-20 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import multiprocessing
    from concurrent.futures import Executor, Future, ProcessPoolExecutor
    from typing import IO, Any

    from reclass_ng.output.block_yaml import BlockYamlWriter

Progress = Callable[[int, int], None]

# -- worker side ------------------------------------------------------------------------------

_STATES: dict[tuple[Settings, str, Speed], Any] = {}
_STATES_LOCK = threading.Lock()
_KEPT_STATES = 2  # a long-lived worker (Dask) keeps the inventories of the last renders only


class WorkerRender:
    """What a worker process keeps for one render: the inventory, loaded on first use, the
    memo of rendered subtrees its chunks share (as the nodes of a serial render share one:
    without it a worker rendered every node's containers anew) and whether a chunk of it ran
    (only the first collects cycles: see render_chunk), and the block YAML writer of its
    nodes (the streamed inventory's: bounded memos, no node kept alive once written).

    The memo is the streamed serial render's (STREAMED_MIN_DIRTY), as a worker keeps no node
    either once its text or plain copy is made: with the default bounds, the workers of a
    `--jobs 2` render recorded the reads of 9,400 containers where the serial render
    recorded 70, and tried 40,000 reuses where it tried 2,000 (2,000 `mcp` nodes)."""

    def __init__(self, inventory: Any) -> None:
        self.inventory = inventory
        self.subtrees = RenderedSubtrees(min_dirty=STREAMED_MIN_DIRTY)
        self.started = False
        self.lane: int | None = None  # its share of a LanePlan (the lane it renders first)
        self._yaml_writer: BlockYamlWriter | None = None

    @property
    def yaml_writer(self) -> BlockYamlWriter:
        """The block YAML writer of this render's nodes, made on first use (a JSON render
        does not import it)."""
        if self._yaml_writer is None:
            from reclass_ng.output.block_yaml import BlockYamlWriter

            self._yaml_writer = BlockYamlWriter(streaming=True)
        return self._yaml_writer


def _worker_state(settings: Settings, key: str, speed: Speed, storage: Any = None
                  ) -> WorkerRender:
    """This process's WorkerRender of one render (its inventory on `storage`, an already
    scanned YamlFsStorage of the same directories, when given)."""
    with _STATES_LOCK:
        state = _STATES.get((settings, key, speed))
        if state is None:
            state = WorkerRender(InventoryRenderer(settings, warn=recording_warn,
                                                   storage=storage,
                                                   view_watcher=WorkerWarnings(),
                                                   speed=speed))
            while len(_STATES) >= _KEPT_STATES:
                del _STATES[next(iter(_STATES))]
            _STATES[(settings, key, speed)] = state
        return state


def _worker_inventory(settings: Settings, key: str, speed: Speed, storage: Any = None) -> Any:
    """The inventory of _worker_state."""
    return _worker_state(settings, key, speed, storage).inventory


def preload(settings: Settings, parse_classes: bool = False, storage: Any = None,
            speed: Speed | None = None) -> str:
    """Load the inventory in this process for workers forked afterwards; returns the render key.

    Children of a fork inherit the scanned storage and, with `parse_classes`, every class file
    parsed once here instead of once in each worker (most classes are shared by the nodes of
    all chunks). A class that fails to load is left for the node that needs it to report.
    `speed`: the render's (default: RECLASS_NG_SPEED's).
    """
    key = _new_render_key()
    inventory = _worker_inventory(_portable(settings), key, speed or Speed.from_environment(),
                                  storage)
    if parse_classes:
        loader = inventory.renderer.loader
        for name in inventory.storage.class_paths:
            try:
                loader.get(name)
            except ReclassError:
                pass
    return key


class ChunkJob(Record):
    """One task: render these nodes (global positions start..) of the inventory."""

    __slots__ = ("settings", "key", "speed", "start", "names", "form", "encoded")
    _fields = __slots__
    settings: Settings
    key: str
    speed: Speed  # the coordinator's inventory's
    start: int
    names: tuple[str, ...]
    form: tuple[str, bool] | None  # (format, pretty) for text, None for dicts
    encoded: bool  # the text as UTF-8 bytes (what the command line writes)

    def __init__(self, settings: Settings, key: str, speed: Speed, start: int,
                 names: tuple[str, ...], form: tuple[str, bool] | None,
                 encoded: bool = False) -> None:
        _set = object.__setattr__
        _set(self, "settings", settings)
        _set(self, "key", key)
        _set(self, "speed", speed)
        _set(self, "start", start)
        _set(self, "names", names)
        _set(self, "form", form)
        _set(self, "encoded", encoded)


class ChunkResult:
    """What a chunk's render gives back (pickled from a worker to the coordinator)."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.merge_events: list[list[Any]] = []
        # at position start + len(merge_events) - 1
        self.merge_error: ReclassError | None = None
        self.interp_events: list[list[Any]] = []
        # at position start + len(interp_events) - 1
        self.interp_error: ReclassError | None = None
        self.nodes: list[Any] = []  # dicts, or (name, classes, applications, text)
        # (where in the LanePlan's SharedTextSpool, each node's text size, the size of the
        # separator before each node but the inventory's first) when the texts were put
        # there (they are None in `nodes` until read back)
        self.spooled: tuple[int, list[int], int] | None = None

    def texts_to_spool(self, spool: SharedTextSpool, separator: bytes) -> None:
        """Put the nodes' texts (bytes) into `spool` instead of this result, each after
        `separator` but the inventory's first node: the bytes the printed inventory holds
        from this chunk's first node to its last (SpooledInventory sends them as they are)."""
        texts = [node[3] for node in self.nodes]
        pieces = []
        for index, text in enumerate(texts):
            if separator and (index or self.start):
                pieces.append(separator)
            pieces.append(text)
        self.spooled = (spool.append(pieces), [len(text) for text in texts], len(separator))
        self.nodes = [(*node[:3], None) for node in self.nodes]

    def spooled_size(self) -> int:
        """How many bytes texts_to_spool() put into the spool (0: none)."""
        if self.spooled is None:
            return 0
        _, sizes, separator = self.spooled
        return sum(sizes) + separator * (len(sizes) - (self.start == 0))

    def texts_to_pickle(self) -> None:
        """The nodes' texts as bytes where they are views of a writer's text (orjson's, which
        a render keeps as they are: copying 70 MB of JSON a lane out of them cost more than
        writing them), for a result that leaves the process through a pipe."""
        self.nodes = [(*node[:3], bytes(node[3])) if type(node) is tuple
                      and type(node[3]) is memoryview else node for node in self.nodes]

    def texts_from_spool(self, spool: SharedTextSpool) -> None:
        """The nodes' texts back from `spool` (slices of one read)."""
        if self.spooled is None:
            return
        offset, sizes, separator = self.spooled
        block = memoryview(spool.read(offset, self.spooled_size()))
        at = 0
        for index, size in enumerate(sizes):
            if index or self.start:
                at += separator
            self.nodes[index] = (*self.nodes[index][:3], block[at:at + size])
            at += size
        self.spooled = None


def render_chunk(job: ChunkJob) -> ChunkResult:
    """Worker entry point: expand every node of the chunk, then interpolate them, in order."""
    state = _worker_state(job.settings, job.key, job.speed)
    # As the serial render (see there), collecting once a render, at its first chunk here: a
    # collection before every chunk went over the whole loaded inventory each time (half of
    # a worker's time on a 2,000-node inventory).
    with cycle_collection_paused(collect=not state.started):
        if not state.started:
            # Every node's class list, once: nodes of different chunks share class walks
            # as in a serial render (announcing each chunk alone dropped the walks of the
            # chunk before, and merged the shared classes again in every chunk).
            state.inventory.renderer.expect_nodes(state.inventory.node_names)
        state.started = True
        result = _render_chunk(job, state)
    result.texts_to_pickle()  # any executor: a process pool's result is pickled
    return result


class LanePlan:
    """The nodes of a forked pool's render cut into one contiguous lane a worker, each lane
    into chunks (largest first), and which chunks each worker has left, shared by them. The
    coordinator (the process that forked the pool) is one of the workers: see _run_chunks.

    Nodes next to each other in node order mostly list the same classes and read the same
    class files: a worker rendering a run of them merges each shared class walk and renders
    each shared subtree once, as the serial render does. Chunks taken from one queue in turn
    split those runs between the workers, which then both did that work: 60% more class
    walks and 80% more memo entries than one process on the 2,000-node `mcp` inventory, a
    quarter more CPU in all. A worker takes the chunks of its own lane from the front; once
    they are all taken it takes over the back half of the chunks another worker has left
    (most left first), so no worker idles while another has work, and a run is split again
    only a few times. The counters live in memory shared by the fork (the workers are forked
    after the plan is made), guarded by a lock on the render's text file (`texts`, where the
    processes put their nodes' texts), and so does `state`, the WorkerRender every process
    of the pool renders the plan's nodes with (loaded before the fork). The pool is a
    process pool (forked_process_pool) or the command line's forked workers
    (parallel.forked_lanes)."""

    def __init__(self, names: Sequence[str], lanes: int, texts: SharedTextSpool,
                 state: WorkerRender | None = None) -> None:
        self.names = tuple(names)
        self.state = state
        lanes = max(1, min(lanes, len(names)))
        self.chunks: list[list[tuple[int, tuple[str, ...]]]] = []
        for lane in range(lanes):
            start, end = len(names) * lane // lanes, len(names) * (lane + 1) // lanes
            self.chunks.append([(start + offset, chunk) for offset, chunk in
                                _chunks(names[start:end], _guided_sizes(end - start, 1))])
        self.total = sum(len(chunks) for chunks in self.chunks)
        # [workers given a share so far, then a share a worker: lane, next chunk, one past
        # its last chunk]; share i starts as lane i.
        self._counters = SharedCounters(1 + 3 * lanes)
        self._lock = texts.lock(1)
        self.coordinator = os.getpid()  # the process that renders a lane without forking
        self.texts: SharedTextSpool | None = texts
        self.reset()

    def reset(self) -> None:
        """Every chunk left to take again: each render with the plan's key starts so (a
        worker keeps its share, given at its first render)."""
        with self._lock:
            for lane, chunks in enumerate(self.chunks):
                self._counters[1 + 3 * lane:4 + 3 * lane] = [lane, 0, len(chunks)]
        if self.texts is not None:
            self.texts.reset()  # the last render's texts were all read back

    def close(self) -> None:
        """Release the text spool and the counters (the pool is gone)."""
        if self.texts is not None:
            self.texts.close()
            self.texts = None
            self._counters.close()

    def claim(self, state: WorkerRender
              ) -> tuple[int, tuple[str, ...], list[str] | None] | None:
        """(start, nodes) of the chunk this worker renders next, and the nodes of the chunks
        it now has left (this one included) when they are new to it: to announce; None when
        every chunk is taken. The pool gets a task for each chunk, and the coordinator takes
        chunks too: the tasks left once it has taken its own find none."""
        counters, shares = self._counters, len(self.chunks)
        with self._lock:
            share = state.lane
            announce = share is None
            if share is None:
                share = state.lane = counters[0] % shares
                counters[0] += 1
            mine = 1 + 3 * share
            lane, front, back = counters[mine:mine + 3]
            if front >= back:
                other = 1 + 3 * max(range(shares), key=lambda share: counters[3 + 3 * share]
                                    - counters[2 + 3 * share])
                lane, front, back = counters[other:other + 3]
                if front >= back:
                    return None
                front = back - (back - front + 1) // 2
                counters[other + 2] = front
                announce = True
            counters[mine:mine + 3] = [lane, front + 1, back]
        chunks = self.chunks[lane]
        taken = [name for _, chunk in chunks[front:back] for name in chunk] if announce \
            else None
        return (*chunks[front], taken)


# LanePlans of the forked pools' renders, by render key (made before the fork: see above).
_LANE_PLANS: dict[str, LanePlan] = {}


def lane_plan(key: str) -> LanePlan | None:
    """The LanePlan of render `key` (made by _planned_lanes), if it has one."""
    return _LANE_PLANS.get(key)


def release_lane_plan(key: str) -> None:
    """Close the LanePlan of render `key` (its processes are gone) and forget it."""
    plan = _LANE_PLANS.pop(key, None)
    if plan is not None:
        plan.close()


class LaneJob(Record):
    """One task of a forked pool's render: render the next chunk of the LanePlan of `key`.

    Without the settings: the worker finds the plan's state, inherited from the fork, by the
    key. (Each task pickled the settings, and each worker unpickled them, hashed and compared
    them to find its state: about 0.1 ms a task, in the coordinator too, 110 tasks a render at
    2,000 nodes.)"""

    __slots__ = ("key", "form", "encoded")
    _fields = __slots__
    key: str
    form: tuple[str, bool] | None
    encoded: bool

    def __init__(self, key: str, form: tuple[str, bool] | None, encoded: bool = False) -> None:
        _set = object.__setattr__
        _set(self, "key", key)
        _set(self, "form", form)
        _set(self, "encoded", encoded)


def render_claimed_chunk(job: LaneJob) -> ChunkResult | None:
    """Worker entry point of a forked pool: claim a chunk of the render's LanePlan (the
    worker's own lane first) and render it as render_chunk does; None when none is left."""
    plan = _LANE_PLANS[job.key]
    state = plan.state
    assert state is not None  # _run_chunks sends LaneJobs for plans with a state only
    claimed = plan.claim(state)
    if claimed is None:
        return None
    start, names, taken = claimed
    inventory = state.inventory
    chunk = ChunkJob(inventory.settings, job.key, inventory.speed, start, names, job.form,
                     job.encoded)
    with cycle_collection_paused(collect=not state.started):
        if taken is not None:
            # The class lists of the nodes this worker has now, once (see LanePlan): its
            # lane, or the chunks it took over (those it had are all rendered by then).
            state.inventory.renderer.expect_nodes(taken)
        state.started = True
        result = _render_chunk(chunk, state)
    if os.getpid() == plan.coordinator:
        return result  # its own: not pickled
    if plan.texts is not None and job.encoded and job.form is not None:
        try:
            result.texts_to_spool(plan.texts, _separator(job.form))
        except OSError:
            pass  # memory the file may not take (a cgroup's limit): the texts go by the pipe
    result.texts_to_pickle()
    return result


def _separator(form: tuple[str, bool]) -> bytes:
    """The bytes between two nodes' texts of an inventory printed in `form`."""
    return FRAGMENT_FORMS[form][2].encode("utf-8")


def _render_chunk(job: ChunkJob, state: WorkerRender) -> ChunkResult:
    inventory = state.inventory
    result = ChunkResult(job.start)

    def around(name: str, phase: str) -> Any:
        events: list[Any] = []
        (result.merge_events if phase is MERGE else result.interp_events).append(events)
        return recording(events)

    # The nodes were announced once, at the render's first chunk (render_chunk). Each node
    # is interpolated right after its merge, as the serial command line renders (its merged
    # tree is still in the CPU's caches; merging a whole chunk first left the early nodes'
    # trees cold by the time they were interpolated). After an interpolation error the
    # chunk's later nodes are only merged: a merge error among them comes first in the
    # serial order. The chunk stops at its first merge error.
    renderer = inventory.renderer
    for phase, name, value, _ in render_nodes(inventory, job.names, around=around,
                                              memo=state.subtrees, announce=False,
                                              interleaved=True):
        if phase is MERGE:
            renderer.forget_node(name)  # a one-shot render's (release_files): see there
        if isinstance(value, ReclassError):
            if phase is MERGE:
                result.merge_error = _transferable(value)
                return result
            result.interp_error = _transferable(value)
        elif phase is INTERPOLATION:
            result.nodes.append(_encoded(value, job.form, state, job.encoded))
    return result


def _encoded(info: dict[str, Any], form: tuple[str, bool] | None, state: WorkerRender,
             encoded: bool = False) -> Any:
    # Text travels as UTF-8 bytes when the receiver writes bytes: pickled and read back as
    # they are, where a str is encoded, decoded and encoded again to be written.
    if form is None:
        return to_plain(info)  # cheap to pickle: no per-key sources
    name = info["__reclass__"]["node"]
    if form == ("yaml", True):
        # One writer a render, as the serial render has (a writer a node asked PyYAML about
        # every key and string again: twice the CPU of the serial render); a streaming one,
        # as the serial render's: it keeps alive the containers whose texts it keeps, not
        # every node (which made a worker's memory grow with its lane).
        text: Any = state.yaml_writer.node_text(name, info)
        if encoded:
            text = text.encode("utf-8")
    elif encoded:
        # As the serial command line asks (output.streamed): whether the files this process
        # read so far, all of the node's among them, hold a float orjson prints otherwise
        # than json. Not knowing, the writer searched every node's text for one (three passes
        # over it; node names with "e-" in them sent it on to a regular expression over the
        # whole text): a quarter of a second a worker at 2,000 mcp nodes.
        text = node_fragment_bytes(name, info, *form,
                                   floats_exact=floats_json_exact(state.inventory.storage))
    else:
        text = node_fragment(name, info, *form)
    return name, list(info["classes"]), list(info["applications"]), text


class TransferredError(ReclassError):
    """An error of a worker whose own type could not cross the process boundary."""

    def __init__(self, text: str = "", *, node: str | None = None, exit_code: int = 65,
                 kind: str = "ReclassError", lines: Sequence[str] = ()) -> None:
        super().__init__(text, node=node)
        self.exit_code = exit_code
        self.kind = kind
        self._lines = list(lines)

    def lines(self) -> list[str]:
        """The error's lines as the worker laid them out."""
        return list(self._lines)

    def __reduce__(self) -> Any:
        return _rebuild_transferred, (self.text, self.node, self.exit_code, self.kind,
                                      self._lines)


def _rebuild_transferred(text: str, node: str | None, exit_code: int, kind: str,
                         lines: list[str]) -> TransferredError:
    return TransferredError(text, node=node, exit_code=exit_code, kind=kind, lines=lines)


def _transferable(err: ReclassError) -> ReclassError:
    """The error itself when it survives pickling unchanged, else its message and exit code."""
    import pickle

    try:
        copy = pickle.loads(pickle.dumps(err))
        if type(copy) is type(err) and copy.message == err.message \
                and copy.exit_code == err.exit_code:
            return err
    except Exception:  # noqa: BLE001 - any failure means: send the text instead
        pass
    return TransferredError(err.text, node=err.node, exit_code=err.exit_code,
                            kind=type(err).__name__, lines=err.lines())


# -- coordinator side -------------------------------------------------------------------------

def _new_render_key() -> str:
    """A name no other render has: 16 random bytes, as uuid4's (importing uuid, with the
    platform module it imports, cost the serial part of a YAML `--jobs` render 12 M
    instructions)."""
    return os.urandom(16).hex()


def _portable(settings: Settings) -> Settings:
    """Settings whose inventory path means the same in any worker (absolute)."""
    base = os.path.expanduser(settings.inventory_base_uri or os.getcwd())
    return settings.replace(inventory_base_uri=os.path.abspath(base))


def _chunks(names: Sequence[str], sizes: Iterator[int]) -> Iterator[tuple[int, tuple[str, ...]]]:
    start = 0
    while start < len(names):
        size = next(sizes)
        yield start, tuple(names[start:start + size])
        start += size


def _fixed_sizes(size: int) -> Iterator[int]:
    while True:
        yield size


def _guided_sizes(node_count: int, workers: int) -> Iterator[int]:
    """Chunk sizes shrinking with the work left: bigger chunks first (little per-task cost),
    small ones at the end so that no worker is left with a long last chunk while the others
    idle. A chunk is at most 1/16 of a worker's share: the progress bar moves every few percent
    and a chunk's nodes stay small enough to be rendered from warm caches."""
    workers = max(1, workers)
    smallest = max(1, node_count // (workers * 64))
    left = node_count
    while True:
        size = max(smallest, -(-left // (workers * 16)))
        left = max(0, left - size)
        yield size


def _workers_of(executor: Executor) -> int:
    count = getattr(executor, "_max_workers", None)  # ProcessPool/ThreadPool executors
    return count if isinstance(count, int) and count > 0 else (os.cpu_count() or 2)


def _run_chunks(source: Any, executor: Executor, form: tuple[str, bool] | None,
                chunk_size: int | None, progress: Progress | None, key: str | None,
                encoded: bool = False, read_back: bool = True
                ) -> tuple[Any, list[str], list[ChunkResult]]:
    if isinstance(source, InventoryRenderer):
        inventory = source
    elif isinstance(source, Settings):
        inventory = InventoryRenderer(source)
    else:
        raise TypeError(f"render_inventory() needs an Inventory or Settings, not {source!r}")
    settings = _portable(inventory.settings)
    names = inventory.node_names
    inventory.storage.check_classes()  # as the serial render: before any node
    sizes = _fixed_sizes(chunk_size) if chunk_size else _guided_sizes(len(names),
                                                                      _workers_of(executor))
    key = key or _new_render_key()
    plan = _LANE_PLANS.get(key)
    futures: list[Future[ChunkResult | None]]
    lane_job = None
    if plan is not None and chunk_size is None and plan.names == tuple(names) \
            and plan.state is not None and plan.state is _STATES.get((settings, key,
                                                                       inventory.speed)):
        plan.reset()
        lane_job = LaneJob(key, form, encoded)
        futures = [executor.submit(render_claimed_chunk, lane_job) for _ in range(plan.total)]
    else:
        futures = [executor.submit(render_chunk, ChunkJob(settings, key, inventory.speed,
                                                          start, chunk, form, encoded))
                   for start, chunk in _chunks(names, sizes)]
    try:
        results = _gathered(futures, lane_job, _StepCounter(progress, 2 * len(names)),
                            read_back)
    except KeyboardInterrupt:
        raise  # whoever owns the pool stops it (forked_process_pool stops its workers)
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return inventory, names, results


class _StepCounter:
    """Tells `progress` the steps of each chunk result as it comes: two a node, as in the
    serial path (classes expanded, interpolated)."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0

    def count(self, result: ChunkResult | None) -> None:
        if self.progress is not None and result is not None:
            self.done += len(result.merge_events) + len(result.interp_events)
            self.progress(min(self.done, self.total), self.total)


def _gathered(futures: list[Future[ChunkResult | None]], lane_job: LaneJob | None,
              steps: _StepCounter, read_back: bool = True) -> list[ChunkResult]:
    """The results of the render's chunks in node order: the futures', and with `lane_job`
    (a forked pool's render) those of the chunks this process claims and renders itself.
    Without `read_back` the texts stay in the plan's text spool, this process's own put
    there too (render_inventory_spooled)."""
    own: list[ChunkResult] = []
    pending = set(futures)

    def arrived(result: ChunkResult | None) -> ChunkResult | None:
        return _texts_read_back(result, lane_job) if read_back else result

    if lane_job is not None:
        # The coordinator renders a lane itself (forked_process_pool starts one worker
        # fewer): with a pool of its own size it was a third process on two cores, reading
        # its workers' texts from the pipe while they rendered (a quarter of a second at
        # 2,000 nodes). Its own texts stay where they are; the workers' come through the
        # plan's memory file (text_spool), read back here as their results arrive.
        while (result := render_claimed_chunk(lane_job)) is not None:
            if not read_back:
                _own_texts_to_spool(result, lane_job)
            own.append(result)
            steps.count(result)
            for future in [future for future in pending if future.done()]:
                pending.discard(future)
                steps.count(arrived(future.result()))
        # Every chunk is claimed now (this process found none left): the tasks not yet
        # handed to a worker would each only find that out, one round trip through the
        # pool's pipes after another (half the tasks, at the end of the render, while
        # the command waits), so they are cancelled. Those running or queued still end.
        for future in pending:
            future.cancel()
    from concurrent.futures import as_completed

    for future in as_completed(pending):
        if not future.cancelled():
            steps.count(arrived(future.result()))
    # In node order (a forked pool's workers take the chunks in their own order).
    return sorted([*own, *(result for future in futures if not future.cancelled()
                           and (result := future.result()) is not None)],
                  key=lambda result: result.start)


def _own_texts_to_spool(result: ChunkResult, lane_job: LaneJob) -> None:
    """The texts of a chunk this process rendered put into the plan's spool, where the
    workers' go (kept in `result` where there is none, or the file takes no more)."""
    texts = _LANE_PLANS[lane_job.key].texts
    if texts is not None and lane_job.encoded and lane_job.form is not None:
        try:
            result.texts_to_spool(texts, _separator(lane_job.form))
        except OSError:
            pass


def _texts_read_back(result: ChunkResult | None, lane_job: LaneJob | None
                     ) -> ChunkResult | None:
    """`result` with the texts a forked worker spooled read back (as results arrive: while
    the workers still render, not after)."""
    if result is not None and result.spooled is not None and lane_job is not None:
        plan = _LANE_PLANS[lane_job.key]
        assert plan.texts is not None  # a worker spooled into it
        result.texts_from_spool(plan.texts)
    return result


def _check_errors(results: list[ChunkResult], warn: Warn) -> None:
    """Replay the warnings in serial order and raise the error the serial path would raise."""
    replay = WarningReplay(warn)
    for result in results:
        for events in result.merge_events:
            replay.events(events)
        if result.merge_error is not None:
            raise result.merge_error
    for result in results:
        for events in result.interp_events:
            replay.events(events)
        if result.interp_error is not None:
            raise result.interp_error


def render_inventory(source: Any, executor: Executor, *, chunk_size: int | None = None,
                     progress: Progress | None = None, key: str | None = None
                     ) -> dict[str, Any]:
    """`Inventory.inventory()`, rendered by the workers of `executor`.

    `source` is an Inventory (its warn callback gets the warnings) or Settings. `chunk_size`
    is how many nodes one task renders (default: shrinking from 1/16 of a worker's share to a
    few nodes, see _guided_sizes). `progress(done, total)` is called as chunks finish. `key`
    names a state loaded with `preload()` before a fork pool started (default: each worker
    process loads the inventory once for this call).
    """
    inventory, names, results = _run_chunks(source, executor, None, chunk_size, progress, key)
    _check_errors(results, inventory.warn)
    nodes = {}
    for result in results:
        for info in result.nodes:
            nodes[info["__reclass__"]["node"]] = info
    return inventory_document(nodes)


def render_inventory_text(source: Any, executor: Executor, fmt: str, pretty: bool, *,
                          chunk_size: int | None = None, progress: Progress | None = None,
                          key: str | None = None) -> str:
    """What `reclass --inventory -o FMT` prints, rendered and serialised by the workers."""
    return "".join(render_inventory_pieces(source, executor, fmt, pretty, chunk_size=chunk_size,
                                           progress=progress, key=key))


def render_inventory_pieces(source: Any, executor: Executor, fmt: str, pretty: bool, *,
                            chunk_size: int | None = None, progress: Progress | None = None,
                            key: str | None = None) -> list[str]:
    """`render_inventory_text()` in pieces, to write without joining a large text first."""
    return _inventory_pieces(source, executor, fmt, pretty, chunk_size, progress, key, False)


def render_inventory_bytes(source: Any, executor: Executor, fmt: str, pretty: bool, *,
                           chunk_size: int | None = None, progress: Progress | None = None,
                           key: str | None = None) -> list[bytes]:
    """`render_inventory_pieces()` encoded in UTF-8: the workers send their nodes' texts as
    bytes, which the command line writes as they come (no decoding and encoding again)."""
    return _inventory_pieces(source, executor, fmt, pretty, chunk_size, progress, key, True)


def _inventory_pieces(source: Any, executor: Executor, fmt: str, pretty: bool,
                      chunk_size: int | None, progress: Progress | None, key: str | None,
                      encoded: bool) -> list[Any]:
    from reclass_ng.output import FORMATS, dump

    if fmt not in FORMATS:
        dump({}, fmt, pretty)  # the usual error for an unknown format
    if (fmt, pretty) not in FRAGMENT_FORMS:
        data = render_inventory(source, executor, chunk_size=chunk_size, progress=progress,
                                key=key)
        text = dump(data, fmt, pretty)
        return [text.encode("utf-8") if encoded else text]
    inventory, names, results = _run_chunks(source, executor, (fmt, pretty), chunk_size,
                                            progress, key, encoded)
    _check_errors(results, inventory.warn)
    return assemble_inventory([part for result in results for part in result.nodes], fmt, pretty,
                              encoded=encoded, speed=inventory.speed)


class SpooledInventory:
    """What `reclass --inventory --jobs N` prints, with each chunk's texts where they are:
    the forked pool's text spool, read by nobody until printed (os.sendfile), or the chunk's
    result. write_to() prints it, before the pool that made it is closed (its spool goes with
    it). The memory held is the frame and the texts that are not in the spool."""

    def __init__(self, pieces: list[bytes | memoryview | tuple[int, int]],
                 spool: SharedTextSpool | None) -> None:
        self._pieces = pieces  # bytes, or (offset, size) in `spool`
        self._spool = spool

    def write_to(self, stream: IO[str]) -> None:
        """Print the inventory to `stream`."""
        from reclass_ng.output.dispatch import _write_bytes
        from reclass_ng.output.streamed import binary_target, send_range

        target = binary_target(stream)
        if target is None:
            _write_bytes(self._read(), stream)
            return
        buffer, out = target
        for piece in self._pieces:
            if type(piece) is tuple:
                assert self._spool is not None
                send_range(buffer, out, self._spool.descriptor, *piece)
            else:
                buffer.write(piece)  # type: ignore[arg-type]
        buffer.flush()

    def _read(self) -> Iterator[bytes | memoryview]:
        for piece in self._pieces:
            if type(piece) is tuple:
                assert self._spool is not None
                yield self._spool.read(*piece)
            else:
                yield piece  # type: ignore[misc]


def render_inventory_spooled(source: Any, executor: Executor, fmt: str, pretty: bool, *,
                             progress: Progress | None = None, key: str | None = None
                             ) -> SpooledInventory:
    """`render_inventory_bytes()` for the command line: on a forked pool (`key` from
    forked_process_pool) the texts stay in the pool's text spool, this process's own lanes'
    too, and are printed from there: memory does not grow with the output. Elsewhere (no
    spool, a form printed whole: flow-style YAML) the pieces are held as
    render_inventory_bytes() holds them."""
    plan = _LANE_PLANS.get(key) if key is not None else None
    form = (fmt, pretty)
    if plan is None or plan.texts is None or form not in FRAGMENT_FORMS:
        return SpooledInventory(list(_inventory_pieces(source, executor, fmt, pretty, None,
                                                       progress, key, True)), None)
    inventory, names, results = _run_chunks(source, executor, form, None, progress, key,
                                            encoded=True, read_back=False)
    return spooled_inventory(inventory, results, form, plan)


def spooled_inventory(inventory: Any, results: list[ChunkResult], form: tuple[str, bool],
                      plan: LanePlan) -> SpooledInventory:
    """The printed inventory of the results of a render on `plan` (in node order): their
    warnings replayed, the error of the serial render raised (_check_errors)."""
    _check_errors(results, inventory.warn)
    before, after = printed_frame([node[:3] for result in results for node in result.nodes],
                                  *form, inventory.speed)
    separator = _separator(form)
    pieces: list[bytes | memoryview | tuple[int, int]] = [before.encode("utf-8")]
    for result in results:
        if result.spooled is not None:
            pieces.append((result.spooled[0], result.spooled_size()))
            continue
        for index, node in enumerate(result.nodes):
            if separator and (index or result.start):
                pieces.append(separator)
            pieces.append(node[3])
    pieces.append(after.encode("utf-8"))
    return SpooledInventory(pieces, plan.texts)


class interrupts_held:  # lower case: used like a function, `with interrupts_held():`
    """Ctrl-C (SIGINT) held back in the block, delivered as it ends: while workers are
    started or stopped, so that none is left unknown, or outlives the command."""

    __slots__ = ("previous",)

    def __init__(self) -> None:
        self.previous: Any = None

    def __enter__(self) -> None:
        if hasattr(signal, "pthread_sigmask"):
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def _leave_interrupts_to_the_parent() -> None:
    # Ctrl-C reaches the whole process group; a worker that is between two chunks would print
    # a traceback. The parent stops the workers itself (forked_process_pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def forked_process_pool(settings: Settings, jobs: int, storage: Any = None,
                        speed: Speed | None = None, *, release_files: bool = False
                        ) -> Iterator[tuple[Executor, str]]:
    """A process pool whose workers start with the inventory already loaded (Linux: fork).

    Yields the executor and the key to pass to the render functions. `jobs` processes
    render: this one, which renders a lane of each render with that key itself, and `jobs - 1`
    forked workers (at least one). Where fork is not available, `jobs` workers start fresh
    (forkserver/spawn) and load the inventory once each. `release_files`: the pool renders the
    inventory once (the command line), so its forked processes keep no parsed file once its
    entity is made, nor a node's entity once the node is merged (InventoryRenderer
    .rendered_nodes says the same of the serial render): their memory does not grow by the
    nodes' files.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    workers = jobs
    if "fork" in methods:
        context: multiprocessing.context.BaseContext = multiprocessing.get_context("fork")
        workers = max(1, jobs - 1)
        key = _planned_lanes(settings, workers + 1, storage, speed, release_files)
    else:
        key = _new_render_key()
        context = multiprocessing.get_context(methods[0])
    # Ctrl-C is held back while the workers start, so that none is left unknown to the pool.
    held = hasattr(signal, "pthread_sigmask")
    if held:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                       initializer=_leave_interrupts_to_the_parent)
    except BaseException:
        if held:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        raise
    try:
        try:
            # Forks every worker (the first task starts them all, in this thread) without
            # waiting for one to run it: the command renders its own lane meanwhile (the
            # round trip cost 3 to 20 ms of the serial part). A worker that fails to start
            # breaks the pool, which the render's first result then raises.
            executor.submit(int)
        finally:
            if held:
                # A Ctrl-C held back while the workers started is raised here: inside the
                # block below that stops them, not before it (the workers would outlive us).
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        try:
            yield executor, key
        except KeyboardInterrupt:
            raise
        except BaseException:
            executor.shutdown(wait=True, cancel_futures=True)
            raise
        executor.shutdown(wait=True)
    except KeyboardInterrupt:
        # Also a Ctrl-C while a shutdown above waited: the workers would outlive us otherwise.
        _stop_at_once(executor)
        raise
    finally:
        release_lane_plan(key)


def _planned_lanes(settings: Settings, lanes: int, storage: Any, speed: Speed | None,
                   release_files: bool) -> str:
    """The inventory loaded in this process, to be forked, and the LanePlan of `lanes`
    lanes its render takes: the plan's key. Without a file the processes can share (see
    SharedTextSpool.made), no plan: each chunk is then a task (render_chunk) whose texts
    come through the pool's pipe."""
    # The class files are parsed after the fork, each process those its lanes read: on
    # two cores that costs less wall time than parsing them all before it, serially
    # (mcp 2,000 nodes: the two lanes read 1,228 and 988 of the 1,562 class files;
    # 0.95 G instructions left the serial part, 0.54 G more in the lanes, the longer
    # lane +0.72 G: critical path 7.67 -> 7.44 G). Parsing before the fork only the
    # files both lanes read (a list known from an earlier run) leaves the critical path
    # as it is and the processes' sum 5.5% smaller (mcp 500, JSON); finding those files
    # costs more than that (doc/performance.rst, "--jobs: what both lanes do").
    key = preload(settings, parse_classes=False, storage=storage, speed=speed)
    state = _worker_state(_portable(settings), key, speed or Speed.from_environment())
    if release_files:
        state.inventory.renderer.release_files()
    _load_node_writer(state, settings)
    texts = SharedTextSpool.made()
    if texts is not None:
        _LANE_PLANS[key] = LanePlan(state.inventory.node_names, lanes, texts, state)
    return key


def _load_node_writer(state: WorkerRender, settings: Settings) -> None:
    """The writer of the node texts in the form `settings` print, imported (and for block
    YAML, made) before the fork: each process imported it at its first node otherwise (for
    JSON, orjson and what it imports: 45 M instructions in each)."""
    form = (settings.output, settings.pretty_print)
    if form == ("yaml", True):
        state.yaml_writer.node_text("", {})  # also imports what its scalars need
    elif form in FRAGMENT_FORMS:
        node_fragment_bytes("", {}, *form, speed=state.inventory.speed, floats_exact=True)


STOP_SECONDS = 5  # how long stopping waits for a worker, then for the pool's manager thread


def _stop_at_once(executor: ProcessPoolExecutor) -> None:
    """Stop a pool on Ctrl-C: its workers at once, without the chunks queued for them (they
    would still be rendered before a shutdown returns), then its manager thread, which fails
    the futures left. Waits at most a few STOP_SECONDS. Ctrl-C pressed again is held back
    meanwhile; one that comes before it is held back starts the stop again."""
    while True:
        try:
            _stop_pool(executor)
            return
        except KeyboardInterrupt:
            continue


def _quiet_cancelled_failing(manager: threading.Thread) -> Callable[[], None]:
    """Keep the pool's manager thread from printing a traceback when it fails a cancelled
    task: the tasks _gathered cancels stay among the pool's pending work until that thread
    next hands work to the workers, and finding the pool broken first (its workers stopped)
    it sets an exception on every pending future; before Python 3.12 (gh-107219) it dies
    of InvalidStateError on a cancelled one. The returned call puts threading's hook back."""
    from concurrent.futures import InvalidStateError

    previous = threading.excepthook

    def hook(args: Any) -> None:
        if args.thread is manager and args.exc_type is InvalidStateError:
            return
        previous(args)

    def restore() -> None:
        if threading.excepthook is hook:
            threading.excepthook = previous

    threading.excepthook = hook
    return restore


def _stop_pool(executor: ProcessPoolExecutor) -> None:
    with interrupts_held():
        manager = getattr(executor, "_executor_manager_thread", None)
        workers = list((getattr(executor, "_processes", None) or {}).values())
        restore = _quiet_cancelled_failing(manager) if isinstance(manager, threading.Thread) \
            else None
        for process in workers:
            process.terminate()
        for process in workers:
            process.join(STOP_SECONDS)
            if process.is_alive():
                process.kill()
                process.join(STOP_SECONDS)
        # A worker terminated while it wrote a result (a chunk's text is larger than a pipe
        # holds) leaves the manager thread waiting for the rest of that message for ever: the
        # result pipe has a writer still, this process's own copy. Closed, the last once the
        # workers are gone, the read ends (end of file), and the manager finds the pool broken.
        # (The manager never writes to that pipe; the workers had their copies.)
        results = getattr(executor, "_result_queue", None)
        writer = getattr(results, "_writer", None)
        if writer is not None:
            writer.close()
        if isinstance(manager, threading.Thread):
            manager.join(STOP_SECONDS)
            if restore is not None and not manager.is_alive():
                restore()
        # A manager still stuck is left behind rather than waited for: Ctrl-C must stop us.
        executor.shutdown(wait=not (isinstance(manager, threading.Thread)
                                    and manager.is_alive()))
