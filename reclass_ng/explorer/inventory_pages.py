"""The class list, the class page (its file, include graph and nodes) and the diff page."""

from __future__ import annotations

import json
from typing import Any

from reclass_ng.diff import KeyChange, NodeChange
from reclass_ng.errors import YamlFileError
from reclass_ng.explorer.catalogue import NodeCatalogue, page_of
from reclass_ng.explorer.class_graph import ClassGraph
from reclass_ng.explorer.data import DiffResult
from reclass_ng.explorer.html import (
    class_link,
    class_url,
    error_block,
    esc,
    node_link,
    page,
    pager,
    url,
)
from reclass_ng.explorer.svg_graph import include_graph_svg
from reclass_ng.location import display_path
from reclass_ng.storage.yaml_load import read_input_file

CLASS_NODES_PAGE = 100


def class_list_page(graph: ClassGraph, catalogue: NodeCatalogue, text: str) -> str:
    names = sorted(n for n in graph.paths if text.lower() in n.lower())
    rows = "".join(
        f"<tr><td>{class_link(n)}</td><td>{len(catalogue.class_nodes.get(n, []))}</td>"
        f"<td>{len(graph.includes.get(n, []))}</td><td>{len(graph.included_by.get(n, []))}</td>"
        "</tr>" for n in names)
    form = (f'<form class="filters" method="get" action="{url("classes")}"><input type="search" '
            f'name="q" id="filter-q" placeholder="class name" value="{esc(text)}">'
            '<button type="submit">Filter</button></form>')
    body = (f"<h1>Classes</h1>{form}<p class=\"count\">{len(names)} of {len(graph.paths)} "
            'classes</p><table class="classes"><thead><tr><th>class</th><th>nodes</th>'
            f"<th>includes</th><th>included by</th></tr></thead><tbody>{rows}</tbody></table>")
    return page("Classes", body, "classes")


def class_page(name: str, graph: ClassGraph, catalogue: NodeCatalogue, base_dir: str,
               page_number: int) -> str:
    path = graph.paths[name]
    relative = display_path(path, base_dir)
    layers, edges = graph.neighbourhood(name)
    svg = include_graph_svg(layers, edges, name, class_url)
    includes = graph.includes.get(name, [])
    included_by = graph.included_by.get(name, [])
    nodes = catalogue.class_nodes.get(name, [])
    shown, current, pages = page_of(nodes, page_number, CLASS_NODES_PAGE)
    direct = set(graph.nodes_listing(name))
    node_items = "".join(
        f"<li>{node_link(n)}{' <span class=badge>lists it</span>' if n in direct else ''}</li>"
        for n in shown)
    problem = error_block(graph.problems[name]) if name in graph.problems else ""

    def listing(names: list[str], what: str) -> str:
        if not names:
            return f'<p class="empty">{what}: none</p>'
        items = "".join(f"<li>{class_link(n) if n in graph.paths else esc(n)}</li>"
                        for n in names)
        return f"<h3>{what}</h3><ul class=\"class-list\">{items}</ul>"

    body = (f'<h1>Class <span class="class-name">{esc(name)}</span></h1>'
            f'<dl class="summary"><dt>file</dt><dd class="class-file">{esc(relative)}</dd></dl>'
            f'{problem}<section id="graph"><h2>Include graph</h2><p class="hint">Arrows point '
            "from a class to the classes it includes; the highlighted box is this class.</p>"
            f'<div class="graph-box">{svg}</div></section>'
            f'<section class="columns"><div>{listing(includes, "Includes")}</div>'
            f'<div>{listing(included_by, "Included by")}</div></section>'
            + _file_section(path, relative)
            + f'<section id="class-nodes"><h2>Nodes that get it ({len(nodes)})</h2>'
            f'<ul class="node-list">{node_items}</ul>'
            + pager(f"classes/{name}", {}, current, pages) + "</section>")
    return page(f"class {name}", body, "classes")


MAX_FILE_SHOWN = 200_000  # bytes of a class file the page shows


