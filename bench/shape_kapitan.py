"""The ``kapitan`` shape: fewer, larger classes with big parameter trees.

Layout (class names; files under ``classes/``, targets under ``targets/``)::

    common                       kapitan.vars.target, namespace, labels
    kapitan.compile.jsonnet|helm compile defaults
    env.<env>                    dev / staging / prod settings
    tenants.<tenant>             tenant identity and quotas
    components.<component>       one application: a big tree plus compile entries
    components.<component>.<flavor>  optional add-ons (ha, monitoring, ...)
    profiles.<profile>           a set of components with overrides

A target lists common, its environment, tenant and profile, and sometimes a
few more components. References are fewer than in the mcp shape (~15%).
"""

from __future__ import annotations

import random

from inventory_files import InventoryFiles
from param_trees import LEAVES, WORDS, LeafValues, Schema, set_path

ENVIRONMENTS = ("dev", "staging", "prod")
CONFIG_KEYS = (
    "server", "client", "storage", "auth", "ingress", "service", "probes", "metrics",
    "features", "limits", "tracing", "replication", "scheduling", "security_context",
    "persistence", "sidecar", "cache", "queue", "logging", "alerts",
)
FLAVORS = ("ha", "monitoring", "backup", "debug")
COMPONENTS = 48
PROFILES = 16
TENANTS = 12
CONFIG_FILE = "nodes_uri: targets\nclasses_uri: classes\ncompose_node_name: false\n"
TARGET_EXPORTS = {"target": {"name": "${target_name}", "env": "${env}", "tenant": "${tenant}"}}


