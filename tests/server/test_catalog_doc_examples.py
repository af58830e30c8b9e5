"""The console examples of doc/service.rst and doc/node-groups.rst marked
`.. runs-against: inventory-example`, run as written against copies of inventory-example and
puppet-code-example and a real `reclass-ng serve`; each command's output must be the one shown
(JSON compared as data; a lone `...` accepts any output)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import TOKEN, running_server

REPO = Path(__file__).resolve().parents[2]
MARKER = ".. runs-against: inventory-example"


def console_examples(text: str) -> list[list[tuple[str, list[str]]]]:
    """The marked console blocks: per block, (command, expected output lines)."""
    blocks = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        assert lines[index + 1].strip() == ".. code-block:: console", lines[index + 1]
        body = []
        for following in lines[index + 2:]:
            if following.strip() and not following.startswith("   "):
                break
            body.append(following[3:])
        examples: list[tuple[list[str], list[str]]] = []
        for entry in body:
            if examples and examples[-1][0][-1].endswith("\\") and not examples[-1][1]:
                examples[-1][0].append(entry)  # a continued command line
            elif entry.startswith("$ "):
                examples.append(([entry[2:]], []))
            elif entry.strip() and examples:
                examples[-1][1].append(entry)
        blocks.append([("\n".join(command), output) for command, output in examples])
    return blocks


def matches(expected: list[str], actual: str) -> bool:
    if expected == ["..."]:
        return True
    wanted = "\n".join(expected)
    try:
        return json.loads(wanted) == json.loads(actual)
    except ValueError:
        return wanted.strip() == actual.strip()


@pytest.mark.parametrize("document", ["node-groups.rst", "service.rst"])
def test_documented_examples_run_as_written(tmp_path: Path, document: str) -> None:
    if shutil.which("curl") is None:
        pytest.fail("curl is not installed; `make test` installs it")
    blocks = console_examples((REPO / "doc" / document).read_text())
    assert blocks, f"no examples marked {MARKER!r} in {document}"
    shutil.copytree(REPO / "inventory-example", tmp_path / "inventory-example")
    shutil.copytree(REPO / "puppet-code-example", tmp_path / "puppet-code-example")
    (tmp_path / "tokens.yml").write_text("tokens: []\n")
    with running_server(tmp_path / "inventory-example", tmp_path / "state.sqlite3",
                        "--puppet-code-dir", str(tmp_path / "puppet-code-example"),
                        "--tokens-file", str(tmp_path / "tokens.yml")) as base:
        env = {**os.environ, "T": TOKEN, "URL": base,
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
        for examples in blocks:
            script = ["set -u"]
            for number, (command, _) in enumerate(examples):
                script += [f"printf '\\n@@{number}@@\\n'", command]
            done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=300, check=False)
            outputs = re.split(r"\n@@\d+@@\n", "\n" + done.stdout)[1:]
            assert len(outputs) == len(examples), done.stdout + done.stderr
            for (command, expected), actual in zip(examples, outputs, strict=True):
                assert matches(expected, actual), (
                    f"{document}: {command}\nexpected:\n" + "\n".join(expected)
                    + f"\ngot:\n{actual}\nstderr:\n{done.stderr}")
