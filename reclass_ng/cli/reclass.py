"""`reclass`: the command-line interface of kapicorp-reclass 2.0.0, flag for flag."""

from __future__ import annotations

import sys

from reclass_ng.cli.failures import (
    add_errors_option,
    exit_without_teardown,
    hold_until_exit,
    leaving_without_teardown,
    run_reporting_errors,
)
from reclass_ng.errors import ReclassError, UsageError
from reclass_ng.version import COMPATIBLE_RECLASS_VERSION, __version__

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any


def build_parser() -> argparse.ArgumentParser:
    """The `reclass` command line (plain_argv reads the common ones without it)."""
    import argparse

    from reclass_ng.cli.reclass_parser import ReclassArgumentParser

    parser = ReclassArgumentParser(prog="reclass",
                                   description="Classify nodes from a reclass inventory.")
    add = parser.add_argument
    add("--version", action="version",
        version=f"{COMPATIBLE_RECLASS_VERSION} (reclass-ng {__version__})")
    add("-s", "--storage-type",
        help="storage: yaml_fs (default), yaml_git or mixed (see doc/storage.rst)")
    add("-b", "--inventory-base-uri", help="the base directory of the inventory")
    add("-u", "--nodes-uri", help="nodes directory, relative to the base (default: nodes)")
    add("-c", "--classes-uri", help="classes directory, relative to the base (default: classes)")
    add("-z", "--ignore-class-notfound", metavar="VALUE",
        help="ignore missing classes (true/false)")
    add("-a", "--compose-node-name", action="store_true", default=None,
        help="name nodes by their path below nodes/ (a/b/n1.yml is a.b.n1)")
    add("-x", "--ignore-class-notfound-regexp", metavar="REGEXP",
        help="only ignore missing classes whose names match this regular expression")
    add("-o", "--output", metavar="FORMAT", help="output format: yaml (default) or json")
    add("-y", "--pretty-print", action="store_true", default=None, help="pretty-print output")
    add("-r", "--no-refs", action="store_true", default=None, help="never write YAML aliases")
    add("-1", "--single-error", dest="group_errors", action="store_false", default=None,
        help="stop at the first missing reference")
    add("-0", "--multiple-errors", dest="group_errors", action="store_true",
        help="report all missing references of a node together (default)")
    add("-i", "--inventory", action="store_true", help="output the entire inventory")
    add("-n", "--nodeinfo", metavar="NODENAME", help="output information about one node")
    add("-j", "--jobs", type=int, default=None, metavar="N",
        help="render nodes in N processes (inventory mode)")
    add("-q", "--quiet", action="store_true", help="no progress bar")
    add("--cache-dir", metavar="DIR", default=None,
        help="keep rendered nodes in DIR; the next --inventory renders only nodes whose "
             "files changed (setting cache_dir)")
    add("-v", "--verbose", action="store_true",
        help="report every failing node's errors in full, also a problem other nodes share "
             "(by default it is reported once, with the nodes it affects)")
    add_errors_option(parser)
    add("args", nargs="*", help=argparse.SUPPRESS)
    return parser


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line sets (None where a flag was not given)."""
    regexp = args.ignore_class_notfound_regexp
    return {
        "storage_type": args.storage_type,
        "nodes_uri": args.nodes_uri,
        "classes_uri": args.classes_uri,
        "ignore_class_notfound": args.ignore_class_notfound,
        "ignore_class_notfound_regexp": [regexp] if regexp is not None else None,
        "compose_node_name": args.compose_node_name,
        "output": args.output,
        "pretty_print": args.pretty_print,
        "no_refs": args.no_refs,
        "group_errors": args.group_errors,
        "cache_dir": args.cache_dir,
    }


def run(args: argparse.Namespace) -> int:
    from reclass_ng.api import load
    from reclass_ng.output import FORMATS, write

    if args.args:
        raise UsageError("No arguments allowed")
    if args.inventory and args.nodeinfo is not None:
        raise UsageError("Cannot specify multiple modes")
    if not args.inventory and args.nodeinfo is None:
        raise UsageError("You need to specify exactly one mode (--inventory or --nodeinfo)")
    if args.output is not None and args.output not in FORMATS:
        raise UsageError(f"Unknown output format: {args.output!r} (choose from yaml, json)")
    if args.jobs is not None and args.nodeinfo is not None:
        raise UsageError("--jobs applies to --inventory only (--nodeinfo renders one node)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs needs at least 1 process, not {args.jobs}")
    output = InventoryOutput(args.jobs or 1, args.quiet, args.verbose)
    inventory = load(args.inventory_base_uri, warn=output.warn, **settings_from_args(args))
    settings = inventory.settings
    if args.inventory:
        output.render(inventory)
        hold_until_exit(inventory)  # its parsed classes and caches: see console_main
        return 0
    data = inventory.nodeinfo(args.nodeinfo)
    write(data, sys.stdout, settings.output, settings.pretty_print)
    hold_until_exit((inventory, data))
    return 0


class InventoryOutput:
    """`--inventory` with `--jobs` processes and a progress bar on a terminal's stderr."""

    def __init__(self, jobs: int, quiet: bool, verbose: bool = False) -> None:
        self.jobs = jobs
        self.quiet = quiet
        self.verbose = verbose
        self.bar: Any = None
        # Warnings of interpolations held back while a streamed render merges the nodes after
        # them (None: printed at once): see _render_streamed.
        self.held_warnings: list[str] | None = None

    def warn(self, message: str) -> None:
        if self.held_warnings is not None:
            self.held_warnings.append(message)
        elif self.bar is not None:
            self.bar.print_above(message)
        else:
            print(message, file=sys.stderr)

    def render(self, inventory: Any) -> None:
        from reclass_ng.cli.progress import ProgressBar, wants_progress

        count = len(inventory.storage.nodes)
        if self.jobs > 1:
            from reclass_ng.parallel.workers import worker_count

            self.jobs, why = worker_count(self.jobs, count)
            if why and self.verbose:
                print(f"reclass: --jobs: {why}", file=sys.stderr)
        if wants_progress(sys.stderr, count, self.quiet):
            self.bar = ProgressBar(sys.stderr, 2 * count, f"reclass: rendering {count} nodes")
        settings = inventory.settings
        if settings.cache_dir and self._render_cached(inventory):
            return
        if self.jobs > 1 and count > 1:
            self._render_parallel(inventory, min(self.jobs, count))
            return
        try:
            print_output = self._rendered(inventory, count)
        finally:
            self._clear_bar()
        print_output()

    def _clear_bar(self) -> None:
        if self.bar is not None:
            self.bar.clear()
            self.bar = None

    def _rendered(self, inventory: Any, count: int) -> Callable[[], None]:
        """The inventory rendered serially, streamed or whole as its form allows: the
        function that prints it, called once the progress bar is gone."""
        from reclass_ng.output import write
        from reclass_ng.output.streamed import streams
        from reclass_ng.render import timestamp

        settings = inventory.settings
        if streams(settings.output, settings.pretty_print):
            streamed = self._render_streamed(inventory, count)
            return lambda: streamed.write_to(sys.stdout, timestamp())
        data = inventory.inventory(progress=self.bar and self.bar.update)
        return lambda: write(data, sys.stdout, settings.output, settings.pretty_print,
                             floats_exact=inventory.floats_json_exact, speed=inventory.speed)

    def _render_streamed(self, inventory: Any, count: int) -> Any:
        """Every node rendered and its text spooled (output.streamed): the StreamedInventory
        to print. Nothing is printed when a node fails."""
        from reclass_ng.collector import cycle_collection_paused
        from reclass_ng.output.streamed import StreamedInventory
        from reclass_ng.render import NOTHING_AROUND

        settings = inventory.settings
        document = StreamedInventory(settings.output, settings.pretty_print, count,
                                     speed=inventory.speed,
                                     floats_exact=lambda: inventory.floats_json_exact)
        # The serial render's warnings (and --jobs', which must equal them) come in the
        # two-phase order: every merge's, then every interpolation's. Rendered interleaved,
        # the interpolations' are held and printed after the last merge; dropped when a merge
        # fails, as that error stops the two-phase render before any interpolation.
        held: list[str] = []
        last_step = ["", ""]  # (name, phase) of the last step entered

        def around(name: str, phase: str) -> Any:
            self.held_warnings = held if phase == "interpolation" else None
            last_step[:] = [name, phase]
            return NOTHING_AROUND

        try:
            with cycle_collection_paused():
                try:
                    for name, info in inventory.rendered_nodes(self.bar and self.bar.update,
                                                               around=around,
                                                               release_files=True):
                        document.add(name, info)
                finally:
                    self.held_warnings = None
        except ReclassError as err:
            document.close()
            if last_step != [err.node, "merge"]:  # an interpolation error, raised last
                for message in held:
                    self.warn(message)
            raise
        except BaseException:
            document.close()
            raise
        for message in held:
            self.warn(message)
        return document

    def _render_cached(self, inventory: Any) -> bool:
        """`--inventory` through the on-disk cache; False when the output form is not cached."""
        from reclass_ng.incremental import disk_cache

        settings = inventory.settings
        if (settings.storage_type != "yaml_fs"
                or not disk_cache.supports(settings.output, settings.pretty_print)):
            return False  # only yaml_fs files are listed and hashed; flow YAML is one piece
        disk_cache.write_inventory(inventory, settings.cache_dir, self.warn, sys.stdout)
        return True

    def _render_parallel(self, inventory: Any, jobs: int) -> None:
        """Render on `jobs` processes and print, before the processes' file that holds the
        nodes' texts is gone: on workers forked for this render (parallel.forked_lanes),
        else in a process pool (parallel.render_inventory_spooled)."""
        from reclass_ng.parallel.forked_lanes import ForkedLanes

        lanes = ForkedLanes.started(inventory, jobs, release_files=True)
        if lanes is not None:
            try:
                spooled = lanes.render(inventory, progress=self.bar and self.bar.update)
                self._clear_bar()
                spooled.write_to(sys.stdout)
            finally:
                self._clear_bar()
                lanes.close()
            return
        from reclass_ng.parallel import forked_process_pool, render_inventory_spooled

        settings = inventory.settings
        try:
            with forked_process_pool(settings, jobs, inventory.storage, inventory.speed,
                                     release_files=True) as (executor, key):
                spooled = render_inventory_spooled(inventory, executor, settings.output,
                                                   settings.pretty_print, key=key,
                                                   progress=self.bar and self.bar.update)
                self._clear_bar()
                spooled.write_to(sys.stdout)
        finally:
            self._clear_bar()


