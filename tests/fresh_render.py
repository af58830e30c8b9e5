"""A fresh render in a new process, the oracle of the deploy state machine (deploy_machine.py).

    python fresh_render.py INVENTORY CACHE_DIR NAME...

prints one JSON document: `node_names`, `nodeinfo` of each NAME and `inventory` from a fresh
`reclass_ng.load()` (each value, or {"error": "<kind>: <message>"}), and the `reclass
--inventory -o json` command line run twice in this process, without and with `--cache-dir
CACHE_DIR` (exit status, output, standard error). Timestamps are left out.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_in_process import run_reclass_in_process  # noqa: E402

import reclass_ng  # noqa: E402
from reclass_ng.errors import ReclassError  # noqa: E402


def without_timestamps(value: Any) -> Any:
    """`value` with every `timestamp` key of a `__reclass__` mapping removed."""
    if isinstance(value, dict):
        return {key: (without_timestamps(item) if key != "__reclass__" or not isinstance(item, dict)
                      else {k: v for k, v in item.items() if k != "timestamp"})
                for key, item in value.items()}
    if isinstance(value, list):
        return [without_timestamps(item) for item in value]
    return value


def outcome(call: Callable[[], Any]) -> Any:
    """The JSON form of what `call` returns, or of the ReclassError it raises."""
    try:
        return json.loads(json.dumps(without_timestamps(call()), default=str))
    except ReclassError as err:
        return {"error": f"{type(err).__name__}: {err}"}


def command_outcome(argv: list[str], cwd: str) -> dict[str, Any]:
    status, out, err = run_reclass_in_process(argv, cwd)
    return {"status": status, "output": outcome(lambda: json.loads(out)) if status == 0 else out,
            "stderr": err}


def fresh(base: str, cache_dir: str, names: list[str]) -> dict[str, Any]:
    def load() -> reclass_ng.Inventory:
        return reclass_ng.load(base, warn=lambda message: None)

    command = ["-b", base, "--inventory", "-o", "json"]
    return {
        "node_names": outcome(lambda: load().node_names),
        "nodeinfo": {name: outcome(lambda name=name: load().nodeinfo(name))  # type: ignore[misc]
                     for name in names},
        "inventory": outcome(lambda: load().inventory()),
        "cli": command_outcome(command, base),
        "cli_cached": command_outcome([*command, "--cache-dir", cache_dir], base),
    }


if __name__ == "__main__":
    print(json.dumps(fresh(sys.argv[1], sys.argv[2], sys.argv[3:])))
