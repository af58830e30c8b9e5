"""The generated inventory as a set of files, and writing it to disk atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from yaml_emit import dump

# A file left in every generated inventory, so the generator knows which
# directories it may replace and the runner knows how a directory was made.
MARKER = "bench-inventory.json"


class InventoryFiles:
    """Node and class documents of one inventory, keyed by name, written out on demand."""

    def __init__(self, nodes_dir: str = "nodes", classes_dir: str = "classes") -> None:
        self.nodes_dir = nodes_dir
        self.classes_dir = classes_dir
        self.classes: dict[str, dict] = {}
        self.nodes: dict[str, tuple[str, dict]] = {}
        self.extra_files: dict[str, str] = {}

    def add_class(self, name: str, document: dict) -> None:
        """Register a class; its file path is decided when writing (``init.yml`` for prefixes)."""
        if name in self.classes:
            raise ValueError(f"class {name} generated twice")
        self.classes[name] = document

    def add_node(self, name: str, document: dict, subdir: str = "") -> None:
        """Register a node file, optionally in a sub-directory of the nodes directory."""
        if name in self.nodes:
            raise ValueError(f"node {name} generated twice")
        self.nodes[name] = (subdir, document)

    def class_paths(self) -> dict[str, str]:
        """Relative file path of every class.

        A class whose name is the prefix of other class names lives in the
        directory of those classes as ``init.yml``, as in MCP and Kapitan models.
        """
        prefixes = set()
        for name in self.classes:
            parts = name.split(".")
            for end in range(1, len(parts)):
                prefixes.add(".".join(parts[:end]))
        paths = {}
        for name in self.classes:
            base = name.replace(".", "/")
            tail = "/init.yml" if name in prefixes else ".yml"
            paths[name] = f"{self.classes_dir}/{base}{tail}"
        return paths

    def rendered(self) -> dict[str, str]:
        """Every file of the inventory: relative path -> text, in a stable order."""
        files: dict[str, str] = {}
        for name, path in sorted(self.class_paths().items()):
            files[path] = dump(self.classes[name])
        for name in sorted(self.nodes):
            subdir, document = self.nodes[name]
            folder = f"{self.nodes_dir}/{subdir}" if subdir else self.nodes_dir
            files[f"{folder}/{name}.yml"] = dump(document)
        files.update(sorted(self.extra_files.items()))
        return files


def write_inventory(files: dict[str, str], metadata: dict, out: Path) -> None:
    """Write ``files`` under ``out``, replacing a previously generated inventory there.

    The tree is built in a sibling temporary directory and moved into place, so
    a reader never sees a half-written inventory. A non-empty directory that
    was not made by the generator is never touched.
    """
    out = out.resolve()
    if out.exists():
        if not out.is_dir():
            raise FileExistsError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise FileExistsError(
                f"{out} is not empty and was not made by bench/generate.py; "
                "choose another --out directory"
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for relative, text in files.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        marker = json.dumps(metadata, indent=2, sort_keys=True) + "\n"
        (staging / MARKER).write_text(marker, encoding="utf-8")
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, retired / "tree")
            os.replace(staging, out)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
