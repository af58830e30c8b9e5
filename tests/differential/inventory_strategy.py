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


# Paths are chosen after the trees are drawn (see `fill_paths`): references and query paths are
# written with these markers first, then each marker becomes a path that exists in some file
# (most of the time) or a random one, so that most references resolve and render.
PARAMETER_PATH = "@P@"
EXPORT_PATH = "@E@"
random_paths = st.one_of(
    st.lists(st.sampled_from(PATH_COMPONENTS), min_size=1, max_size=3).map(":".join),
    st.sampled_from(RECLASS_PATHS))


@st.composite
def references(draw: st.DrawFn) -> str:
    """Text holding references: plain, nested, inside text, escaped, several in a row."""
    path = PARAMETER_PATH
    kind = draw(st.sampled_from(["plain", "plain", "plain", "nested", "nested-key", "text",
                                 "two", "escaped", "double-backslash", "dollar", "brace"]))
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
        return f"${{{path}}}${{{path}}}"
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
    first = draw(st.sampled_from(["exports", "exports", "exports", "self", "foo"]))

    def test() -> str:
        left = f"{draw(st.sampled_from(['exports'] * 7 + ['foo']))}:{EXPORT_PATH}"
        right = draw(st.sampled_from(["1", "2", "-1", "1.0", "true", "False", "a", "None", "n1",
                                      "base", f"self:{PARAMETER_PATH}",
                                      f"self:{PARAMETER_PATH}"]))
        if draw(st.integers(0, 5)) == 0:
            left, right = right, left
        return f"{left} {draw(st.sampled_from(['==', '==', '!=']))} {right}"

    tests = test()
    for _ in range(draw(st.integers(0, 2))):
        tests += f" {draw(st.sampled_from(['and', 'or']))} {test()}"
    form = draw(st.sampled_from(["value", "value", "value-if", "list"]))
    expression = {"value": f"{first}:{EXPORT_PATH}",
                  "value-if": f"{first}:{EXPORT_PATH} if {tests}",
                  "list": f"if {tests}"}[form]
    return "$[ " + " ".join([*options, expression]) + " ]"


