"""`reclass-ng lint`, `diff`, `validate` and `explain` with `--kapitan`: a Kapitan inventory
directory (`targets/`, `classes/`, no reclass-config.yml needed) read as Kapitan's reclass backend
reads it, as `affected --kapitan` and the Kapitan backend read it (doc/kapitan.rst)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_reclass_ng, write_inventory


def kapitan_inventory(root: Path, files: dict[str, str]) -> Path:
    """`files` below `root`, and no other directory (write_inventory always makes nodes/)."""
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    return root

# A class writes a mapping that the target sets to null: Kapitan's defaults allow that
# (allow_none_override), reclass's do not.
KAPITAN_INVENTORY = {
    "classes/common.yml": ("parameters:\n  app:\n    settings:\n      port: 80\n"
                           "    name: web\n    name: api\n"),
    "classes/component.yml": "classes: [common]\nparameters:\n  app:\n    replicas: 2\n",
    "targets/dev.yml": "classes: [component]\nparameters:\n  app:\n    settings: ~\n",
    "targets/prod.yml": "classes: [component]\nparameters:\n  app:\n    replicas: 5\n",
}


reclass_ng = run_reclass_ng


def test_lint_reads_the_targets_with_kapitans_defaults(tmp_path: Path) -> None:
    base = kapitan_inventory(tmp_path / "inventory", KAPITAN_INVENTORY)
    proc = reclass_ng("lint", "--kapitan", "-b", str(base), "-o", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the duplicate key is an error
    findings = json.loads(proc.stdout)
    assert [(f["rule"], f["file"], f["line"]) for f in findings
            if f["severity"] == "error"] == [("duplicate-key", "classes/common.yml", 6)]
    assert not [f for f in findings if f["rule"] == "node-error"]  # null over a mapping
    proc = reclass_ng("lint", "--kapitan", "-b", str(base), cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == "1 error(s), 0 warning(s) in 4 files, 2 nodes rendered"

    # Without --kapitan the directory is a reclass inventory, which has no nodes/.
    proc = reclass_ng("lint", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 1
    assert "load-error: No such directory: " in proc.stdout and "nodes" in proc.stdout

    # The same files as a reclass inventory: reclass's defaults refuse the null override.
    plain = write_inventory(tmp_path / "plain", {
        name.replace("targets/", "nodes/"): text for name, text in KAPITAN_INVENTORY.items()})
    proc = reclass_ng("lint", "-b", str(plain), "-o", "json", cwd=tmp_path)
    assert [f["file"] for f in json.loads(proc.stdout) if f["rule"] == "node-error"] == \
        ["nodes/dev.yml"]


def test_lint_reads_a_kapitan_inventorys_reclass_config(tmp_path: Path) -> None:
    # reclass-config.yml over Kapitan's defaults: here the targets live elsewhere, taken from
    # the inventory directory, and the lint rules it disables are off.
    files = {name.replace("targets/", "envs/"): text
             for name, text in KAPITAN_INVENTORY.items()}
    files["reclass-config.yml"] = "nodes_uri: envs\nlint_disable: [duplicate-key]\n"
    base = kapitan_inventory(tmp_path / "inventory", files)
    proc = reclass_ng("lint", "--kapitan", "-b", str(base), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 error(s), 0 warning(s) in 4 files, 2 nodes rendered"


def test_diff_of_two_kapitan_inventories(tmp_path: Path) -> None:
    old = kapitan_inventory(tmp_path / "old", KAPITAN_INVENTORY)
    new = kapitan_inventory(tmp_path / "new", {
        **KAPITAN_INVENTORY,
        "classes/component.yml": "classes: [common]\nparameters:\n  app:\n    replicas: 3\n"})
    proc = reclass_ng("diff", "--kapitan", "-b", str(new), "--from-dir", str(old),
                      "-o", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert document["changed_files"] == {"classes/component.yml": "modified"}
    changes = {(node["node"], tuple(change["keys"]), json.dumps(change["old"]),
                json.dumps(change["new"]))
               for node in document["nodes"] for change in node["changes"]}
    assert changes == {("dev", ("parameters", "app", "replicas"), "2", "3")}


def test_validate_checks_the_targets(tmp_path: Path) -> None:
    base = kapitan_inventory(tmp_path / "inventory", {
        **KAPITAN_INVENTORY,
        "reclass-config.yml": "schemas:\n  app: schemas/app.json\n",
        "schemas/app.json": '{"type": "object", "properties": {"replicas": {"maximum": 4}}}\n'})
    proc = reclass_ng("validate", "--kapitan", "-b", str(base), "-o", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert document["nodes_checked"] == 2 and document["failed"] == {}
    [group] = document["groups"]
    assert group["nodes"] == ["prod"] and group["keys"] == ["app", "replicas"]


def test_explain_a_targets_value(tmp_path: Path) -> None:
    base = kapitan_inventory(tmp_path / "inventory", KAPITAN_INVENTORY)
    proc = reclass_ng("explain", "--kapitan", "-b", str(base), "prod", "app:replicas",
                      "-o", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["value"] == 5
    assert [(c["file"], c["line"], c["effect"]) for c in report["contributions"]] == \
        [("classes/component.yml", 4, "overridden"), ("targets/prod.yml", 4, "set")]
    proc = reclass_ng("explain", "-b", str(base), "prod", "app:replicas", cwd=tmp_path)
    assert proc.returncode != 0 and "No such directory" in proc.stderr  # no nodes/ without it


def test_the_api_opens_a_kapitan_inventory(tmp_path: Path) -> None:
    import reclass_ng

    base = kapitan_inventory(tmp_path / "inventory", KAPITAN_INVENTORY)
    inventory = reclass_ng.load(str(base), kapitan=True)
    assert sorted(inventory.node_names) == ["dev", "prod"]
    assert inventory.nodeinfo("dev")["parameters"]["app"]["settings"] is None
    # Keywords still win over Kapitan's defaults and the file.
    strict = reclass_ng.load(str(base), kapitan=True, allow_none_override=False)
    assert strict.settings.allow_none_override is False
