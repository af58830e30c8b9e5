"""Import PyYAML without compiling regular expressions it may never use.

`import yaml` compiles about twenty patterns: a character class covering most of Unicode for
`yaml.reader.Reader` (about 8 ms, a twentieth of a whole `reclass --nodeinfo` process), the
implicit resolvers' patterns and the constructor's timestamp pattern. reclass-ng reads files
with libyaml's C loader, which never uses the reader's, and a run meets only some of the
others (a timestamp is rare), so each is compiled on first use instead; after that a use
costs what it did. If PyYAML is already imported, nothing happens and PyYAML works exactly as
it always does.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any


class _PatternOnFirstUse:
    """Stands in for a compiled pattern; compiles it the first time it is used, then keeps
    each method it was asked for as its own attribute (no lookup through here again)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        value = getattr(self._compiled, name)
        setattr(self, name, value)
        return value


def _import_yaml() -> None:
    if "yaml" in sys.modules:
        return
    original = re.compile

    def compile_later(pattern: Any, flags: int = 0) -> Any:
        if isinstance(pattern, str):
            return _PatternOnFirstUse(pattern, flags)
        return original(pattern, flags)

    re.compile = compile_later  # type: ignore[assignment,unused-ignore]
    try:
        import yaml  # noqa: F401
    finally:
        re.compile = original  # type: ignore[assignment,unused-ignore]


_import_yaml()