def other_node_errors(args: argparse.Namespace, first: ReclassError) -> list[ReclassError]:
    """After `--inventory` failed on one node: the errors of every other node, so that a run
    reports them all (not with -1/--single-error, which asks for the first error only)."""
    from reclass_ng.api import load, other_nodes_errors

    if not args.inventory or args.group_errors is False or first.node is None:
        return []
    inventory = load(args.inventory_base_uri, warn=lambda message: None,
                     **settings_from_args(args))
    if not inventory.settings.group_errors:
        return []
    return other_nodes_errors(inventory, first)


def parse_args(argv: list[str] | None = None) -> Any:
    """The options of a `reclass` command line (an argparse.Namespace or its equal)."""
    from reclass_ng.cli.plain_argv import parse_plain_argv

    words = sys.argv[1:] if argv is None else argv
    return parse_plain_argv(words) or build_parser().parse_args(words)


def main(argv: list[str] | None = None) -> int:
    from reclass_ng.cli.failures import errors_format_in

    words = sys.argv[1:] if argv is None else argv
    found: list[Any] = []

    def parse_and_run() -> int:
        # Parsed inside, so that with `--errors json` a usage error is part of the document.
        found.append(parse_args(words))
        return run(found[0])

    return run_reporting_errors(
        parse_and_run, errors_format=errors_format_in(words),
        more_errors=lambda err: other_node_errors(found[0], err) if found else [],
        per_node=lambda: bool(found) and found[0].verbose)


def console_main() -> None:
    """The `reclass` console script: main(), then exit without freeing the rendered data
    (nor the inventory it was rendered from: cli.failures.hold_until_exit).

    Python's cycle collector is off for the run (reclass_ng.collector says why).
    """
    from reclass_ng.collector import cycle_collection_off_until_exit

    cycle_collection_off_until_exit()
    leaving_without_teardown()
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C after main()'s own handling, as the command ends
        code = 130
    exit_without_teardown(code)


if __name__ == "__main__":
    console_main()
