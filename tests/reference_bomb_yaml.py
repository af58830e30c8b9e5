"""YAML of reference bombs for the tests of the reference-expansion limit
(resolve.MAX_REFERENCE_EXPANSION): each level refers to the one before it many times."""

from __future__ import annotations


def doubling(name: str, levels: int, width: int, first: str, item: str) -> str:
    """`NAME0: FIRST`, then each level holding the one before `width` times: as list items,
    mapping values, or parts of one string (`item`)."""
    lines = [f"  {name}0: {first}"]
    for level in range(1, levels + 1):
        ref = "${" + f"{name}{level - 1}" + "}"
        if item == "list":
            value = "[" + ", ".join([f"'{ref}'"] * width) + "]"
        elif item == "mapping":
            value = "{" + ", ".join(f"k{i}: '{ref}'" for i in range(width)) + "}"
        else:
            value = "'" + ref * width + "'"
        lines.append(f"  {name}{level}: {value}")
    return "\n".join(lines) + "\n"
