"""`reclass --nodeinfo` imports only what it uses: every module costs milliseconds of a start."""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from inventory_writer import write_inventory

import reclass_ng

NOT_NEEDED = ("shutil", "lzma", "bz2", "difflib", "copy", "pyparsing", "concurrent.futures",
              "orjson", "subprocess", "tempfile", "argparse", "gettext", "locale", "typing",
              "contextlib", "threading", "json", "fnmatch", "shlex", "importlib", "warnings",
              "reclass_ng.queries", "reclass_ng.syntax.query", "reclass_ng.positions",
              "reclass_ng.storage.positions",
              # "did you mean": only after an error (resolver and class expansion import it then)
              "reclass_ng.suggestions",
              # the observer seam and what it records: only for an observed render
              "reclass_ng.observe", "reclass_ng.observe.seam", "reclass_ng.observe.walk_recording",
              # `${path::default}`: only with the setting reference_defaults
              "reclass_ng.syntax.defaults")
# Only needed for what PyYAML's patterns decide (a timestamp, `1e3`, `0x1f`, ...), class
# mappings and reference syntax beyond the plain case.
REGULAR_EXPRESSIONS = ("re", "enum")
# Only needed for a document storage.yaml_block declines, a YAML spelling PyYAML decides, or
# an error that needs PyYAML's types (storage/yaml_import.py).
PYYAML = ("yaml", "reclass_ng.storage.yaml_full", "datetime", "base64", "struct")

PROBE = """
import io, sys
from reclass_ng.cli.reclass import main
sys.stdout = out = io.StringIO()
status = main(sys.argv[1:])
sys.stdout = sys.__stdout__
assert status == 0 and "parameters" in out.getvalue(), out.getvalue()
print(" ".join(name for name in {names!r} if name in sys.modules))
print(out.getvalue(), end="")
"""


def _without_site_hooks() -> dict[str, str]:
    # `python -S` with this interpreter's packages on PYTHONPATH: an editable install's .pth
    # hook (and whatever else a virtualenv's site runs) imports contextlib and more before
    # reclass_ng does, which would hide those imports from the test.
    paths = [str(Path(reclass_ng.__file__).resolve().parents[1]), *site.getsitepackages()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _run(root: Path, names: tuple[str, ...], *args: str) -> tuple[list[str], str]:
    """(the modules of `names` that `reclass ARGS` imported, its output)."""
    result = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.format(names=names), "-b", str(root), *args],
        capture_output=True, text=True, cwd=root, check=True, env=_without_site_hooks())
    imported, _, output = result.stdout.partition("\n")
    return imported.split(), output


def _imported(root: Path, fmt: str, names: tuple[str, ...]) -> list[str]:
    return _run(root, names, "--nodeinfo", "n1", "-o", fmt)[0]


def test_nodeinfo_imports_nothing_it_does_not_use(tmp_path):
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2.5, e: 'on'}, yes, ~]\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    for fmt in ("yaml", "json"):
        assert _imported(root, fmt, NOT_NEEDED + REGULAR_EXPRESSIONS) == [], fmt


def test_nodeinfo_with_a_config_file_imports_no_regular_expressions(tmp_path):
    # A config file, the default ignore_class_notfound_regexp, PyYAML's import and its
    # dumper's checks of plain strings, floats and versions all go without `re`.
    root = write_inventory(tmp_path / "inv", {
        "reclass-config.yml": "ignore_class_notfound: false\npretty_print: true\n",
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 'no', e: '12'}, yes, ~]\n"
                            "  v: [1.2.3, 10.0.0.1, 0.5, '2.5']\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    for fmt in ("yaml", "json"):
        assert _imported(root, fmt, REGULAR_EXPRESSIONS) == [], fmt


def test_the_reclass_script_starts_without_regular_expressions(tmp_path):
    # bin/reclass, installed as `reclass` in place of a console-scripts launcher (older pips
    # write one that imports re): -X importtime lists every module the whole start imports.
    script = Path(__file__).resolve().parents[1] / "bin" / "reclass"
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2.5}, 1.2.3]\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    result = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(script), "-b", str(root), "--nodeinfo",
         "n1"], capture_output=True, text=True, cwd=root, check=True, env=_without_site_hooks())
    assert "parameters:" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert "reclass_ng.cli.reclass" in imported
    assert imported.isdisjoint(REGULAR_EXPRESSIONS), imported & set(REGULAR_EXPRESSIONS)


