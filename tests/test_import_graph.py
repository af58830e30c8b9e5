"""The package's import graph (scripts/import_graph.py, issue 28): its import cycles and
upward arrows may shrink, never grow, and the package root stays a short list of stages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "import_graph.py"

# What is left (scripts/import_graph.py -v lists them): no cycles; the upward arrows are the
# explorer's uses of the classifier and values -> syntax.ast. Lower these when a change removes one.
MAX_FILE_CYCLES = 0
MAX_PACKAGE_CYCLES = 0
MAX_UPWARD_ARROWS = 13
MAX_ROOT_MODULES = 19


def measure(root: Path) -> dict:
    result = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--json"],
                            capture_output=True, text=True, timeout=120, check=True)
    return json.loads(result.stdout)


def test_cycles_and_upward_arrows_do_not_grow():
    found = measure(REPO)
    assert len(found["file_cycles"]) <= MAX_FILE_CYCLES, found["file_cycles"]
    assert len(found["package_cycles"]) <= MAX_PACKAGE_CYCLES, found["package_cycles"]
    assert len(found["upward"]) <= MAX_UPWARD_ARROWS, found["upward"]
    assert found["engine_to_tools"] == []


def test_the_root_holds_stages_not_their_fast_paths():
    root = measure(REPO)["root_modules"]
    assert len(root) <= MAX_ROOT_MODULES, root
    assert [name for name in root
            if name.startswith(("resolve_", "output_", "provenance_"))] == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"__init__.py": "", **files}.items():
        path = tmp_path / "reclass_ng" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_cycle_through_a_deferred_import_counts_and_a_type_only_import_does_not(tmp_path):
    root = _package(tmp_path, {
        "values.py": "from reclass_ng.merge import Merger\n",
        "merge.py": "def fold():\n    from reclass_ng import values\n",
        "render.py": "TYPE_CHECKING = False\nif TYPE_CHECKING:\n"
                     "    from reclass_ng.api import Inventory\n",
        "api.py": "from reclass_ng.render import InventoryRenderer\n"})
    found = measure(root)
    assert found["file_cycles"] == [["reclass_ng.merge", "reclass_ng.values"]]
    assert found["package_cycles"] == [["merge", "values"]]
    assert found["upward"] == ["reclass_ng.values -> reclass_ng.merge"]


def test_an_engine_import_of_the_command_line_is_upward(tmp_path):
    root = _package(tmp_path, {
        "cli/__init__.py": "", "cli/yaml_import.py": "",
        "storage/__init__.py": "", "storage/yaml_full.py": "from ..cli import yaml_import\n"})
    found = measure(root)
    assert found["engine_to_tools"] == ["reclass_ng.storage.yaml_full -> reclass_ng.cli.yaml_import"]
