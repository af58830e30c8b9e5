"""Error types that carry what a user needs to find the problem, rendered in one place.

`base` holds what every error has (its fields, exit code and message layout), `files` the
errors about the inventory's files, names and classes, `values` the errors about one value of a
node. Everything is importable from here.
"""

from __future__ import annotations

from reclass_ng.errors.base import (
    EX_CONFIG,
    EX_DATAERR,
    EX_IOERR,
    EX_SOFTWARE,
    EX_USAGE,
    INDENT,
    ConfigError,
    MultipleErrors,
    ReclassError,
    UsageError,
    format_path,
    origin_text,
)
from reclass_ng.errors.files import (
    ClassIncludeCycle,
    ClassNameResolveError,
    ClassNotFound,
    DuplicateNameError,
    EntityFormatError,
    InvalidClassnameError,
    LocatedError,
    MappingFormatError,
    NodeNotFound,
    NotFoundError,
    UnsafeClassNameError,
    YamlFileError,
)
from reclass_ng.errors.values import (
    BadReferencesError,
    ChangedConstantError,
    ExpressionError,
    InfiniteRecursionError,
    InventoryQueryNodeError,
    InvQueryError,
    ParseError,
    QueryPositionError,
    ReferenceDefaultError,
    ResolveError,
    ResolveErrorList,
    TwoSidedError,
    TypeMergeError,
    ValueAtPathError,
)

__all__ = [
    "BadReferencesError",
    "ChangedConstantError",
    "ClassIncludeCycle",
    "ClassNameResolveError",
    "ClassNotFound",
    "ConfigError",
    "DuplicateNameError",
    "EX_CONFIG",
    "EX_DATAERR",
    "EX_IOERR",
    "EX_SOFTWARE",
    "EX_USAGE",
    "EntityFormatError",
    "ExpressionError",
    "INDENT",
    "InfiniteRecursionError",
    "InvQueryError",
    "InvalidClassnameError",
    "InventoryQueryNodeError",
    "LocatedError",
    "MappingFormatError",
    "MultipleErrors",
    "NodeNotFound",
    "NotFoundError",
    "ParseError",
    "QueryPositionError",
    "ReclassError",
    "ReferenceDefaultError",
    "ResolveError",
    "ResolveErrorList",
    "TwoSidedError",
    "TypeMergeError",
    "UnsafeClassNameError",
    "UsageError",
    "ValueAtPathError",
    "YamlFileError",
    "format_path",
    "origin_text",
]
