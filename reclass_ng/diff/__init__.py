"""`diff`: what changes in the rendered nodes between two versions of an inventory.

`compare` renders both sides and compares them key by key, naming the file and line that
changed a value; `sources` exports a git revision of the inventory to compare with.
"""

from reclass_ng.diff.compare import InventoryDiff, KeyChange, NodeChange, compare, render_side

__all__ = ["InventoryDiff", "KeyChange", "NodeChange", "compare", "render_side"]