def _file_section(path: str, relative: str) -> str:
    """The class file with line numbers (folded), so a file:line seen elsewhere can be read."""
    try:
        content = read_input_file(path)  # a FIFO or a device is refused, not read
    except YamlFileError as err:
        return error_block(f"{relative}: {err.problem}", "The file cannot be read")
    text = content[:MAX_FILE_SHOWN].decode("utf-8", "replace")
    lines = "".join(f'<tr id="L{n}"><td class="line-number">{n}</td><td><code>{esc(line)}'
                    "</code></td></tr>" for n, line in enumerate(text.splitlines(), 1))
    cut = '<p class="hint">(cut: the file is larger)</p>' if len(content) > MAX_FILE_SHOWN else ""
    return (f'<section id="class-file"><details><summary>{esc(relative)}</summary>'
            f'<table class="file">{lines}</table>{cut}</details></section>')


# -- diff -------------------------------------------------------------------------------------

def diff_page(revisions: list[tuple[str, str]], old: str, new: str,
              result: DiffResult | None) -> str:
    def chooser(field: str, chosen: str, default_label: str) -> str:
        options = [("", default_label)] + [(c, f"{c} {s}") for c, s in revisions]
        if chosen and chosen not in {c for c, _ in options}:
            options.append((chosen, chosen))
        items = "".join(f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>'
                        f"{esc(label[:80])}</option>" for v, label in options)
        return (f'<label>{field} <select name="{field}" id="diff-{field}">{items}</select>'
                f'</label><input type="text" name="{field}_rev" id="diff-{field}-rev" '
                'placeholder="or type a revision (HEAD~2, a tag)">')

    form = (f'<form class="diff-form" method="get" action="{url("diff")}">'
            + chooser("from", old, "working tree") + chooser("to", new, "working tree")
            + '<button type="submit" id="diff-run">Compare</button></form>')
    if not revisions:
        form += ('<p class="hint">The inventory is not in a git repository (or has no '
                 "commits): type revisions, or compare directories with reclass-ng diff.</p>")
    body = f"<h1>Diff</h1>{form}"
    if result is not None:
        body += _diff_result_html(result)
    return page("Diff", body, "diff")


def _diff_result_html(result: DiffResult) -> str:
    head = (f'<p class="sides"><span class="old">--- {esc(result.old_label)}</span><br>'
            f'<span class="new">+++ {esc(result.new_label)}</span></p>')
    if result.error is not None:
        return head + error_block(result.error, "The diff could not be made")
    assert result.diff is not None
    diff = result.diff
    summary = (f'<p class="summary" id="diff-summary">{len(diff.nodes)} nodes changed, '
               f'{diff.keys_changed} keys changed ({diff.count("added")} nodes added, '
               f'{diff.count("removed")} removed)</p>')
    nodes = "".join(_node_change_html(n) for n in diff.nodes)
    return head + summary + (nodes or '<p class="empty">No node differs.</p>')


def _node_change_html(node: NodeChange) -> str:
    status = {"added": "node added", "removed": "node removed", "changed": ""}[node.status]
    errors = ""
    if node.old_error != node.new_error:
        if node.new_error:
            errors += f'<pre class="error-message">now fails to render: {esc(node.new_error)}</pre>'
        if node.old_error:
            errors += f'<pre class="error-message">failed to render before: {esc(node.old_error)}</pre>'
    rows = "".join(_key_change_html(change) for change in node.keys)
    table = (f'<table class="changes"><thead><tr><th></th><th>key</th><th>old</th><th>new</th>'
             f"<th>written at</th></tr></thead><tbody>{rows}</tbody></table>" if rows else "")
    name = node_link(node.node) if node.status != "removed" else esc(node.node)
    return (f'<section class="node-change {node.status}" data-node="{esc(node.node)}">'
            f"<h3>{name} <span class=\"status\">{status}</span></h3>{errors}{table}</section>")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _key_change_html(change: KeyChange) -> str:
    mark = {"added": "+", "removed": "−", "changed": "~"}[change.change]
    old = "" if change.change == "added" else f"<code>{esc(_json(change.old))}</code>"
    new = "" if change.change == "removed" else f"<code>{esc(_json(change.new))}</code>"
    origin = ""
    if change.origin is not None:
        origin = ("was " if change.change == "removed" else "") + change.origin.text()
    return (f'<tr class="{change.change}"><td>{mark}</td><td><code>{esc(change.path)}</code></td>'
            f'<td class="old">{old}</td><td class="new">{new}</td>'
            f'<td class="origin">{esc(origin)}</td></tr>')

