"""Tests of the benchmark inventory generator (bench/generate.py) and runner helpers.

The generator is driven through its command line, and the files it writes are
parsed independently with PyYAML. The last test renders a generated inventory
with kapicorp-reclass and reclass-rs from the bench's peers virtualenv (bench/.peers, which
`make tools` and bench/run.py create); without it the test is skipped, and fails in CI.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from missing_tools import INSTALL_HINT, missing_tool

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

from compare import compare_outputs  # noqa: E402
from inventory_stats import expand_classes, inventory_stats, read_inventory  # noqa: E402
from measure import run_measured  # noqa: E402
from rst import markdown_to_rst, update_document  # noqa: E402
from yaml_emit import dump, needs_quotes  # noqa: E402

PEERS_PYTHON = BENCH / ".peers" / "venv" / "bin" / "python"


def generate(out: Path, shape: str = "mcp", nodes: int = 60, seed: int = 1,
             queries: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, str(BENCH / "generate.py"), "--shape", shape, "--nodes", str(nodes),
               "--seed", str(seed), "--out", str(out)] + (["--queries"] if queries else [])
    return subprocess.run(command, capture_output=True, text=True, check=False)


def file_tree(base: Path) -> dict[str, bytes]:
    files = sorted(p for p in base.rglob("*") if p.is_file())
    return {str(p.relative_to(base)): p.read_bytes() for p in files}


def parsed(base: Path, nodes_dir: str = "nodes") -> tuple[dict, dict]:
    return read_inventory(base, yaml.safe_load, nodes_dir=nodes_dir)


def strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.fixture(scope="module")
def mcp(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "mcp"
    result = generate(out, "mcp", 150, seed=7)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def kapitan(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "kapitan"
    result = generate(out, "kapitan", 60, seed=7)
    assert result.returncode == 0, result.stderr
    return out


def test_same_seed_gives_identical_bytes_and_another_seed_does_not(tmp_path):
    for name in ("a", "b"):
        assert generate(tmp_path / name, nodes=40, seed=3).returncode == 0
    assert generate(tmp_path / "c", nodes=40, seed=4).returncode == 0
    first, second, other = (file_tree(tmp_path / n) for n in ("a", "b", "c"))
    assert first == second
    assert len(first) > 700
    assert first != other


def test_regenerating_into_the_same_directory_replaces_it(tmp_path):
    out = tmp_path / "inv"
    assert generate(out, nodes=40, seed=3).returncode == 0
    before = file_tree(out)
    assert generate(out, nodes=20, seed=3).returncode == 0
    after = file_tree(out)
    assert len([p for p in after if p.startswith("nodes/")]) == 20
    assert len([p for p in before if p.startswith("nodes/")]) == 40


def test_refuses_to_overwrite_a_directory_it_did_not_make(tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = generate(out, nodes=10)
    assert result.returncode == 1
    assert "was not made by bench/generate.py" in result.stderr
    assert "Traceback" not in result.stderr
    assert (out / "notes.txt").read_text() == "keep me"


def test_mcp_shape_has_the_documented_proportions(mcp):
    classes, nodes = parsed(mcp)
    library = [c for c in classes if c.startswith(("service.", "system."))]
    assert 650 <= len(library) <= 850
    stats = inventory_stats(classes, nodes)
    assert stats["nodes"] == 150
    assert 40 <= stats["classes_per_node"]["min"] <= stats["classes_per_node"]["max"] <= 75
    assert stats["max_include_depth"] == 6
    assert 0.28 <= stats["reference_share"] <= 0.40
    # The files say what the generator meant: its own stats match the parsed files.
    metadata = json.loads((mcp / "bench-inventory.json").read_text())
    assert metadata["stats"] == stats
    # Clusters of 10-50 nodes, in nodes/<cluster>/.
    sizes = [len(list(d.glob("*.yml"))) for d in (mcp / "nodes").iterdir()]
    assert all(10 <= size <= 50 for size in sizes) and sum(sizes) == 150
    texts = [s for doc in classes.values() for s in strings(doc.get("parameters"))]
    assert sum("${_param:" in s for s in texts) > 1000


def test_mcp_uses_list_merges_overrides_applications_and_relative_names(mcp):
    classes, nodes = parsed(mcp)
    raw = "".join(p.read_text() for p in (mcp / "classes").rglob("*.yml"))
    assert "~tuning:" in raw
    assert any(".common" in (doc.get("classes") or []) for doc in classes.values())
    assert sum(bool(doc.get("applications")) for doc in classes.values()) > 200
    node = next(iter(nodes.values()))
    merged = expand_classes(node, classes)
    lists = [classes[c]["parameters"]["monitoring"]["checks"] for c in merged
             if "monitoring" in (classes[c].get("parameters") or {})]
    assert len(lists) > 3   # several classes append to the same list


def test_kapitan_shape_has_fewer_larger_classes_and_fewer_references(kapitan, mcp):
    config = yaml.safe_load((kapitan / "reclass-config.yml").read_text())
    assert config["nodes_uri"] == "targets"
    assert (kapitan / "kapicorp-reclass-config.yml").read_text() == \
        (kapitan / "reclass-config.yml").read_text()
    classes, nodes = parsed(kapitan, nodes_dir="targets")
    stats = inventory_stats(classes, nodes)
    mcp_stats = inventory_stats(*parsed(mcp))
    assert stats["nodes"] == 60
    assert 100 <= stats["classes"] <= 200
    leaves_per_class = stats["leaf_values"] / stats["classes"]
    assert leaves_per_class > 2 * mcp_stats["leaf_values"] / mcp_stats["classes"]
    assert 0.05 <= stats["reference_share"] < mcp_stats["reference_share"]
    assert classes["common"]["parameters"]["kapitan"]["vars"]["target"] == "${target_name}"
    assert all(node["parameters"]["target_name"] == name for name, node in nodes.items())
    assert any(len(classes[c]["parameters"]["kapitan"]["compile"]) == 1
               for c in classes if c.startswith("components.") and c.count(".") == 1)


@pytest.mark.parametrize("shape", ["mcp", "kapitan"])
def test_queries_option_adds_exports_and_all_three_query_forms(tmp_path, shape):
    out = tmp_path / shape
    assert generate(out, shape, 90, queries=True).returncode == 0
    nodes_dir = "targets" if shape == "kapitan" else "nodes"
    classes, nodes = parsed(out, nodes_dir)
    for node in nodes.values():
        merged = expand_classes(node, classes)
        assert any(classes[c].get("exports") for c in merged)
    queries = [s for n in nodes.values() for s in strings(n["parameters"]) if "$[" in s]
    querying = [n for n in nodes.values() if any("$[" in s for s in strings(n["parameters"]))]
    assert 0.2 <= len(querying) / len(nodes) <= 0.47
    assert any(re.fullmatch(r"\$\[ exports:\S+ \]", q) for q in queries)          # value
    assert any(re.fullmatch(r"\$\[ exports:\S+ if .+\]", q) for q in queries)     # value-if
    assert any(q.startswith("$[ if ") for q in queries)                           # list-if


def test_without_queries_there_are_no_exports_and_only_portable_features(mcp, kapitan):
    for base, nodes_dir in ((mcp, "nodes"), (kapitan, "targets")):
        classes, nodes = parsed(base, nodes_dir)
        assert not (base / "classes" / "init.yml").exists()
        for name, node in nodes.items():
            assert "." not in name   # reclass-rs computes _reclass_ name parts differently
            assert not any(c.startswith(".") for c in node.get("classes") or [])
        for document in [*classes.values(), *nodes.values()]:
            assert not document.get("exports")
            assert not any("${" in c for c in document.get("classes") or [])
            for text in strings(document.get("parameters")):
                assert "$[" not in text
                for reference in re.findall(r"\$\{([^}]*)\}", text):
                    # no list-index references, no nesting
                    assert not any(p.isdigit() for p in reference.split(":")), text
                    assert "${" not in reference


@pytest.mark.parametrize("text", ["yes", "No", "ON", "010", "0o10", "0x1F", "1:20", "1e3", "1_000",
                                  ".inf", ".NaN", ".5", "2020-01-01", "~", "null", "", " padded", "a: b",
                                  "x #y", "10.0.0.1", "-1", "=", "<<", "@home", "*star"])
def test_ambiguous_strings_are_quoted_and_read_back_unchanged(text):
    assert needs_quotes(text)
    assert yaml.safe_load(dump({"k": text, "l": [text]})) == {"k": text, "l": [text]}


def test_plain_strings_with_references_and_queries_stay_readable():
    document = {"a": "${_param:x}", "b": "http://${h}:${p}/v2", "c": "~app", "r": ".common",
                "q": "$[ exports:n:address if exports:n:cluster == self:_param:cluster ]",
                "nested": {"list": [{"k": 1, "v": True}, [], {}], "f": 0.5, "n": None}}
    for key in ("a", "b", "c", "q", "r"):
        assert not needs_quotes(document[key])
    assert yaml.safe_load(dump(document)) == document


def test_compare_reports_first_differing_paths_and_ignores_timestamps_and_order():
    base = {"__reclass__": {"timestamp": "t1"},
            "nodes": {"n1": {"__reclass__": {"node": "n1", "timestamp": "t1"},
                             "parameters": {"a": [1, 2], "b": {"c": "x"}}}},
            "classes": {"c1": ["n2", "n1"]}, "applications": {}}
    same = json.loads(json.dumps(base))
    same["__reclass__"]["timestamp"] = "t2"
    same["nodes"]["n1"]["__reclass__"]["timestamp"] = "t2"
    same["classes"]["c1"] = ["n1", "n2"]
    assert compare_outputs(base, same) == ([], [])
    other = json.loads(json.dumps(same))
    other["nodes"]["n1"]["parameters"]["b"]["c"] = "y"
    shown, nodes = compare_outputs(base, other)
    assert nodes == ["n1"]
    assert shown == ['nodes:n1:parameters:b:c: "x" != "y"']


def test_compare_treats_list_query_results_as_sets_and_nothing_else():
    def inventory(peers: list, other: list) -> dict:
        params = {"peers": {"same_role": peers}, "other": other}
        return {"nodes": {"n1": {"__reclass__": {}, "parameters": params}},
                "classes": {}, "applications": {}}

    # kapicorp-reclass lists query results in directory order, others sort them
    assert compare_outputs(inventory(["b", "a"], [1, 2]), inventory(["a", "b"], [1, 2])) == ([], [])
    shown, _ = compare_outputs(inventory(["a"], [1, 2]), inventory(["a"], [2, 1]))
    assert shown and shown[0].startswith("nodes:n1:parameters:other:0")


def test_run_measured_times_a_process_and_reads_its_peak_memory(tmp_path):
    grow = "x = bytearray(60 * 1024 * 1024); import time; time.sleep(0.2)"
    sample = run_measured([sys.executable, "-c", grow], cwd=tmp_path)
    assert sample.ok and sample.seconds >= 0.2
    assert sample.max_rss_mb >= 60
    failed = run_measured([sys.executable, "-c", "import sys; sys.exit(3)"], cwd=tmp_path)
    assert failed.returncode == 3 and not failed.ok


def test_peak_memory_does_not_include_the_measuring_process(tmp_path):
    # Linux carries a process's RSS high-water mark over into the program it
    # execs, so a command forked directly from a big runner would look big.
    ballast = bytearray(300 * 1024 * 1024)
    ballast[:: 4096] = b"\x01" * len(ballast[:: 4096])
    sample = run_measured([sys.executable, "-c", "pass"], cwd=tmp_path)
    assert sample.ok and sample.max_rss_mb < 100
    del ballast


REPORT = """## Results

