"""The live inventory's batch render (what Salt's first pass of a new master process runs) shares
rendered subtrees between nodes, as `--inventory` does, while each node's reads are recorded.

Checked on generated inventories with shared classes and inventory queries: the batch with the
memo gives every node the same data, warnings and recorded inputs as rendering each node on its
own (render_results' reference); and Salt's ext_pillar, called for every node as a master does,
answers what a fresh render gives, after a class file edit and after an edit of a value other
nodes' queries read, with every answer a private copy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from adapters.test_plain_data import same
from test_incremental import without_timestamps

import reclass_ng
from reclass_ng.adapters import salt
from reclass_ng.adapters.inventory_source import open_inventory
from reclass_ng.incremental.adapter_pool import LiveInventoryPool
from reclass_ng.incremental.live import BATCH_AFTER_MISSES, LiveRender
from reclass_ng.incremental.node_results import render_results
from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees
from reclass_ng.settings import Speed

GENERATOR = Path(__file__).resolve().parent.parent / "bench" / "generate.py"
NODES = 24  # more than BATCH_AFTER_MISSES + 1: the Salt pass takes the batch path


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An mcp-shaped inventory: shared class walks, exports on every node, queries on a third."""
    out = tmp_path_factory.mktemp("batch") / "mcp"
    subprocess.run([sys.executable, str(GENERATOR), "--shape", "mcp", "--nodes", str(NODES),
                    "--seed", "11", "--queries", "--quiet", "--out", str(out)], check=True)
    # Queries in a class every node lists (the generator writes them in node files only): a
    # container the memo meets in every node, which it must never keep.
    (out / "classes" / "batch").mkdir()
    (out / "classes" / "batch" / "queries.yml").write_text(
        "parameters:\n  batch_queries:\n    names: $[ exports:node:name ]\n"
        "    roles: $[ exports:node:role ]\n")
    for node in (out / "nodes").rglob("*.yml"):
        node.write_text(node.read_text().replace("classes:\n", "classes:\n- batch.queries\n", 1))
    return out


def copy_inventory(source: Path, target: Path) -> Path:
    for path in source.rglob("*.yml"):
        dest = target / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(path.read_bytes())
    return target


def batch(base: Path, share_subtrees: bool, memo: RenderedSubtrees | None = None
          ) -> dict[str, Any]:
    live = LiveRender(str(base), {}, read_config=False, warn=lambda message: None,
                      speed=Speed(rendered_subtrees=share_subtrees))
    live.refresh()
    assert live.generation is not None and live.snapshot is not None
    return render_results(live.generation, live.recorder, live.snapshot, live.node_names,
                          live.capture, memo=memo)


def test_the_batch_shares_subtrees_and_records_every_read(generated: Path) -> None:
    memo = RenderedSubtrees()
    shared = batch(generated, True, memo)
    alone = batch(generated, False)
    assert memo.hits > 0  # subtrees were reused: the comparison below is not vacuous
    assert list(shared) == list(alone)
    queried = 0
    for name, result in shared.items():
        reference = alone[name]
        assert (result.phase, result.merge_warnings, result.interpolation_warnings) == \
            (reference.phase, reference.merge_warnings, reference.interpolation_warnings), name
        assert without_timestamps(result.value) == without_timestamps(reference.value), name
        assert result.deps == reference.deps, name  # node, class and queried nodes' files
        queried += result.deps.nodes_key is not None
    assert queried == len(shared)  # every node lists batch.queries


def pillars_of_fresh_render(base: Path) -> dict[str, dict[str, Any]]:
    nodes = reclass_ng.load(str(base)).inventory()["nodes"]
    return {name: salt.pillar_data(info) for name, info in nodes.items()}


def change_everything(data: Any) -> None:
    """Change every container of a returned pillar in place (as a caller may)."""
    if isinstance(data, dict):
        for value in data.values():
            change_everything(value)
        data["changed by the caller"] = True
    elif isinstance(data, list):
        for value in data:
            change_everything(value)
        data.append("changed by the caller")


def test_salt_passes_over_a_generated_inventory_equal_fresh_renders(
        generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = copy_inventory(generated, tmp_path / "inv")
    monkeypatch.setattr(salt, "LIVE_INVENTORIES", LiveInventoryPool(open_inventory))
    monkeypatch.setattr(salt, "PILLARS", salt.PillarCopies())
    names = reclass_ng.load(str(base)).node_names
    assert len(names) > BATCH_AFTER_MISSES + 1

    def salt_pass(edit: str) -> None:
        expected = pillars_of_fresh_render(base)
        answers = {name: salt.ext_pillar(name, {}, inventory_base_uri=str(base))
                   for name in names}
        for name in names:
            assert same(answers[name], expected[name]), (edit, name)
        change_everything(answers[names[0]])
        for name in names[1:]:  # no other answer shares a container with the changed one
            assert same(answers[name], expected[name]), (edit, name)
        for answer in answers.values():
            change_everything(answer)
        for name in names:  # nor does a later answer
            assert same(salt.ext_pillar(name, {}, inventory_base_uri=str(base)),
                        expected[name]), (edit, name)

    salt_pass("first pass")
    # The class file the most nodes list.
    listed = reclass_ng.load(str(base)).inventory()["classes"]
    class_name = max(sorted(listed), key=lambda name: len(listed[name]))
    assert len(listed[class_name]) > 1
    relative = Path(*class_name.split("."))
    shared_class = next(path for path in (base / "classes" / relative.with_suffix(".yml"),
                                          base / "classes" / relative / "init.yml")
                        if path.is_file())
    text = shared_class.read_text()
    shared_class.write_text(re.sub(r"^parameters:", "parameters:\n  batch_test: {edited: 1}",
                                   text, count=1, flags=re.M)
                            if re.search(r"^parameters:", text, re.M)
                            else text + "\nparameters:\n  batch_test: {edited: 1}\n")
    salt_pass("class edited")
    # A value a queried node exports: the querying nodes' answers change.
    queried = next(path for path in sorted((base / "nodes").rglob("*.yml"))
                   if "single_address: ${_param:" in path.read_text())
    before = pillars_of_fresh_render(base)
    queried.write_text(queried.read_text().replace(
        "single_address: ${_param:", "single_address: 10.99.0.1\n    unused: ${_param:", 1))
    after = pillars_of_fresh_render(base)
    changed = [name for name in names if not same(before[name], after[name])]
    assert len(changed) > 1  # the node itself and nodes whose queries read its export
    salt_pass("exported value edited")
