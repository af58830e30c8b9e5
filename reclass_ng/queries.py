"""Inventory queries `$[ ... ]` (placeholder until the query issue lands: queries are an error)."""

from __future__ import annotations

from typing import Any

from reclass_ng.errors import ExpressionError
from reclass_ng.merge import MergedNode
from reclass_ng.resolve import QueryEvaluator
from reclass_ng.syntax.ast import Query
from reclass_ng.values import Interp


class QueryEngine:
    """Evaluates inventory queries of one node against the other nodes' exports."""

    def __init__(self, renderer: Any) -> None:
        self.renderer = renderer

    def evaluator_for(self, node: MergedNode, inventory_mode: bool = False) -> QueryEvaluator:
        def evaluate(query: Query, interp: Interp, path: tuple) -> Any:
            raise ExpressionError(f"Inventory queries are not supported yet: {query.source_text()}",
                                  path, interp.source.uri)
        return evaluate
