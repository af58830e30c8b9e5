"""Parameter schemas: `reclass-ng validate` (and the `schema` lint rule) over real inventories
with JSON Schema files attached by the `schemas` setting; bad schemas get a clear error naming
the schema file, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.schemas import check_node, load_schemas
from tests.conftest import VENV_BIN, run_reclass_ng, write_inventory

INVENTORY = {
    "reclass-config.yml": "schemas:\n  nginx: schemas/nginx.yml\n  '': schemas/node.json\n",
    "schemas/nginx.yml": ("type: object\nrequired: [workers]\nproperties:\n"
                          "  workers:\n    $ref: common/port.json\n  name: {type: string}\n"),
    "schemas/common/port.json": '{"type": "integer", "minimum": 1, "maximum": 65535}\n',
    "schemas/node.json": '{"type": "object", "required": ["nginx"]}\n',
    "classes/web.yml": "parameters:\n  nginx:\n    workers: sixteen\n",
    "nodes/ok.yml": "classes: [web]\nparameters:\n  nginx:\n    workers: 8\n",
    "nodes/bare.yml": "parameters:\n  nginx:\n    name: x\n",
    "nodes/none.yml": "parameters:\n  other: 1\n",
    **{f"nodes/web{i}.yml": "classes: [web]\n" for i in range(3)},
}


reclass_ng = run_reclass_ng


def test_violations_grouped_across_nodes_with_the_write_and_the_schema_place(
        tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", INVENTORY)
    proc = reclass_ng("validate", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        "3 nodes: nginx:workers is 'sixteen': 'sixteen' is not of type 'integer' (rule type at "
        "schemas/common/port.json#/type), written at classes/web.yml:3:5 [web0, web1, web2]",
        "1 node: (parameters): 'nginx' is a required property (rule required "
        "at schemas/node.json#/required) [none]",
        "1 node: nginx is {'name': 'x'}: 'workers' is a required property (rule required at "
        "schemas/nginx.yml#/required), written at nodes/bare.yml:2:3 [bare]",
        "5 violation(s) in 5 of 6 nodes checked, 0 failed to render",
    ]
    proc = reclass_ng("validate", "-b", str(base), "--node", "ok", "--node", "web1",
                      "-o", "json", cwd=tmp_path)
    document = json.loads(proc.stdout)
    [group] = document["groups"]
    assert group["nodes"] == ["web1"] and group["keys"] == ["nginx", "workers"]
    assert group["value"] == "sixteen" and group["rule"] == "type"
    assert document["nodes_checked"] == 2
    # Fixed: exit 0.
    (base / "classes/web.yml").write_text("parameters:\n  nginx:\n    workers: 16\n")
    proc = reclass_ng("validate", "-b", str(base), "--node", "web0", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("0 violation(s) in 0 of 1 nodes")


@pytest.mark.parametrize(("files", "message"), [
    ({"schemas/common/port.json": '{"type": 12}\n'},
     "schema file schemas/common/port.json: not a valid JSON Schema (draft 2020-12) at #/type"),
    ({"schemas/common/port.json": '{"type": \n'},
     "schema file schemas/common/port.json:2:1: not JSON"),
    ({"schemas/nginx.yml": "a: [\n"}, "schema file schemas/nginx.yml:2:1: not YAML"),
    ({"schemas/common/port.json": '{"$ref": "../absent.json"}\n'},
     "schema file schemas/common/port.json: $ref '../absent.json': no such file "
     "schemas/absent.json"),
    ({"schemas/common/port.json": '{"$ref": "#/$defs/nowhere"}\n'},
     "schema file schemas/common/port.json: $ref '#/$defs/nowhere' cannot be resolved"),
    ({"schemas/common/port.json": '{"$ref": "../nginx.yml#/properties/workers"}\n'},
     "schema file schemas/nginx.yml: $ref 'common/port.json' loops: its $refs lead back to "
     "schemas/common/port.json"),
    ({"schemas/nginx.yml": "a: &loop\n  b: *loop\n"},
     "schema file schemas/nginx.yml: the schema loops (a YAML alias inside itself)"),
    ({"reclass-config.yml": "schemas:\n  nginx: schemas/missing.yml\n"},
     "schema file schemas/missing.yml: cannot read it: No such file or directory"),
    ({"reclass-config.yml": "schemas: [schemas/nginx.yml]\n"},
     "schemas must map parameter paths to schema files"),
    ({"schemas/common/port.json": '{"$ref": "https://example.com/port.json"}\n'},
     "only local files are read, not https://example.com/port.json"),
])
def test_a_bad_schema_is_a_clear_error_naming_its_file(tmp_path: Path, files: dict[str, str],
                                                       message: str) -> None:
    base = write_inventory(tmp_path / "inv", {**INVENTORY, **files})
    proc = reclass_ng("validate", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 78, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr


def test_an_unreadable_schema_file(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", INVENTORY)
    os.mkfifo(base / "schemas/fifo.json")  # not a file to read: a FIFO would block a reader
    (base / "schemas/nginx.yml").unlink()
    (base / "schemas/nginx.yml").mkdir()
    proc = reclass_ng("validate", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 78 and "schema file schemas/nginx.yml: cannot read it" \
        in proc.stderr, proc.stderr


@pytest.mark.parametrize("make", [os.mkfifo, lambda p: os.symlink("/dev/zero", p)],
                         ids=["fifo", "dev-zero"])
def test_a_schema_file_that_is_not_a_regular_file(tmp_path: Path, make) -> None:
    # A FIFO would block `validate` for good waiting for a writer: refused before any read.
    base = write_inventory(tmp_path / "inv", INVENTORY)
    (base / "schemas/nginx.yml").unlink()
    make(base / "schemas/nginx.yml")
    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), "validate", "-b", str(base)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert proc.returncode == 78, proc.stdout + proc.stderr
    assert "schema file schemas/nginx.yml: cannot read it: not a regular file" in proc.stderr, \
        proc.stderr


def test_no_schemas_setting(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", {"nodes/a.yml": "parameters: {}\n"})
    proc = reclass_ng("validate", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 78 and "no `schemas` setting" in proc.stderr


def test_lint_reports_schema_violations_at_the_write(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", INVENTORY)
    proc = reclass_ng("lint", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert ("classes/web.yml:3: error schema: 3 nodes (web0, web1, web2): nginx:workers is "
            "'sixteen': 'sixteen' is not of type 'integer' (rule type at "
            "schemas/common/port.json#/type)") in proc.stdout.splitlines()
    assert "nodes/bare.yml:2: error schema: 1 node (bare): nginx is {'name': 'x'}: 'workers' " \
        "is a required property" in proc.stdout
    # A bad schema is one finding naming the schema file, and lint still runs the rest.
    (base / "schemas/common/port.json").write_text('{"type": 12}\n')
    proc = reclass_ng("lint", "-b", str(base), "-o", "json", cwd=tmp_path)
    [bad] = [f for f in json.loads(proc.stdout) if f["rule"] == "schema"]
    assert bad["file"] == "reclass-config.yml"
    assert bad["message"].startswith("schema file schemas/common/port.json: not a valid JSON "
                                     "Schema")
    proc = reclass_ng("lint", "-b", str(base), "--disable", "schema", cwd=tmp_path)
    assert "schema" not in proc.stdout


def test_without_jsonschema_the_error_says_how_to_install_it(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", INVENTORY)
    # The library made unimportable, as in an install without the `schemas` extra.
    script = ("import sys; sys.modules['jsonschema'] = None; "
              "from reclass_ng.cli.main import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([str(VENV_BIN / "python"), "-c", script, "validate", "-b", str(base)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode == 78 and "Traceback" not in proc.stderr, proc.stderr
    from reclass_ng.install import install_hint

    assert f"needs the jsonschema library (4.18 or later): {install_hint('schemas')}" \
        in proc.stderr


PATTERN_SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 2},
                   "port": {"$ref": "#/$defs/port"}},
    "patternProperties": {"_port$": {"$ref": "#/$defs/port"}, "^x": {"type": "boolean"},
                          "_(count|size)$": {"type": "integer", "maximum": 10}},
    "$defs": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
}
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 70000), st.sampled_from(
    ["", "a", "ab", "80", "x"]), st.floats(allow_nan=False, width=16))
parameter_trees = st.dictionaries(
    st.sampled_from(["name", "port", "a_port", "x", "xy_port", "b_count", "c_size", "other"]),
    st.one_of(scalars, st.lists(scalars, max_size=2)), max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(parameter_trees, min_size=1, max_size=6))
def test_the_fast_keywords_report_what_jsonschema_reports(trees: list[dict]) -> None:
    # The memo must give the same violations as jsonschema's own keywords, node after node
    # (what one node passed is remembered for the next).
    with tempfile.TemporaryDirectory() as scratch:
        base = write_inventory(Path(scratch), {
            "reclass-config.yml": "schemas:\n  app: app.json\n",
            "app.json": json.dumps(PATTERN_SCHEMA), "nodes/n.yml": "parameters: {}\n"})
        fast, reference = (load_schemas(str(base), fast=flag) for flag in (True, False))
        assert fast is not None and reference is not None
        for index, tree in enumerate(trees):
            seen = [sorted(json.dumps(v.as_dict(), sort_keys=True)
                           for v in check_node(schemas, f"n{index}", {"app": tree}, None,
                                               str(base)))
                    for schemas in (fast, reference)]
            assert seen[0] == seen[1], tree


def test_the_explorer_shows_a_nodes_violations(tmp_path: Path) -> None:
    import html
    import sys
    import urllib.request

    from server_process import UI_LISTENING, server_process

    base = write_inventory(tmp_path / "inv", INVENTORY)
    command = [sys.executable, "-m", "reclass_ng.cli.main", "ui", "-b", str(base),
               "--state-db", str(tmp_path / "state.sqlite3")]
    with server_process(command, tmp_path / "ui.log", listening=UI_LISTENING) as (_, url):
        def page(node: str) -> str:
            with urllib.request.urlopen(f"{url}/ui/nodes/{node}", timeout=60) as response:
                return response.read().decode()

        web = page("web1")
        assert "<h2>Schema: 1 violation</h2>" in web
        assert html.escape("'sixteen' is not of type 'integer'") + " (rule <code>type</code> " \
            "at schemas/common/port.json#/type)" in web
        assert "written at classes/web.yml:3:5" in web
        assert "The parameters pass every schema." in page("ok")
        (base / "schemas/common/port.json").write_text('{"type": 12}\n')
        assert "The parameter schemas cannot be read" in page("ok")
