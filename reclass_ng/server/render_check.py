"""Would a node still render with a proposed nodes/ file? Checked before the file is written.

The proposed file is rendered in a shadow inventory in a temporary directory: the real
`classes/` directory linked in, every other node file linked at its own path (queries over the
other nodes still see them), and the node's file written with the proposed text. The real files
are never touched, so readers and other processes never see a file that would not render.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.server.errors import NODE_RENDER_ERROR, ApiError

# Settings that say where the inventory is; the shadow inventory has its own.
_LOCATION_SETTINGS = ("inventory_base_uri", "nodes_uri", "classes_uri", "config_file")


def check_node_renders(inventory: reclass_ng.Inventory, name: str, node_path: Path,
                       text: str) -> None:
    """Raise a 422 `node-render-error` naming the problem when `name` would not render with
    `text` as its file `node_path` (a file of `inventory`)."""
    storage = inventory.storage
    settings = {key: value for key, value in inventory.settings.as_mapping().items()
                if key not in _LOCATION_SETTINGS}
    with tempfile.TemporaryDirectory(prefix="reclass-ng-render-check-") as shadow:
        base = Path(shadow)
        # A yaml_fs storage (the service serves one): its directories.
        os.symlink(os.path.abspath(storage.classes_dir), base / "classes")  # type: ignore[attr-defined]
        nodes_root = Path(storage.nodes_dir)  # type: ignore[attr-defined]
        for node_file in storage.nodes.values():
            target = base / "nodes" / Path(node_file.path).relative_to(nodes_root)
            target.parent.mkdir(parents=True, exist_ok=True)
            if Path(node_file.path) == node_path:
                target.write_text(text, encoding="utf-8")
            else:
                os.symlink(node_file.path, target)
        try:
            reclass_ng.load(str(base), read_config=False, warn=lambda message: None,
                            **settings).nodeinfo(name)
        except ReclassError as err:
            message = err.message.replace(str(base), "<proposed>")
            raise ApiError(422, NODE_RENDER_ERROR,
                           f"The node would not render with this configuration, so nothing "
                           f"was written: {message}",
                           {"node": name, "error": message}) from err
