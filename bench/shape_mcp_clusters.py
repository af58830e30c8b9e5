"""Clusters and nodes of the ``mcp`` shape (the library is in shape_mcp.py)."""

from __future__ import annotations

import random

from inventory_files import InventoryFiles
from inventory_stats import expand_classes
from param_trees import Schema, set_path
from shape_mcp import (
    AREAS,
    BASE_FORMULAS,
    CODENAMES,
    OPENSTACK_RELEASES,
    PRIMARY_AREAS,
    McpLibrary,
    cluster_name,
    cluster_sizes,
)

# Nodes end up with 40-75 classes; optional extras are dropped beyond this.
MAX_CLASSES_PER_NODE = 72

# Exports every node defines when --queries is on; the queries below read them.
NODE_EXPORTS = {
    "node": {
        "name": "${_reclass_:name:full}",
        "cluster": "${_param:cluster_name}",
        "role": "${_param:node_role}",
        "address": "${_param:single_address}",
    }
}


def role_templates(seed: int, library: McpLibrary) -> dict[tuple[str, str], list[str]]:
    """The system classes every cluster's role of a kind starts from."""
    rng = random.Random(f"{seed}:mcp:templates")
    templates = {}
    for area, spec in AREAS.items():
        for role, _prefix, _count in spec["roles"]:
            templates[(area, role)] = library.pick_system(rng, spec["formulas"], rng.randint(4, 6))
    return templates


def allocate_roles(areas: list[str], size: int) -> list[tuple[str, str, str]]:
    """(area, role, host prefix) for each of ``size`` nodes of a cluster."""
    fixed = [(a, r, p, c) for a in areas for r, p, c in AREAS[a]["roles"] if c]
    scaled = [(a, r, p) for a in areas for r, p, c in AREAS[a]["roles"] if not c]
    counts = [c for *_, c in fixed]
    # Shrink the fixed-size roles (down to one node each) until the scaled ones get a node.
    while sum(counts) > max(size - len(scaled), 0) and max(counts, default=0) > 1:
        counts[counts.index(max(counts))] -= 1
    plan = []
    for (area, role, prefix, _), count in zip(fixed, counts, strict=True):
        plan.extend([(area, role, prefix)] * count)
    plan = plan[:size]
    left = size - len(plan)
    for index in range(left):
        plan.append(scaled[index % len(scaled)] if scaled else plan[index % len(plan)])
    return plan


