"""The differential tester of long-lived inventories: a hypothesis state machine that edits and
deploys a generated inventory the ways teams do, and after every step compares what every
long-lived path serves with a fresh render in a new process (fresh_render.py).

Paths compared: Inventory.refresh() + node_names/nodeinfo()/inventory(); refresh(node) +
nodeinfo() on another live inventory; Salt's ext_pillar and master_tops (a minion, and all)
called as Salt's loader calls them, with and without cache_dir, and from a restarted master
(a new pool) with cache_dir; `reclass --inventory --cache-dir`; the round report of `watch`.

Used by tests/test_incremental_fuzz.py (a bounded run) and bench/stale_fuzz.py (long runs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fresh_render import outcome
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import reclass_ng
from reclass_ng.adapters import salt
from reclass_ng.adapters.inventory_source import open_inventory
from reclass_ng.errors import ReclassError
from reclass_ng.incremental.adapter_pool import LiveInventoryPool
from reclass_ng.incremental.watch import InventoryWatcher

FRESH_RENDER = Path(__file__).resolve().parent / "fresh_render.py"
ORACLE_TIMEOUT = 120  # seconds for one fresh render process (a few small renders)

NODES = ["n0", "n1", "n2", "n3"]
NAMES = [*NODES, "missing"]  # a name no file defines is asked for too
# class name -> file below classes/; `alias.web` exists while classes/alias -> app does.
CLASS_FILES = {"common": "common.yml", "app.web": "app/web.yml", "app.db": "app/db.yml",
               "role": "role/init.yml"}
CLASS_NAMES = [*CLASS_FILES, "alias.web", "absent"]
BROKEN = {"yaml": "parameters: [unclosed\n", "reference": "parameters: {bad: ${no:such}}\n",
          "merge": "parameters: {common: 7}\n"}
SETTINGS = ["ignore_class_notfound: true\n", "ignore_class_notfound: false\n",
            "ignore_class_notfound: true\nignore_class_notfoud: true\n"]
VALUES = st.integers(min_value=100, max_value=999)  # three digits: edits of the same size


def class_text(name: str, value: int) -> str:
    application = name.replace(".", "_")
    return (f"applications: [{application}]\nparameters:\n  {application}: v{value}\n"
            f"  common: {{last: {name}, seen: ${{node_value}}}}\n")


def node_text(classes: list[str], value: int, query: bool) -> str:
    text = f"classes: {json.dumps(classes)}\nparameters:\n  node_value: {value}\n"
    if query:
        text += "  peers: $[ exports:ip ]\n"
    return text + f"exports:\n  ip: {value}\n"


def run_git(directory: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True,
                   timeout=60, env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


class DeployMachine(RuleBasedStateMachine):
    """One inventory at `root/inv` (a directory, or a symlink to a release), edited and
    deployed by the rules; every long-lived path checked against a fresh render after each."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="deploy-machine-"))
        self.base = self.root / "inv"
        self.cache = self.root / "cache"
        self.serial = 0  # names of releases, versions and shared files
        self.live = self.live_one = self.live_watch = None
        self.watcher: InventoryWatcher | None = None
        # Each node's fresh nodeinfo (or error) when the inventory last could be read.
        self.last_nodes: dict[str, Any] | None = None
        self.last_error: str | None = None
        self.pool = LiveInventoryPool(open_inventory)
        self.cached_pool = LiveInventoryPool(open_inventory)
        self.saved_pool = salt.LIVE_INVENTORIES

    # -- the inventory on disk -----------------------------------------------------------

    def fresh_name(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    @property
    def here(self) -> Path:
        """The directory the inventory is now (behind every symlink)."""
        return Path(os.path.realpath(self.base))

    def write(self, relative: str, text: str, keep_stamp: bool = False) -> None:
        path = self.here / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if keep_stamp and path.is_file() and not path.is_symlink():
            before = path.stat()
            path.write_text(text)
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        else:
            path.write_text(text)

    def class_path(self, name: str) -> str:
        return "classes/" + CLASS_FILES[name]

    @initialize(behind_symlink=st.booleans(), classes=st.lists(st.sampled_from(CLASS_NAMES),
                                                                max_size=3))
    def create(self, behind_symlink: bool, classes: list[str]) -> None:
        target = self.root / "releases" / "r0" if behind_symlink else self.base
        target.mkdir(parents=True)
        if behind_symlink:
            self.base.symlink_to(target, target_is_directory=True)
        self.write("reclass-config.yml", SETTINGS[0])
        for index, name in enumerate(CLASS_FILES):
            self.write(self.class_path(name), class_text(name, 100 + index))
        for index, node in enumerate(NODES):
            self.write(f"nodes/{node}.yml", node_text(classes, 500 + index, index == 0))
        self.live = reclass_ng.load(str(self.base), warn=lambda message: None)
        self.live_one = reclass_ng.load(str(self.base), warn=lambda message: None)
        self.live_watch = reclass_ng.load(str(self.base), warn=lambda message: None)
        self.watcher = InventoryWatcher(self.live_watch)
        salt.LIVE_INVENTORIES = self.pool

    def teardown(self) -> None:
        salt.LIVE_INVENTORIES = self.saved_pool
        for inventory in (self.live, self.live_one, self.live_watch):
            if inventory is not None and inventory._live is not None:
                inventory._live.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- edits -------------------------------------------------------------------------

    @rule(name=st.sampled_from(list(CLASS_FILES)), value=VALUES, keep_stamp=st.booleans())
    def edit_class(self, name: str, value: int, keep_stamp: bool) -> None:
        """An edit; with keep_stamp of the same size, its mtime restored (os.utime)."""
        self.write(self.class_path(name), class_text(name, value), keep_stamp)

    @rule(node=st.sampled_from(NODES), classes=st.lists(st.sampled_from(CLASS_NAMES), max_size=3),
          value=VALUES, query=st.booleans())
    def write_node(self, node: str, classes: list[str], value: int, query: bool) -> None:
        self.write(f"nodes/{node}.yml", node_text(classes, value, query))

    @rule(node=st.sampled_from(NODES))
    def remove_node(self, node: str) -> None:
        (self.here / "nodes" / f"{node}.yml").unlink(missing_ok=True)

    @rule(name=st.sampled_from(list(CLASS_FILES)), broken=st.sampled_from(sorted(BROKEN)))
    def break_class(self, name: str, broken: str) -> None:
        """An error introduced (any later edit of the file fixes it)."""
        self.write(self.class_path(name), BROKEN[broken])

    @rule(settings=st.sampled_from(SETTINGS))
    def edit_settings(self, settings: str) -> None:
        self.write("reclass-config.yml", settings)

    @rule(node=st.sampled_from(NODES), present=st.booleans())
    def duplicate_node(self, node: str, present: bool) -> None:
        """A second file of a node name (nodes/dup/NODE.yml), or none."""
        duplicates = self.here / "nodes" / "dup"
        if present:
            duplicates.mkdir(exist_ok=True)
            (duplicates / f"{node}.yml").write_text("parameters: {duplicate: true}\n")
        else:
            shutil.rmtree(duplicates, ignore_errors=True)

    @rule(present=st.booleans())
    def alias_directory(self, present: bool) -> None:
        """classes/alias -> app: the classes of app under a second name."""
        alias = self.here / "classes" / "alias"
        if present and not os.path.lexists(alias):
            alias.symlink_to("app", target_is_directory=True)
        elif not present and alias.is_symlink():
            alias.unlink()

    @rule(name=st.sampled_from(list(CLASS_FILES)), value=VALUES)
    def file_to_symlink(self, name: str, value: int) -> None:
        """A class file replaced by a symlink to a file outside the inventory."""
        shared = self.root / "shared" / self.fresh_name("f")
        shared.parent.mkdir(exist_ok=True)
        shared.write_text(class_text(name, value))
        path = self.here / self.class_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(".link.tmp")
        temporary.symlink_to(shared)
        os.replace(temporary, path)

    # -- deploys -----------------------------------------------------------------------

    def staged_copy(self, name: str, value: int) -> Path:
        """A copy of the inventory as it is (symlinks kept), one class edited in it."""
        staged = self.root / "releases" / self.fresh_name("r")
        shutil.copytree(self.here, staged, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        classes = staged / "classes"
        edited = Path(os.path.realpath(classes)) / CLASS_FILES[name]
        if edited.is_symlink():
            edited.unlink()
        edited.parent.mkdir(parents=True, exist_ok=True)
        edited.write_text(class_text(name, value))
        return staged

    @rule(name=st.sampled_from(list(CLASS_FILES)), value=VALUES)
    def release_switch(self, name: str, value: int) -> None:
        """A new release directory: `ln -sfn` when the inventory is behind a symlink, else
        `mv inv inv.old; mv inv.new inv; rm -rf inv.old` (its inodes free for reuse)."""
        staged = self.staged_copy(name, value)
        if self.base.is_symlink():
            temporary = self.root / ".inv.tmp"
            temporary.symlink_to(staged, target_is_directory=True)
            os.replace(temporary, self.base)
        else:
            old = self.root / "inv.old"
            os.rename(self.base, old)
            os.rename(staged, self.base)
            shutil.rmtree(old)

    @rule(name=st.sampled_from(list(CLASS_FILES)), value=VALUES)
    def classes_switch(self, name: str, value: int) -> None:
        """classes/ as a symlink to a version beside it, switched to a new version."""
        classes = self.here / "classes"
        version = self.here / self.fresh_name("classes.v")
        shutil.copytree(os.path.realpath(classes), version, symlinks=True)
        edited = version / CLASS_FILES[name]
        if edited.is_symlink():
            edited.unlink()
        edited.parent.mkdir(parents=True, exist_ok=True)
        edited.write_text(class_text(name, value))
        if not classes.is_symlink():
            shutil.rmtree(classes)
        temporary = self.here / ".classes.tmp"
        temporary.symlink_to(version.name, target_is_directory=True)
        os.replace(temporary, classes)

    @rule(name=st.sampled_from(list(CLASS_FILES)), value=VALUES, node=st.sampled_from(NODES))
    def rsync_delete_after(self, name: str, value: int, node: str) -> None:
        """`rsync -a --delete-after` of a new tree (one class edited, one node gone) over the
        inventory: each file written to a temporary name and renamed over, its source's mtime
        kept; files missing from the source removed at the end."""
        source = self.staged_copy(name, value)
        (source / "nodes" / f"{node}.yml").unlink(missing_ok=True)
        here = self.here
        for directory, _, files in os.walk(source):
            relative = Path(directory).relative_to(source)
            (here / relative).mkdir(parents=True, exist_ok=True)
            for filename in files:
                from_path, to_path = Path(directory) / filename, here / relative / filename
                if from_path.is_symlink() or to_path.is_symlink():
                    continue  # rsync -a copies links as links: these are unchanged
                temporary = to_path.with_name(f".{filename}.rsync")
                shutil.copy2(from_path, temporary)
                os.replace(temporary, to_path)
        for directory, _, files in os.walk(here):
            relative = Path(directory).relative_to(here)
            if ".git" in relative.parts:
                continue
            for filename in files:
                if not os.path.lexists(source / relative / filename):
                    (Path(directory) / filename).unlink()
        shutil.rmtree(source)

    @rule()
    def git_switch_branch(self) -> None:
        """The inventory as a git work tree: everything committed, the other branch checked
        out (`git checkout -f`)."""
        here = self.here
        if not (here / ".git").exists():
            run_git(here, "init", "-q", "-b", "a")
        run_git(here, "add", "-A")
        run_git(here, "commit", "-q", "--allow-empty", "-m", "step")
        branch = subprocess.run(["git", "-C", str(here), "branch", "--show-current"],
                                capture_output=True, text=True, timeout=60).stdout.strip()
        other = "b" if branch == "a" else "a"
        exists = subprocess.run(["git", "-C", str(here), "rev-parse", "-q", "--verify", other],
                                capture_output=True, timeout=60).returncode == 0
        run_git(here, "checkout", "-q", "-f", *([] if exists else ["-b"]), other)

    # -- the comparison ----------------------------------------------------------------

    def fresh(self) -> dict[str, Any]:
        found = subprocess.run(
            [sys.executable, str(FRESH_RENDER), str(self.base), str(self.cache / "cli"), *NAMES],
            capture_output=True, text=True, timeout=ORACLE_TIMEOUT, check=False)
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout)  # type: ignore[no-any-return]

    checks = 0  # comparisons made by every machine of this process (bench/stale_fuzz.py)

    @invariant()
    def every_path_gives_the_fresh_render(self) -> None:
        if self.live is None:
            return
        DeployMachine.checks += 1
        expected = self.fresh()
        cli = expected["cli_cached"]
        assert cli == expected["cli"], "reclass --inventory --cache-dir"
        refreshed = outcome(self.live.refresh)
        if "error" in refreshed:
            assert refreshed == expected["node_names"], "Inventory.refresh()"
        else:
            assert outcome(lambda: self.live.node_names) == expected["node_names"]
            assert outcome(self.live.inventory) == expected["inventory"], "inventory()"
        for name in NAMES:
            wanted = expected["nodeinfo"][name]
            if "error" not in refreshed:
                assert outcome(lambda: self.live.nodeinfo(name)) == wanted, (  # noqa: B023
                    f"refresh() + nodeinfo({name})")

            def one(name: str = name) -> Any:
                self.live_one.refresh(name)
                return self.live_one.nodeinfo(name)

            assert outcome(one) == wanted, f"refresh({name!r}) + nodeinfo({name!r})"
            self.check_salt(name, wanted)
        # A restarted master: a new pool, served the results the last one stored in cache_dir.
        salt.LIVE_INVENTORIES = LiveInventoryPool(open_inventory)
        try:
            for name in NAMES:
                self.check_salt(name, expected["nodeinfo"][name], self.salt_options()[1:])
        finally:
            salt.LIVE_INVENTORIES = self.pool
        tops = expected["inventory"]
        wanted_top = tops if "error" in tops else salt.inventory_top_data(tops)
        for options in self.salt_options():
            assert outcome(lambda: salt.top(None, **options)) == wanted_top, (  # noqa: B023
                f"top() {options}")
        self.check_watch(expected)

    def salt_options(self) -> list[dict[str, str]]:
        return [{"inventory_base_uri": str(self.base)},
                {"inventory_base_uri": str(self.base), "cache_dir": str(self.cache / "salt")}]

    def check_salt(self, name: str, wanted: dict[str, Any],
                   options_list: list[dict[str, str]] | None = None) -> None:
        pillar = wanted if "error" in wanted else outcome(lambda: salt.pillar_data(wanted))
        top = wanted if "error" in wanted else salt.node_top_data(wanted)
        for options in options_list or self.salt_options():
            assert outcome(lambda: salt.ext_pillar(name, {}, **options)) == pillar, (  # noqa: B023
                f"ext_pillar({name!r}) {options} ({salt.LIVE_INVENTORIES is self.pool=})")
            assert outcome(lambda: salt.top(name, **options)) == top, (  # noqa: B023
                f"top({name!r}) {options}")

    def check_watch(self, expected: dict[str, Any]) -> None:
        """The round `watch` reports: each node against its fresh render and the last round
        (a node that fails never hides the others; the inventory failing as a whole does)."""
        assert self.watcher is not None
        found = self.watcher.poll()
        names = expected["node_names"]
        if "error" in names:
            reported = None if found.error is None else outcome(lambda: _raise(found.error))
            wanted = None if names["error"] == self.last_error else names
            assert reported == wanted, "watch: the error"
            self.last_error = names["error"]
            return
        self.last_error = None
        assert found.error is None
        now = {name: expected["nodeinfo"][name] for name in names}
        ok = {name for name, info in now.items() if "error" not in info}
        failing = set(now) - ok
        if not found.anything:  # a round that saw no change
            assert now == self.last_nodes, "watch: a change not seen"
            return
        assert set(found.failing_nodes) <= failing, "watch: failing"
        assert set(found.failing_nodes) | set(found.still_failing) == failing, "watch: failing"
        for err in found.failing:
            assert outcome(lambda err=err: _raise(err)) == now[err.node], "watch: an error"
        before = self.last_nodes
        if before is None:
            assert found.first and found.rendered == len(ok), "watch: first round"
            assert set(found.failing_nodes) == failing, "watch: every failing node at first"
        else:
            was_ok = {name for name, info in before.items() if "error" not in info}
            assert set(found.changed) == {name for name in ok & was_ok
                                          if now[name] != before[name]}, "watch: changed"
            assert set(found.added) == now.keys() - before.keys(), "watch: added"
            assert set(found.removed) == before.keys() - now.keys(), "watch: removed"
            assert set(found.fixed) == ok & (before.keys() - was_ok), "watch: fixed"
            assert set(found.failing_nodes) >= {
                name for name in failing if name not in before or name in was_ok
                or before[name] != now[name]}, "watch: newly failing"
        self.last_nodes = now


def _raise(error: ReclassError | None) -> None:
    assert error is not None
    raise error


def machine_settings(steps: int, examples: int, shrink: bool = False,
                     derandomize: bool = False) -> Any:
    """Hypothesis settings of `examples` runs of at most `steps` steps each. Without
    `shrink`, a failure is reported with the steps as they ran: shrinking a sequence of
    renders in new processes takes many minutes. `derandomize`: the same runs every time."""
    from hypothesis import HealthCheck, Phase, settings

    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])
    return settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck), phases=phases,
                    derandomize=derandomize)


def deploy_machine_case(steps: int, examples: int, derandomize: bool = False) -> type:
    """The machine as a unittest case (see machine_settings)."""
    DeployMachine.TestCase.settings = machine_settings(steps, examples,
                                                       derandomize=derandomize)
    return DeployMachine.TestCase
