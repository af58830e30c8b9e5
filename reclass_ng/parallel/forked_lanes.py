"""`reclass --inventory --jobs N` where processes fork: N - 1 workers forked by the command
itself, each rendering chunks of the render's LanePlan as the command does (parallel.chunks:
the command renders a lane too) and sending each chunk's result back through a pipe of its
own; the nodes' texts stay in the plan's file, from which the command prints them.

Why not the process pool of parallel.chunks (forked_process_pool, which API callers get):
every chunk is claimed from the plan's counters in shared memory, so the pool's tasks carried
nothing; importing concurrent.futures and multiprocessing (logging and ctypes with them) cost
16 to 20 ms of the serial part before the fork; the pool's thread in the command took the
interpreter lock from the command's lane to feed its queue and read the results; and its
shutdown waited for that thread. The command here reads its workers' results between its
own chunks (the pipes are widened so that a worker rarely waits for that), then to the end.

A worker that fails sends its exception, which the command raises; one that dies (killed, out
of memory) is known by its pipe's end without the end mark and by its exit status, and the
command says so (WorkerLost). Ctrl-C reaches the whole process group: the workers ignore it,
the command stops them (SIGTERM, then SIGKILL) and waits for each. Where processes cannot
fork, or share no file (parallel.text_spool), `ForkedLanes.started` gives None and the command
uses the process pool.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time

from reclass_ng.errors import EX_SOFTWARE, ReclassError
from reclass_ng.output.fragments import FRAGMENT_FORMS
from reclass_ng.parallel.chunks import (
    STOP_SECONDS,
    LaneJob,
    _leave_interrupts_to_the_parent,
    _own_texts_to_spool,
    _planned_lanes,
    _StepCounter,
    _transferable,
    interrupts_held,
    lane_plan,
    release_lane_plan,
    render_claimed_chunk,
    spooled_inventory,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.parallel.chunks import ChunkResult, LanePlan, Progress, SpooledInventory

PIPE_BYTES = 1 << 20  # a worker's pipe (Linux: F_SETPIPE_SZ; the system's limit by default)
_SIZE_BYTES = 8  # before each message: its size


class WorkerLost(ReclassError):
    """A `--jobs` worker process ended before it sent all its results."""

    exit_code = EX_SOFTWARE
    kind = "worker_lost"


class _Failed:
    """What a worker sends instead of its next result when it fails: the error."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class ForkedLanes:
    """The worker processes of one `--inventory` render, forked with the render's plan:
    `started`, then `render` once, then `close` (in a `finally`: it also stops them on
    Ctrl-C or an error)."""

    def __init__(self, key: str, plan: LanePlan, form: tuple[str, bool]) -> None:
        self.key = key
        self.plan = plan
        self.form = form
        self._pipes: dict[int, int] = {}  # a worker still sending: its pipe -> its pid
        self._unread: dict[int, bytearray] = {}  # by pipe: bytes of messages not whole yet
        self._ended: set[int] = set()  # workers whose end mark came
        self._running: set[int] = set()  # workers not waited for yet
        self._received: list[ChunkResult] = []

    @classmethod
    def started(cls, inventory: Any, jobs: int, *, release_files: bool = False
                ) -> ForkedLanes | None:
        """`jobs - 1` workers forked with the plan of `inventory`'s render (the inventory
        loaded here first), rendering already; None where processes cannot fork or share
        no file, or the form is not printed node by node. `release_files`: as
        chunks.forked_process_pool's."""
        settings = inventory.settings
        form = (settings.output, settings.pretty_print)
        if not hasattr(os, "fork") or form not in FRAGMENT_FORMS:
            return None
        inventory.storage.check_classes()  # as the serial render: before any node
        key = _planned_lanes(settings, jobs, inventory.storage, inventory.speed, release_files)
        plan = lane_plan(key)
        if plan is None:
            return None
        lanes = cls(key, plan, form)
        with interrupts_held():  # while the workers are forked: none is left unknown
            try:
                for _ in range(max(1, jobs - 1)):
                    lanes._fork_worker()
            except BaseException:
                lanes.close()
                raise
        return lanes

    def _fork_worker(self) -> None:
        reading, writing = os.pipe()
        _widen(writing)
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            try:
                os.close(reading)
                for pipe in self._pipes:
                    os.close(pipe)
                _work(LaneJob(self.key, self.form, True), writing)
            finally:
                os._exit(1)
        os.close(writing)
        self._pipes[reading] = pid
        self._unread[reading] = bytearray()
        self._running.add(pid)

    def render(self, inventory: Any, progress: Progress | None = None) -> SpooledInventory:
        """The inventory rendered by this process and the workers: what it prints, with the
        texts in the plan's file. `inventory` gets the warnings (chunks.spooled_inventory)."""
        steps = _StepCounter(progress, 2 * len(self.plan.names))
        lane_job = LaneJob(self.key, self.form, True)
        own = []
        while (result := render_claimed_chunk(lane_job)) is not None:
            _own_texts_to_spool(result, lane_job)
            own.append(result)
            steps.count(result)
            for arrived in self._receive(wait=False):
                steps.count(arrived)
        while self._pipes:  # every chunk is claimed: the workers' last results
            for arrived in self._receive(wait=True):
                steps.count(arrived)
        results = sorted([*own, *self._received], key=lambda result: result.start)
        return spooled_inventory(inventory, results, self.form, self.plan)

    def _receive(self, wait: bool) -> list[ChunkResult]:
        """The results that came from the workers since the last call (waiting for one at
        least when `wait`); raises a worker's error, or WorkerLost for a worker gone."""
        ready, _, _ = select.select(list(self._pipes), [], [], None if wait else 0)
        arrived: list[ChunkResult] = []
        for pipe in ready:
            data = os.read(pipe, PIPE_BYTES)
            if not data:
                self._pipe_ended(pipe)
                continue
            unread = self._unread[pipe]
            unread += data
            while len(unread) >= _SIZE_BYTES:
                size = int.from_bytes(unread[:_SIZE_BYTES], "big")
                if len(unread) < _SIZE_BYTES + size:
                    break
                message = pickle.loads(unread[_SIZE_BYTES:_SIZE_BYTES + size])
                del unread[:_SIZE_BYTES + size]
                if message is None:
                    self._ended.add(self._pipes[pipe])
                elif isinstance(message, _Failed):
                    raise message.error
                else:
                    arrived.append(message)
        self._received.extend(arrived)
        return arrived

    def _pipe_ended(self, pipe: int) -> None:
        pid = self._pipes.pop(pipe)
        os.close(pipe)
        status = self._reaped(pid, None)
        if pid not in self._ended:
            raise WorkerLost(f"A --jobs worker process (pid {pid}) ended before it sent all "
                             f"its results: {_exit_text(status)}. Render again, with fewer "
                             "--jobs if it ran out of memory.")

    def _reaped(self, pid: int, seconds: float | None) -> int | None:
        """The wait status of worker `pid` once it has ended (waiting up to `seconds`; None:
        as long as it takes), or None when it is still running then."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
            if done:
                self._running.discard(pid)
                return status
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def close(self) -> None:
        """Stop the workers still running and wait for them; release the plan. Ctrl-C is held
        back meanwhile: the workers would outlive the command otherwise."""
        with interrupts_held():
            for how in (signal.SIGTERM, signal.SIGKILL):
                for pid in list(self._running):
                    try:
                        os.kill(pid, how)
                    except ProcessLookupError:
                        pass
                for pid in list(self._running):
                    self._reaped(pid, STOP_SECONDS)
            for pipe in self._pipes:
                os.close(pipe)
            self._pipes.clear()
            release_lane_plan(self.key)


def _work(job: LaneJob, pipe: int) -> None:
    """A worker's life: the chunks it claims rendered and their results sent, then the end
    mark (None); its error instead, when it fails."""
    code = 0
    try:
        _leave_interrupts_to_the_parent()  # the command stops the workers
        while (result := render_claimed_chunk(job)) is not None:
            _send(pipe, result)
        _send(pipe, None)
    except BaseException as err:  # noqa: BLE001 - whatever it is, the command reports it
        code = 1
        try:
            _send(pipe, _Failed(_sendable(err)))
        except BaseException:  # noqa: BLE001 - the command finds the pipe ended, unmarked
            pass
    finally:
        os._exit(code)  # neither atexit handlers nor the command's buffers: they are its


def _send(pipe: int, message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_SIZE_BYTES, "big") + data)
    while view:
        view = view[os.write(pipe, view):]


def _sendable(error: BaseException) -> BaseException:
    """`error`, or what of it survives pickling."""
    if isinstance(error, ReclassError):
        return _transferable(error)
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any failure means: send the text instead
        return RuntimeError(f"{type(error).__name__}: {error}")


def _widen(pipe: int) -> None:
    """Let `pipe` hold PIPE_BYTES (Linux), several chunks' results: a worker then rarely
    waits for the command, which reads them between its own chunks."""
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # the default size (a system's limit below it: EPERM)


def _exit_text(status: int | None) -> str:
    if status is None:
        return "it did not end"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"killed by {name}" + (" (out of memory?)" if number == signal.SIGKILL else "")
    return f"exit status {os.waitstatus_to_exitcode(status)}"
