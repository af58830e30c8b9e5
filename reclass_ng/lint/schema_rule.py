"""The `schema` lint rule: parameter values that break the JSON Schemas the `schemas` setting
attaches (reclass_ng.schemas), one finding per violation shared by nodes, at the write that
produced the value."""

from __future__ import annotations

from reclass_ng.errors import ConfigError
from reclass_ng.lint.findings import Finding, finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.schemas import check_node, group_violations, load_schemas
from reclass_ng.settings import find_config_file

NODES_NAMED = 5  # node names a finding lists before "and N more"


def schema_violations(base: str, runs: list[NodeRun], delimiter: str) -> list[Finding]:
    """Findings for the rendered nodes of `runs`; a bad schema is one finding naming it."""
    try:
        schemas = load_schemas(base, delimiter)
    except ConfigError as err:
        return [finding("schema", find_config_file(base), None, err.message)]
    if schemas is None:
        return []
    violations = []
    for run in runs:
        record = run.provenance
        if record is None or record.nodeinfo is None:
            continue  # node-error and failing-reference report it
        violations += check_node(schemas, run.name, record.nodeinfo["parameters"], record, base)
    found = []
    for group in group_violations(violations):
        names = ", ".join(group.nodes[:NODES_NAMED])
        if len(group.nodes) > NODES_NAMED:
            names += f" and {len(group.nodes) - NODES_NAMED} more"
        count = f"{len(group.nodes)} node{'s' if len(group.nodes) != 1 else ''}"
        violation = group.violation
        found.append(finding("schema", violation.write_file or find_config_file(base),
                             violation.write_line, f"{count} ({names}): {violation.text()}"))
    return found
