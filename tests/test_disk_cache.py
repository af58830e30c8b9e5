"""`reclass --inventory --cache-dir DIR` (reclass_ng.incremental.disk_cache), driven through
the command line: the output is always a fresh render's; only changed nodes are rendered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from inventory_writer import write_inventory
from test_incremental_corpus import run_cli

from reclass_ng.incremental.disk_cache import InventoryCache
from reclass_ng.settings import load_settings


def inventory(tmp_path: Path) -> Path:
    return write_inventory(tmp_path / "inv", {
        "classes/common.yml": "parameters: {ntp: a}\napplications: [ntp]\n",
        "classes/web.yml": "classes: [common]\nparameters: {port: 80, url: 'http://${name}'}\n",
        "nodes/w1.yml": "classes: [web]\nparameters: {name: w1}\n",
        "nodes/w2.yml": "classes: [web]\nparameters: {name: w2}\n",
        "nodes/db.yml": "classes: [common]\nparameters: {name: db}\n",
    })


def reclass(base: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["-b", str(base), "--inventory", *extra], base)


def cache_file(cache: Path) -> Path:
    (found,) = cache.glob("inventory-*.cache")
    return found


def cache_header(path: Path) -> dict:
    """The JSON line that starts a cache file (its texts follow it)."""
    return json.loads(path.read_bytes().partition(b"\n")[0])


def rewrite_header(path: Path, header: dict) -> None:
    path.write_bytes(json.dumps(header).encode() + b"\n" + path.read_bytes().partition(b"\n")[2])


def test_cached_runs_print_what_a_fresh_run_prints(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    for fmt in ("yaml", "json"):
        plain = reclass(base, "-o", fmt)
        assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain
        assert reclass(base, "-o", fmt, "--cache-dir", str(cache)) == plain
    (base / "classes" / "web.yml").write_text("classes: [common]\nparameters: {port: 81}\n")
    assert reclass(base, "--cache-dir", str(cache)) == reclass(base)


def test_only_nodes_whose_inputs_changed_are_rendered_again(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    reclass(base, "--cache-dir", str(cache))
    # Mark the cached text of every node; a node rendered again loses its mark.
    cached = InventoryCache(str(cache), load_settings(str(base), {}), "yaml", True, print)
    nodes = cached.load()
    assert set(nodes) == {"db", "w1", "w2"}
    for name, entry in nodes.items():
        entry.after = entry.after.replace("ntp: a", f"ntp: cached-{name}")
    cached.save(nodes)
    (base / "classes" / "web.yml").write_text("classes: [common]\nparameters: {port: 81}\n")
    out = reclass(base, "--cache-dir", str(cache))[1]
    assert "cached-db" in out  # db does not use web
    assert "cached-w1" not in out and "cached-w2" not in out
    assert out.count("port: 81") == 2


def test_a_corrupted_or_foreign_cache_file_is_ignored_with_a_warning(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    plain = reclass(base)
    reclass(base, "--cache-dir", str(cache))
    path = cache_file(cache)
    for content in (b"\x00not json", json.dumps({"key": "another", "nodes": {}}).encode(),
                    path.read_bytes()[:100]):
        path.write_bytes(content)
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert (status, out) == plain[:2]
        assert "ignoring the cache file" in err
    for malformed in ({"deps": {"files": "nonsense"}}, {"deps": {"files": [-1]}},
                      {"text": [0, 10 ** 9, 10 ** 9]}):
        reclass(base, "--cache-dir", str(cache))  # a good cache again
        header = cache_header(path)
        for field, value in malformed.items():
            if isinstance(value, dict):
                header["nodes"]["w1"][field].update(value)
            else:
                header["nodes"]["w1"][field] = value
        rewrite_header(path, header)
        status, out, err = reclass(base, "--cache-dir", str(cache))
        assert (status, out) == plain[:2] and "malformed" in err, malformed


def test_errors_and_warnings_are_those_of_a_fresh_run(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    (base / "nodes" / "db.yml").write_text("classes: [missing, common]\n")
    reclass(base, "--cache-dir", str(cache))
    plain = reclass(base)
    assert plain[0] != 0 and "missing" in plain[2]
    assert reclass(base, "--cache-dir", str(cache)) == plain
    plain = reclass(base, "-z", "true")
    assert "[WARNING]" in plain[2]
    assert reclass(base, "-z", "true", "--cache-dir", str(cache)) == plain
    assert reclass(base, "-z", "true", "--cache-dir", str(cache)) == plain


def test_concurrent_runs_leave_a_complete_cache(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    command = [sys.executable, "-m", "reclass_ng", "-b", str(base), "--inventory", "-o", "json",
               "--cache-dir", str(cache)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(4)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    nodes = [json.loads(out)["nodes"] for out, _ in outputs]
    assert all(set(n) == {"db", "w1", "w2"} for n in nodes)
    assert all(err == b"" for _, err in outputs)
    header = cache_header(cache_file(cache))  # one complete file: every node, every text
    assert set(header["nodes"]) == {"db", "w1", "w2"}
    texts = cache_file(cache).read_bytes().partition(b"\n")[2]
    assert max(entry["text"][2] for entry in header["nodes"].values()) == len(texts)
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []


def test_the_setting_cache_dir_turns_the_cache_on(tmp_path: Path) -> None:
    base, cache = inventory(tmp_path), tmp_path / "cache"
    (base / "reclass-config.yml").write_text(f"cache_dir: {cache}\n")
    plain = reclass(base)
    assert cache_file(cache).exists()
    assert reclass(base) == plain
    os.unlink(cache_file(cache))
