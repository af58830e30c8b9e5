"""Salt ext_pillar `reclass_ng`: pillar data from a reclass-ng inventory.

Master (or masterless minion) config::

    ext_pillar:
      - reclass_ng:
          inventory_base_uri: /srv/reclass

or, with nothing but the inventory directory, `- reclass_ng: /srv/reclass`.

The options are those of reclass_ng.adapters.salt.ext_pillar. An inventory error is the pillar's
`_errors` and a line of the Salt log, with reclass-ng's whole message and no traceback.
"""

from __future__ import annotations

import logging
from typing import Any

from salt.exceptions import SaltInvocationError

from reclass_ng.adapters import salt as salt_adapter
from reclass_ng.errors import ReclassError

# The file is not called reclass_ng.py: Salt appends this directory to sys.path while loading, and
# a module of that name there could shadow the reclass_ng package itself.
__virtualname__ = "reclass_ng"

log = logging.getLogger(__name__)


def __virtual__() -> str:
    return __virtualname__


def ext_pillar(minion_id: str, pillar: dict[str, Any], *args: Any, **kwargs: Any
               ) -> dict[str, Any]:
    """Pillar data of `minion_id` from reclass-ng.

    Salt passes a mapping of options as keywords; a plain string (`- reclass_ng: /srv/reclass`)
    arrives as one positional argument and is taken as the inventory directory.
    """
    if args:
        if len(args) != 1 or not isinstance(args[0], str) or kwargs:
            raise SaltInvocationError(
                "ext_pillar.reclass_ng: the configuration must be a mapping of options "
                "or the inventory directory")
        kwargs = {"inventory_base_uri": args[0]}
    # The environment Salt runs in (pillarenv wins over saltenv, as in salt-formulas reclass);
    # used only when the inventory sets allow_adapter_env_override.
    opts = __opts__  # noqa: F821 - injected by Salt's loader
    kwargs.setdefault("pillarenv", opts.get("pillarenv") or opts.get("saltenv") or None)
    try:
        return salt_adapter.ext_pillar(minion_id, pillar, **kwargs)
    except ReclassError as err:
        # Returned, not raised: Salt logs the traceback of every exception an ext_pillar raises,
        # which says nothing about the inventory. `_errors` fails the pillar just the same
        # (states refuse to run) and shows the message in `pillar.items`.
        message = salt_adapter.salt_error_message("ext_pillar.reclass_ng", err)
        log.error("%s", message)
        return {"_errors": [message]}
