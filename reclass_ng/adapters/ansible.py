"""Ansible adapter: reclass nodes as hosts, classes and applications as groups, parameters as vars.

Both the dynamic inventory script (`reclass-ansible --list`) and the inventory plugin
(`plugin: reclass_ng.reclass.inventory`) build their data here:

- every class a node has (its whole ancestry, as reclass lists it) is a group of that name;
- every application is a group named `<application><postfix>` (postfix `_hosts` by default; with
  an empty postfix a class and an application of the same name share one group);
- host variables are the node's parameters plus `__reclass__` (node, name, uri, environment,
  timestamp, classes, applications), as reclass's `--host` prints them;
- `--list` carries all host variables under `_meta.hostvars`, so Ansible never runs `--host`.

Groups are flat host lists: reclass has already expanded each node's class ancestry, so nested
groups (`children`) would add no members.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from reclass_ng.values import to_plain

DEFAULT_APPLICATIONS_POSTFIX = "_hosts"
# With sanitised names, a group named like a host (class `db`, node `db`) gets this appended.
HOST_CLASH_SUFFIX = "_group"

# Ansible's own rule for group names (ansible.constants.INVALID_VARIABLE_NAMES): a name must be a
# Python identifier; `role.web` is accepted only with a warning and cannot be used in `groups.x`.
_INVALID_GROUP_CHARS = re.compile(r"^[\d\W]|[^\w]")


def collections_path() -> str:
    """The directory to add to Ansible's collections path to find `reclass_ng.reclass.inventory`.

    It holds `ansible_collections/reclass_ng/reclass/`, the collection installed with this package.
    """
    return os.path.dirname(os.path.abspath(__file__))


def sanitize_group_name(name: str) -> str:
    """A group name Ansible accepts: each invalid character (and a leading digit) becomes `_`."""
    return _INVALID_GROUP_CHARS.sub("_", name)


def host_vars(nodeinfo: Mapping[str, Any]) -> dict[str, Any]:
    """One host's variables: its parameters plus `__reclass__` with meta data, classes, apps."""
    # Ansible's variable storage refuses anything but the built-in types ("Type 'OwnedDict' is
    # unsupported for variable storage"): plain copies of the engine's containers.
    variables = to_plain(nodeinfo.get("parameters") or {})
    meta = to_plain(nodeinfo.get("__reclass__") or {})
    meta["classes"] = list(nodeinfo.get("classes") or [])
    meta["applications"] = list(nodeinfo.get("applications") or [])
    variables["__reclass__"] = meta
    return variables


def host_groups(
    inventory: Mapping[str, Any],
    *,
    applications_postfix: str = DEFAULT_APPLICATIONS_POSTFIX,
    sanitize: bool = False,
) -> dict[str, list[str]]:
    """Group name -> hosts, from `inventory()`'s `classes` and `applications` maps.

    Hosts keep the order reclass gives; a group that two names collapse into (an empty postfix,
    or sanitising `a.b` and `a_b`) gets the hosts of both, each once. With `sanitize`, names
    are ones Ansible takes without a warning: invalid characters become `_`, and a name that is
    also a host's gets HOST_CLASH_SUFFIX.
    """
    named: list[tuple[str, Iterable[str]]] = list((inventory.get("classes") or {}).items())
    named += [(app + applications_postfix, hosts)
              for app, hosts in (inventory.get("applications") or {}).items()]
    hostnames = set(inventory.get("nodes") or ()) if sanitize else set()
    groups: dict[str, list[str]] = {}
    for name, hosts in named:
        if sanitize:
            name = sanitize_group_name(name)
            if name in hostnames:  # Ansible warns "Found both group and host with same name"
                name += HOST_CLASH_SUFFIX
        group = groups.setdefault(name, [])
        group.extend(host for host in hosts if host not in group)
    return groups


def script_inventory(
    inventory: Mapping[str, Any],
    *,
    applications_postfix: str = DEFAULT_APPLICATIONS_POSTFIX,
    sanitize: bool = False,
) -> dict[str, Any]:
    """The JSON object of a dynamic inventory script's `--list`, with `_meta.hostvars`."""
    listing: dict[str, Any] = {
        name: {"hosts": hosts}
        for name, hosts in host_groups(
            inventory, applications_postfix=applications_postfix, sanitize=sanitize).items()
    }
    # A node in no group would be missing from Ansible's inventory altogether (`_meta` only adds
    # variables to hosts a group has named), so such nodes are listed as `ungrouped`.
    grouped = {host for group in listing.values() for host in group["hosts"]}
    lonely = [name for name in inventory["nodes"] if name not in grouped]
    if lonely:
        listing.setdefault("ungrouped", {"hosts": []})["hosts"].extend(lonely)
    listing["_meta"] = {
        "hostvars": {name: host_vars(info) for name, info in inventory["nodes"].items()}
    }
    return listing
