"""lint's rules about writes (dead-value, type-change, constant-ignored) for one file, over the
nodes that read it: what `reclass-ng lint` would report at that file, after an edit or an open.

A finding of these rules is reported at one write, and every node whose render makes it reads
the file of that write: the nodes reading a file give every finding located in it, so the
rest of the inventory is not rendered again. Each node's provenance record (a render with
every write recorded) is asked of the generation, which keeps the last few for hovers.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from reclass_ng.errors import ReclassError
from reclass_ng.lint import disabled_in_config
from reclass_ng.lint.findings import Finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.lint.write_rules import WriteRules
from reclass_ng.lint.yaml_pass import LineIndex
from reclass_ng.lsp.documents import Outline
from reclass_ng.lsp.live import EditedInventory, Generation
from reclass_ng.storage.positions import key_positions

# A file read by more nodes gets no write findings in the editor (`reclass-ng lint` reports
# them): a provenance record costs about a render of its node (doc/editor.rst, Limits).
LINT_NODES = 250


def write_rule_findings(live: EditedInventory, generation: Generation, path: str,
                        outline: Outline, most_nodes: int = LINT_NODES,
                        cancelled: Callable[[], bool] = lambda: False) -> list[Finding] | None:
    """The findings of lint's write rules located in file `path` (whose buffer is
    `outline`), from the nodes of `generation` reading it; None when `cancelled()` turned
    true, the file is read by more than `most_nodes` nodes, or the buffer does not parse."""
    inventory, settings = generation.inventory, generation.settings
    path = os.path.abspath(path)
    readers = [state.name for _, state in sorted(generation.states.items())
               if path in state.files]
    if inventory is None or settings is None or outline.problem is not None \
            or len(readers) > most_nodes:
        return None
    index = LineIndex(live.root.path)
    prefixes = settings.dict_key_override_prefix + settings.dict_key_constant_prefix
    index.tables[path] = key_positions(outline.root, prefixes)  # the buffer's lines
    rules = WriteRules(settings.strict_constant_parameters, index)
    # In reverse name order: the generation keeps the last few records asked, and a hover
    # asks those of the first node of each group of values, by name.
    for name in reversed(readers):
        if cancelled():
            return None
        try:
            provenance = generation.provenances.get(name, inventory.provenance)
        except ReclassError:
            continue  # its render error is a diagnostic already
        node_file = generation.node_files.get(name, "")
        rules.add(NodeRun(name, provenance, node_file, provenance.error))
    try:
        disabled = disabled_in_config(live.root.path)
    except ReclassError:
        disabled = set()  # a bad lint_disable is for `reclass-ng lint` to report
    dead, types, constants = rules.findings()
    return [item for item in dead + types + constants
            if item.path and os.path.abspath(item.path) == path and item.rule not in disabled]
