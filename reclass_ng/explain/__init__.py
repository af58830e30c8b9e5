"""`explain`: why a node has a value, a class or an application.

`trace` renders the node and follows its references, `report` builds the report as data,
`text` prints it for people. `replay` labels each write of a value with what became of it.
"""

from reclass_ng.explain.report import explain_application, explain_class, explain_parameter
from reclass_ng.explain.trace import ExplainNotFound, NodeTrace

__all__ = ["ExplainNotFound", "NodeTrace", "explain_application", "explain_class",
           "explain_parameter"]
