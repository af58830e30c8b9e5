"""The value shapes of real inventories, added to a generated one (the ``mcp-real`` shape).

Real models hold what the ``mcp`` and ``kapitan`` shapes do not: long descriptions and
commands with spaces (which a YAML writer folds past column 80), certificates, keys and
scripts spanning lines, unicode text, numbers and YAML 1.1 words kept as strings by quotes,
and, in a few class files, anchors and merge keys. These classes are written as text, as
people write them (block scalars, quotes), not through yaml_emit, and each node lists two.
Merge keys are YAML 1.1 (PyYAML): reclass-rs (YAML 1.2) is not run on this shape.
"""

from __future__ import annotations

import random

from inventory_files import InventoryFiles

REAL_CLASSES = 40
ANCHORED_EVERY = 8  # one class in this many holds anchors and merge keys
PROSE = (
    "Salt master of the OpenStack control plane; keeps the reclass model in /srv/salt/reclass",
    "and the formulas in /usr/share/salt-formulas/env, restarted by the deploy pipeline when",
    "a class changes. Contact the on-call engineer before any change to this node's network",
    "configuration, since the bonding of the two uplinks is shared with the storage backend, and a",
    "mistake here takes the whole rack offline (see the runbook, section 4.2, for details).",
)
UNICODE = ("Zürich", "Grüße aus Köln", "東京データセンター", "Saint-Étienne", "Kraków",
           "São Paulo", "Ελληνικά", "naïve café", "emoji \U0001f680 rollout")
LOOK_ALIKES = ("'8080'", '"2.10"', "'yes'", '"off"', "'0755'", "'1e3'", "'~'", "'null'",
               '"2020-01-02"', "'1:20'")
BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _certificate(rng: random.Random, indent: str) -> str:
    lines = ["-----BEGIN CERTIFICATE-----"]
    lines += ["".join(rng.choice(BASE64) for _ in range(64)) for _ in range(rng.randint(8, 14))]
    lines.append("".join(rng.choice(BASE64) for _ in range(rng.randint(10, 60))) + "==")
    lines.append("-----END CERTIFICATE-----")
    return "\n".join(indent + line for line in lines)


def _script(rng: random.Random, indent: str) -> str:
    services = rng.sample(["nova-api", "glance-api", "keystone", "haproxy", "nginx",
                           "rabbitmq-server", "mysql"], 2)
    lines = ["#!/bin/bash", "set -euo pipefail", "",
             f"for svc in {' '.join(services)}; do",
             '  systemctl restart "$svc" || echo "restart of $svc failed: see journalctl -u '
             '$svc for the reason, then page the on-call engineer"',
             "done", "exit 0"]
    return "\n".join((indent + line) if line else "" for line in lines)


def real_class_text(index: int, rng: random.Random) -> str:
    """One class file of real-looking values under parameters:real_<index> (no other class
    writes there, so no merge conflicts)."""
    prose = " ".join(rng.sample(PROSE, rng.randint(2, len(PROSE))))
    lines = [
        "# Values as real models hold them: prose, certificates, scripts, unicode, quotes.",
        "parameters:",
        f"  real_{index}:",
        f"    description: {prose}",
        f"    summary: \"{rng.choice(UNICODE)}: {prose[:rng.randint(40, 120)]}\"",
        f"    command: /usr/bin/salt-call state.apply linux.system --state-output=changes "
        f"--log-level={rng.choice(['info', 'warning', 'debug'])} --timeout 600 -l info",
        f"    location: {rng.choice(UNICODE)}",
        "    motd: |",
        f"      Welcome to {rng.choice(UNICODE)}.",
        "      This node is managed by Salt: local changes are overwritten.",
        "",
        f"      Support: ops@example.net, +41 44 {rng.randint(100, 999)} {rng.randint(10, 99)}",
        "    certificate: |",
        _certificate(rng, "      "),
        "    script: |",
        _script(rng, "      "),
        "    folded: >",
        "      A folded paragraph that reads as one line with spaces between its words,",
        "      as some operators write long notes in their cluster classes.",
        "    quoted_numbers:",
        *(f"    - {rng.choice(LOOK_ALIKES)}" for _ in range(4)),
        f"    port: {rng.choice(LOOK_ALIKES[:2])}",
        "    pattern: 'a: b # not a comment'",
        "    empty: ''",
        "    padded: '  leading and trailing spaces  '",
    ]
    if index % ANCHORED_EVERY == 0:
        lines += [
            f"    defaults: &defaults_{index}",
            "      timeout: 30",
            "      retries: 3",
            "      log_level: info",
            "    backends:",
            "      primary:",
            f"        <<: *defaults_{index}",
            "        host: primary.example.net",
            "      secondary:",
            f"        <<: *defaults_{index}",
            "        timeout: 60",
            "        host: secondary.example.net",
            f"    tags: &tags_{index} [web, \"tier one\", 'edge']",
            f"    more_tags: *tags_{index}",
        ]
    return "\n".join(lines) + "\n"


def add_real_values(files: InventoryFiles, seed: int) -> InventoryFiles:
    """Add REAL_CLASSES classes of real-looking values, two listed by every node."""
    rng = random.Random(f"{seed}:real-values")
    names = [f"system.real.values{index}" for index in range(REAL_CLASSES)]
    for index, name in enumerate(names):
        files.add_class(name, {})  # listed for the statistics; its text is written as is:
        path = f"{files.classes_dir}/{name.replace('.', '/')}.yml"  # (rendered() lets extra
        files.extra_files[path] = real_class_text(index, rng)  # files replace class files)
    for node in sorted(files.nodes):
        _subdir, document = files.nodes[node]
        document["classes"] = [*document.get("classes", []), *rng.sample(names, 2)]
    return files
