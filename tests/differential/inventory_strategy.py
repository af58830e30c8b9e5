"""Hypothesis strategies for small random inventories over the whole reclass language.

An `InventoryCase` is a complete inventory as files (relative path -> YAML text) plus the names
of its nodes. The YAML is written here, not by a YAML library, so that scalars reach both tools
as the plain tokens a user types (`yes`, `010`, `0x1f`, `~`, `2020-01-01`, `.inf`): YAML 1.1
typing is part of what is compared. Keys and class names come from small pools, so that
references, overrides (`~`), constants (`=`), class includes and queries meet each other often.

What is drawn: 1-3 nodes (one with a dotted name, for relative class names) with classes,
applications (`~` removals), an environment, parameters and exports; up to five classes
(`d` as `d/init.yml` beside `d/e.yml`) including each other by absolute, relative (`.e`, `..a`),
missing and referenced (`${c}`, `d.${x}`) names; nested dicts and lists; references plain,
nested (`${${b} a}`, `${a:${b}}`), inside text, escaped (`\\${a}`, `\\\\${a}`) and into
`_reclass_`; `$[ ]` queries (value, `if` tests with `==`/`!=`, `and`/`or`, `self:` operands,
`+IgnoreErrors`, `+AllEnvs`); and a `reclass-config.yml` toggling the settings of
doc/configuration.rst at random (sometimes empty).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# Parameter keys: few, so that paths collide; `k a` and `k` make `${${b} a}` meet a real key.
KEYS = ["a", "b", "c", "d", "x", "k", "k a"]
PATH_COMPONENTS = [*KEYS, "0", "1"]
RECLASS_PATHS = ["_reclass_:name:short", "_reclass_:name:full", "_reclass_:environment"]
NODE_NAMES = ["n1", "n2", "web.n3"]
ENVIRONMENTS = ["base", "dev"]
CLASS_FILES = {"a": "classes/a.yml", "b": "classes/b.yml", "c": "classes/c.yml",
               "d": "classes/d/init.yml", "d.e": "classes/d/e.yml"}
CLASS_ENTRIES = [*CLASS_FILES, ".e", "..a", ".a", "missing", "d.missing", "${c}", "d.${x}",
                 "\\${c}"]
APPLICATIONS = ["app1", "app2", "~app1", "~app2"]
# Plain YAML 1.1 tokens of every scalar type, as a user writes them.
YAML_TOKENS = ["null", "~", "true", "false", "yes", "no", "on", "0", "1", "-3", "7", "010",
               "0x1f", "1.5", "7.0", "1e3", ".inf", "1_000", "''", "a", "e", "k", "d.e",
               "2020-01-01"]
BOOLEAN_SETTINGS = ["ignore_class_notfound", "ignore_class_notfound_warning",
                    "strict_constant_parameters", "allow_scalar_over_dict",
                    "allow_scalar_over_list", "allow_list_over_scalar", "allow_dict_over_scalar",
                    "allow_none_override", "ignore_overwritten_missing_references",
                    "inventory_ignore_failed_render", "automatic_parameters", "group_errors"]


@dataclass(frozen=True)
class Raw:
    """A YAML scalar written as this exact token."""

    token: str


def quoted(text: str) -> Raw:
    """A string as a double-quoted YAML scalar (JSON's escapes are YAML's)."""
    return Raw(json.dumps(text))


PLAIN_KEY = re.compile(r"[a-z_][a-z0-9_]*\Z")


def yaml_key(key: str) -> str:
    return key if PLAIN_KEY.match(key) else json.dumps(key)


def yaml_inline(value: Any) -> str | None:
    """The one-line form of a scalar or an empty container; None for a non-empty one."""
    if isinstance(value, Raw):
        return value.token
    if value == {} and isinstance(value, dict):
        return "{}"
    if value == [] and isinstance(value, list):
        return "[]"
    return None


def yaml_block(value: dict[str, Any] | list[Any], indent: int = 0) -> list[str]:
    """Block-style YAML lines of a non-empty mapping or sequence."""
    pad = " " * indent
    lines = []
    items = value.items() if isinstance(value, dict) else (("-", item) for item in value)
    for key, item in items:
        head = pad + ("-" if isinstance(value, list) else yaml_key(key) + ":")
        inline = yaml_inline(item)
        if inline is None:
            lines.append(head)
            lines.extend(yaml_block(item, indent + 2))
        else:
            lines.append(f"{head} {inline}")
    return lines


def yaml_document(sections: dict[str, Any]) -> str:
    """A node or class file; a section whose value is None is written empty (`parameters:`)."""
    lines = []
    for name, value in sections.items():
        if value is None:
            lines.append(f"{name}:")
        else:
            inline = yaml_inline(value)
            lines.extend([f"{name}: {inline}"] if inline is not None
                         else [f"{name}:", *yaml_block(value, 2)])
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class InventoryCase:
    """A generated inventory: files by relative path, the node names, and whether the whole
    inventory (`--inventory`) is compared or only each node (`--nodeinfo`)."""

    files: dict[str, str]
    nodes: list[str]
    whole_inventory: bool = True
    notes: list[str] = field(default_factory=list)

    def as_text(self) -> str:
        """The files one after another, each under a `--- path` line."""
        return "".join(f"--- {path}\n{text}" for path, text in sorted(self.files.items()))

    def uses(self, text: str) -> bool:
        """Whether any file contains `text`."""
        return any(text in content for content in self.files.values())

    @property
    def settings(self) -> dict[str, Any]:
        import yaml

        text = self.files.get("reclass-config.yml")
        loaded = yaml.safe_load(text) if text is not None else None
        return loaded if isinstance(loaded, dict) else {}


paths = st.one_of(
    st.lists(st.sampled_from(PATH_COMPONENTS), min_size=1, max_size=3).map(":".join),
    st.sampled_from(RECLASS_PATHS))


@st.composite
def references(draw: st.DrawFn) -> str:
    """Text holding references: plain, nested, inside text, escaped, several in a row."""
    path = draw(paths)
    kind = draw(st.sampled_from(["plain", "plain", "nested", "nested-key", "text", "two",
                                 "escaped", "double-backslash", "dollar", "brace"]))
    if kind == "plain":
        return f"${{{path}}}"
    if kind == "nested":  # the inner value names the outer key: ${a:${b}}
        return f"${{{draw(st.sampled_from(KEYS))}:${{{path}}}}}"
    if kind == "nested-key":  # ${${b} a}, ${${b}}
        return f"${{${{{path}}}{draw(st.sampled_from(['', ' a', ':a']))}}}"
    if kind == "text":
        return f"{draw(st.sampled_from(['x-', 'pre ', '']))}${{{path}}}" \
               f"{draw(st.sampled_from(['-y', ' post', '/', '']))}"
    if kind == "two":
        return f"${{{path}}}${{{draw(paths)}}}"
    if kind == "escaped":
        return f"\\${{{path}}}"
    if kind == "double-backslash":
        return f"\\\\${{{path}}}"
    if kind == "dollar":
        return f"$${{{path}}}"
    return f"${{{path}}}}}"


@st.composite
def queries(draw: st.DrawFn) -> str:
    """A `$[ ]` inventory query: value, value-if and list forms with options."""
    options = draw(st.lists(st.sampled_from(["+IgnoreErrors", "+AllEnvs"]), max_size=2,
                            unique=True))
    export_path = draw(st.lists(st.sampled_from(PATH_COMPONENTS[:5]), min_size=1, max_size=2)
                       .map(":".join))
    first = draw(st.sampled_from(["exports", "exports", "self", "foo"]))

    def test() -> str:
        left = "exports:" + draw(st.lists(st.sampled_from(PATH_COMPONENTS[:5]), min_size=1,
                                          max_size=2).map(":".join))
        right = draw(st.one_of(st.sampled_from(["1", "2", "-1", "1.0", "true", "False", "a",
                                                 "None", "n1", "base"]),
                               paths.map(lambda p: "self:" + p)))
        if draw(st.booleans()):
            left, right = right, left
        return f"{left} {draw(st.sampled_from(['==', '!=']))} {right}"

    tests = test()
    for _ in range(draw(st.integers(0, 2))):
        tests += f" {draw(st.sampled_from(['and', 'or']))} {test()}"
    form = draw(st.sampled_from(["value", "value-if", "list"]))
    expression = {"value": f"{first}:{export_path}",
                  "value-if": f"{first}:{export_path} if {tests}",
                  "list": f"if {tests}"}[form]
    return "$[ " + " ".join([*options, expression]) + " ]"


text_scalars = st.text(alphabet="ab }{$\\:\t", max_size=6).map(quoted)
scalars = st.one_of(st.sampled_from(YAML_TOKENS).map(Raw), text_scalars)
keys = st.tuples(st.sampled_from(["", "", "", "", "~", "="]),
                 st.sampled_from(KEYS)).map("".join)


def values(with_queries: bool) -> st.SearchStrategy[Any]:
    """Parameter (or export) values: scalars, reference texts, queries, nested dicts/lists."""
    leaves = [scalars, scalars, references().map(quoted), references().map(quoted)]
    if with_queries:
        leaves.append(queries().map(quoted))
    return st.recursive(
        st.one_of(*leaves),
        lambda inner: st.one_of(st.lists(inner, max_size=3),
                                st.dictionaries(keys, inner, max_size=3)),
        max_leaves=6)


def parameters(with_queries: bool) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(keys, values(with_queries), max_size=4)


@st.composite
def entity(draw: st.DrawFn, is_node: bool, queries_allowed: bool) -> dict[str, Any]:
    """The sections of one node or class file."""
    sections: dict[str, Any] = {}
    class_list = draw(st.lists(st.sampled_from(CLASS_ENTRIES), max_size=3))
    if class_list:
        sections["classes"] = [quoted(name) for name in class_list]
    if draw(st.integers(0, 3)) == 0:
        sections["applications"] = [quoted(name) for name in
                                    draw(st.lists(st.sampled_from(APPLICATIONS), max_size=3))]
    if is_node and draw(st.booleans()):
        sections["environment"] = quoted(draw(st.sampled_from(ENVIRONMENTS)))
    if draw(st.integers(0, 9)) == 0:
        sections["parameters"] = None  # an empty section is null
    else:
        sections["parameters"] = draw(parameters(queries_allowed))
    if draw(st.integers(0, 2)) == 0:
        sections["exports"] = draw(st.dictionaries(keys, values(draw(st.integers(0, 9)) == 0),
                                                   max_size=3))
    return sections


@st.composite
def settings_files(draw: st.DrawFn) -> dict[str, str]:
    """reclass-config.yml (reclass-ng) and kapicorp-reclass-config.yml (what kapicorp 2.0.0
    reads, from its working directory), with the same text; often absent, sometimes empty."""
    choice = draw(st.integers(0, 19))
    if choice < 12:
        return {}
    if choice == 12:
        text = ""
    else:
        chosen = draw(st.dictionaries(st.sampled_from(BOOLEAN_SETTINGS), st.booleans(),
                                      min_size=1, max_size=4))
        lines = [f"{name}: {'true' if value else 'false'}" for name, value in chosen.items()]
        if draw(st.integers(0, 4)) == 0:
            lines.append(f"ignore_class_notfound_regexp: "
                         f"{json.dumps(draw(st.sampled_from([['d.*'], ['miss'], ['.*']])))}")
        if draw(st.integers(0, 6)) == 0:
            lines.append(f"default_environment: {draw(st.sampled_from(ENVIRONMENTS))}")
        text = "\n".join(sorted(lines)) + "\n"
    return {"reclass-config.yml": text, "kapicorp-reclass-config.yml": text}


@st.composite
def inventories(draw: st.DrawFn) -> InventoryCase:
    """A complete small inventory."""
    node_names = draw(st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=3,
                               unique=True).map(sorted))
    queries_allowed = draw(st.integers(0, 2)) > 0
    files: dict[str, str] = {}
    environments = set()
    for name in node_names:
        sections = draw(entity(is_node=True, queries_allowed=queries_allowed))
        environment = sections.get("environment")
        environments.add(json.loads(environment.token) if environment else None)
        files[f"nodes/{name}.yml"] = yaml_document(sections)
    for name in draw(st.lists(st.sampled_from(sorted(CLASS_FILES)), max_size=5, unique=True)):
        files[CLASS_FILES[name]] = yaml_document(
            draw(entity(is_node=False, queries_allowed=queries_allowed)))
    settings = draw(settings_files())
    files.update(settings)
    default = re.search(r"^default_environment: (\w+)$", settings.get("reclass-config.yml", ""),
                        re.MULTILINE)
    fallback = default.group(1) if default else "base"
    environments = {fallback if env is None else env for env in environments}
    # kapicorp's --inventory ignores environments (D8): with several, compare node by node.
    mixed = len(environments) > 1
    return InventoryCase(files=files, nodes=node_names, whole_inventory=not mixed)
