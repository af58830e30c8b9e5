"""Hover values equal `reclass --nodeinfo`: for every parameter key written in the files of a
sample of conformance scenarios, the values a hover reports across the nodes that read the
file are those the real `reclass --nodeinfo NODE` command prints for those nodes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lsp_session import REPOSITORY, hover_text, lsp_session, open_file, server_env
from lsprotocol import types

CORPUS = REPOSITORY / "tests" / "conformance"
RECLASS = [sys.executable, "-c", "import sys; from reclass_ng.cli.reclass import main; "
           "sys.exit(main())"]
SAMPLE_EVERY = 30  # of the scenarios that render without options: a sample, in name order


def _scenarios() -> list[Path]:
    found = []
    for scenario in sorted(CORPUS.glob("*/scenario.json")):
        meta = json.loads(scenario.read_text())
        if meta.get("args") == [] and meta.get("expect") == "ok":
            found.append(scenario.parent)
    return found[::SAMPLE_EVERY]


def _nodeinfo(base: Path, node: str) -> dict | None:
    """What `reclass --nodeinfo NODE` prints; None for a node it cannot render (a scenario
    whose `--inventory` succeeds may hold a node that fails alone: a hover shows no value of
    it)."""
    done = subprocess.run([*RECLASS, "-b", str(base), "--nodeinfo", node, "-o", "json"],
                          capture_output=True, text=True, timeout=60, env=server_env())
    if done.returncode == 65:
        return None
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _class_file(classes: Path, name: str) -> Path | None:
    stem = classes.joinpath(*name.split("."))
    for candidate in (stem.with_name(stem.name + ".yml"), stem.with_name(stem.name + ".yaml"),
                      stem / "init.yml", stem / "init.yaml"):
        if candidate.is_file():
            return candidate
    return None


def _parameter_keys(path: Path) -> list[tuple[tuple[str, ...], types.Position]]:
    """(key path, position) of the top two levels of keys under `parameters`."""
    root = yaml.compose(path.read_text(), Loader=yaml.SafeLoader)
    found = []
    if not isinstance(root, yaml.MappingNode):
        return found
    for key, value in root.value:
        if key.value != "parameters" or not isinstance(value, yaml.MappingNode):
            continue
        for first, below in value.value:
            keys = (str(first.value).lstrip("~="),)
            found.append((keys, types.Position(line=first.start_mark.line,
                                               character=first.start_mark.column)))
            if isinstance(below, yaml.MappingNode):
                found += [((*keys, str(second.value).lstrip("~=")),
                           types.Position(line=second.start_mark.line,
                                          character=second.start_mark.column))
                          for second, _ in below.value]
    return found


def _expected_lines(infos: dict[str, dict], keys: tuple[str, ...]) -> list[str]:
    grouped: dict[str, list[str]] = {}
    for node, info in sorted(infos.items()):
        value: object = info["parameters"]
        for key in keys:
            value = value.get(key, "(not set)") if isinstance(value, dict) else "(not set)"
        shown = value if value == "(not set)" else json.dumps(value, sort_keys=True)
        grouped.setdefault(str(shown), []).append(node)
    groups = sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))
    nodes = sum(len(names) for _, names in groups)
    lines = [f"**{len(groups)} value{'s' if len(groups) != 1 else ''} across {nodes} "
             f"node{'s' if nodes != 1 else ''}**"]
    lines += [f"- `{shown}` on {len(names)} (" + ", ".join(names[:3])
              + (" ..." if len(names) > 3 else "") + ")"
              for shown, names in groups[:5] if len(shown) <= 400]
    return lines


@pytest.mark.parametrize("scenario", _scenarios(), ids=lambda path: path.name)
def test_hover_values_equal_reclass_nodeinfo(scenario: Path) -> None:
    base = scenario / "inventory"
    if not (base / "nodes").is_dir() or not (base / "classes").is_dir():
        pytest.skip("not a nodes/ + classes/ inventory")
    nodes = {path.stem: path for path in (base / "nodes").rglob("*.y*ml")}
    rendered = {node: _nodeinfo(base, node) for node in nodes}
    infos = {node: info for node, info in rendered.items() if info is not None}
    readers: dict[Path, list[str]] = {}
    for node, info in infos.items():
        readers.setdefault(nodes[node].resolve(), []).append(node)
        for name in info["classes"]:
            found = _class_file(base / "classes", name)
            if found is not None:
                readers.setdefault(found.resolve(), []).append(node)
    checked = 0

    async def session() -> None:
        nonlocal checked
        async with lsp_session(scenario) as lsp:
            for path, names in sorted(readers.items()):
                await open_file(lsp, path)
                for keys, at in _parameter_keys(path):
                    shown = await hover_text(lsp, path, at)
                    assert shown is not None, (path, keys)
                    for line in _expected_lines({n: infos[n] for n in names}, keys):
                        assert line in shown, (os.path.relpath(path, base), keys, line, shown)
                    checked += 1

    asyncio.run(session())
    assert checked > 0
