"""Adapters that let Puppet, Salt and Ansible consume a reclass-ng inventory.

- puppet.py: the external node classifier (`reclass-puppet NODE`),
- salt.py: `ext_pillar` and master_tops `top` (loaded by Salt through salt_modules/),
- ansible.py: the dynamic inventory (`reclass-ansible --list`) and the data the inventory plugin in
  ansible_collections/ uses,
- inventory_source.py: where an adapter finds the inventory and which settings it accepts.
"""
