"""A group's history page (`/ui/groups/<id>/history`): the activity log's entries for the
group, newest first, each with who, when, the message and every changed field before and
after."""

from __future__ import annotations

from typing import Any

from reclass_ng.classifier.groups import Group
from reclass_ng.explorer.html import esc, page, pager, url, value_html

# Entries per page of a group's history.
HISTORY_PAGE_SIZE = 50


def group_history_url(group_id: str) -> str:
    return url(f"groups/{group_id}/history")


def _entry(commit: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr><td><code>{esc(event.get("what", ""))}</code></td>'
        f'<td>{value_html(event.get("old_value"))}</td>'
        f'<td>{value_html(event.get("new_value"))}</td></tr>'
        for event in commit["events"])
    table = ('<table class="classification"><tr><th>field</th><th>before</th><th>after</th>'
             f"</tr>{rows}</table>") if rows else ""
    return (f'<li class="activity"><div class="activity-head">'
            f'<time>{esc(commit["timestamp"])}</time> '
            f'<span class="subject">{esc(commit["subject"]["name"])}</span></div>'
            f'<div class="message">{esc(commit["message"])}</div>{table}</li>')


def group_history_page(group: Group, commits: list[dict[str, Any]], total: int,
                       current: int) -> str:
    """The page for one group: its entries on page `current` of HISTORY_PAGE_SIZE each."""
    pages = max(1, -(-total // HISTORY_PAGE_SIZE))
    title = f"History of {group.name}"
    back = f'<p><a href="{esc(url("groups"))}#group-{esc(group.id)}">← all groups</a></p>'
    if not commits:
        body = ('<p class="empty">No change to this group was made through the API (the '
                "activity log records API writes; see git for edits of the files).</p>")
    else:
        body = f'<ul class="activity-log">{"".join(_entry(c) for c in commits)}</ul>'
    return page(title, f"<h1>{esc(title)}</h1>{back}<p>{total} changes</p>{body}"
                + pager(f"groups/{group.id}/history", {}, current, pages), "groups")
