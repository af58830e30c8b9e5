"""YAML and JSON output, byte for byte as kapicorp-reclass prints them."""

from __future__ import annotations

import datetime
import json
from typing import Any

import yaml

from reclass_ng.errors import UsageError
from reclass_ng.values import MDict, MList

FORMATS = ("yaml", "json")

_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Safe dumper that knows reclass-ng's containers and never writes anchors/aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Dumper.add_representer(MDict, _BaseDumper.represent_dict)
_Dumper.add_representer(MList, _BaseDumper.represent_list)
for _cls in (dict, list):
    for _sub in _cls.__subclasses__():
        if _sub.__module__ == "reclass_ng.values":
            _Dumper.add_representer(
                _sub, _BaseDumper.represent_dict if _cls is dict else _BaseDumper.represent_list)


def _json_default(value: Any) -> Any:
    # D11: kapicorp crashes on dates in JSON; ISO-8601 strings are what every consumer expects.
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dump(data: Any, fmt: str = "yaml", pretty: bool = True) -> str:
    """The text `reclass -o FMT` prints for `data` (including the final newline)."""
    if fmt == "json":
        if pretty:
            return json.dumps(data, indent=2, default=_json_default) + "\n"
        return json.dumps(data, separators=(",", ":"), default=_json_default) + "\n"
    if fmt == "yaml":
        return yaml.dump(data, Dumper=_Dumper, default_flow_style=not pretty) + "\n"
    raise UsageError(f"Unknown output format: {fmt!r} (choose from {', '.join(FORMATS)})")
