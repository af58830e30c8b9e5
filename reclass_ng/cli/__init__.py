"""Command-line entry points: `reclass` (drop-in for kapicorp-reclass) and `reclass-ng`.

PyYAML is imported only when a run needs it (`storage.yaml_import.pyyaml`): a run whose files
storage.yaml_block reads and whose output needs no PyYAML never imports it.
"""
