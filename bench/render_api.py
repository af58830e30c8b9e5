#!/usr/bin/env python3
"""Render an inventory through a Python API, in a process of its own.

Run by bench/run.py with the interpreter that has the implementation
installed (reclass-rs lives in the peers virtualenv, reclass-ng in the
project's). Prints one JSON line: {"render_seconds": ...}, the time of the
API calls alone; the runner also times the whole process from outside.

    render_api.py --impl reclass-rs|reclass-ng --inventory DIR
                  [--nodeinfo NODE] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def render_reclass_rs(base: str, node: str | None) -> dict:
    import reclass_rs

    if os.path.isfile(os.path.join(base, "reclass-config.yml")):
        reclass = reclass_rs.Reclass.from_config_file(base, "reclass-config.yml")
    else:
        reclass = reclass_rs.Reclass(inventory_path=base)
    if node is not None:
        return reclass.nodeinfo(node).as_dict()
    return reclass.inventory().as_dict()


def render_reclass_ng(base: str, node: str | None) -> dict:
    import reclass_ng

    inventory = reclass_ng.load(base)
    return inventory.nodeinfo(node) if node is not None else inventory.inventory()


RENDERERS = {"reclass-rs": render_reclass_rs, "reclass-ng": render_reclass_ng}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--impl", choices=sorted(RENDERERS), required=True)
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--nodeinfo", metavar="NODE")
    parser.add_argument("--output", help="write the rendered data here as JSON")
    args = parser.parse_args()
    started = time.perf_counter()
    try:
        data = RENDERERS[args.impl](os.path.abspath(args.inventory), args.nodeinfo)
    except Exception as error:  # report any implementation's failure as one clear line
        print(f"{args.impl} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 65
    elapsed = time.perf_counter() - started
    if args.output:
        temporary = args.output + ".tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, default=str)
        os.replace(temporary, args.output)
    print(json.dumps({"render_seconds": elapsed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
