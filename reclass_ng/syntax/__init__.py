"""The language inside values: `${...}` references, `$[ ... ]` inventory queries, escapes."""

from reclass_ng.syntax.ast import Query, Ref, Template, Text
from reclass_ng.syntax.grammar import ValueParser

__all__ = ["Query", "Ref", "Template", "Text", "ValueParser"]
