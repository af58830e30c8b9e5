"""How reclass-ng is installed: the one wording every hint uses (doc/usage.rst, "Installing",
says the same for readers).

reclass-ng is not published on a package index, so `pip install reclass-ng` (or
`salt-pip install reclass-ng`) finds nothing, or somebody else's package. It installs from a
checkout of its repository, or from a wheel built there and copied to the machine that needs it.
"""

from __future__ import annotations

WHEEL_BUILD = "pip wheel --no-deps -w dist ."  # run in a checkout; the wheel lands in dist/


def install_hint(extra: str | None = None, pip: str = "pip") -> str:
    """How to install reclass-ng (with an extra such as `kapitan` or `server`), for a message."""
    suffix = f"[{extra}]" if extra else ""
    return (f"in a checkout of reclass-ng, {pip} install '.{suffix}'; elsewhere, "
            f"{pip} install 'WHEEL{suffix}' with a wheel built in a checkout by "
            f"`{WHEEL_BUILD}` (reclass-ng is not on PyPI)")
