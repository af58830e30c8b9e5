"""Salt adapter: reclass parameters as pillar data, applications as top data.

The two functions keep the keyword options of reclass's own Salt adapter, so a master config
written for reclass works after renaming the module to `reclass_ng`:

    ext_pillar:
      - reclass_ng: {inventory_base_uri: /srv/reclass}
    master_tops:
      reclass_ng: {inventory_base_uri: /srv/reclass}

Every other keyword is a reclass-config.yml setting (`ignore_class_notfound`, ...). Salt itself
loads these functions through the modules in salt_modules/ (found via the `salt.loader` entry
point), which turn reclass-ng errors into Salt errors.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Mapping
from typing import Any

import orjson

import reclass_ng
from reclass_ng.adapters.inventory_source import checked_settings, inventory_base, open_inventory
from reclass_ng.adapters.plain_data import plain_json
from reclass_ng.incremental.adapter_pool import LiveInventoryPool
from reclass_ng.values import to_plain

PILLAR_ENTITY_URI = "salt-pillar://"

# The inventories of this master process, one per configuration, kept current between calls
# (only what changed on disk is rendered again; see doc/incremental.rst).
LIVE_INVENTORIES = LiveInventoryPool(open_inventory)


class PillarCopies:
    """Each node's pillar built once per rendered result, handed out as a private copy.

    Salt merges ext_pillar data into other dicts (and may change them later), so every call
    gets its own copy, made in C: parsing the parameters' JSON (adapters.plain_data.plain_json) where
    that is exact, else unpickling the pillar pickled once (dates stay dates). At most `limit`
    nodes are kept.
    """

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self._pillars: dict[str, tuple[Any, bool, bytes]] = {}
        self._lock = threading.Lock()

    def pillar(self, nodeinfo: Mapping[str, Any], floats_exact: bool = False) -> dict[str, Any]:
        """A copy of the pillar of `nodeinfo`; `floats_exact`: the files it was rendered from
        hold no NaN or infinity (reclass_ng.Inventory.floats_json_exact), so its JSON is not
        read back to compare."""
        name = nodeinfo["__reclass__"]["node"]
        parameters = nodeinfo.get("parameters")
        kept = self._pillars.get(name)
        if kept is None or kept[0] is not parameters:  # not this render's result
            # NaN and infinities come only from files PyYAML's own constructor read, which
            # makes the floats of the inventory that read them inexact.
            as_json = plain_json(parameters or {}, nan_possible=not floats_exact)
            kept = (parameters, as_json is not None,
                    as_json if as_json is not None else
                    pickle.dumps(pillar_data(nodeinfo), pickle.HIGHEST_PROTOCOL))
            with self._lock:
                if len(self._pillars) >= self.limit:
                    self._pillars.clear()
                self._pillars[name] = kept
        if not kept[1]:
            return pickle.loads(kept[2])  # type: ignore[no-any-return,unused-ignore]
        pillar: dict[str, Any] = orjson.loads(kept[2])
        pillar["__reclass__"] = reclass_pillar(nodeinfo)
        return pillar


PILLARS = PillarCopies()


def reclass_pillar(nodeinfo: Mapping[str, Any]) -> dict[str, Any]:
    """The `__reclass__` entry of a node's pillar."""
    return {
        "nodename": nodeinfo["__reclass__"]["node"],
        "applications": list(nodeinfo.get("applications") or []),
        "classes": list(nodeinfo.get("classes") or []),
        "environment": nodeinfo["environment"],
    }


def pillar_data(nodeinfo: Mapping[str, Any]) -> dict[str, Any]:
    """A node's pillar: its parameters plus `__reclass__` (node name, applications, classes, env)."""
    # Salt sends pillar data to minions with msgpack: plain copies of the engine's containers.
    pillar = to_plain(nodeinfo.get("parameters") or {})
    pillar["__reclass__"] = reclass_pillar(nodeinfo)
    return pillar


def node_top_data(nodeinfo: Mapping[str, Any]) -> dict[str, list[str]]:
    """Top data for one minion: `{environment: [applications]}`."""
    return {nodeinfo["environment"]: list(nodeinfo.get("applications") or [])}


