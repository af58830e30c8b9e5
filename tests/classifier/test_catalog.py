"""The class catalogue: syncing from real Puppet code (`reclass-ng classes sync`), the
hand-declared file, the referent checks of `reclass-ng groups validate`, and `deleted`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from classifier_helpers import group_data, make_group, run_cli, write_inventory

from reclass_ng.classifier import ROOT_GROUP_ID, GroupTree
from reclass_ng.classifier.catalog import ClassCatalog, PuppetClass, load_catalog
from reclass_ng.classifier.class_sync import AIO_RUBY
from reclass_ng.classifier.referents import deleted_annotation, referent_problems

ROOT = {"id": ROOT_GROUP_ID, "name": "All Nodes", "classes": {"base": {"owner": "ops"}}}
WEB = group_data("Web", classes={"apache": {"keepalive_timeout": 5}})
APACHE = """\
class apache (
  String $serveradmin,
  Integer $keepalive_timeout = 15,
  Array[String] $mods = ['ssl', 'rewrite'],
  Optional[String] $docroot = undef,
  String $logdir = "/var/log/${facts['os']['family']}",
) { }
"""


def module(code: Path, environment: str, name: str, manifest: str) -> None:
    path = code / "environments" / environment / "modules" / name / "manifests" / "init.pp"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    if shutil.which("puppet") is None and not os.access(AIO_RUBY, os.X_OK):
        pytest.fail("puppet is not installed; `make test` installs it "
                    "(scripts/install-test-tools.sh)")
    code = tmp_path / "code"
    module(code, "production", "apache", APACHE)
    module(code, "production", "base", "class base (String $owner) { }\n"
                                       "class base::users ($admins = []) { }\n")
    sub = code / "environments" / "production" / "modules" / "base" / "manifests" / "sub"
    sub.mkdir()
    (sub / "deep.pp").write_text("class base::sub::deep { }\n")
    (code / "environments" / "empty").mkdir(parents=True)
    return code


def test_sync_reads_classes_with_puppets_parser(tmp_path: Path, code: Path) -> None:
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT, "web.yml": WEB})
    done = run_cli("classes", "sync", "-b", str(inventory), "--code-dir", str(code))
    assert done.returncode == 0, done.stderr
    assert "production: 4 classes" in done.stdout and "empty: 0 classes" in done.stdout
    catalog = load_catalog(inventory)
    assert catalog is not None
    assert catalog.environments() == ["empty", "production"]
    assert catalog.get("production", "apache").parameters == {
        "serveradmin": None, "keepalive_timeout": 15, "mods": ["ssl", "rewrite"],
        "docroot": "undef", "logdir": "\"/var/log/${facts['os']['family']}\""}
    assert sorted(catalog.classes("production")) == [
        "apache", "base", "base::sub::deep", "base::users"]
    listed = run_cli("classes", "list", "-b", str(inventory), "-e", "production", "-o", "json")
    assert json.loads(listed.stdout)[0] == {
        "name": "apache", "environment": "production",
        "parameters": catalog.get("production", "apache").parameters}
    # WEB sets apache but not its required serveradmin.
    validated = run_cli("groups", "validate", "-b", str(inventory), "-o", "json")
    assert validated.returncode == 65
    problems = json.loads(validated.stdout)
    assert [p["kind"] for p in problems] == ["unspecified-parameters"]
    assert problems[0]["details"] == [{
        "kind": "unspecified-parameters", "group": "Web", "environment": "production",
        "class": "apache", "unspecified": ["serveradmin"], "defined_by": "Web"}]


def test_hand_declared_classes_survive_a_sync(tmp_path: Path, code: Path) -> None:
    web = group_data("Web", classes={"apache": {"serveradmin": "a@b", "keepalive_timeout": 5},
                                     "haproxy": {"port": 80}})
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT, "web.yml": web})
    validated = run_cli("groups", "validate", "-b", str(inventory))
    assert validated.returncode == 0, validated.stderr  # no catalogue: nothing to check
    assert run_cli("classes", "sync", "-b", str(inventory), "--code-dir",
                   str(code)).returncode == 0
    validated = run_cli("groups", "validate", "-b", str(inventory))
    assert validated.returncode == 65
    assert "missing-referents" in validated.stderr and "'haproxy'" in validated.stderr
    manual = inventory / "puppet-classes.yml"
    manual.write_text("production:\n  haproxy: {port: 8080}\n")
    assert run_cli("groups", "validate", "-b", str(inventory)).returncode == 0
    assert run_cli("classes", "sync", "-b", str(inventory), "--code-dir",
                   str(code)).returncode == 0
    assert manual.read_text() == "production:\n  haproxy: {port: 8080}\n"
    assert run_cli("groups", "validate", "-b", str(inventory)).returncode == 0


def test_a_file_puppet_cannot_parse(tmp_path: Path, code: Path) -> None:
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT})
    assert run_cli("classes", "sync", "-b", str(inventory), "--code-dir",
                   str(code)).returncode == 0
    module(code, "production", "apache", "class apache ( $a = ) {\n")
    done = run_cli("classes", "sync", "-b", str(inventory), "--code-dir", str(code))
    assert done.returncode == 65
    assert "apache/manifests/init.pp" in done.stderr and "Syntax error" in done.stderr
    assert "keep the classes of the previous sync: production" in done.stderr
    assert load_catalog(inventory).get("production", "apache") is not None
    manifest = code / "environments" / "production" / "modules" / "apache" / "manifests"
    assert ("environments/production/modules/apache/manifests/init.pp:1:21: Syntax error at "
            "')' (environment production)") in done.stderr.splitlines()
    as_json = run_cli("classes", "sync", "-b", str(inventory), "--code-dir", str(code),
                      "--errors", "json")
    document = json.loads(as_json.stderr)
    [record] = document["errors"]
    assert (as_json.returncode, document["exit_code"]) == (65, 65)
    assert (record["file"], record["line"], record["column"], record["kind"]) == (
        str(manifest / "init.pp"), 1, 21, "puppet_parse_error")
    assert [w["message"] for w in document["warnings"]] == [
        "reclass-ng classes sync: environments with unparsable files keep the classes of the "
        "previous sync: production"]


def test_a_manifest_that_is_a_fifo(tmp_path: Path, code: Path) -> None:
    # Puppet's parser would wait on the FIFO for a writer until the sync's 300 s timeout.
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT})
    os.mkfifo(code / "environments" / "production" / "modules" / "base" / "manifests" / "x.pp")
    done = run_cli("classes", "sync", "-b", str(inventory), "--code-dir", str(code))  # 60 s
    assert done.returncode == 65, done.stderr
    assert ("environments/production/modules/base/manifests/x.pp: not a regular file (a FIFO, "
            "device or socket); only regular files are read (environment production)"
            ) in done.stderr.splitlines(), done.stderr


def test_classes_list_of_a_missing_inventory(tmp_path: Path) -> None:
    done = run_cli("classes", "list", "-b", str(tmp_path / "missing"))
    assert (done.returncode, done.stdout) == (74, "")
    assert done.stderr.startswith(f"No such directory: {tmp_path / 'missing'} (the inventory")


def test_without_puppet_the_message_says_so(tmp_path: Path) -> None:
    if os.access(AIO_RUBY, os.X_OK):
        pytest.skip(f"{AIO_RUBY} exists, so Puppet cannot be hidden from the command")
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT})
    (tmp_path / "code" / "environments").mkdir(parents=True)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", "classes", "sync",
                           "-b", str(inventory), "--code-dir", str(tmp_path / "code")],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 74
    assert "Puppet is not installed" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (inventory / "puppet-classes.synced.yml").exists()


def test_a_broken_catalogue_file_is_reported(tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT})
    (inventory / "puppet-classes.yml").write_text("production:\n  apache: [not, params]\n")
    done = run_cli("groups", "validate", "-b", str(inventory))
    assert done.returncode == 65
    assert "puppet-classes.yml: production.apache" in done.stderr


CATALOG = ClassCatalog({"production": {
    "base": PuppetClass("base", "production", {"owner": None}),
    "apache": PuppetClass("apache", "production", {"serveradmin": None, "port": 80}),
}})


def test_inherited_values_and_nulls() -> None:
    root = make_group("All Nodes", None, id=ROOT_GROUP_ID, classes={"base": {"owner": "ops"}})
    web = make_group("Web", classes={"apache": {"serveradmin": "x", "listen": 1}})
    child = make_group("Child", web.id, classes={"apache": {"listen": None}, "base": None})
    staging = make_group("Elsewhere", classes={"nothing": {}}, environment="staging")
    tree = GroupTree.build([root, web, child, staging])
    problems = referent_problems(tree, CATALOG)
    assert [(p.group_name, p.kind) for p in problems] == [("Web", "missing-referents")]
    assert problems[0].details == [{"kind": "missing-parameter", "missing": ["apache", "listen"],
                                    "environment": "production", "group": "Web",
                                    "defined_by": "Web"}]
    assert referent_problems(tree, None) == []
    assert deleted_annotation(web, CATALOG) == {"apache": {
        "puppetlabs.classifier/deleted": False,
        "listen": {"puppetlabs.classifier/deleted": True, "value": 1}}}
    assert deleted_annotation(root, CATALOG) is None
    assert deleted_annotation(staging, CATALOG) is None  # staging has no catalogue


def test_synced_file_is_plain_yaml(tmp_path: Path, code: Path) -> None:
    inventory = write_inventory(tmp_path / "inv", groups={"all.yml": ROOT})
    assert run_cli("classes", "sync", "-b", str(inventory), "--code-dir",
                   str(code)).returncode == 0
    data = yaml.safe_load((inventory / "puppet-classes.synced.yml").read_text())
    assert data["code_dir"] == str(code.resolve())
    assert data["environments"]["production"]["base"] == {"owner": None}
    assert data["errors"] == {}
