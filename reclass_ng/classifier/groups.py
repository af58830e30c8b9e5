"""A node group: its fields, and how one is read from (and written back to) plain data.

The fields are the Node Classifier's (`id`, `name`, `description`, `parent`, `rule`,
`environment`, `environment_trumps`, `classes`, `variables`, and current PE's `config_data`:
class -> parameter -> value, the Hiera-like data a class looks up) plus two reclass-ng extensions:
`pinned` (node names that join the group whatever their facts, still subject to the ancestors'
rules) and `reclass_classes` (reclass classes expanded for every node in the group).
"""

from __future__ import annotations

import copy
import datetime
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from reclass_ng.classifier.errors import (
    MALFORMED_UUID,
    ROOT_RULE_EDIT,
    SCHEMA_VIOLATION,
    GroupProblem,
)
from reclass_ng.classifier.rule_ast import And, Comparison, Condition, FieldPath, Or
from reclass_ng.classifier.rule_parser import RULE_GRAMMAR_HINT, RuleSyntaxError, parse_rule

ROOT_GROUP_ID = "00000000-0000-4000-8000-000000000000"
ROOT_RULE_DATA: list[Any] = ["and", ["~", "name", ".*"]]
DEFAULT_ENVIRONMENT = "production"
# The reclass parameter that carries a node's group classes into reclass (node_classification).
CLASSES_PARAMETER = "_classes_"

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

# Longest group name: it becomes part of a file name, and people read it in lists.
MAX_GROUP_NAME_LENGTH = 255

KNOWN_FIELDS = (
    "id", "name", "description", "parent", "rule", "environment", "environment_trumps",
    "classes", "variables", "config_data", "pinned", "reclass_classes",
)


@attrs.frozen
class Group:
    """One node group. `classes` maps class name -> parameters; `file` is where it came from.

    Immutable by convention: the mappings it holds are shared, never modified. (Groups are not
    hashable, because of those mappings; key them by `id`.)
    """

    id: str
    name: str
    parent: str
    environment: str = DEFAULT_ENVIRONMENT
    environment_trumps: bool = False
    description: str | None = None
    rule_data: Any = None
    rule: Condition | None = attrs.field(default=None, eq=False, repr=False)
    classes: dict[str, Any] = attrs.field(factory=dict)
    variables: dict[str, Any] = attrs.field(factory=dict)
    config_data: dict[str, Any] = attrs.field(factory=dict)
    pinned: tuple[str, ...] = ()
    reclass_classes: tuple[str, ...] = ()
    file: str | None = attrs.field(default=None, eq=False)

    @property
    def is_root(self) -> bool:
        return self.id == ROOT_GROUP_ID

    def own_condition(self) -> Condition | None:
        """The group's rule with pinned nodes OR'd in; None when the group matches no node."""
        pins = tuple(Comparison("=", FieldPath(("name",), False), name) for name in self.pinned)
        if not pins:
            return self.rule
        return Or(((self.rule,) if self.rule is not None else ()) + pins)

    def classification(self) -> dict[str, Any]:
        """What the group contributes to a node: the classifier's classification map."""
        return {
            "environment": self.environment,
            "environment_trumps": self.environment_trumps,
            "classes": self.classes,
            "variables": self.variables,
            "config_data": self.config_data,
        }

    def to_data(self) -> dict[str, Any]:
        """The group as the classifier's API shows it, plus set reclass-ng extensions (a copy:
        changing it never changes the group)."""
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "environment": self.environment,
            "environment_trumps": self.environment_trumps,
            "parent": self.parent,
        }
        if self.description is not None:
            data["description"] = self.description
        if self.rule_data is not None:
            data["rule"] = self.rule_data
        data["classes"] = self.classes
        data["variables"] = self.variables
        if self.config_data:
            data["config_data"] = self.config_data
        if self.pinned:
            data["pinned"] = list(self.pinned)
        if self.reclass_classes:
            data["reclass_classes"] = list(self.reclass_classes)
        return copy.deepcopy(data)


def is_uuid(text: Any) -> bool:
    """True for a UUID in its canonical 8-4-4-4-12 hexadecimal form."""
    return isinstance(text, str) and _UUID.fullmatch(text) is not None


