"""The node list and the node page: parameters with their origins, classes and applications
with their include chains, the groups matched and why, and the history of a key."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from reclass_ng.explain.origin import Origin
from reclass_ng.explorer.catalogue import NodeCatalogue, NodeFilter, NodeSummary, page_of
from reclass_ng.explorer.data import NodeGroups
from reclass_ng.explorer.group_pages import explained_rule_html, facts_html, rule_text
from reclass_ng.explorer.html import (
    class_link,
    error_block,
    esc,
    node_link,
    page,
    pager,
    url,
    value_html,
)
from reclass_ng.explorer.provenance import NodeExplanation
from reclass_ng.schemas import Violation

# -- the list ---------------------------------------------------------------------------------

FILTER_FIELDS = (("text", "q", "search name, environment, class, group", ""),
                 ("class_name", "class", "class", "class-names"),
                 ("application", "application", "application", "application-names"),
                 ("group", "group", "group", "group-names"),
                 ("parameter", "parameter", "path or path=value", ""))


def _datalist(list_id: str, names: list[str]) -> str:
    options = "".join(f'<option value="{esc(n)}">' for n in names)
    return f'<datalist id="{list_id}">{options}</datalist>'


def node_list_page(catalogue: NodeCatalogue, wanted: NodeFilter, page_number: int) -> str:
    selected = catalogue.select(wanted)
    shown, current, pages = page_of(selected, page_number)
    query: dict[str, Any] = {name: getattr(wanted, field) for field, name, _, _ in FILTER_FIELDS}
    query["environment"] = wanted.environment
    query["failing"] = "1" if wanted.failing else ""
    inputs = "".join(
        f'<input type="search" name="{name}" id="filter-{name}" placeholder="{esc(hint)}" '
        f'value="{esc(getattr(wanted, field))}"{f" list={lst}" if lst else ""}>'
        for field, name, hint, lst in FILTER_FIELDS)
    lists = (_datalist("class-names", sorted(catalogue.class_nodes))
             + _datalist("application-names", sorted(catalogue.application_nodes))
             + _datalist("group-names", catalogue.group_names()))
    options = "".join(f'<option{" selected" if env == wanted.environment else ""}>{esc(env)}'
                      "</option>" for env in catalogue.environments())
    failing = ('<input type="hidden" name="failing" value="1">' if wanted.failing else "")
    form = (f'<form class="filters" method="get" action="{url("nodes")}">{inputs}{lists}'
            f'<select name="environment" id="filter-environment"><option value="">any '
            f"environment</option>{options}</select>{failing}"
            '<button type="submit">Filter</button>'
            f'<a href="{url("nodes")}">clear</a></form>')
    rows = "".join(_node_row(node) for node in shown)
    failed = len(catalogue.failed())
    counts = (f'<p class="count"><span id="node-count">{len(selected)}</span> of '
              f"{len(catalogue.nodes)} nodes"
              + (f', <a href="{esc(url("nodes", failing=1))}" class="failed">{failed} fail to '
                 "render</a>" if failed else "")
              + "</p>")
    table = ('<table class="nodes"><thead><tr><th>node</th><th>environment</th><th>classes it lists</th>'
             f"<th>groups</th></tr></thead><tbody>{rows}</tbody></table>"
             if shown else '<p class="empty">No node matches.</p>')
    return page("Nodes", f"<h1>Nodes</h1>{form}{counts}{table}"
                + pager("nodes", query, current, pages), "nodes")


CLASSES_IN_ROW = 10


def _node_row(node: NodeSummary) -> str:
    """A row: the classes the node's file lists (as links), then how many it gets in all."""
    listed = [c for c in node.listed if c in node.classes] or node.classes[-CLASSES_IN_ROW:]
    shown = ", ".join(class_link(c) for c in listed[:CLASSES_IN_ROW])
    if node.info is not None:
        shown += f' <span class="size">({len(node.classes)} classes in all)</span>'
    status = ' <span class="badge error">fails to render</span>' if node.error else ""
    return (f'<tr data-node="{esc(node.name)}"><td class="name">{node_link(node.name)}{status}'
            f"</td><td>{esc(node.environment)}</td><td class=\"classes\">{shown}</td>"
            f'<td>{esc(", ".join(node.groups))}</td></tr>')


