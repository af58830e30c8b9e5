"""A layered include graph drawn as inline SVG on the server (no script, no library).

Layers are rows (a wide one shows what fits and counts the rest); within a row, classes are ordered by the mean position of the classes they are
linked to in the row above (one barycentre pass, enough for the small neighbourhoods the class
page shows), then spread evenly. Each box links to its class page.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

CHAR_WIDTH = 7.2  # px per character of the 12px monospace labels
BOX_HEIGHT = 26
ROW_GAP = 56
BOX_GAP = 18
MARGIN = 10
MAX_ROW_WIDTH = 1150  # px of boxes in one row; the rest of a layer is counted, not drawn
MORE_WIDTH = 90
MORE_PREFIX = "\0+"  # never the start of a class name


def _ordered(layers: list[list[str]], edges: list[tuple[str, str]]) -> list[list[str]]:
    linked: dict[str, set[str]] = {}
    for parent, child in edges:
        linked.setdefault(parent, set()).add(child)
        linked.setdefault(child, set()).add(parent)
    out = [list(layers[0])] if layers else []
    for layer in layers[1:]:
        above = {name: i for i, name in enumerate(out[-1])}

        def centre(name: str, above: dict[str, int] = above) -> float:
            positions = [above[n] for n in linked.get(name, ()) if n in above]
            return sum(positions) / len(positions) if positions else float(len(above))

        out.append(sorted(layer, key=lambda name: (centre(name), name)))
    return out


def _trimmed(layers: list[list[str]], widths: dict[str, float]) -> list[list[str]]:
    """Each layer cut to what fits MAX_ROW_WIDTH, the rest counted in a `+N more` box (the
    lists under the graph name them all), so the page does not scroll sideways when a class is
    included by dozens of others."""
    rows: list[list[str]] = []
    for layer in layers:
        row: list[str] = []
        used = 0.0
        for index, name in enumerate(layer):
            room = MAX_ROW_WIDTH - (MORE_WIDTH if index < len(layer) - 1 else 0)
            if row and used + widths[name] > room:
                row.append(f"{MORE_PREFIX}{len(layer) - index} more")
                break
            row.append(name)
            used += widths[name] + BOX_GAP
        rows.append(row)
    return rows


def include_graph_svg(layers: list[list[str]], edges: list[tuple[str, str]], focus: str,
                      href: Callable[[str], str]) -> str:
    """The SVG of `layers` (rows of class names) with arrows from includer to included."""
    widths = {name: len(name) * CHAR_WIDTH + 16 for layer in layers for name in layer}
    layers = _trimmed(_ordered(layers, edges), widths)
    widths.update({name: MORE_WIDTH for layer in layers for name in layer
                   if name.startswith(MORE_PREFIX)})
    row_widths = [sum(widths[n] for n in layer) + BOX_GAP * (len(layer) - 1) for layer in layers]
    total_width = max(row_widths, default=0) + 2 * MARGIN
    boxes: dict[str, tuple[float, float, float]] = {}  # name -> (x, y, width)
    for row, layer in enumerate(layers):
        x = MARGIN + (total_width - 2 * MARGIN - row_widths[row]) / 2
        y = float(MARGIN + row * (BOX_HEIGHT + ROW_GAP))
        for name in layer:
            boxes[name] = (x, y, widths[name])
            x += widths[name] + BOX_GAP
    height = MARGIN * 2 + len(layers) * BOX_HEIGHT + max(len(layers) - 1, 0) * ROW_GAP
    parts = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" '
             f'height="{height}" viewBox="0 0 {total_width:.0f} {height}" role="img" '
             f'aria-label="include graph of {escape(focus)}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
             'fill="#667"/></marker></defs>']
    for parent, child in edges:
        if parent not in boxes or child not in boxes:
            continue  # one end is in a `+N more` box
        px, py, pw = boxes[parent]
        cx, cy, cw = boxes[child]
        if py == cy:
            continue  # same row (a class including its sibling): shown in the lists only
        start_y, end_y = (py + BOX_HEIGHT, cy) if py < cy else (py, cy + BOX_HEIGHT)
        x1, x2 = px + pw / 2, cx + cw / 2
        middle = (start_y + end_y) / 2
        parts.append(f'<path class="edge" d="M{x1:.1f},{start_y:.1f} C{x1:.1f},{middle:.1f} '
                     f'{x2:.1f},{middle:.1f} {x2:.1f},{end_y:.1f}" fill="none" stroke="#889" '
                     'marker-end="url(#arrow)"/>')
    for name, (x, y, width) in boxes.items():
        if name.startswith(MORE_PREFIX):
            parts.append(f'<g class="graph-more"><rect x="{x:.1f}" y="{y:.1f}" '
                         f'width="{width:.1f}" height="{BOX_HEIGHT}" rx="4"/>'
                         f'<text x="{x + width / 2:.1f}" y="{y + BOX_HEIGHT / 2 + 4:.1f}" '
                         f'text-anchor="middle">{escape(name[1:])}</text></g>')
            continue
        kind = "focus" if name == focus else "class"
        parts.append(
            f'<a href="{escape(href(name))}" class="graph-node {kind}" data-class="{escape(name)}">'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{BOX_HEIGHT}" rx="4"/>'
            f'<text x="{x + width / 2:.1f}" y="{y + BOX_HEIGHT / 2 + 4:.1f}" '
            f'text-anchor="middle">{escape(name)}</text></a>')
    parts.append("</svg>")
    return "".join(parts)
