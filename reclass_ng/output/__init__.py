"""YAML and JSON output, byte for byte as kapicorp-reclass prints them.

- `dispatch`: `dump()` and `write()`, which choose the writer of a format;
- `exact`: the exact reference writers (PyYAML's dumper, `json.dumps(indent=2)` character
  for character);
- `block_yaml`: block YAML of whole inventories written fast (BlockYamlWriter);
- `fast_json`: indented JSON of whole inventories through orjson;
- `fragments`: a dumped inventory assembled from per-node texts (parallel and cached renders).

The fast writers are imported where they are used, never here, and the names below on first
use: a streamed `reclass --inventory -o yaml` needs neither `exact` (PyYAML's dumper and the
JSON writers, with the json accelerator) nor `dump`. `reclass_ng.output.dump(...)` keeps
working as it did when this was one module.
"""

from __future__ import annotations

__all__ = ["FORMATS", "dump", "fast_pretty_json", "json_key", "pretty_json", "pyyaml_text",
           "write", "yaml_dumper"]

# name -> the module of this package that defines it
_LAZY = {"FORMATS": "dispatch", "dump": "dispatch", "write": "dispatch",
         "fast_pretty_json": "exact", "json_key": "exact", "pretty_json": "exact",
         "pyyaml_text": "exact", "yaml_dumper": "exact"}

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # what type checkers see of the lazy names above
    from typing import Any

    from reclass_ng.output.dispatch import FORMATS, dump, write
    from reclass_ng.output.exact import (
        fast_pretty_json,
        json_key,
        pretty_json,
        pyyaml_text,
        yaml_dumper,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reclass_ng.output' has no attribute {name!r}")
    # (__import__ with a fromlist returns the submodule itself; importlib's package would
    # import `warnings` and more, a larger start than the modules put off)
    return getattr(__import__(f"reclass_ng.output.{module}", fromlist=[name]), name)
