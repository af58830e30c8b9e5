"""`reclass-ng kapitan ARGS...`: Kapitan's command line with the reclass-ng inventory backend,
the same as the `kapitan-ng` command (reclass_ng.kapitan.cli)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kapitan_args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="Kapitan's arguments, e.g. compile --inventory-backend reclass-ng")


def run(args: argparse.Namespace) -> int:
    from reclass_ng.kapitan.cli import main

    words = list(args.kapitan_args)
    return main(words[1:] if words[:1] == ["--"] else words)