class McpCluster:
    """One cluster: its classes and nodes."""

    def __init__(self, seed: int, index: int, size: int, library: McpLibrary,
                 templates: dict, files: InventoryFiles, schema: Schema, queries: bool) -> None:
        self.rng = random.Random(f"{seed}:mcp:cluster:{index}")
        self.name = cluster_name(index)
        self.net = f"10.{10 + index // 200}.{index % 200}"
        self.library = library
        self.files = files
        self.schema = schema
        self.queries = queries
        rng = self.rng
        primary = rng.choice(PRIMARY_AREAS)
        others = [a for a in AREAS if a != primary]
        chosen = {primary, *rng.sample(others, rng.randint(1, 2))}
        self.areas = [a for a in AREAS if a in chosen]
        plan = allocate_roles(self.areas, size)
        numbers: dict[str, int] = {}
        self.hosts: list[tuple[str, str, str]] = []   # (host, area, role)
        for area, role, prefix in plan:
            numbers[prefix] = numbers.get(prefix, 0) + 1
            self.hosts.append((f"{prefix}{numbers[prefix]:02d}", area, role))
        self.covers: dict[str, list[tuple[str, str]]] = {}
        self._cluster_init()
        self._infra()
        for area in self.areas:
            self._area(area, templates)

    def cls(self, *parts: str) -> str:
        return ".".join(("cluster", self.name, *parts))

    def class_count(self, classes: list[str]) -> int:
        """How many classes an entity listing ``classes`` (absolute names) expands to."""
        return len(expand_classes({"classes": classes}, self.files.classes))

    def covered(self, classes: list[str]) -> list[tuple[str, str]]:
        """Formula roles brought in by ``classes`` (system classes or known cluster classes)."""
        found: list[tuple[str, str]] = []
        for name in classes:
            for item in self.library.covers.get(name) or self.covers.get(name, []):
                if item not in found:
                    found.append(item)
        return found

    def _cluster_init(self) -> None:
        rng, net = self.rng, self.net
        first = [host for host, *_ in self.hosts[:3]]
        while len(first) < 3:
            first.append(first[-1])
        params = {
            "cluster_name": self.name,
            "cluster_domain": f"{self.name}.local",
            "cluster_public_host": "${_param:cluster_name}.example.net",
            "cluster_vip_address": f"{net}.250",
            "cluster_local_address": "${_param:single_address}",
            "single_address": f"{net}.254",
            "control_address": "${_param:single_address}",
            "openstack_control_address": f"{net}.251",
            "openstack_database_address": "${_param:openstack_control_address}",
            "openstack_message_queue_address": "${_param:openstack_control_address}",
            "openstack_region": rng.choice(("RegionOne", "RegionTwo")),
            "openstack_version": rng.choice(OPENSTACK_RELEASES),
            "stacklight_monitor_address": f"{net}.252",
            "infra_config_address": f"{net}.253",
            "salt_master_host": "${_param:infra_config_address}",
            "linux_system_codename": rng.choice(CODENAMES),
            "apt_mirror": "http://mirror.${_param:cluster_domain}/ubuntu",
            "admin_email": "ops@${_param:cluster_domain}",
            "dns_server01": f"{net}.2",
            "dns_server02": f"{net}.3",
            "node_role": "generic",
        }
        for number, host in enumerate(first, start=1):
            params[f"cluster_node0{number}_address"] = "${_param:" + f"{host}_address}}"
        for area in self.areas:
            for formula in rng.sample(AREAS[area]["formulas"], 2):
                params[f"{formula}_version"] = "${_param:openstack_version}" \
                    if area == "openstack" else f"{rng.randint(1, 9)}.{rng.randint(0, 9)}"
        self.files.add_class(self.cls(), {"parameters": {"_param": params}})

    def _infra(self) -> None:
        picks = self.library.pick_system(self.rng, BASE_FORMULAS, self.rng.randint(7, 9))
        addresses = {f"{host}_address": f"{self.net}.{10 + n}"
                     for n, (host, *_) in enumerate(self.hosts)}
        table = {host: {"address": "${_param:" + f"{host}_address}}",
                        "names": [host, host + ".${_param:cluster_domain}"]}
                 for host, *_ in self.hosts}
        document: dict = {
            "classes": [self.cls(), *picks],
            "parameters": {"_param": addresses, "linux": {"network": {"host": table}}},
        }
        if self.queries:
            document["exports"] = NODE_EXPORTS
        self.files.add_class(self.cls("infra"), document)
        self.covers[self.cls("infra")] = self.covered(picks)

    def overrides(self, covers: list[tuple[str, str]], count: int, share: float) -> dict:
        """Site-specific overrides of leaves of some of the covered formula roles."""
        tree: dict = {}
        for formula, role in self.rng.sample(covers, min(count, len(covers))):
            found = self.library.override_tree(formula, role, self.rng.randint(1, 3), share)
            if found:
                tree.setdefault(formula, {})[role] = found
        return tree

    def _area(self, area: str, templates: dict) -> None:
        rng = self.rng
        formulas = AREAS[area]["formulas"]
        common = self.library.pick_system(rng, formulas, rng.randint(1, 2))
        self.covers[self.cls(area, "common")] = self.covered(common)
        params = self.overrides(self.covered(common), 2, 0.5)
        params["_param"] = {f"{area}_{key}": self.library.values.for_leaf(key, area)
                            for key in ("name", "region", "port")}
        self.files.add_class(self.cls(area, "common"), {"classes": common, "parameters": params})
        for role in sorted({r for _h, a, r in self.hosts if a == area}):
            extra = self.library.pick_system(rng, formulas, rng.randint(0, 2))
            picks = [c for c in templates[(area, role)] + extra if c not in common]
            picks = list(dict.fromkeys(picks))
            # Leave room for the node's own optional extra classes.
            limit = MAX_CLASSES_PER_NODE - 6
            while len(picks) > 1 and self.class_count(
                    [self.cls("infra"), self.cls(area, "common"), *picks]) > limit:
                picks.pop()
            classes = [self.cls("infra"), ".common", *picks]
            covers = self.covered([self.cls("infra"), self.cls(area, "common"), *picks])
            params = self.overrides(covers, rng.randint(2, 4), 0.5)
            params["_param"] = {"node_role": role, "keepalived_vip_interface": "ens3"}
            if rng.random() < 0.25:
                formula, role_name = rng.choice(covers)
                set_path(params, (formula, role_name, "~tuning"), {"mode": "site", "count": 4})
            if rng.random() < 0.1:
                set_path(params, ("salt", "minion", "~managed_formulas"), ["linux", "salt"])
            self.files.add_class(self.cls(area, role), {"classes": classes, "parameters": params})
            self.covers[self.cls(area, role)] = covers

    def add_nodes(self, query_counter: list[int]) -> None:
        """Write the node files of this cluster (``query_counter`` numbers querying nodes)."""
        rng = self.rng
        for host, area, role in self.hosts:
            node = f"{host}-{self.name}"
            classes = [self.cls(area, role)]
            if rng.random() < 0.3:
                formulas = AREAS[area]["formulas"] + BASE_FORMULAS
                classes += self.library.pick_system(rng, formulas, rng.randint(1, 2))
                while len(classes) > 1 and self.class_count(classes) > MAX_CLASSES_PER_NODE:
                    classes.pop()
            covers = self.covered(classes)
            params = self.overrides(covers, 1, 0.3) if rng.random() < 0.5 else {}
            params["_param"] = {"single_address": "${_param:" + f"{host}_address}}"}
            if rng.random() < 0.2:
                params["_param"]["linux_system_codename"] = rng.choice(CODENAMES)
            params["linux"] = {
                "system": {"name": "${_reclass_:name:full}", "domain": "${_param:cluster_domain}"},
                "network": {"interface": {"ens3": {
                    "enabled": True, "type": "eth", "proto": "static",
                    "mtu": rng.choice((1500, 9000)), "netmask": "255.255.255.0",
                    "address": "${_param:single_address}", "gateway": f"{self.net}.1",
                    "name_servers": [f"{self.net}.2", f"{self.net}.3"],
                }}},
            }
            document: dict = {"classes": classes}
            if rng.random() < 0.05:
                document["applications"] = [f"~{rng.choice(covers)[0]}"]
            if rng.random() < 0.05:
                formula, role_name = rng.choice(covers)
                set_path(params, (formula, role_name, "~tuning"), {"mode": "node"})
            if self.queries and rng.random() < 1 / 3:
                params["peers"] = query_parameters(query_counter[0])
                query_counter[0] += 1
            document["parameters"] = params
            self.files.add_node(node, document, subdir=self.name)


def query_parameters(number: int) -> dict:
    """Queries of the ``number``-th querying node: value, value-if and list-if in turn."""
    same_cluster = "exports:node:cluster == self:_param:cluster_name"
    queries = {"cluster_addresses": f"$[ exports:node:address if {same_cluster} ]"}
    if number % 3 == 0:
        queries["all_nodes"] = "$[ exports:node:name ]"
    elif number % 3 == 1:
        same_role = "exports:node:role == self:_param:node_role"
        queries["same_role"] = f"$[ if {same_role} and {same_cluster} ]"
    else:
        queries["monitors"] = "$[ if exports:node:role == monitor ]"
    return queries


def generate_mcp(seed: int, nodes: int, queries: bool) -> InventoryFiles:
    """The whole ``mcp`` inventory for ``nodes`` nodes."""
    files = InventoryFiles()
    schema = Schema()
    library = McpLibrary(seed, files, schema)
    templates = role_templates(seed, library)
    counter = [0]
    for index, size in enumerate(cluster_sizes(seed, nodes)):
        cluster = McpCluster(seed, index, size, library, templates, files, schema, queries)
        cluster.add_nodes(counter)
    return files