def inventory_top_data(inventory: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Top data for every node: `{environment: {node: [applications]}}`."""
    top: dict[str, dict[str, list[str]]] = {}
    for name, nodeinfo in inventory["nodes"].items():
        top.setdefault(nodeinfo["environment"], {})[name] = list(nodeinfo.get("applications") or [])
    return top


def salt_error_message(caller: str, err: reclass_ng.ReclassError) -> str:
    """What Salt shows for an error: reclass-ng's whole report (file:line:column, reference
    chain, did you mean), said once to come from `caller` (e.g. `ext_pillar.reclass_ng`)."""
    text = "\n".join(err.report_lines())
    return text if text.startswith(f"{caller}: ") else f"{caller}: {text}"


def _with_inventory(caller: str, inventory_base_uri: str | None, settings: Mapping[str, Any],
                    node: str | None, work: Callable[[reclass_ng.Inventory], Any]) -> Any:
    """`work(inventory)` on this configuration's live inventory, current for `node`."""
    return LIVE_INVENTORIES.use(inventory_base(inventory_base_uri),
                                checked_settings(settings, caller), node, work)


def environment_override(inventory: reclass_ng.Inventory, pillarenv: str | None
                         ) -> str | None:
    """The environment to render a minion in: Salt's pillarenv/saltenv when the inventory sets
    allow_adapter_env_override (salt-formulas reclass, PR #102), else None (its own)."""
    return pillarenv if pillarenv and inventory.settings.allow_adapter_env_override else None


def ext_pillar(
    minion_id: str,
    pillar: Mapping[str, Any] | None,
    pillarenv: str | None = None,
    storage_type: str | None = None,
    inventory_base_uri: str | None = None,
    nodes_uri: str | None = None,
    classes_uri: str | None = None,
    class_mappings: list[str] | None = None,
    propagate_pillar_data_to_reclass: bool = False,
    compose_node_name: bool | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The pillar of `minion_id`: the node's parameters plus `__reclass__`.

    With `propagate_pillar_data_to_reclass`, the pillar Salt compiled so far is merged in at the
    lowest priority (below every class), so inventory references such as `${some:pillar:key}` can
    use it; it also makes the inventory depend on Salt, so it is off by default.

    `pillarenv` (Salt's pillarenv, else saltenv) replaces the node's environment when the
    setting `allow_adapter_env_override` is on, as in salt-formulas reclass.
    """
    extra = []
    if propagate_pillar_data_to_reclass and pillar:
        extra.append(reclass_ng.Entity(
            name=minion_id, uri=PILLAR_ENTITY_URI + minion_id, parameters=dict(pillar)))
    def pillar_of(inventory: reclass_ng.Inventory) -> dict[str, Any]:
        environment = environment_override(inventory, pillarenv)
        info = inventory.nodeinfo(minion_id, extra=extra, environment=environment)
        # Rendered for this call only (extra entities, another environment): no copy to keep.
        return pillar_data(info) if extra or environment else PILLARS.pillar(
            info, inventory.floats_json_exact)

    return _with_inventory("ext_pillar.reclass_ng", inventory_base_uri, dict(
        kwargs, storage_type=storage_type, nodes_uri=nodes_uri, classes_uri=classes_uri,
        class_mappings=class_mappings, compose_node_name=compose_node_name), minion_id,
        pillar_of)


def top(
    minion_id: str | None = None,
    pillarenv: str | None = None,
    storage_type: str | None = None,
    inventory_base_uri: str | None = None,
    nodes_uri: str | None = None,
    classes_uri: str | None = None,
    class_mappings: list[str] | None = None,
    compose_node_name: bool | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Top data: `{environment: [applications]}` for a minion, `{env: {node: [apps]}}` without one.

    `pillarenv` is the minion's environment override, as for ext_pillar."""
    def top_data(inventory: reclass_ng.Inventory) -> dict[str, Any]:
        if minion_id is None:
            return inventory_top_data(inventory.inventory())
        return node_top_data(inventory.nodeinfo(
            minion_id, environment=environment_override(inventory, pillarenv)))

    return _with_inventory("master_tops.reclass_ng", inventory_base_uri, dict(
        kwargs, storage_type=storage_type, nodes_uri=nodes_uri, classes_uri=classes_uri,
        class_mappings=class_mappings, compose_node_name=compose_node_name), minion_id, top_data)
