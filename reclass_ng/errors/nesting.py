"""The error of a value nesting too deep to render (resolve.MAX_RENDERED_DEPTH,
resolve.MAX_NESTING_IN_PROGRESS), in a module of its own: imported by the resolver only when
it raises one. Defining an exception class costs every start about 0.3 million instructions
(its type's slots), a tenth of a percent of a small model's whole run, for an error that real
inventories never meet."""

from __future__ import annotations

from reclass_ng.errors.values import ValueAtPathError

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from reclass_ng.values import Source


class NestingTooDeepError(ValueAtPathError):
    """A value nesting deeper than the render allows, which only references can make (each
    file nests at most a few hundred levels): the value a reference brings, past
    resolve.MAX_RENDERED_DEPTH where it is stored (`in_progress` False), or the values
    being rendered through references inside one another, past
    resolve.MAX_NESTING_IN_PROGRESS levels together (`in_progress`: found before the
    innermost value is rendered, so before its depth is known)."""

    kind = "nesting_depth"

    def __init__(self, ref: str, limit: int, path: Sequence[object], origin: Source | None,
                 in_progress: bool = False, **context: Any) -> None:
        if in_progress:
            text = (f"Values nest too deep to render (more than {limit:,} levels of mappings "
                    f"and lists inside the references being rendered): {ref}")
        else:
            text = (f"A reference makes the value nest deeper than {limit} levels of "
                    f"mappings and lists: {ref}")
        super().__init__(text, path, origin, **context)
        self.ref = ref
        self.limit = limit
        self.in_progress = in_progress
