"""storage/yaml_import.py: PyYAML imported with its patterns compiled on first use loads and dumps
exactly what a plain `import yaml` does (both in fresh processes)."""

from __future__ import annotations

import subprocess
import sys

DOCUMENT = """
plain: [yes, No, on, OFF, true, ~, null, Null, "", 010, 0o10, 0x1F, 0b101, -12_345, 1:20,
        3.5, .5, -.inf, .NaN, 1e3, 1.0e+3, 6.8523015e+5, 190:20:30.15, 2001-12-14,
        2001-12-14t21:59:43.10-05:00, 2002-12-14 21:59:43.10 Z, "<<", text, é, 'q']
merged: {<<: {a: 1}, b: 2}
"""

PROBE = """
import sys
if sys.argv[1] == "deferred":
    from reclass_ng.storage.yaml_import import pyyaml
    yaml = pyyaml()  # imports yaml the deferred way
else:
    import yaml
assert ("reclass_ng.storage.yaml_import" in sys.modules) == (sys.argv[1] == "deferred")
document = sys.stdin.read()
for loader in (yaml.SafeLoader, yaml.CSafeLoader):
    data = yaml.load(document, Loader=loader)
    print(repr(data))
    print(yaml.dump(data, Dumper=yaml.SafeDumper))
    print(yaml.dump(data, Dumper=yaml.CSafeDumper, allow_unicode=True))
"""


def _run(mode: str) -> str:
    return subprocess.run([sys.executable, "-c", PROBE, mode], input=DOCUMENT,
                          capture_output=True, text=True, check=True).stdout


def test_deferred_patterns_load_and_dump_what_plain_pyyaml_does() -> None:
    deferred = _run("deferred")
    assert deferred == _run("plain")
    assert "datetime.datetime(2001, 12, 14, 21, 59, 43, 100000" in deferred
