"""The `schema` lint rule: parameter values that break the JSON Schemas the `schemas` setting
attaches (reclass_ng.schemas), one finding per violation shared by nodes, at the write that
produced the value."""

from __future__ import annotations

from reclass_ng.errors import ConfigError
from reclass_ng.lint.findings import Finding, finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.schemas import SchemaSet, Violation, check_node, group_violations, load_schemas
from reclass_ng.settings import find_config_file

NODES_NAMED = 5  # node names a finding lists before "and N more"


class SchemaRule:
    """The `schema` rule, told one node at a time (`add`): the violations of each node are
    kept, its record is not."""

    def __init__(self, base: str, delimiter: str) -> None:
        self.base = base
        self.violations: list[Violation] = []
        self.schemas: SchemaSet | None = None
        self.error: ConfigError | None = None
        try:
            self.schemas = load_schemas(base, delimiter)
        except ConfigError as err:
            self.error = err

    def add(self, run: NodeRun) -> None:
        """Check one rendered node."""
        record = run.provenance
        if self.schemas is None or record is None or record.nodeinfo is None:
            return  # node-error and failing-reference report a node that did not render
        self.violations += check_node(self.schemas, run.name, record.nodeinfo["parameters"],
                                      record, self.base)

    def findings(self) -> list[Finding]:
        """Findings for the nodes told; a bad schema is one finding naming it."""
        base = self.base
        if self.error is not None:
            return [finding("schema", find_config_file(base), None, self.error.message)]
        found = []
        for group in group_violations(self.violations):
            names = ", ".join(group.nodes[:NODES_NAMED])
            if len(group.nodes) > NODES_NAMED:
                names += f" and {len(group.nodes) - NODES_NAMED} more"
            count = f"{len(group.nodes)} node{'s' if len(group.nodes) != 1 else ''}"
            violation = group.violation
            found.append(finding("schema", violation.write_file or find_config_file(base),
                                 violation.write_line, f"{count} ({names}): {violation.text()}"))
        return found
