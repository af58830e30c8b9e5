"""The classifier HTTP service: the Node Classifier v1 API over a reclass YAML inventory.

Desired state (groups/, nodes/) stays in the inventory's YAML, written atomically and keeping
comments; observed state (check-ins, facts) goes to SQLite outside it. Start it with
`reclass-ng serve -b DIR`, or build the ASGI app yourself:

    from reclass_ng.server import ServerConfig, create_app
    app = create_app(ServerConfig(inventory_dir="inventory", state_path="/var/lib/x.sqlite3"))
"""

from reclass_ng.server.app import create_app
from reclass_ng.server.http import ServerConfig
from reclass_ng.server.observed_state import default_state_path

__all__ = ["ServerConfig", "create_app", "default_state_path"]
