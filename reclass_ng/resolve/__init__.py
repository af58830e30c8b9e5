"""Interpolation: `${...}` references resolved over a node's merged parameters.

- `resolver`: the Resolver, the reference every fast path must equal;
- `fast_paths`: values stored without going through the reference stack (FastPaths);
- `shared_subtrees`: the resolver's side of the rendered-subtree memo (SharedSubtrees);
- `rendered_subtrees`: the memo itself, rendered file containers shared between the nodes of
  one render (RenderedSubtrees).

The names below are the stage's public API; `from reclass_ng.resolve import Resolver` keeps
working as it did when this was one module.
"""

from reclass_ng.resolve.fast_paths import MAX_REFERENCE_EXPANSION, MAX_RENDERED_DEPTH
from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees, SubtreeReads
from reclass_ng.resolve.resolver import (
    MAX_NESTING_IN_PROGRESS,
    MAX_REFERENCE_DEPTH,
    MissingPath,
    QueryEvaluator,
    ReferenceChainTooDeep,
    Resolver,
)

__all__ = ["MAX_NESTING_IN_PROGRESS", "MAX_REFERENCE_DEPTH", "MAX_REFERENCE_EXPANSION",
           "MAX_RENDERED_DEPTH", "MissingPath", "QueryEvaluator",
           "ReferenceChainTooDeep", "RenderedSubtrees", "Resolver", "SubtreeReads"]
