"""Writing small inventories for tests; importable by name from any test module (a test must
not import `conftest`: with several conftest.py files, which one it gets depends on the run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_inventory(root: Path, files: Mapping[str, str]) -> Path:
    """Write `files` (relative path -> text) below `root`; nodes/ and classes/ always exist."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nodes").mkdir(exist_ok=True)
    (root / "classes").mkdir(exist_ok=True)
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def replace_file(path: Path, text: str) -> None:
    """Give `path` the new `text` in one step (a temporary file renamed over it), so that a
    process reading the inventory meanwhile (`reclass-ng watch`) sees the old or the new file,
    never a truncated one."""
    temporary = path.with_name(f".{path.name}.tmp")  # not a .yml: no loader lists it
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