class _GroupReader:
    """Checks one group's data field by field, collecting every problem it finds."""

    def __init__(self, data: Mapping[str, Any], file: str | None) -> None:
        self.data = data
        self.file = file
        self.problems: list[GroupProblem] = []
        name = data.get("name")
        self.name = name if isinstance(name, str) else None
        group_id = data.get("id")
        self.id = group_id.lower() if group_id is not None and is_uuid(group_id) else None

    def problem(self, kind: str, message: str, details: Any = None,
                field: str | None = None) -> None:
        self.problems.append(
            GroupProblem(kind, message, self.file, self.id, self.name,
                         details if details is not None else {"submitted": dict(self.data)},
                         key=(field,) if field else None)
        )

    def violation(self, field: str, expected: str) -> None:
        got = self.data.get(field)
        self.problem(SCHEMA_VIOLATION, f"{field}: expected {expected}, got {got!r}",
                     {"submitted": dict(self.data), "error": {field: f"expected {expected}"}},
                     field)

    def string(self, field: str, *, required: bool = False, default: str | None = None) -> Any:
        value = self.data.get(field, default)
        if value is None and not required:
            return default
        if not isinstance(value, str) or not value:
            self.violation(field, "a non-empty string" + ("" if required else " or nothing"))
            return default
        return value

    def string_list(self, field: str) -> tuple[str, ...]:
        value = self.data.get(field)
        if value is None:
            return ()
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return tuple(value)
        self.violation(field, "a list of non-empty strings")
        return ()

    def mapping(self, field: str) -> dict[str, Any]:
        value = self.data.get(field)
        if value is None:
            return {}
        if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
            return dict(value)
        self.violation(field, "a mapping with string keys")
        return {}

    def blank_keys(self, field: str, value: Any) -> bool:
        """A schema violation for the first empty or whitespace-only key in `value` (at any
        depth); True when there was one. Such a key reaches reclass as a class or parameter
        with no name, and classifying any node of the group fails."""
        where = blank_key_path(value, field)
        if where is None:
            return False
        self.problem(SCHEMA_VIOLATION, f"{where}: a key is empty or only whitespace; keys name "
                     "classes, parameters and variables and must have a name",
                     {"submitted": dict(self.data), "error": {field: f"blank key at {where}"}})
        return True

    def classes(self, field: str = "classes") -> dict[str, Any]:
        """`classes` or `config_data`: class name -> mapping of parameters (or null)."""
        classes = self.mapping(field)
        if self.blank_keys(field, classes):
            return {}
        for class_name, params in list(classes.items()):
            if params is None:
                continue  # null removes a class inherited from an ancestor, as in the classifier
            if not (isinstance(params, Mapping) and all(isinstance(k, str) for k in params)):
                self.violation(field, f"class {class_name!r} to map to a mapping of parameters")
                classes[class_name] = {}
            else:
                classes[class_name] = dict(params)
        return classes

    def variables(self) -> dict[str, Any]:
        variables = self.mapping("variables")
        if self.blank_keys("variables", variables):
            return {}
        if CLASSES_PARAMETER in variables:
            self.problem(SCHEMA_VIOLATION,
                         f"variables: {CLASSES_PARAMETER!r} is reserved (it carries the group "
                         "classes into reclass); use `classes` for class parameters",
                         field="variables")
        return variables

    def group_id(self) -> str:
        value = self.data.get("id")
        if value is None:
            self.problem(SCHEMA_VIOLATION,
                         f"id: every group needs a UUID; a fresh one you can use: {uuid.uuid4()}")
            return ""
        if not is_uuid(value):
            self.problem(MALFORMED_UUID, f"id: {value!r} is not a UUID", value, "id")
            return ""
        return value.lower()

    def parent(self, group_id: str) -> str:
        value = self.data.get("parent")
        if value is None:
            if group_id == ROOT_GROUP_ID:
                return ROOT_GROUP_ID
            self.problem(SCHEMA_VIOLATION, "parent: every group except the root needs a parent id")
            return ""
        if not is_uuid(value):
            self.problem(MALFORMED_UUID, f"parent: {value!r} is not a UUID", value, "parent")
            return ""
        if group_id == ROOT_GROUP_ID and value.lower() != ROOT_GROUP_ID:
            self.problem(SCHEMA_VIOLATION,
                         f"parent: the root group is its own parent ({ROOT_GROUP_ID}); "
                         "remove `parent` or set it to that id", field="parent")
            return ROOT_GROUP_ID
        return value.lower()

    def rule(self, group_id: str) -> tuple[Any, Condition | None]:
        data = self.data.get("rule")
        if group_id == ROOT_GROUP_ID:
            if data is not None and data != ROOT_RULE_DATA:
                self.problem(ROOT_RULE_EDIT,
                             f"the root group's rule is fixed to {ROOT_RULE_DATA}; remove `rule`",
                             {"rule": data}, "rule")
            return ROOT_RULE_DATA, parse_rule(ROOT_RULE_DATA)
        if data is None:
            return None, None
        try:
            return data, parse_rule(data)
        except RuleSyntaxError as err:
            self.problem(SCHEMA_VIOLATION, f"{err}. {RULE_GRAMMAR_HINT}",
                         {"submitted": dict(self.data), "error": {"rule": str(err)}}, "rule")
            return data, None

    def json_values(self) -> None:
        """Refuse values the classifier cannot answer with in JSON: dates and times (an
        unquoted `2024-01-01` in YAML), NaN and infinities (`.nan`, `.inf`), binary data and
        keys JSON cannot name. The service would fail on every request that shows the group."""
        problem = unservable_value(dict(self.data))
        if problem is not None:
            self.problem(SCHEMA_VIOLATION, f"{problem}: JSON has no such value (quote it in "
                         "YAML to make it a string)",
                         {"submitted": repr(dict(self.data))[:2000], "error": problem})

    def read(self) -> Group | None:
        self.json_values()
        if self.problems:
            return None
        name = self.data.get("name")
        if isinstance(name, str) and len(name) > MAX_GROUP_NAME_LENGTH:
            self.problem(SCHEMA_VIOLATION, f"name: at most {MAX_GROUP_NAME_LENGTH} characters, "
                         f"got {len(name)}", {"error": {"name": "too long"},
                                              "length": len(name)}, "name")
            return None
        unknown = sorted(set(self.data) - set(KNOWN_FIELDS))
        if unknown:
            self.problem(SCHEMA_VIOLATION,
                         f"unknown field(s) {', '.join(map(repr, unknown))}; "
                         f"known fields: {', '.join(KNOWN_FIELDS)}", field=str(unknown[0]))
        group_id = self.group_id()
        name = self.string("name", required=True)
        parent = self.parent(group_id)
        environment = self.string("environment", default=DEFAULT_ENVIRONMENT)
        trumps = self.data.get("environment_trumps", False)
        if not isinstance(trumps, bool):
            self.violation("environment_trumps", "true or false")
            trumps = False
        description = self.data.get("description")
        if description is not None and not isinstance(description, str):
            self.violation("description", "a string")
            description = None
        rule_data, rule = self.rule(group_id)
        group = Group(
            id=group_id, name=name or "", parent=parent, environment=environment,
            environment_trumps=trumps, description=description, rule_data=rule_data, rule=rule,
            classes=self.classes(), variables=self.variables(),
            config_data=self.classes("config_data"),
            pinned=self.string_list("pinned"), reclass_classes=self.string_list("reclass_classes"),
            file=self.file,
        )
        return None if self.problems else group


