"""YAML and JSON output, byte for byte as kapicorp-reclass prints them.

- `dispatch`: `dump()` and `write()`, which choose the writer of a format;
- `exact`: the exact reference writers (PyYAML's dumper, `json.dumps(indent=2)` character
  for character);
- `block_yaml`: block YAML of whole inventories written fast (BlockYamlWriter);
- `fast_json`: indented JSON of whole inventories through orjson;
- `fragments`: a dumped inventory assembled from per-node texts (parallel and cached renders).

The fast writers are imported where they are used, never here: `reclass --nodeinfo` imports
only `dispatch` and `exact`. `reclass_ng.output.dump(...)` keeps working as it did when this
was one module.
"""

from reclass_ng.output.dispatch import FORMATS, dump, write
from reclass_ng.output.exact import (
    fast_pretty_json,
    json_key,
    pretty_json,
    pyyaml_text,
    yaml_dumper,
)

__all__ = ["FORMATS", "dump", "fast_pretty_json", "json_key", "pretty_json", "pyyaml_text",
           "write", "yaml_dumper"]
