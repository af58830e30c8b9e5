"""The ``mcp`` shape: an MCP/Salt-style model with a large shared class library.

Layout (class names; files under ``classes/``)::

    service.<formula>.support               formula defaults, incl. its _param defaults
    service.<formula>.<role>.single|cluster formula metadata: applications, big trees
    system.<formula>.<role>.single|cluster  site defaults, heavy ${_param:...} wiring
    system.<formula>.<role>.<variant>       optional features (ssl, backup, ...)
    cluster.<name>                          the cluster's _param values
    cluster.<name>.infra                    host table, base system classes
    cluster.<name>.<area>.common            area defaults (listed as ".common")
    cluster.<name>.<area>.<role>            what a node of that role is

A node lists its role class (and sometimes a few extra system classes). The
longest include chain is role -> infra -> system variant -> system role ->
service role -> support: six levels.
"""

from __future__ import annotations

import random

from inventory_files import InventoryFiles
from param_trees import (
    LEAVES,
    SECTIONS,
    WORDS,
    LeafValues,
    Path,
    Schema,
    set_path,
)

BASE_FORMULAS = (
    "linux", "openssh", "ntp", "salt", "telegraf", "fluentd", "logrotate", "rsyslog",
    "postfix", "backupninja", "auditd", "sysctl",
)
AREAS: dict[str, dict] = {
    "platform": {
        "formulas": ("galera", "rabbitmq", "memcached", "haproxy", "keepalived", "nginx",
                     "apache", "bind", "openldap", "libvirt", "openvswitch", "redis"),
        "roles": (("kvm", "kvm", 3), ("config", "cfg", 1), ("dns", "dns", 2)),
    },
    "openstack": {
        "formulas": ("keystone", "glance", "nova", "neutron", "cinder", "heat", "horizon",
                     "designate", "barbican", "octavia", "aodh", "gnocchi", "panko",
                     "ceilometer", "manila", "ironic"),
        "roles": (("control", "ctl", 3), ("proxy", "prx", 2), ("gateway", "gtw", 2),
                  ("database", "dbs", 3), ("message_queue", "msg", 3), ("compute", "cmp", 0)),
    },
    "stacklight": {
        "formulas": ("prometheus", "alertmanager", "grafana", "elasticsearch", "kibana",
                     "influxdb", "sensu", "sphinx"),
        "roles": (("monitor", "mon", 3), ("log", "log", 3), ("telemetry", "mtr", 3)),
    },
    "kubernetes": {
        "formulas": ("kubernetes", "docker", "calico", "containerd", "helm", "etcd"),
        "roles": (("control", "kmst", 3), ("worker", "kwrk", 0)),
    },
    "ceph": {
        "formulas": ("ceph", "radosgw", "zookeeper", "cassandra"),
        "roles": (("monitor", "cmn", 3), ("rgw", "rgw", 2), ("osd", "osd", 0)),
    },
    "cicd": {
        "formulas": ("jenkins", "gerrit", "aptly", "git", "reclass", "glusterfs", "nfs"),
        "roles": (("control", "cid", 3), ("repo", "apt", 1)),
    },
}
# Areas whose roles include one that absorbs the remaining nodes (count 0).
PRIMARY_AREAS = ("openstack", "kubernetes", "ceph")
ROLE_NAMES = ("server", "client", "agent", "proxy", "control", "collector", "node", "relay")
VARIANTS = ("ssl", "backup", "monitoring", "ha", "tuning", "logging", "federation", "audit")
ADDRESS_PARAMS = (
    "single_address", "cluster_vip_address", "cluster_local_address", "control_address",
    "openstack_control_address", "openstack_database_address", "stacklight_monitor_address",
)
CODENAMES = ("focal", "jammy", "noble")
OPENSTACK_RELEASES = ("queens", "rocky", "stein", "train", "ussuri", "victoria")


