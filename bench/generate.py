#!/usr/bin/env python3
"""Generate a realistic reclass inventory for benchmarks, deterministically.

    python bench/generate.py --shape mcp --nodes 2000 --seed 1 --out DIR [--queries]

The same shape, node count, seed and --queries flag always produce the same
bytes. Shapes:

* ``mcp``: MCP/Salt-style, a shared library of ~750 service/system classes,
  clusters of 10-50 nodes, 40-75 classes per node through up to six include
  levels, about a third of the leaf values references (mostly ${_param:...}).
* ``mcp-real``: ``mcp`` with the value shapes of real inventories added
  (shape_real_values.py): long prose, certificates and scripts, unicode, quoted
  numbers, anchors and merge keys in a few class files.
* ``kapitan``: Kapitan-style, ~150 larger classes (components, profiles,
  environments, tenants) with big parameter trees and fewer references;
  targets live in ``targets/`` (see the generated reclass-config.yml).

``--queries`` makes every node export a few values and a third of the nodes
read them back with inventory queries (value, value-if and list-if forms).
Only features that kapicorp-reclass 2.0.0 and reclass-rs treat identically
are used, except for exports and queries, which reclass-rs does not support.
Standard library only, so it runs with any Python 3.10+.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inventory_files import InventoryFiles, write_inventory  # noqa: E402
from inventory_stats import inventory_stats  # noqa: E402
from shape_kapitan import generate_kapitan  # noqa: E402
from shape_mcp_clusters import generate_mcp  # noqa: E402
from shape_real_values import add_real_values  # noqa: E402


def generate_mcp_real(seed: int, nodes: int, queries: bool) -> InventoryFiles:
    """The ``mcp`` inventory with the value shapes of real inventories added."""
    return add_real_values(generate_mcp(seed, nodes, queries), seed)


SHAPES = {"mcp": generate_mcp, "mcp-real": generate_mcp_real, "kapitan": generate_kapitan}
# Shapes using YAML 1.1 only (merge keys): reclass-rs (YAML 1.2) is not run on them.
YAML_1_1_SHAPES = frozenset({"mcp-real"})
GENERATOR_VERSION = 2


def build(shape: str, nodes: int, seed: int, queries: bool = False) -> InventoryFiles:
    """The inventory of ``shape`` with ``nodes`` nodes, in memory."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose one of {', '.join(SHAPES)}")
    if nodes < 1:
        raise ValueError("--nodes must be at least 1")
    return SHAPES[shape](seed, nodes, queries)


def generate(shape: str, nodes: int, seed: int, out: Path, queries: bool = False) -> dict:
    """Generate and write an inventory; returns its metadata (also stored in the marker file)."""
    files = build(shape, nodes, seed, queries)
    stats = inventory_stats(files.classes, {name: doc for name, (_, doc) in files.nodes.items()})
    metadata = {
        "generator_version": GENERATOR_VERSION,
        "shape": shape,
        "nodes": nodes,
        "seed": seed,
        "queries": queries,
        "nodes_uri": files.nodes_dir,
        "classes_uri": files.classes_dir,
        "stats": stats,
    }
    write_inventory(files.rendered(), metadata, out)
    return metadata


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="mcp")
    parser.add_argument("--nodes", type=int, required=True, help="number of nodes (targets)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="directory to (re)create")
    parser.add_argument("--queries", action="store_true",
                        help="add exports to every node and queries to a third of them")
    parser.add_argument("--quiet", action="store_true", help="do not print the summary")
    args = parser.parse_args(argv)
    try:
        metadata = generate(args.shape, args.nodes, args.seed, args.out, args.queries)
    except (ValueError, OSError) as error:
        print(f"generate.py: {error}", file=sys.stderr)
        return 1
    if not args.quiet:
        stats = metadata["stats"]
        per_node = stats["classes_per_node"]
        print(
            f"{args.out}: {args.shape}, {stats['nodes']} nodes, {stats['classes']} classes, "
            f"{per_node['min']}-{per_node['max']} classes per node (median {per_node['median']}), "
            f"include depth {stats['max_include_depth']}, {stats['leaf_values']} leaf values, "
            f"{stats['reference_share']:.0%} references, {stats['querying_nodes']} querying nodes"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