PLAIN_INVENTORY = {
    "classes/base.yml": "parameters:\n  a: ${b}\n  b:\n  - 1\n  - c: 2.5\n    e: 'on'\n"
                        "  - yes\n  - ~\n  l: [x, 'y z', \"10\"]\n  'q': ''\n",
    "classes/empty.yml": "# nothing yet\n",
    "nodes/n1.yml": "classes: [base, empty]\nparameters:\n  d: x\n  ntp: 0.pool.ntp.org\n",
    "nodes/n2.yml": "classes:\n- base\nparameters:\n  d: 2001\n"}


def test_json_output_of_plain_block_yaml_never_imports_pyyaml(tmp_path):
    # Every file is plain block YAML (storage.yaml_block reads it): no PyYAML, no datetime.
    root = write_inventory(tmp_path / "inv", PLAIN_INVENTORY)
    for args in (("--nodeinfo", "n1", "-o", "json"), ("--inventory", "-o", "json")):
        imported, output = _run(root, NOT_NEEDED + REGULAR_EXPRESSIONS + PYYAML, *args)
        assert imported == [], args
        nodes = json.loads(output)["nodes"] if "--inventory" in args else {"n1": json.loads(output)}
        parameters = nodes["n1"]["parameters"]
        parameters.pop("_reclass_")
        assert parameters == {
            "a": [1, {"c": 2.5, "e": "on"}, True, None], "b": [1, {"c": 2.5, "e": "on"}, True, None],
            "l": ["x", "y z", "10"], "q": "", "d": "x", "ntp": "0.pool.ntp.org"}, args
    assert json.loads(output)["nodes"]["n2"]["parameters"]["d"] == 2001


def test_what_the_block_reader_declines_imports_pyyaml_and_reads_the_same(tmp_path):
    # A flow mapping, an anchor with an alias and merge key, a tag: PyYAML reads the file, and
    # the values are those of the plain spelling of the same data.
    declined = write_inventory(tmp_path / "declined", {
        "classes/base.yml": "parameters:\n  m: {k: 1, l: [a, 'b c']}\n  x: &x\n    v: 1\n"
                            "  y:\n    <<: *x\n    w: 2\n  t: !!str 12\n",
        "nodes/n1.yml": "classes: [base]\n"})
    plain = write_inventory(tmp_path / "plain", {
        "classes/base.yml": "parameters:\n  m:\n    k: 1\n    l: [a, 'b c']\n  x:\n    v: 1\n"
                            "  y:\n    v: 1\n    w: 2\n  t: '12'\n",
        "nodes/n1.yml": "classes: [base]\n"})
    for args in (("--nodeinfo", "n1", "-o", "json"), ("--inventory", "-o", "json"),
                 ("--nodeinfo", "n1", "-o", "yaml")):
        imported, output = _run(declined, ("yaml",), *args)
        assert imported == ["yaml"], args
        plain_imported, plain_output = _run(plain, ("yaml",), *args)
        assert plain_imported == [] or "yaml" in args, args
        assert _comparable(output, declined) == _comparable(plain_output, plain), args


def _comparable(output: str, root: Path) -> str:
    # The inventory's path and the time of the run differ: nothing else may. The time is
    # spelt `timestamp: ...` in YAML and `"timestamp": "..."` in JSON; two runs straddling a
    # second boundary differ in it.
    return re.sub(r'timestamp"?: .*', "timestamp: T", output.replace(str(root), "ROOT"))


def test_yaml_output_quotes_strings_without_pyyaml(tmp_path):
    # The block writer knows libyaml's quoting (output/yaml_scalars.py): strings that read
    # as another type or hold `: ` need no PyYAML to be written.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  word: x\n  flag: 'on'\n  colon: 'a: b'\n"
                            "  number: '12'\n",
        "nodes/n1.yml": "classes: [base]\n"})
    imported, output = _run(root, ("yaml",), "--nodeinfo", "n1", "-o", "yaml")
    assert imported == []
    assert "  colon: 'a: b'\n  flag: 'on'\n  number: '12'\n  word: x\n" in output



