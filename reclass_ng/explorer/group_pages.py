"""The groups page: the group hierarchy as a tree, rules written readably, the nodes each group
matches with the facts the service stores; and the rule helpers the node page shares."""

from __future__ import annotations

import json
from typing import Any

from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.explorer.group_history import group_history_url
from reclass_ng.explorer.html import error_block, esc, node_link, page, value_html

MATCHED_NODES_SHOWN = 200  # per group; the count says how many more there are
OPEN_MATCHES = 10  # a group's list of matching nodes starts open up to this many


def _field(path: Any) -> str:
    return ".".join(str(p) for p in path) if isinstance(path, list) else str(path)


def rule_text(rule: Any) -> str:
    """A rule's data (`["and", ["=", "name", "web1"], ...]`) as an expression people read."""
    if not isinstance(rule, list) or not rule:
        return json.dumps(rule)
    operator = rule[0]
    if operator in ("and", "or"):
        parts = [rule_text(r) for r in rule[1:]]
        joined = f" {operator} ".join(f"({p})" if " and " in p or " or " in p else p
                                      for p in parts)
        return joined
    if operator == "not":
        return f"not ({rule_text(rule[1])})"
    if len(rule) == 3:
        return f"{_field(rule[1])} {operator} {quoted(rule[2])}"
    return json.dumps(rule)


def quoted(value: Any) -> str:
    """A rule's value in double quotes, backslashes as written (a regex stays readable)."""
    return '"' + str(value).replace('"', '\\"') + '"'


def flattened(mapping: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted path, value) of every leaf of a group's classes or variables."""
    out: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.extend(flattened(value, path))
        else:
            out.append((path, value))
    return out


def explained_rule_html(explained: dict[str, Any] | None) -> str:
    """The classifier's explained condition: each part with ✓/✗ and the node's value found."""
    if not explained:
        return ""
    return f'<ul class="explained">{_explained_item(explained)}</ul>'


def _explained_item(explained: dict[str, Any]) -> str:
    mark = ('<span class="yes" title="true">✓</span>' if explained["value"]
            else '<span class="no" title="false">✗</span>')
    form = explained["form"]
    operator = form[0]
    if operator in ("and", "or", "not"):
        inner = "".join(_explained_item(child) for child in form[1:])
        return f'<li>{mark} {esc(operator)}<ul>{inner}</ul></li>'
    field = form[1]
    found = field.get("value")
    return (f"<li>{mark} <code>{esc(_field(field['path']))} {esc(operator)} "
            f"{esc(quoted(form[2]))}</code> "
            f'<span class="found">(node has {value_html(found) if found is not None else "nothing"}'
            ")</span></li>")


def facts_html(stored: dict[str, Any] | None) -> str:
    """The facts the service stores for a node, folded."""
    if not stored:
        return ('<p class="facts none">No facts stored: the node never reported any '
                "(rules on facts see none).</p>")
    text = json.dumps({"fact": stored.get("fact", {}), "trusted": stored.get("trusted", {})},
                      indent=2, ensure_ascii=False, default=str)
    updated = f"(reported {stored['time']})" if stored.get("time") else ""
    return (f'<details class="facts"><summary>stored facts {esc(updated)}</summary>'
            f"<pre>{esc(text)}</pre></details>")


def groups_page(tree: GroupTree | None, problems: list[str], matched: dict[str, list[str]],
                facts_of: Any) -> str:
    if problems:
        return page("Groups", "<h1>Groups</h1>" + error_block(
            "\n".join(problems), "The groups/ files have problems (reclass-ng groups validate)"),
            "groups")
    if tree is None:
        return page("Groups", '<h1>Groups</h1><p class="empty">This inventory has no groups/ '
                    "directory.</p>", "groups")
    body = f'<h1>Groups</h1><ul class="group-tree">{_group_item(tree, tree.root, matched, facts_of)}</ul>'
    return page("Groups", body, "groups")


def _group_item(tree: GroupTree, group: Group, matched: dict[str, list[str]],
                facts_of: Any) -> str:
    nodes = matched.get(group.id, [])
    rule = rule_text(group.rule_data) if group.rule_data is not None else (
        "every node" if group.is_root else "no rule: matches no node")
    pinned = (f'<div class="pinned">pinned: {", ".join(esc(p) for p in group.pinned)}</div>'
              if group.pinned else "")
    values = flattened({k: v for k, v in (("classes", group.classes),
                                          ("variables", group.variables)) if v})
    values += [("reclass class", name) for name in group.reclass_classes]
    details = ('<table class="classification">' + "".join(
        f"<tr><td><code>{esc(path)}</code></td><td>{value_html(value)}</td></tr>"
        for path, value in values) + "</table>") if values else ""
    node_items = "".join(
        f"<li>{node_link(n)}{_node_facts(facts_of(n))}</li>"
        for n in nodes[:MATCHED_NODES_SHOWN])
    more = (f"<li>… and {len(nodes) - MATCHED_NODES_SHOWN} more</li>"
            if len(nodes) > MATCHED_NODES_SHOWN else "")
    parent = None if group.is_root else tree.get(group.parent)
    inherited = (' <span class="hint">(and the rules of its parents)</span>'
                 if group.rule_data is not None and parent is not None and not parent.is_root
                 else "")
    opened = " open" if 0 < len(nodes) <= OPEN_MATCHES else ""
    children = "".join(_group_item(tree, child, matched, facts_of)
                       for child in tree.children(group))
    return (f'<li class="group" id="group-{esc(group.id)}"><div class="group-head">'
            f'<span class="group-name">{esc(group.name)}</span> '
            f'<span class="env">environment {esc(group.environment)}</span>'
            f'{" <span class=badge>environment trumps</span>" if group.environment_trumps else ""}'
            f' <a class="history-link" href="{esc(group_history_url(group.id))}">history</a>'
            f'</div><div class="description">{esc(group.description or "")}</div>'
            f'<div class="rule">rule: <code>{esc(rule)}</code>{inherited}</div>{pinned}{details}'
            f'<details class="matched"{opened}><summary>{len(nodes)} matching nodes</summary>'
            f'<ul>{node_items}{more}</ul></details>'
            + (f'<ul class="group-tree">{children}</ul>' if children else "") + "</li>")


def _node_facts(stored: dict[str, Any] | None) -> str:
    if not stored or not stored.get("fact"):
        return ' <span class="facts none">(no stored facts)</span>'
    text = json.dumps(stored["fact"], ensure_ascii=False, default=str)
    return f' <code class="facts">{esc(text if len(text) < 300 else text[:297] + "...")}</code>'