class McpLibrary:
    """The shared ``service.*`` and ``system.*`` classes (about 750 of them)."""

    def __init__(self, seed: int, files: InventoryFiles, schema: Schema) -> None:
        self.rng = random.Random(f"{seed}:mcp:library")
        self.values = LeafValues(self.rng)
        self.files = files
        self.schema = schema
        self.roles: dict[str, list[str]] = {}
        self.leaves: dict[tuple[str, str], list[Path]] = {}
        self.system: dict[str, list[str]] = {}      # formula -> its system class names
        self.covers: dict[str, list[tuple[str, str]]] = {}  # system class -> formula roles
        self.formula_params: dict[str, dict] = {}
        formulas = list(BASE_FORMULAS)
        for area in AREAS.values():
            formulas.extend(area["formulas"])
        for formula in formulas:
            self._formula(formula)

    # -- values ----------------------------------------------------------
    def _param_ref(self, formula: str, name: str, literal: object) -> str:
        """Reference a formula-level _param, defining its default in the support class."""
        key = f"{formula}_{name}"
        self.formula_params[formula].setdefault(key, literal)
        return "${_param:" + key + "}"

    def leaf_value(self, formula: str, role: str, section: str, leaf: str,
                   share: float) -> object:
        """A literal or, with probability ``share``, a reference suited to the leaf."""
        literal = self.values.for_leaf(leaf, formula)
        if self.rng.random() >= share:
            return literal
        own = "${" + f"{formula}:{role}:bind"
        pick = self.rng.random()
        if leaf == "host":
            return own + ":address}" if pick < 0.4 else \
                "${_param:" + self.rng.choice(ADDRESS_PARAMS) + "}"
        if leaf == "port":
            if pick < 0.5:
                return own + ":port}"
            return self._param_ref(formula, f"{section}_port", literal)
        if leaf == "url":
            return "http://${_param:cluster_vip_address}:" + own + f":port}}/{section}"
        if leaf in ("name", "path"):
            return f"/srv/${{_param:cluster_name}}/{formula}/{section}" if leaf == "path" \
                else "${_param:cluster_name}-" + f"{formula}-{section}"
        if leaf == "region":
            return "${_param:openstack_region}"
        return self._param_ref(formula, f"{section}_{leaf}", literal)

    def random_tree(self, formula: str, role: str, base: Path, sections: int,
                    leaves: tuple[int, int], share: float) -> dict:
        """A tree of ``sections`` sections under ``base`` (a path below formula:role)."""
        tree: dict = {}
        for section in self.rng.sample(SECTIONS, sections):
            for leaf in self.rng.sample(LEAVES, self.rng.randint(*leaves)):
                path = (formula, role, *base, section, leaf)
                if self.schema.claim(path, "scalar"):
                    value = self.leaf_value(formula, role, section, leaf, share)
                    set_path(tree, (*base, section, leaf), value)
                    if not base:
                        self.leaves[(formula, role)].append((section, leaf))
        return tree

    # -- classes ---------------------------------------------------------
    def _formula(self, formula: str) -> None:
        rng = self.rng
        self.formula_params[formula] = {
            f"{formula}_version": f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            f"{formula}_db_password": self.values.secret(),
        }
        count = rng.choices((1, 2, 3), weights=(3, 5, 2))[0]
        roles = rng.sample(ROLE_NAMES, count)
        self.roles[formula] = roles
        self.system[formula] = []
        for role in roles:
            self.leaves[(formula, role)] = []
            self._service_role(formula, role)
        for role in roles:
            self._system_role(formula, role)
        self.files.add_class(f"service.{formula}.support", {
            "parameters": {
                "_param": self.formula_params[formula],
                formula: {"_support": {
                    "collectd": {"enabled": rng.random() < 0.5},
                    "sensu": {"enabled": rng.random() < 0.5},
                    "prometheus": {"enabled": True},
                }},
            },
        })

    def _service_role(self, formula: str, role: str) -> None:
        port = self.rng.randrange(1024, 65000)
        for kind in ("single", "cluster"):
            own = "${" + f"{formula}:{role}:bind:port}}"
            tree: dict = {
                "enabled": True,
                "version": "${_param:" + f"{formula}_version}}",
                "bind": {"address": "${_param:single_address}" if kind == "single"
                         else "${_param:cluster_local_address}", "port": port},
            }
            for path in (("enabled",), ("version",), ("bind", "address"), ("bind", "port")):
                self.schema.claim((formula, role, *path), "scalar")
            tree.update(self.random_tree(formula, role, (), self.rng.randint(2, 4), (2, 5), 0.2))
            tree["tuning"] = {leaf: self.values.for_leaf(leaf, formula)
                              for leaf in self.rng.sample(("size", "timeout", "count", "mode"), 2)}
            apps = [formula]
            if kind == "cluster":
                self.schema.claim((formula, role, "members"), "list")
                tree["cluster"] = {"enabled": True, "vip": "${_param:cluster_vip_address}"}
                tree["members"] = [{"host": "${_param:cluster_node0" + f"{n}_address}}",
                                    "port": own} for n in (1, 2, 3)]
                apps.append(f"{formula}_cluster")
            self.files.add_class(f"service.{formula}.{role}.{kind}", {
                "classes": [f"service.{formula}.support"],
                "applications": apps,
                "parameters": {formula: {role: tree}},
            })

    def override_tree(self, formula: str, role: str, count: int, share: float) -> dict:
        """Overrides of existing leaves of formula:role (what site and cluster classes do)."""
        tree: dict = {}
        known = self.leaves[(formula, role)]
        for section, leaf in self.rng.sample(known, min(count, len(known))):
            set_path(tree, (section, leaf), self.leaf_value(formula, role, section, leaf, share))
        return tree

    def _system_role(self, formula: str, role: str) -> None:
        rng = self.rng
        for kind in ("single", "cluster"):
            name = f"system.{formula}.{role}.{kind}"
            tree = self.override_tree(formula, role, rng.randint(2, 5), 0.6)
            tree.update(self.random_tree(formula, role, (kind,), 1, (2, 4), 0.45))
            self.files.add_class(name, {
                "classes": [f"service.{formula}.{role}.{kind}"],
                "parameters": {
                    formula: {role: tree},
                    "monitoring": {"checks": [{
                        "name": f"{formula}_{role}", "command": f"check_{formula}",
                        "target": "${_param:single_address}",
                    }]},
                    "salt": {"minion": {"managed_formulas": [formula]}},
                },
            })
            self.system[formula].append(name)
            self.covers[name] = [(formula, role)]
        for variant in rng.sample(VARIANTS, rng.choices((0, 1, 2, 3), weights=(2, 3, 3, 2))[0]):
            name = f"system.{formula}.{role}.{variant}"
            parent = f"system.{formula}.{role}.{rng.choice(('single', 'cluster'))}"
            classes = [parent]
            covers = [(formula, role)]
            if rng.random() < 0.4:
                other = rng.choice(sorted(self.system))
                if other != formula and self.system[other]:
                    dependency = rng.choice(self.system[other][:2])
                    classes.insert(0, dependency)
                    covers += self.covers[dependency]
            if variant == "tuning":
                self.schema.claim((formula, role, "tuning"), "dict")
                tree = {"~tuning": {"size": rng.choice((64, 128, 256)), "mode": "tuned"}}
            else:
                tree = self.random_tree(formula, role, (variant,), rng.randint(1, 2), (2, 4), 0.5)
            self.files.add_class(name, {"classes": classes, "parameters": {formula: {role: tree}}})
            self.system[formula].append(name)
            self.covers[name] = covers

    def pick_system(self, rng: random.Random, formulas: tuple[str, ...], count: int) -> list[str]:
        """``count`` system classes of distinct formulas from ``formulas``."""
        chosen = rng.sample(formulas, min(count, len(formulas)))
        return [rng.choice(self.system[formula]) for formula in chosen]


def cluster_name(index: int) -> str:
    """Deterministic cluster names: atlas01-like words, numbered when they run out."""
    return f"{WORDS[index % len(WORDS)]}{index // len(WORDS) + 1:02d}"


def cluster_sizes(seed: int, nodes: int) -> list[int]:
    """Split ``nodes`` into clusters of 10-50 nodes (smaller only if nodes < 10)."""
    rng = random.Random(f"{seed}:mcp:sizes")
    sizes: list[int] = []
    left = nodes
    while left > 50:
        # Never leave a remainder too small to be a cluster of its own.
        size = min(rng.randint(10, 50), left - 10)
        sizes.append(size)
        left -= size
    if left:
        sizes.append(left)
    return sizes