# Prints, as the process ends (argparse's --version and --help exit from inside main), the
# packages of what the other subcommands run that were imported.
COMMAND_PROBE = """
import atexit, sys
def report():
    print(" ".join(sorted(set(name.split(".")[1] for name in sys.modules
                              if name.startswith("reclass_ng.")
                              and name.split(".")[1] in {packages!r}))))
atexit.register(report)
from reclass_ng.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_reclass_ng_command_imports_only_what_it_runs(tmp_path):
    # Every subcommand's module imports what it runs (the classifier, lint, diff, the server):
    # importing all of them to build the parser cost every command, `--version` included,
    # about 0.3 s of CPU before it started.
    packages = ("classifier", "lint", "diff", "server", "lsp", "explorer", "schemas")
    probe = COMMAND_PROBE.format(packages=packages)
    for args in (["--version"], ["tokens", "--help"], ["lint", "--help"]):
        result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                                text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        imported = result.stdout.splitlines()[-1].split()
        expected = {"lint", "schemas", "classifier"} if args[0] == "lint" else set()  # lint reads facts
        assert set(imported) <= expected, (args, imported)


REAL_SHAPES_INVENTORY = {
    # Real inventories' values (issue 29): options, hashes, port mappings, MAC addresses,
    # addresses with ports, octal modes, multi-line scripts and keys, empty strings; and one
    # file the block reader declines (a flow mapping), as every real model has: PyYAML reads it.
    "classes/base.yml": "parameters:\n  java_opts: -Xms512m -Xmx512m\n  args: [-c, --insecure]\n"
                        "  commit: 85543e49238903ac14b486321bd3d60fef09d9ef\n"
                        "  key: 58118E89F3A912897C070ADBF76221572C52609D\n  uptime: 24x7\n"
                        "  ports: [15000:5000, '1389:389']\n  mac: '52:54:00:00:01:01'\n"
                        "  api: 10.0.1.90:5000\n  mode: '0640'\n  version: 1.10.x\n"
                        "  script: |\n    set -e\n    echo '-----BEGIN'\n  empty: ''\n"
                        "  star: '*'\n",
    "classes/flow.yml": "parameters:\n  flow: {a: 1, b: -c}\n",
    "nodes/n1.yml": "classes: [base, flow]\nparameters:\n  d: fluentd_stop\n"}


def test_real_inventory_shapes_render_without_regular_expressions(tmp_path):
    # Each of these values used to be left to PyYAML's resolver, whose patterns need `re`
    # and `enum` (a sixth of a small whole `reclass --inventory`).
    import yaml

    root = write_inventory(tmp_path / "inv", REAL_SHAPES_INVENTORY)
    for fmt in ("yaml", "json"):
        imported, output = _run(root, REGULAR_EXPRESSIONS + ("yaml",), "--inventory", "-o", fmt)
        assert imported == ["yaml"], fmt  # PyYAML read the flow mapping, without `re`
        parameters = yaml.safe_load(output)["nodes"]["n1"]["parameters"]
        parameters.pop("_reclass_")
        assert parameters == {
            "java_opts": "-Xms512m -Xmx512m", "args": ["-c", "--insecure"],
            "commit": "85543e49238903ac14b486321bd3d60fef09d9ef",
            "key": "58118E89F3A912897C070ADBF76221572C52609D", "uptime": "24x7",
            "ports": ["15000:5000", "1389:389"], "mac": "52:54:00:00:01:01",
            "api": "10.0.1.90:5000", "mode": "0640", "version": "1.10.x",
            "script": "set -e\necho '-----BEGIN'\n", "empty": "", "star": "*",
            "flow": {"a": 1, "b": "-c"}, "d": "fluentd_stop"}, fmt
    # Quoted where PyYAML's resolver reads another type (a sexagesimal or octal int, null,
    # its `yaml` indicator), plain where it reads a string: as kapicorp-reclass writes them.
    imported, output = _run(root, (), "--inventory", "-o", "yaml")
    for line in ("mac: '52:54:00:00:01:01'", "mode: '0640'", "empty: ''", "star: '*'",
                 "- 15000:5000", "- 1389:389", "api: 10.0.1.90:5000",
                 "java_opts: -Xms512m -Xmx512m", "- --insecure", "uptime: 24x7"):
        assert f"\n      {line}\n" in output, line


def test_escaped_references_render_without_regular_expressions(tmp_path):
    # A string with the escape character is read by the full grammar (syntax/grammar.py),
    # as Kapitan inventories' scripts often are (`\${HOST_IP}` for the shell): no `re` either.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  b: x\n"
                            "  script: '[ -n \"\\${HOST}\" ] && echo ${b} \\\\${b} ${${c}}'\n"
                            "  c: b\n",
        "nodes/n1.yml": "classes: [base]\n"})
    for fmt in ("yaml", "json"):
        imported, output = _run(root, REGULAR_EXPRESSIONS, "--nodeinfo", "n1", "-o", fmt)
        assert imported == [], fmt
    assert json.loads(output)["parameters"]["script"] == '[ -n "${HOST}" ] && echo x \\x x'


def test_kapitan_secret_references_are_read_without_pyyaml(tmp_path):
    # `?{base64:...}` is a plain scalar (a `?` before a non-space, in block context): the
    # block reader reads it, so kapitan-kubernetes's example never imports PyYAML at all.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  users:\n    root:\n      password: "
                            "?{base64:targets/${target_name}/mysql/password||randomstr|base64}\n"
                            "  hosts:\n  - ::1\n",
        "targets/t1.yml": "classes: [base]\nparameters:\n  target_name: t1\n"})
    for fmt in ("yaml", "json"):
        imported, output = _run(root, PYYAML + REGULAR_EXPRESSIONS, "-u", "targets", "--inventory",
                                "-o", fmt)
        assert imported == [], fmt
    parameters = json.loads(output)["nodes"]["t1"]["parameters"]
    assert parameters["users"]["root"]["password"] == \
        "?{base64:targets/t1/mysql/password||randomstr|base64}"
    assert parameters["hosts"] == ["::1"]


def test_anchors_aliases_urls_in_flow_lists_and_octal_modes_are_read_without_pyyaml(tmp_path):
    # The shapes that made mindwm and kapitan-reference import PyYAML: an anchored block
    # scalar, mapping and scalar, aliases to them, a flow list of URLs and file modes.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  panes:\n  - &venv |\n    . venv/bin/activate\n"
                            "  - *venv\n  values: &values\n    port: 80\n  helm:\n"
                            "    ui: *values\n  name: &exchange mindwm-context\n"
                            "  queue: *exchange\n"
                            "  scopes: [https://www.googleapis.com/auth/cloud-platform]\n"
                            "  mode: 0550\n  umask: 0000\n",
        "targets/t1.yml": "classes: [base]\n"})
    for fmt in ("yaml", "json"):
        imported, output = _run(root, PYYAML, "-u", "targets", "--inventory", "-o", fmt)
        assert imported == [], fmt
    parameters = json.loads(output)["nodes"]["t1"]["parameters"]
    assert parameters["panes"] == [". venv/bin/activate\n"] * 2
    assert parameters["helm"]["ui"] == parameters["values"] == {"port": 80}
    assert parameters["queue"] == "mindwm-context"
    assert parameters["scopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    assert (parameters["mode"], parameters["umask"]) == (0o550, 0)


def test_floats_are_written_to_yaml_without_pyyaml(tmp_path):
    # Real models hold floats in most nodes (versions, ratios, timeouts): the block writer
    # spells them as PyYAML's representer does without asking it (output.block_yaml
    # float_spelling), so a render the block reader read whole imports no PyYAML.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  ratio: 0.5\n  version: 2.0\n  tiny: 0.00001\n"
                            "  huge: 100000000000000000000.0\n  few:\n  - 1.5\n  - 10.25\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: 1.1\n"})
    imported, output = _run(root, PYYAML, "--inventory", "-o", "yaml")
    assert imported == []
    assert "    ratio: 0.5\n" in output and "    tiny: 1.0e-05\n" in output
    assert "    huge: 1.0e+20\n" in output and "    - 10.25\n" in output
# What a whole `reclass --inventory` of a small inventory imports beyond --nodeinfo's list:
# the `collections` package (with keyword, operator, reprlib) and `types`, 7 M instructions of
# a 77 M start, were imported for collections.abc names used in annotations and for
# SimpleNamespace and ModuleType (issue 29). PyYAML, which imports both, is not imported here.
INVENTORY_NOT_NEEDED = ("collections", "keyword", "operator", "reprlib", "types",
                        # where an error is written: only once one is reported
                        "reclass_ng.location")


def test_inventory_of_a_small_inventory_imports_nothing_it_does_not_use(tmp_path):
    # Block YAML (storage.yaml_block reads it) and no float (output.block_yaml writes it):
    # PyYAML is asked nothing.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b:\n  - 1\n  - c: x\n    e: 'on'\n"
                            "  - yes\n  - ~\n",
        "classes/app/init.yml": "classes: [base]\nparameters:\n  app: 'y z'\n",
        "nodes/n1.yml": "classes: [app]\nparameters:\n  d: x\n",
        "nodes/group/n2.yml": "classes: [base]\n"})
    for fmt in ("yaml", "json"):
        # (YAML, streamed through the block writer, needs none of output.exact's writers:
        # PyYAML's dumper and the JSON ones, with the json accelerator)
        only_json = ("reclass_ng.output.exact", "_json") if fmt == "yaml" else ()
        imported, output = _run(root, NOT_NEEDED + REGULAR_EXPRESSIONS + PYYAML
                                + INVENTORY_NOT_NEEDED + only_json, "--inventory", "-o", fmt)
        assert imported == [], fmt
        assert "n2" in output and "app" in output, fmt


def test_a_warning_about_an_overwritten_missing_reference_imports_no_collections(tmp_path):
    # The warning is made with the error it stands for, whose "did you mean" is worked out
    # only if it is printed in full: neither reclass_ng.suggestions (imported when a message
    # shows suggestions) nor difflib nor `collections` (it used collections.abc names in
    # annotations only) is imported.
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  x: ${missing}\n  y: 1\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  x: 2\n"})
    imported, output = _run(root, ("reclass_ng.suggestions",) + INVENTORY_NOT_NEEDED
                            + ("difflib",), "--inventory", "-o", "json")
    assert imported == []
    assert json.loads(output)["nodes"]["n1"]["parameters"]["x"] == 2


def test_json_inventory_written_by_orjson_imports_no_typing(tmp_path):
    # Large enough for the orjson writer (output.streamed.FEW_VALUES_FOR_ORJSON): orjson is
    # imported (with dataclasses, and so `collections`), but output.fast_json's annotations
    # no longer import `typing` (10 M instructions more).
    values = "".join(f"  - {number}\n" for number in range(12_000))
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  many:\n" + values,
        "nodes/n1.yml": "classes: [base]\n"})
    imported, output = _run(root, ("orjson", "typing"), "--inventory", "-o", "json")
    assert imported == ["orjson"]
    assert json.loads(output)["nodes"]["n1"]["parameters"]["many"][-1] == 11_999


@pytest.mark.parametrize("fmt, never", [
    ("json", ("typing", "attrs", "attr", "reclass_ng.output.block_yaml")),
    ("yaml", ("typing", "attrs", "attr", "uuid", "platform"))])
def test_jobs_import_neither_typing_nor_attrs_nor_a_pool(tmp_path, monkeypatch, fmt, never):
    # `--jobs` imports its modules before the fork, in the serial part of the render: attrs
    # (its class bodies compiled at import) and typing were half of what importing
    # reclass_ng.parallel cost; JSON output needs no block YAML writer either. A render's key
    # was a uuid4: uuid and platform (which it imports) cost a YAML render 12 M instructions
    # more (JSON's orjson imports them anyway).
    from reclass_ng.parallel.workers import usable_cpus

    if usable_cpus()[0] < 2:
        pytest.skip("--jobs renders serially with one usable CPU")
    monkeypatch.setenv("RECLASS_NG_JOBS_MIN_NODES", "0")
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: 1\n",
        **{f"nodes/n{number}.yml": "classes: [base]\n" for number in range(4)}})
    imported, output = _run(root, ("reclass_ng.parallel.forked_lanes", "concurrent.futures",
                                   "multiprocessing", "logging", "ctypes", *never),
                            "--inventory", "-o", fmt, "--jobs", "2")
    # Forked workers rendered, without a process pool: concurrent.futures, multiprocessing
    # and what they import (logging, ctypes) cost 16-20 ms before the fork.
    assert imported == ["reclass_ng.parallel.forked_lanes"]
    document = json.loads(output) if fmt == "json" else yaml.safe_load(output)
    assert document["nodes"]["n3"]["parameters"]["a"] == 1