def group_from_data(data: Any, file: str | None = None) -> tuple[Group | None, list[GroupProblem]]:
    """Read one group from plain data; returns the group (None if invalid) and its problems."""
    if not isinstance(data, Mapping):
        kind = "empty" if data is None else type(data).__name__
        return None, [GroupProblem(SCHEMA_VIOLATION,
                                   f"a group must be a mapping of fields, got {kind}",
                                   file, details={"submitted": data})]
    reader = _GroupReader(data, file)
    group = reader.read()
    return group, reader.problems


def unservable_value(data: Any) -> str | None:
    """The key path and kind of the first value in `data` that JSON cannot carry (a date or
    time, NaN or an infinity, bytes, a key of another kind, a set), or None. No recursion."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, item = stack.pop()
        shown = where or "the group"
        if isinstance(item, (datetime.date, datetime.time)):
            return f"{shown}: {item.isoformat()} is a {type(item).__name__}"
        if isinstance(item, float) and not math.isfinite(item):
            return f"{shown}: {item!r} is not a finite number"
        if isinstance(item, (bytes, bytearray, set, frozenset)):
            return f"{shown}: a {type(item).__name__} value"
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, (str, int, type(None))) and not (
                        isinstance(key, float) and math.isfinite(key)):
                    return f"{shown}: key {key!r} is a {type(key).__name__}"
                stack.append((f"{where}.{key}" if where else str(key), child))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))
    return None


def blank_key_path(data: Any, where: str) -> str | None:
    """The key path (`classes.apache[""]`) of the first empty or whitespace-only string key in
    `data`, mappings inside lists included; None when every key has a name. No recursion."""
    stack: list[tuple[str, Any]] = [(where, data)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Mapping):
            for key, child in item.items():
                if isinstance(key, str) and not key.strip():
                    return f"{path}[{key!r}]"
                stack.append((f"{path}.{key}", child))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(item))
    return None


def inherited_condition(chain: list[Group]) -> Condition | None:
    """`["and", own, parent, ..., root]` over the groups that have a rule; None if the first
    group (the one being matched) has none, because a group without a rule matches no node."""
    own = chain[0].own_condition()
    if own is None:
        return None
    inherited = [c for c in (g.own_condition() for g in chain[1:]) if c is not None]
    return And((own, *inherited))