def tree_paths(value: Any, prefix: str = "") -> list[str]:
    """Every path below a parameters or exports tree (`a`, `a:b`, `l:0`), prefixes removed."""
    found = []
    if isinstance(value, dict):
        items = ((key[1:] if key[:1] in ("~", "=") else key, item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((str(index), item) for index, item in enumerate(value))
    else:
        return found
    for key, item in items:
        path = f"{prefix}:{key}" if prefix else key
        found.append(path)
        found.extend(tree_paths(item, path))
    return found


def fill_paths(draw: st.DrawFn, value: Any, parameter_paths: list[str],
               export_paths: list[str]) -> Any:
    """The tree with each path marker replaced: an existing path five times in six."""
    if isinstance(value, dict):
        return {key: fill_paths(draw, item, parameter_paths, export_paths)
                for key, item in value.items()}
    if isinstance(value, list):
        return [fill_paths(draw, item, parameter_paths, export_paths) for item in value]
    if not isinstance(value, Raw) or "@" not in value.token:
        return value

    def path(known: list[str], in_query: bool) -> str:
        # A query is split at blanks: a path with `k a` in it would be a parse error.
        usable = [one for one in known if not in_query or " " not in one]
        if usable and draw(st.integers(0, 5)) > 0:
            return draw(st.sampled_from(usable))
        chosen = draw(random_paths)
        return chosen.replace("k a", "k") if in_query else chosen
    in_query = value.token.startswith('"$[')
    token = re.sub(re.escape(PARAMETER_PATH), lambda _: path(parameter_paths, in_query),
                   value.token)
    return Raw(re.sub(re.escape(EXPORT_PATH), lambda _: path(export_paths, in_query), token))


text_scalars = st.text(alphabet="ab }{$\\:\t", max_size=6).map(quoted)
scalars = st.one_of(st.sampled_from(YAML_TOKENS).map(Raw), text_scalars)
keys = st.tuples(st.sampled_from(["", "", "", "", "~", "="]),
                 st.sampled_from(KEYS)).map("".join)
plain_keys = st.sampled_from(KEYS)


def values(with_queries: bool, nested_prefixes: bool) -> st.SearchStrategy[Any]:
    """Parameter (or export) values: scalars, reference texts, queries, nested dicts/lists;
    keys of nested dicts carry `~`/`=` prefixes only with `nested_prefixes`."""
    leaves = [scalars, scalars, references().map(quoted), references().map(quoted)]
    if with_queries:
        leaves.append(queries().map(quoted))
    return st.recursive(
        st.one_of(*leaves),
        lambda inner: st.one_of(st.lists(inner, max_size=3),
                                st.dictionaries(keys if nested_prefixes else plain_keys, inner,
                                                max_size=3)),
        max_leaves=6)


@st.composite
def entity(draw: st.DrawFn, is_node: bool, queries_allowed: bool, class_entries: list[str],
           nested_prefixes: bool) -> dict[str, Any]:
    """The sections of one node or class file, naming classes out of `class_entries`."""
    sections: dict[str, Any] = {}
    class_list = draw(st.lists(st.sampled_from(class_entries), max_size=3)) \
        if class_entries else []
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
        sections["parameters"] = draw(st.dictionaries(
            keys, values(queries_allowed, nested_prefixes), max_size=4))
    if draw(st.integers(0, 2)) == 0:
        exported = values(draw(st.integers(0, 9)) == 0, nested_prefixes)
        sections["exports"] = draw(st.dictionaries(keys, exported, max_size=3))
    return sections


@st.composite
def settings_files(draw: st.DrawFn) -> dict[str, str]:
    """reclass-config.yml (reclass-ng) and kapicorp-reclass-config.yml (what kapicorp 2.0.0
    reads, from its working directory), with the same text; often absent, sometimes empty."""
    choice = draw(st.integers(0, 39))
    if choice < 24:
        return {}
    if choice == 24:
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
    class_names = draw(st.lists(st.sampled_from(sorted(CLASS_FILES)), max_size=5, unique=True))
    queries_allowed = draw(st.integers(0, 2)) > 0
    # Missing, relative and referenced class names in one inventory in four (most of them fail
    # in both tools, which compares little); include cycles (kapicorp crashes) in one in six:
    # otherwise a class includes only classes after it in sorted order.
    odd_entries = CLASS_ENTRIES if draw(st.integers(0, 3)) == 0 else []
    cycles = draw(st.integers(0, 5)) == 0
    # `~`/`=` below a prefixed key (kapicorp keeps them as keys, issue 36) in one in five.
    nested_prefixes = draw(st.integers(0, 4)) == 0
    entities = {f"nodes/{name}.yml": draw(entity(True, queries_allowed,
                                                 [*class_names, *odd_entries], nested_prefixes))
                for name in node_names}
    for name in class_names:
        included = [other for other in class_names if cycles or other > name]
        entities[CLASS_FILES[name]] = draw(entity(False, queries_allowed,
                                                  [*included, *odd_entries], nested_prefixes))
    parameter_paths = sorted({path for sections in entities.values()
                              for path in tree_paths(sections.get("parameters"))})
    export_paths = sorted({path for sections in entities.values()
                           for path in tree_paths(sections.get("exports"))})
    files = {path: yaml_document(fill_paths(draw, sections, parameter_paths, export_paths))
             for path, sections in entities.items()}
    settings = draw(settings_files())
    files.update(settings)
    default = re.search(r"^default_environment: (\w+)$", settings.get("reclass-config.yml", ""),
                        re.MULTILINE)
    fallback = default.group(1) if default else "base"
    environments = {fallback if "environment" not in sections
                    else json.loads(sections["environment"].token)
                    for path, sections in entities.items() if path.startswith("nodes/")}
    # kapicorp's --inventory ignores environments (D8): with several, compare node by node.
    return InventoryCase(files=files, nodes=node_names, whole_inventory=len(environments) <= 1)
