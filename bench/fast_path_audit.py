#!/usr/bin/env python3
"""How often each fast path of reclass-ng declines, on any inventory.

    python bench/fast_path_audit.py DIR [DIR ...] [--args "-u targets -c classes"]
    python bench/fast_path_audit.py --real          # bench/.work/real (real_inventories.py)

Each inventory is rendered whole (`reclass --inventory`, YAML then JSON) in a process of its
own, with counters wrapped around the decision points of the fast paths in that process
only: the engine carries no counting code, so counting costs nothing when this is not run.
Prints a markdown table: per fast path, what was offered to it and how often it declined.
Run with this checkout first on PYTHONPATH (the script puts it there).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
REAL = CHECKOUT / "bench" / ".work" / "real"


def _count(owner: object, name: str, counts: Counter, offered: str, declined: str,
           is_decline) -> None:
    """Wrap owner.name: count every call as `offered`, and as `declined` when
    is_decline(result) holds."""
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        result = real(*args, **kwargs)
        counts[offered] += 1
        if is_decline(result):
            counts[declined] += 1
        return result

    setattr(owner, name, counted)


def audit_one(argv: list[str]) -> dict[str, int]:
    """Render `reclass ARGV` in this process with every fast path counted."""
    from reclass_ng.classes import SharedClassWalks
    from reclass_ng.output import block_yaml as output_yaml
    from reclass_ng.output import fast_json as output_json
    from reclass_ng.resolve import Resolver
    from reclass_ng.resolve.fast_paths import NOT_RENDERED
    from reclass_ng.storage import yaml_load

    counts: Counter = Counter()
    _count(yaml_load.YamlLoader, "block_document", counts, "block reader: documents",
           "block reader: declined", lambda result: result is yaml_load._DECLINED)
    _count(SharedClassWalks, "walk_classes", counts, "shared class walks: nodes",
           "shared class walks: declined", lambda taken: not taken)
    _count(Resolver, "_rendered_now", counts, "resolver fast paths: values",
           "resolver fast paths: declined", lambda new: new is NOT_RENDERED)
    _count(Resolver, "_rendered_target", counts, "resolver fast paths: values",
           "resolver fast paths: declined", lambda new: new is NOT_RENDERED)
    _count(Resolver, "_render_at", counts, "resolver: full renders", "-", lambda _: False)
    _count(Resolver, "_reuse", counts, "subtree memo: containers offered",
           "subtree memo: not reused", lambda reused: not reused)
    _orjson_chosen = [False]

    def chosen(_result: object) -> bool:
        _orjson_chosen[0] = True
        return False

    _count(output_json, "_members", counts, "JSON writer: nodes", "-", chosen)
    _count(output_json, "_exact_members", counts, "-", "JSON writer: declined", lambda _: True)
    from reclass_ng.output import streamed

    # A small inventory is written by the exact writer from the start, by choice (importing
    # orjson would cost more, streamed.FEW_VALUES_FOR_ORJSON): counted apart from declines.
    _count(streamed.StreamedInventory, "_indented_json", counts, "JSON writer: all nodes",
           "JSON writer: nodes by the exact writer, chosen", lambda _: not _orjson_chosen[0])
    writers: list = []
    real_init = output_yaml.BlockYamlWriter.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        writers.append(self)

    output_yaml.BlockYamlWriter.__init__ = init  # type: ignore[method-assign]
    _count(output_yaml.BlockYamlWriter, "node_text", counts, "YAML writer: nodes", "-",
           lambda _: False)
    from reclass_ng.cli.reclass import main

    sys.argv = ["reclass", *argv]
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        main()
    except SystemExit as done:
        if done.code:
            raise
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    counts["YAML writer: nodes written whole by PyYAML"] += sum(w.whole_fallbacks
                                                                for w in writers)
    counts["YAML writer: scalars written by PyYAML"] += sum(w.fallbacks for w in writers)
    counts.pop("-", None)
    return dict(counts)


def audit(inventory: Path, extra: list[str]) -> dict[str, int]:
    """Both formats, each in a process of its own."""
    counts: Counter = Counter()
    for fmt in ("yaml", "json"):
        argv = ["-b", str(inventory), *extra, "--inventory", "-o", fmt]
        done = subprocess.run([sys.executable, __file__, "--one", json.dumps(argv)],
                              capture_output=True, text=True, timeout=3600,
                              env=dict(os.environ, PYTHONPATH=str(CHECKOUT)))
        if done.returncode:
            raise RuntimeError(f"{inventory}: {done.stderr.strip()[-400:]}")
        one = json.loads(done.stdout)
        for key, value in one.items():
            writer_key = key.startswith(("JSON writer", "YAML writer"))
            if fmt == "yaml" or writer_key:  # the engine's counts once, from the first run
                counts[key] += value
    return dict(counts)


ROWS = [("block reader", "block reader: documents", "block reader: declined"),
        ("shared class walks", "shared class walks: nodes", "shared class walks: declined"),
        ("resolver fast paths", "resolver fast paths: values", "resolver fast paths: declined"),
        ("subtree memo", "subtree memo: containers offered", "subtree memo: not reused"),
        ("YAML writer (whole nodes)", "YAML writer: nodes",
         "YAML writer: nodes written whole by PyYAML"),
        ("YAML writer (scalars)", "YAML writer: nodes", "YAML writer: scalars written by PyYAML"),
        ("JSON writer", "JSON writer: nodes", "JSON writer: declined"),
        ("JSON writer (exact by choice: small inventory)", "JSON writer: all nodes",
         "JSON writer: nodes by the exact writer, chosen")]


def table(results: dict[str, dict[str, int]]) -> str:
    names = list(results)
    lines = ["| fast path | " + " | ".join(f"{name}: offered / declined" for name in names)
             + " |", "|---|" + "---|" * len(names)]
    for label, offered, declined in ROWS:
        cells = []
        for name in names:
            counts = results[name]
            total, down = counts.get(offered, 0), counts.get(declined, 0)
            share = f" ({down / total:.0%})" if total else ""
            cells.append(f"{total} / {down}{share}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inventories", nargs="*", type=Path)
    parser.add_argument("--args", default="", help="extra reclass arguments for DIRs")
    parser.add_argument("--real", action="store_true", help="the inventories of "
                        "bench/real_inventories.py fetch, with their arguments")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(audit_one(json.loads(args.one))))
        return 0
    targets = [(path.name, path, shlex.split(args.args)) for path in args.inventories]
    if args.real:
        record = json.loads((REAL / "SOURCES.json").read_text())
        targets += [(name, REAL / "inventories" / name, built["args"])
                    for name, built in record["inventories"].items()]
    results = {name: audit(path, extra) for name, path, extra in targets}
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
