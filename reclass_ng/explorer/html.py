"""HTML building blocks shared by the explorer's pages: the layout, escaping, values, links.

Pages are built as strings on the server; every text that comes from the inventory goes through
`esc`. The layout loads one stylesheet and one small script from /ui/static, nothing else.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from reclass_ng.version import __version__

UI = "/ui"
SECTIONS = (("nodes", "Nodes"), ("classes", "Classes"), ("groups", "Groups"), ("diff", "Diff"))


def esc(value: Any) -> str:
    return escape(str(value), quote=True)


def url(where: str, /, **query: Any) -> str:
    """A URL under /ui with the query parameters that are set."""
    pairs = {k: v for k, v in query.items() if v not in (None, "")}
    return f"{UI}/{where}" + (f"?{urlencode(pairs)}" if pairs else "")


def node_url(name: str) -> str:
    return url(f"nodes/{quote(name, safe='')}")


def class_url(name: str) -> str:
    return url(f"classes/{quote(name, safe='')}")


def node_link(name: str) -> str:
    return f'<a class="node-link" href="{esc(node_url(name))}">{esc(name)}</a>'


def class_link(name: str) -> str:
    return f'<a class="class-link" href="{esc(class_url(name))}">{esc(name)}</a>'


def value_html(value: Any) -> str:
    """A rendered value on one line: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return f'<code class="value str">{esc(value)}</code>' if value else \
            '<code class="value empty">\'\'</code>'
    text = json.dumps(value, default=str, ensure_ascii=False)
    return f'<code class="value">{esc(text)}</code>'


def error_block(message: str, title: str = "Error") -> str:
    return (f'<section class="error"><h2>{esc(title)}</h2>'
            f'<pre class="error-message">{esc(message)}</pre></section>')


def page(title: str, body: str, section: str = "") -> str:
    """A whole page: the navigation, then `body`."""
    current = ' class="current"'
    links = "".join(f'<a href="{url(name)}"{current if name == section else ""}>{label}</a>'
                    for name, label in SECTIONS)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)} · reclass-ng explorer</title>"
        f'<link rel="stylesheet" href="{UI}/static/explorer.css">'
        f'<script defer src="{UI}/static/explorer.js"></script></head><body>'
        f'<header><a class="brand" href="{UI}/">reclass-ng explorer</a><nav>{links}</nav>'
        f'<span class="version">{esc(__version__)} · read-only</span></header>'
        f"<main>{body}</main></body></html>")


def pager(base: str, query: dict[str, Any], current: int, pages: int) -> str:
    """Previous/next links and the page count."""
    if pages <= 1:
        return ""
    parts = []
    if current > 1:
        parts.append(f'<a rel="prev" href="{esc(url(base, **query, page=current - 1))}">'
                     "← previous</a>")
    parts.append(f'<span class="page-count">page {current} of {pages}</span>')
    if current < pages:
        parts.append(f'<a rel="next" href="{esc(url(base, **query, page=current + 1))}">'
                     "next →</a>")
    return f'<nav class="pager">{" ".join(parts)}</nav>'
