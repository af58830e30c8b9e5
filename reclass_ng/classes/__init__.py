"""Class expansion: which classes a node gets, in which order, from which files.

`expansion` is the reference expansion (ClassExpander) and, beside it, the class walks shared
between the nodes of one render (SharedClassWalks, the fast path). The names below are the
stage's public API; `from reclass_ng.classes import ...` keeps working as it did when this
was one module.
"""

from reclass_ng.classes.expansion import (
    ClassExpander,
    ClassLoader,
    ClassMapping,
    FrozenWalk,
    SharedClassWalks,
    first_mappings,
    mapped_classes,
    parse_class_mapping,
    thaw,
)

__all__ = ["ClassExpander", "ClassLoader", "ClassMapping", "FrozenWalk", "SharedClassWalks",
           "first_mappings", "mapped_classes", "parse_class_mapping", "thaw"]
