"""Random but type-consistent parameter trees shared by the inventory shapes.

Every class of a generated inventory adds to the same parameter namespace.
``Schema`` records the kind (mapping, list or scalar) of every path that any
class uses, so two classes never disagree about a key and no merge error can
occur in any implementation. ``LeafValues`` makes literal values that read
back identically under YAML 1.1 and 1.2 (no dates, no octal, no yes/no).
"""

from __future__ import annotations

import random

Path = tuple[str, ...]

SECTIONS = (
    "api", "audit", "backend", "cache", "database", "healthcheck", "identity", "limits",
    "logging", "message_queue", "metrics", "network", "notification", "policy", "quota",
    "scheduler", "security", "storage", "tls", "workers",
)
LEAVES = (
    "count", "driver", "enabled", "engine", "format", "host", "interval", "level",
    "max_connections", "mode", "name", "password", "path", "port", "region", "retries",
    "size", "timeout", "url", "user",
)
INT_LEAVES = frozenset(
    {"count", "interval", "max_connections", "port", "retries", "size", "timeout"}
)
WORDS = (
    "alpha", "amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
    "indigo", "juniper", "kestrel", "lumen", "meadow", "nimbus", "onyx", "prairie",
    "quartz", "raven", "sierra", "tundra", "umber", "vertex", "willow", "yarrow", "zephyr",
)
LEVELS = ("debug", "info", "warning", "error", "critical")
DRIVERS = ("sqlalchemy", "redis", "memcache", "rabbit", "file", "noop", "rbd", "lvm")
MODES = ("active", "passive", "strict", "permissive", "cluster", "standalone")
FORMATS = ("json", "text", "logfmt", "syslog")


class Schema:
    """The kind of every parameter path used so far: 'dict', 'list' or 'scalar'."""

    def __init__(self) -> None:
        self.kinds: dict[Path, str] = {}

    def fits(self, path: Path, kind: str) -> bool:
        """True if ``path`` may hold ``kind`` given everything claimed before."""
        for end in range(1, len(path)):
            if self.kinds.get(path[:end], "dict") != "dict":
                return False
        return self.kinds.get(path, kind) == kind

    def claim(self, path: Path, kind: str) -> bool:
        """Record ``path`` as ``kind`` (and its ancestors as mappings); False on a conflict."""
        if not self.fits(path, kind):
            return False
        for end in range(1, len(path)):
            self.kinds[path[:end]] = "dict"
        self.kinds[path] = kind
        return True


def set_path(tree: dict, path: Path, value: object) -> None:
    """Store ``value`` at ``path`` inside nested mappings, creating them as needed."""
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def count_leaves(value: object) -> tuple[int, int]:
    """(leaf values, leaf values containing a reference) in a parameter tree."""
    if isinstance(value, dict):
        pairs = [count_leaves(item) for item in value.values()]
    elif isinstance(value, list):
        pairs = [count_leaves(item) for item in value]
    else:
        return 1, int(isinstance(value, str) and "${" in value)
    return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


class LeafValues:
    """Literal values that look like what configuration management trees hold."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def secret(self) -> str:
        # Starts with a letter so no reader takes it for a number.
        return "s" + "".join(self.rng.choice("abcdef0123456789") for _ in range(15))

    def for_leaf(self, leaf: str, owner: str) -> str | int | bool:
        """A literal fitting a leaf called ``leaf`` in the tree of ``owner``."""
        rng = self.rng
        if leaf == "port":
            return rng.randrange(1024, 65000)
        if leaf in INT_LEAVES:
            return rng.choice((1, 2, 3, 5, 10, 30, 60, 120, 300, 512, 1024, 4096))
        if leaf == "enabled":
            return rng.random() < 0.7
        if leaf == "level":
            return rng.choice(LEVELS)
        if leaf == "driver":
            return rng.choice(DRIVERS)
        if leaf in ("mode", "engine"):
            return rng.choice(MODES)
        if leaf == "format":
            return rng.choice(FORMATS)
        if leaf == "password":
            return self.secret()
        if leaf == "path":
            return f"/var/lib/{owner}/{self.word()}"
        if leaf == "url":
            return f"https://{self.word()}.example.net/{owner}"
        if leaf == "host":
            return f"{self.word()}-{owner}.example.net"
        if leaf == "region":
            return rng.choice(("RegionOne", "RegionTwo", "eu-central", "us-east"))
        return f"{owner}_{self.word()}"
