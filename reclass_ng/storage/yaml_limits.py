"""The YAML loader's limits (doc/service.rst, "Limits"): what a hostile file may not make it do.

Below both readers, the fast one (storage/yaml_load.py with storage/yaml_block.py) and the full
one (storage/yaml_full.py), so that neither imports the other for them.
"""

from __future__ import annotations

# Bytes of a file read at most (storage.yaml_load.read_input_file).
MAX_YAML_FILE_BYTES = 32 * 1024 * 1024
# Nesting of collections: libyaml's composer recurses in C, so a 50,000-deep flow list would
# overflow the C stack.
MAX_YAML_DEPTH = 200
# Values aliases may expand to (a 455-byte "billion laughs" file expands to 10**9).
MAX_EXPANDED_NODES = 1_000_000
# Spellings of plain scalars each memo table of a YamlLoader keeps (about 3 MB at the most).
MAX_MEMO_ENTRIES = 20_000