# -- the node page ----------------------------------------------------------------------------

def node_error_page(name: str, message: str, groups: NodeGroups | None) -> str:
    body = (f'<h1>Node <span class="node-name">{esc(name)}</span></h1>'
            + error_block(message, "This node fails to render")
            + (_groups_section(groups) if groups is not None else ""))
    return page(name, body, "nodes")


def node_page(prov: NodeExplanation, groups: NodeGroups | None,
              schema: tuple[list[Violation], str | None] | None = None) -> str:
    """The node page; `schema`: its schema violations and a bad schema's message (None: the
    inventory attaches no schema, and the page has no schema section)."""
    info = prov.info
    name = prov.node
    parameters = _tree_section(prov, "parameters")
    exports = _tree_section(prov, "exports") if info["exports"] else ""
    summary = (f'<dl class="summary"><dt>environment</dt><dd>{esc(info["environment"])}</dd>'
               f'<dt>node file</dt><dd class="node-file">{esc(prov.node_file or "")}</dd></dl>')
    body = (f'<h1>Node <span class="node-name">{esc(name)}</span></h1>{summary}'
            + (_schema_section(*schema) if schema is not None else "")
            + f'<div class="columns"><div class="main-column">{parameters}{exports}</div>'
            f'<aside id="history" class="history" aria-live="polite"><p class="hint">Click a '
            "value's origin to see every write of that key.</p></aside></div>"
            + _classes_section(prov) + _applications_section(prov)
            + (_groups_section(groups) if groups is not None else ""))
    return page(name, body, "nodes")


def _schema_section(violations: list[Violation], bad_schema: str | None) -> str:
    """What the `schemas` setting finds wrong with the node's parameters (doc/review.rst)."""
    if bad_schema is not None:
        return error_block(bad_schema, "The parameter schemas cannot be read")
    if not violations:
        return ('<section class="schema" id="schema"><h2>Schema</h2><p class="schema-ok">'
                "The parameters pass every schema.</p></section>")
    items = "".join(
        f'<li class="violation" data-path="{esc(v.path_text)}"><span class="key">'
        f"{esc(v.path_text)}</span>: {value_html(v.value) + ': ' if v.path else ''}"
        f"{esc(v.message)} (rule <code>{esc(v.rule)}</code> at {esc(v.schema)})"
        + (f' <span class="origin">written at {esc(v.written_at)}</span>' if v.written_at
           else "") + "</li>"
        for v in violations)
    return (f'<section class="schema error" id="schema"><h2>Schema: {len(violations)} '
            f'violation{"s" if len(violations) != 1 else ""}</h2><ul>{items}</ul></section>')


def _tree_section(prov: NodeExplanation, section: str) -> str:
    """The tree of one section. Values at the top show their origin at once; the origins below
    a top-level mapping are asked for when it is first opened (origins_json), so a node of a
    thousand values opens without replaying the writes of every one."""
    mapping = prov.info[section]
    base = history_base(prov.node, section)
    items = []
    for key, value in mapping.items():
        path = (key,)
        if isinstance(value, dict) and value:
            origins = origins_url(prov.node, prov.join(path), section)
            items.append(f'<li class="branch"><details data-path="{esc(prov.join(path))}" '
                         f'data-origins="{esc(origins)}"><summary><span class="key">{esc(key)}'
                         f'</span> <span class="size">{len(value)} keys</span></summary>'
                         f"{_mapping_html(prov, base, value, path)}</details></li>")
        else:
            items.append(_leaf_html(prov, base, path, value, prov.origins(path, section)))
    controls = ('<p class="tree-controls"><button type="button" data-tree="expand">expand all'
                '</button><button type="button" data-tree="collapse">collapse all</button></p>')
    return (f'<section class="tree-section" id="{section}"><h2>{section.capitalize()}</h2>'
            f'{controls}<ul class="tree">{"".join(items)}</ul></section>')


def _mapping_html(prov: NodeExplanation, base: str, mapping: dict, keys: tuple) -> str:
    items = []
    for key, value in mapping.items():
        path = (*keys, key)
        if isinstance(value, dict) and value:
            items.append(f'<li class="branch"><details data-path="{esc(prov.join(path))}">'
                         f'<summary><span class="key">{esc(key)}</span> <span class="size">'
                         f"{len(value)} keys</span></summary>"
                         f"{_mapping_html(prov, base, value, path)}</details></li>")
        else:
            items.append(_leaf_html(prov, base, path, value, None))
    return f'<ul class="tree">{"".join(items)}</ul>'


