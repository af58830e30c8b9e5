#!/usr/bin/env python3
"""Render an inventory through a Python API, in a process of its own.

Run by bench/run.py with the interpreter that has the implementation
installed (reclass-rs lives in the peers virtualenv, reclass-ng in the
project's). Prints one JSON line: {"render_seconds": ...}, the time of the
API calls alone; the runner also times the whole process from outside.

The result is written with orjson where the interpreter has it (the
runner only compares the data), else with the standard library's json,
and the process then exits without freeing it, as the command lines do:
json.dump of a 2,000-node mcp inventory took 4.6 s of CPU against 0.2 s
for orjson and 2.7 s for the render itself, so the row measured the
bench's own writer more than the API.

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
        with open(temporary, "wb") as handle:
            handle.write(json_bytes(data))
        os.replace(temporary, args.output)
    print(json.dumps({"render_seconds": elapsed}))
    return 0


def json_bytes(data: dict) -> bytes:
    """`data` as JSON, the same data json.dump(data, default=str) writes (not the same
    spacing): through orjson when it is importable and accepts the data."""
    try:
        import orjson
    except ImportError:
        orjson = None
    if orjson is not None:
        try:
            # dates through default=str too, as json writes them
            return orjson.dumps(data, default=str, option=orjson.OPT_PASSTHROUGH_DATETIME)
        except TypeError:  # keys that are not strings, integers beyond 64 bits, ...
            pass
    return json.dumps(data, default=str).encode("utf-8")


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # without freeing the rendered data one object at a time
