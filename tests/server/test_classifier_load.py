"""bench/classifier_load.py runs end to end with tiny counts, so the load test cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "classifier_load.py"
sys.path.insert(0, str(SCRIPT.parent))

import classifier_load  # noqa: E402


def test_load_script_reports_classifications_per_second() -> None:
    # --max-seconds only stops a run that hangs: every request must be answered (the counts
    # below), however long a busy machine makes the ~70 requests take.
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--groups", "12", "--nodes", "30", "--requests", "40",
         "--clients", "2", "--max-seconds", "300", "--json"],
        capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["groups"] == 12 and report["nodes_stored"] == 30
    assert report["classifications"] == 40
    assert report["classifications_per_second"] > 0
    assert 0 < report["p50_ms"] <= report["p99_ms"]


def test_generated_groups_form_a_tree_without_conflicts() -> None:
    groups = classifier_load.build_groups(100)
    assert len(groups) == 100 and len({g["id"] for g in groups}) == 100
    ids = {g["id"] for g in groups}
    assert all(g.get("parent", classifier_load.ROOT_ID) in ids for g in groups)
    # Every group sets only its own class and variables, so no node can get a conflict.
    owned = [name for g in groups for name in [*g.get("classes", {}), *g.get("variables", {})]]
    assert len(owned) == len(set(owned))
    # The facts spread nodes over several groups each.
    facts = classifier_load.node_facts(5, data_centres=9)
    assert len(classifier_load.expected_groups(groups, facts)) >= 3
