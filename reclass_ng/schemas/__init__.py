"""Parameter schemas: JSON Schema (draft 2020-12) attached to parameter paths by the `schemas`
setting of reclass-config.yml, checked against rendered nodes.

`load_schemas(base)` reads and checks the schema files (a bad one is a ConfigError naming it);
`check_nodes(inventory, schemas)` and `check_node(...)` give the violations, each located at the
write that produced the bad value; `group_violations` folds identical ones across nodes. These
are the public functions `reclass-ng validate`, `reclass-ng lint` and editor integrations call.
"""

from reclass_ng.schemas.checking import (
    Violation,
    ViolationGroup,
    check_node,
    check_nodes,
    group_violations,
)
from reclass_ng.schemas.loading import CONFIG_KEY, SchemaSet, load_schemas

__all__ = ["CONFIG_KEY", "SchemaSet", "Violation", "ViolationGroup", "check_node",
           "check_nodes", "group_violations", "load_schemas"]
