"""A restarted Salt master starts warm: with `cache_dir` in the reclass_ng ext_pillar
configuration, a new process serves the nodes whose files did not change from the results the
previous process stored (reclass_ng.incremental.result_store), and renders only the others.

Each "master" is a new Python process compiling pillars through Salt's own pillar compiler
(salt.pillar.Pillar, which loads the reclass_ng ext_pillar module the way a master worker does),
one minion after the other. It reports which nodes reclass-ng rendered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inventory_writer import replace_file, write_inventory
from tool_helpers import run_tool, write_salt_minion_config

MASTER = """
import json, sys
import salt.config, salt.pillar
import reclass_ng.incremental.live as live

rendered = []
render_results = live.render_results
def counted(generation, recorder, snapshot, names, *args, **kwargs):
    rendered.extend(names)
    return render_results(generation, recorder, snapshot, names, *args, **kwargs)
live.render_results = counted

opts = salt.config.minion_config(sys.argv[1])
pillars = {}
for minion in sys.argv[2:]:
    opts["id"] = minion
    pillars[minion] = repr(salt.pillar.Pillar(opts, {}, minion, "base").compile_pillar())
print(json.dumps({"pillars": pillars, "rendered": sorted(rendered)}))
"""

MINIONS = [f"m{index:02d}" for index in range(12)]  # more than a render one at a time takes


def inventory(base: Path) -> Path:
    files = {f"nodes/{name}.yml": f"classes: [common, {'db' if index < 3 else 'web'}]\n"
             f"parameters: {{index: {index}, ratio: {index}.0, flag: {str(index % 2 == 0).lower()}}}\n"
             for index, name in enumerate(MINIONS)}
    files["classes/common.yml"] = (
        "parameters:\n  ntp: {servers: [a, b], iburst: true}\n  unset: null\n"
        "  me: ${_reclass_:name:short}\n")
    files["classes/db.yml"] = "applications: [postgresql]\nparameters: {db: {port: 5432}}\n"
    files["classes/web.yml"] = "applications: [nginx]\nparameters: {web: {port: 80}}\n"
    # A date: not stored (JSON would make it text), rendered again after a restart.
    files["nodes/m11.yml"] = "classes: [web]\nparameters: {since: 2024-01-02}\n"
    return write_inventory(base, files)


def minion_config(tmp_path: Path, name: str, base: Path, cache: Path | None) -> Path:
    (tmp_path / "states").mkdir(exist_ok=True)
    cache_line = f"      cache_dir: {cache}\n" if cache is not None else ""
    conf = write_salt_minion_config(tmp_path / name, tmp_path / f"{name}-root",
                                    tmp_path / "states", f"""\
ext_pillar:
  - reclass_ng:
      inventory_base_uri: {base}
{cache_line}""")
    return conf / "minion"


def master(config: Path) -> tuple[dict[str, str], list[str], str]:
    """(pillar of every minion as repr, nodes rendered, stderr) of one new master process."""
    result = run_tool([sys.executable, "-c", MASTER, str(config), *MINIONS])
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    return out["pillars"], out["rendered"], result.stderr


def test_a_restarted_master_renders_only_what_changed(tmp_path: Path) -> None:
    base = inventory(tmp_path / "inv")
    cache = tmp_path / "cache"
    cached = minion_config(tmp_path, "cached", base, cache)
    fresh = minion_config(tmp_path, "fresh", base, None)

    first, rendered, _ = master(cached)
    assert rendered == MINIONS
    assert first == master(fresh)[0]
    assert "'since': datetime.date(2024, 1, 2)" in first["m11"]
    assert [path.name.startswith("live-") for path in cache.iterdir()] == [True]

    again, rendered, stderr = master(cached)
    assert again == first
    assert rendered == ["m11"]  # the only node JSON cannot carry exactly
    assert "WARNING" not in stderr

    replace_file(base / "classes" / "db.yml",
                 "applications: [postgresql]\nparameters: {db: {port: 5433}}\n")
    after_change, rendered, _ = master(cached)
    assert rendered == ["m00", "m01", "m02", "m11"]
    assert after_change == master(fresh)[0]
    assert "'port': 5433" in after_change["m00"]


def test_a_corrupt_or_foreign_cache_file_is_ignored_with_a_warning(tmp_path: Path) -> None:
    base = inventory(tmp_path / "inv")
    other = inventory(tmp_path / "other-inv")
    (other / "nodes" / "m00.yml").write_text("classes: [web]\nparameters: {index: 99}\n")
    cache, other_cache = tmp_path / "cache", tmp_path / "other-cache"
    cached = minion_config(tmp_path, "cached", base, cache)
    master(cached)
    master(minion_config(tmp_path, "other", other, other_cache))
    expected = master(minion_config(tmp_path, "fresh", base, None))[0]
    (stored,) = cache.iterdir()
    (foreign,) = other_cache.iterdir()

    for content in (stored.read_bytes()[:5000], b"\x00garbage\n" * 10, foreign.read_bytes()):
        stored.write_bytes(content)
        pillars, rendered, stderr = master(cached)
        assert pillars == expected
        assert rendered == MINIONS
        assert f"ignoring the cache file {stored}" in stderr
        assert stored.read_bytes() != content  # written again, whole
