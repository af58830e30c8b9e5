"""What checking parameter schemas adds to a render (issue 31: at most 30%).

Renders every node of an inventory (`Inventory.nodeinfo`, as `reclass-ng validate` does) and
checks each node against schemas written for the bench's `mcp` shape (patterns
over `_param`: addresses, versions, passwords, counts, plus a required-keys root schema), and
prints both times. Usage: python bench/schema_cost.py DIR [--reference] (DIR from
bench/generate.py --out DIR; --reference: jsonschema's own keywords, without the memo).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import reclass_ng
from reclass_ng.schemas import check_node, load_schemas

PARAM_SCHEMA = {
    "type": "object",
    "patternProperties": {
        "_address$": {"$ref": "common.json#/$defs/ipv4"},
        "_version$": {"type": "string"},
        "_password$": {"type": "string", "minLength": 8},
        "(_max_connections|_retries|_size|_count)$": {"type": "integer", "minimum": 0},
        "_enabled$": {"type": "boolean"},
    },
}
COMMON = {"$defs": {"ipv4": {"type": "string",
                             "pattern": r"^(\d{1,3}\.){3}\d{1,3}$"}}}
ROOT = {"type": "object", "required": ["_param"], "properties": {"_param": {"type": "object"}}}


def main(argv: list[str]) -> int:
    source = Path(argv[0])
    fast = "--reference" not in argv[1:]
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "inventory"
        shutil.copytree(source, base, symlinks=True)
        (base / "schemas").mkdir()
        (base / "schemas/param.json").write_text(json.dumps(PARAM_SCHEMA))
        (base / "schemas/common.json").write_text(json.dumps(COMMON))
        (base / "schemas/root.json").write_text(json.dumps(ROOT))
        (base / "reclass-config.yml").write_text(
            "schemas:\n  _param: schemas/param.json\n  '': schemas/root.json\n")
        inventory = reclass_ng.load(str(base))
        schemas = load_schemas(str(base), fast=fast)
        assert schemas is not None
        names = inventory.node_names
        infos = [inventory.nodeinfo(name) for name in names]
        inventory = reclass_ng.load(str(base))  # rendered again below, from cold
        # Checked separately from the render (the machine is shared: timing both in one
        # loop mixes their noise); process time, not wall time.
        start = time.process_time()
        violations = 0
        for name, info in zip(names, infos, strict=True):
            violations += len(check_node(schemas, name, info["parameters"], None, str(base)))
        check = time.process_time() - start
        start = time.process_time()
        for name in names:
            inventory.nodeinfo(name)
        render = time.process_time() - start
    print(f"{len(infos)} nodes: render {render:.2f} s, schema check {check:.2f} s "
          f"(+{check / render:.0%} of a render), {violations} violations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