def _leaf_html(prov: NodeExplanation, base: str, path: tuple, value: Any,
               origins: tuple[Origin, ...] | None) -> str:
    """A value and its origin; `origins` None: filled in when its mapping is opened."""
    joined = prov.join(path)
    history = base + quote(joined, safe="")
    where = "…" if origins is None else origins_text(origins)
    pending = " pending" if origins is None else ""
    return (f'<li class="leaf" data-path="{esc(joined)}"><span class="key">{esc(path[-1])}'
            f"</span>: {value_html(value)} "
            f'<a class="origin{pending}" href="{esc(history)}" data-history="{esc(history)}">'
            f"{esc(where)}</a></li>")


def origins_text(origins: tuple[Origin, ...]) -> str:
    return "; ".join(_origin_text(o) for o in origins) or "no write found"


def origins_json(prov: NodeExplanation, path: str, section: str) -> dict[str, str]:
    """Leaf path -> origin text, for every value below `path` (what the page's script fills in)."""
    keys = tuple(path.split(prov.delimiter)) if path else ()
    return {prov.join(leaf.keys): origins_text(leaf.origins)
            for leaf in prov.leaves(section, keys)}


def origins_url(node: str, path: str, section: str = "parameters") -> str:
    return url(f"nodes/{quote(node, safe='')}/origins", path=path,
               section=section if section != "parameters" else None)


def history_base(node: str, section: str) -> str:
    """history_url without the path, to append the quoted path (a page has a thousand)."""
    prefix = url(f"nodes/{quote(node, safe='')}/history")
    return prefix + ("?section=exports&path=" if section == "exports" else "?path=")


def history_url(node: str, path: str, section: str = "parameters") -> str:
    return url(f"nodes/{quote(node, safe='')}/history", path=path,
               section=section if section != "parameters" else None)


def _origin_text(origin: Origin) -> str:
    who = origin.name if origin.kind == "class" else origin.label
    via = f" via {origin.via}" if origin.via else ""
    return f"{who} — {origin.place}{via}"


def _chain_html(chain: list[dict[str, Any]]) -> str:
    links = []
    for link in chain:
        where = link.get("file")
        place = f"{where}:{link['line']}" if where and link.get("line") else (where or "")
        source = (node_link(link["source"]) if link["source_kind"] == "node"
                  else "class mappings" if link["source_kind"] == "automatic"
                  else class_link(link["source"]))
        links.append(f'<span class="link">{source} <span class="place">{esc(place)}</span>'
                     "</span>")
    return ' <span class="arrow">→</span> '.join(links)


def _classes_section(prov: NodeExplanation) -> str:
    rows = "".join(
        f'<tr><td>{c["merge_position"]}</td><td>{class_link(c["class"])}</td>'
        f'<td class="chain">{_chain_html(c["chain"])} <span class="arrow">→</span> '
        f'{esc(c["class"])}</td></tr>' for c in prov.class_chains())
    return ('<section id="classes"><h2>Classes</h2><table class="chains"><thead><tr><th>#</th>'
            f"<th>class</th><th>included through</th></tr></thead><tbody>{rows}</tbody>"
            "</table></section>")


def _applications_section(prov: NodeExplanation) -> str:
    apps = prov.application_chains()
    if not apps:
        return ""
    rows = []
    for app in apps:
        chain = _chain_html(app.get("chain", []))
        adder = next((e["source"] for e in app["events"] if e["effect"] == "added"), None)
        if chain and adder:
            chain += f' <span class="arrow">→</span> {esc(adder)}'
        events = "".join(
            f'<div class="event">{esc(e["written"])}: {esc(e["effect"])} by {esc(e["source"])} '
            f'<span class="place">{esc(_place(e))}</span></div>' for e in app["events"])
        rows.append(f'<tr><td>{esc(app["application"])}</td><td class="chain">{chain}{events}'
                    "</td></tr>")
    return ('<section id="applications"><h2>Applications</h2><table class="chains"><thead>'
            "<tr><th>application</th><th>included through, and who adds or removes it</th></tr>"
            f'</thead><tbody>{"".join(rows)}</tbody></table></section>')


