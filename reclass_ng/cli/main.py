"""`reclass-ng SUBCOMMAND ...`: the commands reclass never had.

Each subcommand lives in its own module under reclass_ng.cli with two functions:
`add_arguments(parser)` and `run(args) -> int`. Register it in SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from reclass_ng.cli.failures import (
    add_errors_option,
    errors_format_in,
    exit_without_teardown,
    run_reporting_errors,
    without_errors_option,
)

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {}
SUBCOMMANDS["classify"] = ("reclass_ng.cli.classify", "classify a node by its facts with the node groups")
SUBCOMMANDS["groups"] = ("reclass_ng.cli.groups", "work with node groups (validate)")
SUBCOMMANDS["serve"] = ("reclass_ng.cli.serve", "serve the Node Classifier v1 HTTP API")
SUBCOMMANDS["lint"] = ("reclass_ng.cli.lint", "check an inventory for mistakes (duplicate keys, dead values, ...)")
SUBCOMMANDS["diff"] = ("reclass_ng.cli.diff", "compare every node of two revisions or directories of an inventory")
SUBCOMMANDS["validate"] = ("reclass_ng.cli.validate", "check every node's parameters against the JSON Schemas of the `schemas` setting")
SUBCOMMANDS["affected"] = ("reclass_ng.cli.affected", "list the nodes (or Kapitan targets) a change to the inventory's files affects")
SUBCOMMANDS["watch"] = ("reclass_ng.cli.watch", "re-render an inventory when its files change and say which nodes changed")
SUBCOMMANDS["explain"] = ("reclass_ng.cli.explain", "explain where a node's value, class or application came from")
SUBCOMMANDS["classes"] = ("reclass_ng.cli.classes", "sync and list the Puppet class catalogue of the node groups")
SUBCOMMANDS["tokens"] = ("reclass_ng.cli.tokens", "add tokens with roles to a `reclass-ng serve` tokens file")
SUBCOMMANDS["activity"] = ("reclass_ng.cli.activity", "show who changed what through `reclass-ng serve` (its activity log)")
SUBCOMMANDS["kapitan"] = ("reclass_ng.cli.kapitan", "run Kapitan with the reclass-ng inventory backend (kapitan-ng)")
SUBCOMMANDS["lsp"] = ("reclass_ng.cli.lsp", "serve the inventory to editors: a Language Server Protocol server on stdio")
SUBCOMMANDS["ui"] = ("reclass_ng.cli.ui", "open the read-only web explorer on 127.0.0.1 and print its URL")


# Commands that run until stopped and log on stderr as they go (Kapitan: a whole compile):
# with `--errors json` their log is not held back for the document, only their errors are JSON.
LOGGING_COMMANDS = frozenset({"serve", "ui", "watch", "kapitan"})

# Commands that render a whole inventory, or two, and hold it until they print: the console
# script leaves them without freeing it object by object (cli.failures.exit_without_teardown;
# 0.1 to 0.4 s of a 2,000-node `diff`, which holds both sides). They leave no temporary file
# or log behind them for an exit handler to clean up.
WHOLE_INVENTORY_COMMANDS = frozenset({"diff", "lint"})


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, with the arguments of `command`'s only.

    The others get their name and help line, which is all `reclass-ng --help` and an unknown
    command's error show: importing a subcommand's module imports what it runs (the
    classifier, lint, diff, the server), and importing all of them cost every command,
    `--version` included, about 0.3 s of CPU before it started."""
    from reclass_ng.version import COMPATIBLE_RECLASS_VERSION, __version__

    parser = argparse.ArgumentParser(prog="reclass-ng", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version",
                        version=f"reclass-ng {__version__} (compatible with kapicorp-reclass "
                                f"{COMPATIBLE_RECLASS_VERSION})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name != command:
            continue
        module = importlib.import_module(module_name)
        module.add_arguments(sp)
        add_errors_option(sp)
        for action in sp._actions:  # nested actions: groups validate, classes list, ...
            if isinstance(action, argparse._SubParsersAction):
                for nested in set(action.choices.values()):
                    add_errors_option(nested)
        sp.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    # `--errors FORMAT` is the same option for every command and action: taken out before
    # argparse, which knows it only where each parser defines it; Kapitan's words are its own.
    ours = words.index("kapitan") + 1 if "kapitan" in words else len(words)
    errors_format = errors_format_in(words[:ours])
    words = without_errors_option(words[:ours]) + words[ours:]
    if words[:1] == ["kapitan"]:  # every later word is Kapitan's, options included
        words = ["kapitan", "--", *words[1:]]

    parsed: list[argparse.Namespace] = []

    def parse() -> int:  # a usage error is reported in the chosen format too
        # The command is the first word (the only options before it, --help and --version,
        # need no subcommand's arguments).
        command = words[0] if words and words[0] in SUBCOMMANDS else None
        parsed.append(build_parser(command).parse_args(words))
        return 0

    code = run_reporting_errors(parse, errors_format=errors_format)
    if code or not parsed:
        return code
    args = parsed[0]
    args.errors = errors_format  # taken off the command line before argparse saw it
    return run_reporting_errors(lambda: args._module.run(args), errors_format=errors_format,
                                collect_stderr=args.command not in LOGGING_COMMANDS)


def console_main() -> None:
    """The `reclass-ng` console script: main(), then the exit its command wants."""
    words = without_errors_option(sys.argv[1:])[:1]
    whole_inventory = bool(words) and words[0] in WHOLE_INVENTORY_COMMANDS
    if whole_inventory:  # it leaves without freeing anything: no collection pays
        from reclass_ng.collector import cycle_collection_off_until_exit

        cycle_collection_off_until_exit()
    code = main()
    if whole_inventory:
        exit_without_teardown(code)
    sys.exit(code)


if __name__ == "__main__":
    console_main()
