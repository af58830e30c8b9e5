"""Puppet code for the class catalogue tests: modules in environments, as Puppet lays them out."""

from __future__ import annotations

from pathlib import Path

# The classes inventory-example's groups use, plus one with a required parameter no group sets.
EXAMPLE_MODULES = {
    "motd": "class motd (String $message) {\n  notice(\"motd ${message}\")\n}\n",
    "nginx": "class nginx (\n  Integer $worker_connections = 512,\n"
             "  Integer $worker_processes = 2,\n) {\n"
             "  notice(\"nginx worker_connections=${worker_connections}\")\n}\n",
    "postgresql_backup": "class postgresql_backup (String $start_time, Integer $keep_days = 7) {\n"
                         "  notice(\"postgresql_backup at ${start_time} keep ${keep_days}\")\n}\n",
    "backup_agent": "class backup_agent (String $target) {\n"
                    "  notice(\"backup_agent target=${target}\")\n}\n",
}


def write_module(code_dir: Path, environment: str, name: str, manifest: str) -> Path:
    """`environments/<environment>/modules/<name>/manifests/init.pp` with `manifest`."""
    path = code_dir / "environments" / environment / "modules" / name / "manifests" / "init.pp"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest)
    return path


def write_example_code(code_dir: Path, environments=("production", "staging")) -> Path:
    """Puppet code with EXAMPLE_MODULES in each environment."""
    for environment in environments:
        for name, manifest in EXAMPLE_MODULES.items():
            write_module(code_dir, environment, name, manifest)
    return code_dir
