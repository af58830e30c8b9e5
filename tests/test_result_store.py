"""A live inventory with `cache_dir` starts from the node results an earlier one stored
(reclass_ng.incremental.result_store): exactly a fresh render's output, only exact JSON stored,
a changed input or a broken file never served."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import reclass_ng
from tests.inventory_writer import replace_file, write_inventory

FILES = {
    "nodes/plain.yml": "classes: [common]\nparameters: {n: 1, f: 1.0, b: true, u: null}\n",
    "nodes/dated.yml": "classes: [common]\nparameters: {since: 2024-01-02}\n",
    "nodes/ordered.yml": "classes: [common]\nparameters: {o: !!omap [{a: 1}, {b: 2}]}\n",
    "nodes/nan.yml": "classes: [common]\nparameters: {x: .nan}\n",
    "nodes/asks.yml": "classes: [common]\nparameters:\n  ports: $[ exports:port ]\n",
    "nodes/other.yml": "classes: [common]\nexports: {port: 80}\n",
    "classes/common.yml": "applications: [ntp]\nparameters: {ntp: {servers: [a, b]}}\n",
}


def plain_types(value: Any) -> Any:
    """Dicts and lists of any subclass as dict and list; tuples and scalars as they are."""
    if isinstance(value, dict):
        return {key: plain_types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_types(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_types(item) for item in value)
    return value


def same(a: Any, b: Any) -> bool:
    """Equal with the same types throughout (1, 1.0, True and (1,), [1] differ); NaN is NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def without_time(info: dict[str, Any]) -> Any:
    info = plain_types(info)
    del info["__reclass__"]["timestamp"]
    return info


def started(base: Path, cache: Path, warnings: list[str] | None = None
            ) -> tuple[reclass_ng.Inventory, tuple[str, ...]]:
    """A new live inventory (as a new process opens it) and the nodes it must render."""
    inventory = reclass_ng.load(str(base), cache_dir=str(cache),
                                warn=(warnings if warnings is not None else []).append)
    return inventory, inventory.refresh().stale


def assert_fresh(inventory: reclass_ng.Inventory, base: Path) -> None:
    fresh = reclass_ng.load(str(base))
    for name in inventory.node_names:
        assert same(without_time(inventory.nodeinfo(name)), without_time(fresh.nodeinfo(name))), \
            name


def test_a_new_inventory_renders_only_what_json_cannot_carry_or_what_changed(
        tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", FILES)
    cache = tmp_path / "cache"
    first, stale = started(base, cache)
    assert len(stale) == len(FILES) - 1  # everything, the first time
    first.inventory()  # every node has a result: stored

    second, stale = started(base, cache)
    assert stale == ("dated", "nan", "ordered")  # a date, NaN, tuples: not stored
    assert_fresh(second, base)
    assert type(second.nodeinfo("ordered")["parameters"]["o"][0]) is tuple

    replace_file(base / "nodes" / "other.yml", "classes: [common]\nexports: {port: 81}\n")
    third, stale = started(base, cache)
    assert stale == ("asks", "dated", "nan", "ordered", "other")  # the query read other
    assert third.nodeinfo("asks")["parameters"]["ports"] == {"other": 81}
    assert_fresh(third, base)

    replace_file(base / "classes" / "common.yml", "applications: [chrony]\n")
    fourth, stale = started(base, cache)
    assert len(stale) == len(FILES) - 1
    assert_fresh(fourth, base)


def test_a_broken_or_foreign_file_is_ignored_with_a_warning(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", FILES)
    other = write_inventory(tmp_path / "other", {"nodes/plain.yml": "parameters: {n: 2}\n"})
    cache = tmp_path / "cache"
    started(base, cache)[0].inventory()
    (path,) = cache.iterdir()
    stored = path.read_bytes()
    foreign_cache = tmp_path / "foreign"
    started(other, foreign_cache)[0].inventory()
    (foreign,) = foreign_cache.iterdir()
    for content in (b"", b"\x00" * 100, stored[:len(stored) // 2], stored[:-1],
                    stored.replace(b'"n":1', b'"n":2'), foreign.read_bytes()):
        path.write_bytes(content)
        warnings: list[str] = []
        inventory, stale = started(base, cache, warnings)
        assert len(stale) == len(FILES) - 1, content[:200]
        (warning,) = warnings
        assert warning.startswith(f"[WARNING] reclass-ng: ignoring the cache file {path}: ")
        assert_fresh(inventory, base)