Run of today.

### mcp, 100 nodes

| implementation | full render | `--nodeinfo` |
|---|---:|---:|
| reclass-ng CLI | 2.11 s | |

- **MISMATCH** reclass-ng CLI vs kapicorp: 1 node(s) differ; first differences:
  - `nodes:n1:parameters:a: 1 != 2`
- reclass-rs: output identical
"""


def test_report_becomes_restructuredtext_in_the_results_section(tmp_path):
    rst = markdown_to_rst(REPORT)
    assert "## Results" not in rst and "Results\n" not in rst
    assert "mcp, 100 nodes\n--------------\n" in rst
    assert ".. list-table::\n   :header-rows: 1\n\n   * - implementation\n" in rst
    assert "     - ``--nodeinfo``\n" in rst
    # a nested list needs blank lines around it in reStructuredText
    assert "differences:\n\n  - ``nodes:n1:parameters:a: 1 != 2``\n\n- reclass-rs" in rst
    document = tmp_path / "performance.rst"
    document.write_text("Title\n=====\n\n.. results-start\n\nold\n\n.. results-end\n\nafter\n")
    update_document(document, rst)
    text = document.read_text()
    assert "old" not in text and "mcp, 100 nodes" in text and text.endswith("after\n")
    document.write_text("no markers\n")
    with pytest.raises(ValueError, match="results-start"):
        update_document(document, rst)


@pytest.mark.parametrize("shape", ["mcp", "kapitan"])
def test_kapicorp_reclass_and_reclass_rs_render_generated_inventories_identically(tmp_path, shape):
    """The bench compares implementations on generated inventories: the two peers must agree on
    them, or a difference the bench reports could be the generator's fault, not reclass-ng's."""
    if not PEERS_PYTHON.exists():
        missing_tool(f"{PEERS_PYTHON} (kapicorp-reclass and reclass-rs) is not installed; "
                     f"{INSTALL_HINT}, as does bench/run.py")
    out = tmp_path / shape
    assert generate(out, shape, 12, seed=5).returncode == 0
    kapicorp = subprocess.run([str(PEERS_PYTHON.parent / "reclass"), "-b", str(out), "--inventory",
                               "-o", "json"], cwd=out, capture_output=True, text=True, check=False)
    assert kapicorp.returncode == 0, kapicorp.stderr
    rs_output = tmp_path / "rs.json"
    rs = subprocess.run([str(PEERS_PYTHON), str(BENCH / "render_api.py"), "--impl", "reclass-rs",
                         "--inventory", str(out), "--output", str(rs_output)],
                        capture_output=True, text=True, check=False)
    assert rs.returncode == 0, rs.stderr
    shown, _nodes = compare_outputs(json.loads(kapicorp.stdout), json.loads(rs_output.read_text()))
    assert shown == []


KAPICORP_RECLASS = ROOT / ".venv" / "kapicorp-reclass" / "bin" / "reclass"


def test_real_values_shape_has_real_inventory_values_and_renders_as_kapicorp_does(tmp_path):
    """The mcp-real shape holds what real inventories hold (long prose, multi-line
    certificates and scripts, unicode, quoted numbers, anchors and merge keys); kapicorp-reclass
    and reclass-ng print the same YAML for it, and reclass-ng's YAML writer writes every value
    itself (bench/fast_path_audit.py: no scalar nor node left to PyYAML)."""
    if not KAPICORP_RECLASS.exists():
        pytest.fail(f"kapicorp-reclass 2.0.0 is not installed at {KAPICORP_RECLASS}: run "
                    "`make tools`")
    out = tmp_path / "mcp-real"
    assert generate(out, "mcp-real", 30, seed=3).returncode == 0
    texts = [path.read_text(encoding="utf-8") for path in (out / "classes").rglob("*.yml")]
    real = [text for text in texts if "certificate: |" in text]
    assert real and any("<<: *defaults_" in text for text in real)
    assert any("東京" in text or "Zürich" in text for text in real)
    outputs = []
    for command in ([str(KAPICORP_RECLASS)], [sys.executable, "-m", "reclass_ng.cli.reclass"]):
        done = subprocess.run([*command, "-b", str(out), "--inventory"], cwd=out, timeout=600,
                              capture_output=True, text=True, check=False,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(yaml.safe_load(done.stdout))
    shown, _nodes = compare_outputs(outputs[0], outputs[1])
    assert shown == []
    some_node = next(iter(outputs[1]["nodes"].values()))["parameters"]
    values = [value for key, value in some_node.items() if key.startswith("real_")]
    assert values and "\n" in values[0]["certificate"] and len(values[0]["description"]) > 80
    audit = subprocess.run([sys.executable, str(BENCH / "fast_path_audit.py"), str(out)],
                           capture_output=True, text=True, timeout=600, check=False)
    assert audit.returncode == 0, audit.stderr[-2000:]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip()
            for line in audit.stdout.splitlines() if line.startswith("| YAML writer")}
    assert rows == {"YAML writer (whole nodes)": "30 / 0 (0%)",
                    "YAML writer (scalars)": "30 / 0 (0%)"}