class KapitanModel:
    """Generates the classes and targets of a Kapitan-style inventory."""

    def __init__(self, seed: int, queries: bool) -> None:
        self.seed = seed
        self.rng = random.Random(f"{seed}:kapitan:library")
        self.values = LeafValues(self.rng)
        self.schema = Schema()
        self.queries = queries
        self.files = InventoryFiles(nodes_dir="targets")
        self.files.extra_files["reclass-config.yml"] = CONFIG_FILE
        # kapicorp-reclass 2.0.0 reads its settings from this name in the working directory.
        self.files.extra_files["kapicorp-reclass-config.yml"] = CONFIG_FILE
        self.components = [f"{WORDS[i % len(WORDS)]}_{['api', 'worker', 'db', 'ui'][i // 26 % 4]}"
                           for i in range(COMPONENTS)]
        self.leaves: dict[str, list[tuple[str, ...]]] = {c: [] for c in self.components}
        self.base_leaves: dict[str, list[tuple[str, ...]]] = {}
        self.flavors: dict[str, list[str]] = {}
        self._base_classes()
        for component in self.components:
            self._component(component)
        self.profiles = [self._profile(number) for number in range(PROFILES)]
        self.tenants = [self._tenant(number) for number in range(TENANTS)]

    def value(self, component: str, path: tuple[str, ...], share: float,
              internal: bool = True) -> object:
        """A literal for the leaf at ``path``, or with probability ``share`` a reference.

        ``internal`` allows references to other leaves of the component's own
        class. Overrides never use them: only base values point at base leaves
        defined earlier, so references can never form a cycle, and they never
        point at leaves of optional flavor classes, so they always resolve.
        """
        leaf = path[-1]
        literal = self.values.for_leaf(leaf, component)
        if self.rng.random() >= share:
            return literal
        if leaf in ("name", "path", "host", "url"):
            return {
                "name": "${target_name}-" + component,
                "path": f"/data/${{namespace}}/{component}",
                "host": f"{component}.${{namespace}}.svc",
                "url": f"https://{component}.${{domain}}/",
            }[leaf]
        pool = self.base_leaves.get(component, self.leaves[component])
        known = [p for p in pool if p[-1] == leaf and p != path]
        if known and internal:
            return "${" + ":".join((component, *self.rng.choice(known))) + "}"
        return literal

    def config_tree(self, component: str, prefix: tuple[str, ...], depth: int,
                    share: float) -> dict:
        """A nested configuration tree; leaves are registered for later references."""
        tree: dict = {}
        for key in self.rng.sample(CONFIG_KEYS, self.rng.randint(3, 5)):
            path = (*prefix, key)
            if depth > 1 and self.rng.random() < 0.6:
                if self.schema.claim((component, *path), "dict"):
                    tree[key] = self.config_tree(component, path, depth - 1, share)
                continue
            for leaf in self.rng.sample(LEAVES, self.rng.randint(2, 5)):
                full = (*path, leaf)
                if self.schema.claim((component, *full), "scalar"):
                    set_path(tree, (key, leaf), self.value(component, full, share))
                    self.leaves[component].append(full)
        return tree

    def _base_classes(self) -> None:
        add = self.files.add_class
        add("common", {
            "classes": ["kapitan.compile.jsonnet"],
            "parameters": {
                "namespace": "${target_name}",
                "domain": "${env}.example.com",
                "kapitan": {
                    "vars": {"target": "${target_name}", "namespace": "${namespace}"},
                    "labels": {"managed_by": "kapitan", "tenant": "${tenant}"},
                    "secrets": {"gkms": {"key": "projects/bench/keyRings/kapitan/keys/main"}},
                },
                "labels": {"app_kubernetes_io_managed_by": "kapitan", "env": "${env}"},
            },
            **({"exports": TARGET_EXPORTS} if self.queries else {}),
        })
        for kind in ("jsonnet", "helm"):
            add(f"kapitan.compile.{kind}", {"parameters": {"kapitan": {
                "compile_defaults": {kind: {"output_type": "yaml", "prune": True}},
                "compile": [],
            }}})
        for index, env in enumerate(ENVIRONMENTS):
            add(f"env.{env}", {"parameters": {
                "env": env,
                "replicas": index + 1,
                "resources_tier": ("small", "medium", "large")[index],
                "monitoring": {"enabled": env != "dev", "retention_days": 7 * (index + 1)},
            }})

    def _component(self, component: str) -> None:
        rng = self.rng
        version = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        for key in ("image", "version", "replicas", "namespace"):
            self.schema.claim((component, key), "scalar")
        tree = {
            "version": version,
            "image": f"registry.example.com/{component}:${{{component}:version}}",
            "replicas": "${replicas}",
            "namespace": "${namespace}",
            "resources": {
                "requests": {"cpu": f"{rng.choice((100, 250, 500))}m",
                             "memory": f"{rng.choice((128, 256, 512))}Mi"},
                "limits": {"cpu": f"{rng.choice((1, 2, 4))}", "memory": "1Gi"},
            },
            "env": [{"name": f"{component.upper()}_{rng.choice(CONFIG_KEYS).upper()}",
                     "value": self.values.for_leaf(rng.choice(LEAVES), component)}
                    for _ in range(rng.randint(2, 5))],
            "config": self.config_tree(component, ("config",), 3, 0.12),
        }
        self.schema.claim((component, "env"), "list")
        self.base_leaves[component] = list(self.leaves[component])
        compile_entry = {
            "output_path": component,
            "input_type": rng.choice(("jsonnet", "jsonnet", "helm")),
            "input_paths": [f"components/{component}/main.jsonnet"],
        }
        self.files.add_class(f"components.{component}", {
            "classes": [f"kapitan.compile.{compile_entry['input_type']}"],
            "parameters": {
                component: tree,
                "kapitan": {"compile": [compile_entry],
                            "dependencies": [{"type": "https",
                                              "source": f"https://charts.example.com/{component}",
                                              "output_path": f"vendor/{component}"}]},
            },
        })
        self.flavors[component] = []
        for flavor in rng.sample(FLAVORS, rng.randint(0, 2)):
            name = f"components.{component}.{flavor}"
            extra = self.config_tree(component, (flavor,), 2, 0.2)
            self.files.add_class(name, {"classes": [f"components.{component}"],
                                        "parameters": {component: extra}})
            self.flavors[component].append(name)

    def component_class(self, component: str) -> str:
        choices = [f"components.{component}", *self.flavors[component]]
        return self.rng.choice(choices)

    def overrides(self, components: list[str], count: int, share: float) -> dict:
        """Overrides of existing leaves of some components."""
        tree: dict = {}
        for component in self.rng.sample(components, min(count, len(components))):
            known = self.leaves[component]
            for path in self.rng.sample(known, min(3, len(known))):
                value = self.value(component, path, share, internal=False)
                set_path(tree, (component, *path), value)
        return tree

    def _profile(self, number: int) -> tuple[str, list[str]]:
        name = f"profiles.{WORDS[number % len(WORDS)]}"
        members = self.rng.sample(self.components, self.rng.randint(4, 9))
        classes = [self.component_class(c) for c in members]
        params = self.overrides(members, 3, 0.25)
        if self.rng.random() < 0.3:
            set_path(params, (members[0], "~resources"), {"requests": {"cpu": "50m"}})
        self.files.add_class(name, {"classes": classes, "parameters": params})
        return name, members

    def _tenant(self, number: int) -> str:
        name = f"tenant{number + 1:02d}"
        self.files.add_class(f"tenants.{name}", {"parameters": {
            "tenant": name,
            "quota": {"cpu": self.rng.choice((8, 16, 32)), "memory_gb": self.rng.choice((32, 64))},
            "owners": [f"{self.values.word()}@example.com"],
        }})
        return name

    def targets(self, count: int) -> None:
        rng = random.Random(f"{self.seed}:kapitan:targets")
        self.rng = rng
        query_number = 0
        for index in range(count):
            env = ENVIRONMENTS[index % len(ENVIRONMENTS)]
            tenant = self.tenants[index // len(ENVIRONMENTS) % len(self.tenants)]
            profile, members = self.profiles[rng.randrange(len(self.profiles))]
            name = f"{tenant}-{env}-{index + 1:05d}"
            classes = ["common", f"env.{env}", f"tenants.{tenant}", profile]
            extra = [c for c in rng.sample(self.components, rng.randint(0, 2)) if c not in members]
            classes += [self.component_class(c) for c in extra]
            params = self.overrides(members + extra, rng.randint(0, 2), 0.2)
            params["target_name"] = name
            if rng.random() < 0.2:
                params["replicas"] = rng.randint(2, 6)
            if self.queries and rng.random() < 1 / 3:
                params["peers"] = target_queries(query_number)
                query_number += 1
            self.files.add_node(name, {"classes": classes, "parameters": params})


def target_queries(number: int) -> dict:
    """Queries of the ``number``-th querying target: value, value-if and list-if in turn."""
    queries = {"same_tenant": "$[ exports:target:name if exports:target:tenant == self:tenant ]"}
    if number % 3 == 0:
        queries["all_envs"] = "$[ exports:target:env ]"
    elif number % 3 == 1:
        queries["same_env"] = "$[ if exports:target:env == self:env ]"
    else:
        same_tenant = "exports:target:tenant == self:tenant"
        queries["prod"] = f"$[ if exports:target:env == prod and {same_tenant} ]"
    return queries


def generate_kapitan(seed: int, nodes: int, queries: bool) -> InventoryFiles:
    """The whole ``kapitan`` inventory with ``nodes`` targets."""
    model = KapitanModel(seed, queries)
    model.targets(nodes)
    return model.files
