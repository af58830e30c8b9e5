"""Puppet Server's fact cache (`<facts dir>/<certname>.yaml`, what `reclass-puppet --facts-dir`
reads in node-classifier mode), written for the tests; importable by name from any test module."""

from __future__ import annotations

from pathlib import Path

FACT_CACHE = """\
--- !ruby/object:Puppet::Node::Facts
name: {name}
values:
  role: {role}
  processors:
    count: {processors}
timestamp: 2026-11-22 08:00:00.000000000 +00:00
expiration: 2026-11-22 08:30:00.000000000 +00:00
"""


def write_fact_cache(facts_dir: Path, name: str, role: str, processors: int = 2) -> None:
    """Cache the facts `role` and `processors.count` of node `name` in `facts_dir`."""
    facts_dir.mkdir(exist_ok=True)
    (facts_dir / f"{name}.yaml").write_text(
        FACT_CACHE.format(name=name, role=role, processors=processors))
