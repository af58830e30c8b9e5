"""Salt master_tops `reclass_ng`: a minion's reclass applications as its states.

Master (or masterless minion) config::

    master_tops:
      reclass_ng:
        inventory_base_uri: /srv/reclass

or, with nothing but the inventory directory, `reclass_ng: /srv/reclass`.

Salt calls `top(opts=<minion opts>, grains=...)` without the module's own configuration, so the
options are read from this module's `__opts__["master_tops"]["reclass_ng"]`.
"""

from __future__ import annotations

from typing import Any

from salt.exceptions import SaltInvocationError

from reclass_ng.adapters import salt as salt_adapter
from reclass_ng.errors import ReclassError

# The file is not called reclass_ng.py: Salt appends this directory to sys.path while loading, and
# a module of that name there could shadow the reclass_ng package itself.
__virtualname__ = "reclass_ng"


def __virtual__() -> str:
    return __virtualname__


def top(**kwargs: Any) -> dict[str, list[str]]:
    """Top data `{environment: [applications]}` of the minion Salt asks about."""
    # __opts__ is injected into this module by Salt's loader.
    master_tops = __opts__.get("master_tops") or {}  # noqa: F821
    options = master_tops.get(__virtualname__) or {}
    if isinstance(options, str):  # `reclass_ng: /srv/reclass`: just the inventory directory
        options = {"inventory_base_uri": options}
    if not isinstance(options, dict):
        raise SaltInvocationError(
            f"master_tops.{__virtualname__}: the configuration must be a mapping of options "
            "or the inventory directory")
    minion_opts = kwargs.get("opts") or {}
    minion_id = minion_opts.get("id")
    if not minion_id:
        raise SaltInvocationError(f"master_tops.{__virtualname__}: Salt passed no minion id")
    try:
        # pillarenv wins over saltenv (salt-formulas reclass); used only when the inventory
        # sets allow_adapter_env_override
        pillarenv = minion_opts.get("pillarenv") or minion_opts.get("saltenv") or None
        return salt_adapter.top(minion_id, **{"pillarenv": pillarenv, **options})
    except ReclassError as err:
        # Salt logs this message ("Top function reclass_ng failed with error ...") and carries on
        # without states for the minion.
        raise SaltInvocationError(
            salt_adapter.salt_error_message(f"master_tops.{__virtualname__}", err)) from None
