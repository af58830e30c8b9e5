"""Reference default values, `${path::default}`, as reclass-rs writes them (setting
`reference_defaults`, off by default).

The reference text is rendered first (nested references substituted), then split at the first
`::`: what comes before is the path, what comes after is the default, read as a YAML value
(`42` is an int, an empty default is null, `[1, 2]` a list, `{a: 1\\}` a mapping since a `}`
inside a reference has to be escaped). The default is used only when the path does not exist; a
path whose value is null gives null. When the default is one nested reference and nothing else
(`${a::${b}}`), the value of `b` is used as it is, with its type, instead of a YAML reading of its
text. With the setting off none of this happens and `${a::b}` is an ordinary (missing) reference,
as in kapicorp-reclass.
"""

from __future__ import annotations

from reclass_ng.cache import BoundedCache
from reclass_ng.syntax.ast import Ref, Text

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

SEPARATOR = "::"
# Default texts one DefaultValues keeps read (an inventory writes a handful of distinct ones).
KEPT_DEFAULTS = 1024


class DefaultSyntaxProblem(ValueError):
    """A default value that is not a complete YAML value."""


def _parse(text: str) -> Any:
    from reclass_ng.storage.yaml_import import pyyaml  # PyYAML: only when a default is read

    yaml = pyyaml()
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as err:
        problem = " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"
        raise DefaultSyntaxProblem(problem) from None
    except yaml.YAMLError as err:
        raise DefaultSyntaxProblem(str(err)) from None


class DefaultValues:
    """Defaults' texts read as YAML, each text read once while it stays in a bounded cache
    (owned by the renderer of an inventory, so nothing outlives it)."""

    def __init__(self, kept: int = KEPT_DEFAULTS) -> None:
        self._read: BoundedCache[str, Any] = BoundedCache(kept)

    def value(self, text: str) -> Any:
        """The value of a default's text (a fresh copy every time: callers own it);
        DefaultSyntaxProblem when it is not a complete YAML value."""
        value = self._read.get(text, _parse)
        if not isinstance(value, (dict, list)):
            return value
        import copy  # defaults that are containers are rare: not part of every start

        return copy.deepcopy(value)


def nested_default(ref: Ref) -> tuple[Ref, Ref] | None:
    """(reference before the default, the nested reference) for `${path::${other}}`, else None.

    The reference before the default still ends with the separator; the caller checks, after
    rendering it, that this separator is the first one (a nested reference in the path could
    itself produce a `::`).
    """
    items = ref.items
    if len(items) < 2 or type(items[-1]) is not Ref:
        return None
    before = items[-2]
    if type(before) is not Text or not before.value.endswith(SEPARATOR):
        return None
    return Ref(items[:-1]), items[-1]
