"""PyYAML, imported when a run first needs it (`pyyaml()`), without compiling regular
expressions it may never use, or importing `re`.

Most starts never need it: storage.yaml_block reads plain block YAML itself, the JSON writers
and the block YAML writer's common strings need no PyYAML, so its Python layer (about twenty
modules, eighty classes, `datetime` and `base64`: some 42 M instructions, two fifths of a small
`--nodeinfo`) is imported only when a document is declined to PyYAML's parser, a string's YAML
spelling has to be asked, a reference default is read, or an error needs PyYAML's types. Every
module of reclass-ng that uses PyYAML on that path gets it from `pyyaml()`; modules that
always need it (the server, the tools) import it as usual.

`import yaml` compiles about twenty patterns: a character class covering most of Unicode for
`yaml.reader.Reader` (about 8 ms, a twentieth of a whole `reclass --nodeinfo` process), the
implicit resolvers' patterns and the constructor's timestamp pattern. reclass-ng reads files
with libyaml's C loader, which never uses the reader's, and a run meets only some of the
others (a timestamp is rare; storage.yaml_load tells common plain scalars apart without
them), so each is compiled on first use instead; after that a use costs what it did.

Nor is `re` itself imported for PyYAML (with `enum`, which it needs, about 26 M instructions,
a fifth of a small `--nodeinfo`): while PyYAML's modules are imported, `re` is a stand-in
module that hands out patterns compiled on first use and `re.X`, the only names they take
from `re` at import time; any other name it is asked for later imports the real `re` and is
taken from there, so every use works as before. Modules PyYAML imports that import `re`
themselves (`base64`) get the same stand-in. If `re` is already imported, only its
`compile` is deferred during the import; if PyYAML is, nothing happens and PyYAML works
exactly as it always does.
"""

from __future__ import annotations

import gc
import sys
from _thread import allocate_lock

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    import re
    from types import ModuleType
    from typing import Any
else:
    ModuleType = type(sys)  # types.ModuleType: the `types` module costs a start 0.9 M instructions

_VERBOSE = 64  # re.X (re.VERBOSE), the one flag PyYAML's patterns use


class _PatternOnFirstUse:
    """Stands in for a compiled pattern; compiles it the first time it is used, then keeps
    each method it was asked for as its own attribute (no lookup through here again)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            import re

            self._compiled = re.compile(*self._args)
        value = getattr(self._compiled, name)
        setattr(self, name, value)
        return value


def _compile_on_first_use(pattern: Any, flags: int = 0) -> Any:
    if isinstance(pattern, str):
        return _PatternOnFirstUse(pattern, int(flags))
    import re

    return re.compile(pattern, flags)


class _ReOnFirstUse(ModuleType):
    """The `re` PyYAML's modules see while they are imported: `compile` and `X` here, every
    other name (and, once the import is over, these two as well) from the real `re`."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("re") is self:  # asked during the import: the real `re` from now on
            del sys.modules["re"]
        import re

        return getattr(re, name)


# One import at a time: a second thread must not take the first one's stand-in for `re`.
_IMPORTING = allocate_lock()


def pyyaml() -> ModuleType:
    """The `yaml` module, imported the deferred way below on the first call of a process
    (or as it was imported already)."""
    module = sys.modules.get("yaml")
    if module is None:
        with _IMPORTING:
            if "yaml" not in sys.modules:
                _import_yaml()
        module = sys.modules["yaml"]
    return module


def _import_yaml() -> None:
    # Its eighty classes and their functions are all kept: a pass of the cycle collector
    # while they are made (several, about 5 M instructions in all) finds nothing to free.
    was_collecting = gc.isenabled()
    gc.disable()
    try:
        _import_yaml_lazily()
    finally:
        if was_collecting:
            gc.enable()


def _import_yaml_lazily() -> None:
    real_re = sys.modules.get("re")
    if real_re is not None:  # already paid for: only defer the patterns
        original = real_re.compile
        vars(real_re)["compile"] = _compile_on_first_use
        try:
            import yaml  # noqa: F401
        finally:
            vars(real_re)["compile"] = original
        return
    stand_in = _ReOnFirstUse("re", "the real re, imported on first use")
    names = vars(stand_in)
    names["compile"], names["X"] = _compile_on_first_use, _VERBOSE
    sys.modules["re"] = stand_in
    try:
        import yaml  # noqa: F401
    finally:
        if sys.modules.get("re") is stand_in:
            del sys.modules["re"]
        # From now on the stand-in forwards every name, patterns compiled at once included.
        del names["compile"], names["X"]