LEAF_BADGE = ' <span class="badge">leaf</span>'


def _groups_section(groups: NodeGroups) -> str:
    leaves = {g.id for g in groups.leaves}
    explained = groups.explanation["match_explanations"]
    items = "".join(
        f'<li class="group-match"><a href="{esc(url("groups"))}#group-{esc(g.id)}">'
        f"{esc(g.name)}</a>{LEAF_BADGE if g.id in leaves else ''}"
        f'<div class="rule">{esc(rule_text(g.rule_data)) if g.rule_data else "(root: every node)"}'
        f"</div>{explained_rule_html(explained.get(g.id))}</li>" for g in groups.matched)
    matched = f'<ul class="groups">{items}</ul>' if items else \
        '<p class="empty">No group matches this node.</p>'
    conflicts = groups.explanation.get("conflicts")
    conflict_html = (error_block(str(conflicts), "The matched groups conflict")
                     if conflicts else "")
    return (f'<section id="groups"><h2>Groups matched</h2>{facts_html(groups.facts)}{matched}'
            f"{conflict_html}</section>")


# -- the history of one key -------------------------------------------------------------------

def history_html(report: dict[str, Any]) -> str:
    """`reclass-ng explain`'s report of one key, as HTML (a fragment for the node page)."""
    head = (f'<h3>History of <code>{esc(report["path"])}</code></h3>'
            + (f'<p class="note">{esc(report["note"])}</p>' if "note" in report else ""))
    if report["kind"] == "mapping":
        body = "".join(f'<h4><code>{esc(leaf["path"])}</code> = '
                       f'{value_html(leaf.get("value"))}</h4>'
                       + _contributions_html(leaf["contributions"]) for leaf in report["leaves"])
    else:
        final = (f'<p>final value: {value_html(report["value"])}</p>' if report["present"]
                 else '<p>not in the final parameters</p>')
        body = final + _contributions_html(report["contributions"])
    return f'<div class="history-report" data-path="{esc(report["path"])}">{head}{body}</div>'


def _place(item: dict[str, Any]) -> str:
    file = item.get("file")
    if file is None:
        return "(no file)"
    return f"{file}:{item['line']}" if item.get("line") is not None else file


def _who(item: dict[str, Any]) -> str:
    kind = item.get("source_kind")
    if kind == "class":
        return class_link(item["source"])
    if kind == "node":
        return "node " + node_link(item["source"])
    return esc("automatic parameters" if kind == "automatic" else f"{kind} {item['source']}")


def _contributions_html(contributions: list[dict[str, Any]]) -> str:
    items = []
    for c in contributions:
        effect = c["effect"] + (f" by {c['by']['source']} ({_place(c['by'])})" if c.get("by")
                                else "")
        refs = "".join(_reference_html(r) for r in c.get("references", []))
        items.append(
            f'<li class="write{" final" if c["final"] else ""}"><div>{_who(c)} '
            f'<span class="place">{esc(_place(c))}</span></div>'
            f'<div><code>{esc(c["key"])}</code>: {value_html(c["written"])}</div>'
            f'<div class="effect">{esc(effect)}{" → in the final value" if c["final"] else ""}'
            f"</div>{refs}</li>")
    return f'<ol class="writes">{"".join(items)}</ol>'


def _reference_html(ref: dict[str, Any]) -> str:
    value = f" = {value_html(ref['value'])}" if "value" in ref else ""
    note = f' <span class="note">({esc(ref["note"])})</span>' if "note" in ref else ""
    sources = ref.get("sources", [])
    inner = (_contributions_html(sources) if sources and "effect" in sources[0] else
             "".join(f'<div class="source">{_who(s)} {esc(_place(s))}</div>' for s in sources))
    return (f'<div class="reference"><code>{esc(ref["reference"])}</code> → '
            f'<code>{esc(ref.get("path", ""))}</code>{value}{note}{inner}</div>')


def history_page(node: str, report: dict[str, Any]) -> str:
    return page(f"{node} {report['path']}",
                f"<h1>Node {node_link(node)}</h1>{history_html(report)}", "nodes")
