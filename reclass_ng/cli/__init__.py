"""Command-line entry points: `reclass` (drop-in for kapicorp-reclass) and `reclass-ng`.

Every console script imports this package first: PyYAML is imported here, where a command
starts, without compiling the pattern of its unused pure-Python reader (see yaml_import); a
program using reclass_ng as a library imports PyYAML as it always does.
"""

import reclass_ng.cli.yaml_import  # noqa: F401
