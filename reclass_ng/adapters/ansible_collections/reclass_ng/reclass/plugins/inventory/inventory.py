"""Ansible inventory plugin `reclass_ng.reclass.inventory`: hosts and groups from reclass-ng.

Ansible reads the DOCUMENTATION string of this file (without importing it) to learn the options,
so it has to live here, next to the plugin class.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: inventory
short_description: Hosts, groups and host variables from a reclass-ng inventory
description:
  - Every reclass node is a host; its parameters (plus C(__reclass__) with the node's classes,
    applications and environment) are its host variables.
  - Every class of a node is a group of that name; every application is a group named
    application plus O(applications_postfix).
  - The source is a YAML file whose name ends in C(reclass_ng.yml) or C(reclass_ng.yaml).
requirements:
  - reclass-ng installed in the Python environment that runs Ansible
extends_documentation_fragment:
  - constructed
options:
  plugin:
    description: Marks the file as a source for this plugin.
    required: true
    choices: ["reclass_ng.reclass.inventory"]
  inventory_base_uri:
    description:
      - The inventory directory (holding nodes/ and classes/). A relative path is relative to
        the directory of this YAML file.
      - Without it, the variable E(RECLASS_NG_INVENTORY), then the inventory_base_uri of
        reclass-config.yml decide.
    type: path
    env:
      - name: RECLASS_NG_INVENTORY
  nodes_uri:
    description: Nodes directory, relative to the inventory directory.
    type: str
  classes_uri:
    description: Classes directory, relative to the inventory directory.
    type: str
  applications_postfix:
    description:
      - Appended to application names to form group names. Defaults to the
        applications_postfix setting of reclass-config.yml, which defaults to C(_hosts).
    type: str
  sanitize_group_names:
    description:
      - Replace characters Ansible does not allow in group names (the dot in C(role.web)) with
        an underscore, and append C(_group) to a group named like a host, so Ansible prints no
        group name warning.
    type: bool
    default: false
  settings:
    description: Further reclass-config.yml settings, such as C(ignore_class_notfound).
    type: dict
    default: {}
"""

EXAMPLES = r"""
# inventory.reclass_ng.yml
plugin: reclass_ng.reclass.inventory
inventory_base_uri: /srv/reclass
sanitize_group_names: true
keyed_groups:
  - key: __reclass__.environment
    prefix: env
"""

import os  # noqa: E402 - Ansible wants DOCUMENTATION first

from ansible.errors import AnsibleParserError  # noqa: E402
from ansible.plugins.inventory import BaseInventoryPlugin, Constructable  # noqa: E402

try:
    from reclass_ng.adapters import ansible as ansible_adapter
    from reclass_ng.adapters.inventory_source import checked_settings, open_inventory
    from reclass_ng.api import other_nodes_errors
    from reclass_ng.errors import MultipleErrors, ReclassError
except ImportError as err:  # pragma: no cover - reported when Ansible loads the plugin
    RECLASS_NG_IMPORT_ERROR: ImportError | None = err
else:
    RECLASS_NG_IMPORT_ERROR = None

SOURCE_SUFFIXES = ("reclass_ng.yml", "reclass_ng.yaml")


class InventoryModule(BaseInventoryPlugin, Constructable):
    """Adds every reclass-ng node with its groups and variables to Ansible's inventory."""

    NAME = "reclass_ng.reclass.inventory"
    # The inventory is the operator's own YAML, as trusted as a YAML inventory file: Jinja in its
    # values is rendered, exactly as with reclass-ansible through Ansible's script plugin.
    trusted_by_default = True

    def verify_file(self, path: str) -> bool:
        return super().verify_file(path) and path.endswith(SOURCE_SUFFIXES)

    def parse(self, inventory, loader, path, cache=True):  # noqa: ANN001 - Ansible's signature
        super().parse(inventory, loader, path, cache)
        if RECLASS_NG_IMPORT_ERROR is not None:
            raise AnsibleParserError(
                f"The reclass_ng inventory plugin needs the reclass-ng Python package in the "
                f"Python that runs Ansible: {RECLASS_NG_IMPORT_ERROR}")
        self._read_config_data(path)
        opened: list = []
        try:
            data = self._reclass_inventory(os.path.dirname(os.path.abspath(path)), opened)
        except ReclassError as err:
            # The whole report (file:line:column, did you mean) of every failing node, as
            # `reclass --inventory` prints it.
            others = other_nodes_errors(opened[0], err) if opened and err.node else []
            found = MultipleErrors([err, *others]) if others else err
            raise AnsibleParserError("reclass-ng: " + "\n".join(found.report_lines())) from None
        self._populate(data)

    def _reclass_inventory(self, source_dir: str, opened: list) -> dict:
        base = self.get_option("inventory_base_uri")
        if base:
            base = os.path.join(source_dir, os.path.expanduser(base))
        settings = dict(self.get_option("settings") or {})
        settings.update(nodes_uri=self.get_option("nodes_uri"),
                        classes_uri=self.get_option("classes_uri"))
        reclass_inventory = open_inventory(
            base, **checked_settings(settings, "reclass_ng.reclass.inventory settings"))
        opened.append(reclass_inventory)
        postfix = self.get_option("applications_postfix")
        if postfix is None:
            postfix = reclass_inventory.settings.applications_postfix
        return ansible_adapter.script_inventory(
            reclass_inventory.inventory(), applications_postfix=postfix,
            sanitize=self.get_option("sanitize_group_names"))

    def _populate(self, data: dict) -> None:
        hostvars = data.pop("_meta")["hostvars"]
        for host, variables in hostvars.items():
            self.inventory.add_host(host)
            for key, value in variables.items():
                self.inventory.set_variable(host, key, value)
        for group, members in data.items():
            group_name = self.inventory.add_group(group)
            for host in members["hosts"]:
                self.inventory.add_host(host, group=group_name)
        strict = self.get_option("strict")
        for host, variables in hostvars.items():
            self._set_composite_vars(self.get_option("compose"), variables, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, host,
                                              strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, host,
                                           strict=strict)
