"""`-b DIR` of the reclass-ng commands and the inventory directory it names.

A module of its own: the commands that render (lint, diff, validate, affected) import it,
and from `cli.groups`, where it was, they imported the classifier too (about 20 ms of every
start).
"""

from __future__ import annotations

import argparse
import os

from reclass_ng.storage import load_settings


def add_inventory_argument(parser: argparse.ArgumentParser) -> None:
    """`-b DIR`, as for `reclass`."""
    parser.add_argument("-b", "--inventory-base-uri", metavar="DIR",
                        help="the inventory directory (default: inventory_base_uri from "
                             "reclass-config.yml, else the current directory)")


def add_kapitan_argument(parser: argparse.ArgumentParser) -> None:
    """`--kapitan`: DIR is a Kapitan inventory (its `targets/`, `classes/`), read as Kapitan's
    reclass backend reads it."""
    parser.add_argument("--kapitan", action="store_true",
                        help="DIR is a Kapitan inventory: nodes are the targets/ (Kapitan's "
                             "defaults, then reclass-config.yml)")


def inventory_dir_from_args(args: argparse.Namespace) -> str:
    """The inventory directory: `-b`, else reclass-config.yml's inventory_base_uri, else cwd."""
    if args.inventory_base_uri:
        return os.path.expanduser(args.inventory_base_uri)
    settings = load_settings(None, {})
    return os.path.expanduser(settings.inventory_base_uri or os.getcwd())
