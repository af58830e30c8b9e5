"""Import PyYAML without compiling the regular expression of its pure-Python reader.

`import yaml` compiles a character-class pattern covering most of Unicode for
`yaml.reader.Reader`, which takes about 8 ms, a twentieth of a whole `reclass --nodeinfo`
process. reclass-ng reads files with libyaml's C loader, which never uses that reader, so the
pattern is compiled on first use instead. If PyYAML is already imported, or its pattern
changes, nothing happens and PyYAML works exactly as it always does.
"""

from __future__ import annotations

import re
import sys
from typing import Any

_READER_PATTERN_START = "[^\x09\x0A\x0D\x20-\x7E"


class _PatternOnFirstUse:
    """Stands in for a compiled pattern; compiles it the first time it is used."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


def _import_yaml() -> None:
    if "yaml" in sys.modules:
        return
    original = re.compile

    def compile_later(pattern: Any, flags: int = 0) -> Any:
        if isinstance(pattern, str) and pattern.startswith(_READER_PATTERN_START):
            return _PatternOnFirstUse(pattern, flags)
        return original(pattern, flags)

    re.compile = compile_later  # type: ignore[assignment,unused-ignore]
    try:
        import yaml  # noqa: F401
    finally:
        re.compile = original  # type: ignore[assignment,unused-ignore]


_import_yaml()
