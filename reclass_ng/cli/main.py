"""`reclass-ng SUBCOMMAND ...`: the commands reclass never had.

Each subcommand lives in its own module under reclass_ng.cli with two functions:
`add_arguments(parser)` and `run(args) -> int`. Register it in SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from reclass_ng.cli.failures import add_errors_option, run_reporting_errors

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {}
SUBCOMMANDS["classify"] = ("reclass_ng.cli.classify", "classify a node by its facts with the node groups")
SUBCOMMANDS["groups"] = ("reclass_ng.cli.groups", "work with node groups (validate)")
SUBCOMMANDS["serve"] = ("reclass_ng.cli.serve", "serve the Node Classifier v1 HTTP API")
SUBCOMMANDS["lint"] = ("reclass_ng.cli.lint", "check an inventory for mistakes (duplicate keys, dead values, ...)")
SUBCOMMANDS["diff"] = ("reclass_ng.cli.diff", "compare every node of two revisions or directories of an inventory")
SUBCOMMANDS["watch"] = ("reclass_ng.cli.watch", "re-render an inventory when its files change and say which nodes changed")
SUBCOMMANDS["explain"] = ("reclass_ng.cli.explain", "explain where a node's value, class or application came from")
SUBCOMMANDS["classes"] = ("reclass_ng.cli.classes", "sync and list the Puppet class catalogue of the node groups")
SUBCOMMANDS["tokens"] = ("reclass_ng.cli.tokens", "add tokens with roles to a `reclass-ng serve` tokens file")
SUBCOMMANDS["kapitan"] = ("reclass_ng.cli.kapitan", "run Kapitan with the reclass-ng inventory backend (kapitan-ng)")
SUBCOMMANDS["lsp"] = ("reclass_ng.cli.lsp", "serve the inventory to editors: a Language Server Protocol server on stdio")
SUBCOMMANDS["ui"] = ("reclass_ng.cli.ui", "open the read-only web explorer on 127.0.0.1 and print its URL")


def build_parser() -> argparse.ArgumentParser:
    from reclass_ng.version import COMPATIBLE_RECLASS_VERSION, __version__

    parser = argparse.ArgumentParser(prog="reclass-ng", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version",
                        version=f"reclass-ng {__version__} (compatible with kapicorp-reclass "
                                f"{COMPATIBLE_RECLASS_VERSION})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        sp = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sp)
        add_errors_option(sp)
        sp.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["kapitan"]:  # every later word is Kapitan's, options included
        argv = ["kapitan", "--", *words[1:]]
    args = build_parser().parse_args(argv)
    return run_reporting_errors(lambda: args._module.run(args),
                                errors_format=getattr(args, "errors", "text"))


if __name__ == "__main__":
    sys.exit(main())
