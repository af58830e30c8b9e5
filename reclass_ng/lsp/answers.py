"""Answers to an editor's questions about a position: hover, definition, references,
completion, symbols. Plain data in, plain data out (the server turns them into LSP types).

Values come from the nodes that read the file (their rendered nodeinfo); who wrote a key and
who overrides it from one such node's provenance record (NodeProvenance.writes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from reclass_ng.lsp.documents import Outline, Position, Span
from reclass_ng.lsp.live import EditedInventory, NodeState
from reclass_ng.observe.provenance import MISSING, Write
from reclass_ng.prepare import absolute_class_name

SECTIONS = ("parameters", "exports")
VALUES_SHOWN = 5  # distinct values a hover shows
OVERRIDE_GROUPS = 3  # distinct values a hover says "wins / overridden by" for
VALUE_CHARACTERS = 400  # of each value
COMPLETIONS = 2000  # items one completion returns at most

Location = tuple[str, Span]  # (file, span)


def _lookup(tree: Any, path: Sequence[str]) -> Any:
    for key in path:
        if isinstance(tree, dict) and key in tree:
            tree = tree[key]
        elif isinstance(tree, list) and key.isdigit() and int(key) < len(tree):
            tree = tree[int(key)]
        else:
            return MISSING
    return tree


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= VALUE_CHARACTERS else text[:VALUE_CHARACTERS] + " ..."


def values_across(states: Sequence[NodeState], section: str, path: Sequence[str]
                  ) -> list[tuple[str, list[str]]]:
    """Distinct values at `path` across the rendered `states`: (value as JSON, node names),
    the most common first."""
    grouped: dict[str, list[str]] = {}
    for state in states:
        if state.info is None:
            continue
        value = _lookup(state.info.get(section), path)
        shown = "(not set)" if value is MISSING else _shown(value)
        grouped.setdefault(shown, []).append(state.name)
    return sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))


def _values_text(groups: list[tuple[str, list[str]]]) -> list[str]:
    nodes = sum(len(names) for _, names in groups)
    lines = [f"**{len(groups)} value{'s' if len(groups) != 1 else ''} across {nodes} "
             f"node{'s' if nodes != 1 else ''}**", ""]
    for shown, names in groups[:VALUES_SHOWN]:
        example = ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
        lines.append(f"- `{shown}` on {len(names)} ({example})")
    if len(groups) > VALUES_SHOWN:
        lines.append(f"- ... {len(groups) - VALUES_SHOWN} more")
    return lines


def _failing_text(states: Sequence[NodeState]) -> list[str]:
    failing = [state.name for state in states if state.info is None]
    if not failing:
        return []
    return [f"- {len(failing)} node{'s' if len(failing) != 1 else ''} reading this file "
            f"fail{'s' if len(failing) == 1 else ''} to render (see the diagnostics): "
            + ", ".join(failing[:3]) + (" ..." if len(failing) > 3 else "")]


def _where(live: EditedInventory, write: Write) -> str:
    path = write.file or write.source.name
    shown = os.path.relpath(path, live.root.path) if write.file else path
    return f"{shown}:{write.line}" if write.line else shown


def _first_rendered(states: Sequence[NodeState]) -> NodeState | None:
    return next((state for state in states if state.info is not None), None)


def hover(live: EditedInventory, path: str, position: Position) -> str | None:
    """Markdown for the thing at `position` of file `path`, or None."""
    outline = Outline(live.text_of(path), path)
    if outline.problem is not None:
        return None
    reference = outline.reference_at(position)
    if reference is not None:
        return _reference_hover(live, path, reference[0])
    listed = outline.class_at(position)
    if listed is not None:
        return _class_hover(live, path, listed[0])
    entry = outline.key_at(position)
    if entry is not None and entry.path[0] in SECTIONS and len(entry.path) > 1:
        return _key_hover(live, path, entry.path[0], entry.path[1:], entry.flag)
    return None


def _key_hover(live: EditedInventory, path: str, section: str, keys: tuple[str, ...],
               flag: str) -> str:
    states = live.nodes_reading(path)
    key_text = live_delimiter(live).join(keys)
    lines = [f"`{section}:{key_text}`" + (f" (written with `{flag}`)" if flag else ""), ""]
    if not states:
        return "\n".join(lines + ["No node reads this file."])
    groups = values_across(states, section, keys)
    lines += _values_text(groups) + _failing_text(states)
    # Who wins is asked of one node per distinct value: nodes with the same value at the key
    # got it the same way as far as the editor can tell, and a provenance record costs a render.
    for shown, names in groups[:OVERRIDE_GROUPS]:
        provenance = live.provenance(names[0])
        if provenance is None or not provenance.merged:
            continue
        writes = provenance.writes(keys, section)
        own = [w for w in writes if w.file and os.path.abspath(w.file) == os.path.abspath(path)
               and tuple(map(str, w.key)) == keys]
        lines += ["", f"On {names[0]} (`{shown[:60]}`):"]
        for write in own:
            if write.final:
                lines.append("- this write wins" + (f" ({write.effect})"
                                                    if write.effect != "set" else ""))
            elif write.by is not None:
                lines.append(f"- this write is {write.effect} by {_where(live, write.by)}"
                             + (f" (`{write.by.flag}`)" if write.by.flag else ""))
            else:
                lines.append(f"- this write is {write.effect}")
        others = [w for w in writes if w not in own]
        if others:
            lines.append("- other writes: " + ", ".join(
                f"{_where(live, w)} {w.effect}{' `' + w.flag + '`' if w.flag else ''}"
                for w in others[:8]))
    return "\n".join(lines)


def live_delimiter(live: EditedInventory) -> str:
    """The key path delimiter of the inventory (`:` unless configured)."""
    return live.settings.delimiter if live.settings is not None else ":"


def _reference_path(live: EditedInventory, text: str) -> tuple[str, ...]:
    return tuple(text.strip().split(live_delimiter(live)))


def _reference_hover(live: EditedInventory, path: str, text: str) -> str:
    keys = _reference_path(live, text)
    states = live.nodes_reading(path)
    lines = [f"`${{{text}}}`", ""]
    if not states:
        return "\n".join(lines + ["No node reads this file."])
    lines += _values_text(values_across(states, "parameters", keys)) + _failing_text(states)
    written = reference_writes(live, path, keys)
    if written:
        lines += ["", "Written at: " + ", ".join(
            f"{os.path.relpath(file, live.root.path)}:{span[0][0] + 1}" for file, span in written)]
    return "\n".join(lines)


def reference_writes(live: EditedInventory, path: str, keys: tuple[str, ...]) -> list[Location]:
    """Where the key a reference in `path` names is written, for the first node reading it."""
    node = _first_rendered(live.nodes_reading(path)) or next(
        (state for state in live.nodes_reading(path)), None)
    if node is None:
        return []
    provenance = live.provenance(node.name)
    if provenance is None:
        return []
    found: list[Location] = []
    for write in provenance.writes(keys):
        if not write.file:
            continue
        outline = Outline(live.text_of(write.file), write.file)
        span = outline.key_span(("parameters", *map(str, write.key)))
        location = (write.file, span or ((0, 0), (0, 0)))
        if location not in found:
            found.append(location)
    return found


def resolved_class(live: EditedInventory, path: str, listed: str) -> str:
    """The class name `listed` in file `path` stands for (relative names resolved)."""
    base = live.class_name_of(path) or ""
    return absolute_class_name(listed, base) if listed.startswith(".") else listed


def _class_hover(live: EditedInventory, path: str, listed: str) -> str:
    name = resolved_class(live, path, listed)
    file = live.class_files.get(name)
    lines = [f"class `{name}`", ""]
    lines.append(f"file: {os.path.relpath(file, live.root.path)}" if file
                 else "**no such class**")
    including = [state for _, state in sorted(live.nodes.items())
                 if state.info is not None and name in (state.info.get("classes") or ())]
    lines.append(f"included by {len(including)} node{'s' if len(including) != 1 else ''}")
    if including:
        provenance = live.provenance(including[0].name)
        if provenance is not None:
            for merged in provenance.entities:
                if merged.kind == "class" and merged.entity.name == name:
                    chain = [name]
                    parent = merged.listed_by
                    while parent is not None:
                        chain.append(parent.entity.name)
                        parent = parent.listed_by
                    lines.append(f"on {including[0].name}: " + " <- ".join(chain))
                    break
    return "\n".join(lines)


def definition(live: EditedInventory, path: str, position: Position) -> list[Location]:
    """Where the class or referenced key at `position` is defined."""
    outline = Outline(live.text_of(path), path)
    if outline.problem is not None:
        return []
    reference = outline.reference_at(position)
    if reference is not None:
        return reference_writes(live, path, _reference_path(live, reference[0]))
    listed = outline.class_at(position)
    if listed is not None:
        file = live.class_files.get(resolved_class(live, path, listed[0]))
        return [(file, ((0, 0), (0, 0)))] if file else []
    mapped = outline.mapped_class_at(position)
    if mapped is not None:
        file = live.class_files.get(mapped[0])
        return [(file, ((0, 0), (0, 0)))] if file else []
    return []


def references(live: EditedInventory, path: str, position: Position,
               cancelled: Callable[[], bool] = lambda: False) -> list[Location]:
    """Every file listing the class at `position`, or writing or referencing the key there
    (what was found until `cancelled()` turns true)."""
    outline = Outline(live.text_of(path), path)
    if outline.problem is not None:
        return []
    listed = outline.class_at(position)
    if listed is not None:
        return _class_listings(live, resolved_class(live, path, listed[0]), cancelled)
    reference = outline.reference_at(position)
    if reference is not None:
        keys = _reference_path(live, reference[0])
    else:
        entry = outline.key_at(position)
        if entry is None or entry.path[0] != "parameters" or len(entry.path) < 2:
            return []
        keys = entry.path[1:]
    return _key_uses(live, keys, cancelled)


def _class_listings(live: EditedInventory, name: str, cancelled: Callable[[], bool]
                    ) -> list[Location]:
    found: list[Location] = []
    for file in live.files():
        if cancelled():
            break
        outline = Outline(live.text_of(file), file)
        base = live.class_name_of(file) or ""
        found += [(file, span) for listed, span in outline.class_items()
                  if absolute_class_name(listed, base) == name]
    return found


def _key_uses(live: EditedInventory, keys: tuple[str, ...], cancelled: Callable[[], bool]
              ) -> list[Location]:
    delimiter = live_delimiter(live)
    text = delimiter.join(keys)
    found: list[Location] = []
    for file in live.files():
        if cancelled():
            break
        outline = Outline(live.text_of(file), file)
        found += [(file, entry.span) for entry in outline.keys
                  if entry.path == ("parameters", *keys)]
        found += [(file, span) for written, span in outline.references()
                  if written.strip() == text or written.strip().startswith(text + delimiter)]
    return found


def completions(live: EditedInventory, path: str, position: Position) -> list[tuple[str, str]]:
    """(label, kind) items: class names in a `classes` list, key paths after `${`."""
    outline = Outline(live.text_of(path), path)
    typed = outline.open_reference_before(position)
    if typed is not None:
        return _key_path_items(live, path)
    if outline.in_classes_list(position) or _looks_like_classes_item(outline, position):
        items = [(name, "class") for name in sorted(live.class_files)]
        base = live.class_name_of(path)
        if base and "." in base:
            package = base.rsplit(".", 1)[0]
            items += [("." + name[len(package) + 1:], "class") for name in sorted(live.class_files)
                      if name.startswith(package + ".")]
        return items[:COMPLETIONS]
    return []


def _looks_like_classes_item(outline: Outline, position: Position) -> bool:
    """A `- ` line below `classes:` while the buffer does not parse (being typed)."""
    for number in range(position[0], -1, -1):
        line = outline.lines[number] if number < len(outline.lines) else ""
        if line.startswith("classes:"):
            return True
        if line and not line[0].isspace() and not line.startswith("-"):
            return False
    return False


def _key_path_items(live: EditedInventory, path: str) -> list[tuple[str, str]]:
    delimiter = live_delimiter(live)
    seen: set[str] = set()
    for state in live.nodes_reading(path)[:20]:
        if state.last_info is None:
            continue
        stack: list[tuple[Any, tuple[str, ...]]] = [(state.last_info.get("parameters") or {},
                                                     ())]
        while stack and len(seen) < COMPLETIONS:
            tree, prefix = stack.pop()
            if not isinstance(tree, dict):
                continue
            for key, value in tree.items():
                keys = (*prefix, str(key))
                seen.add(delimiter.join(keys))
                stack.append((value, keys))
    return [(label, "key") for label in sorted(seen)]


def document_symbols(text: str, path: str) -> list[tuple[str, Span, list[tuple[str, Span]]]]:
    """Top-level keys with their children's keys: (name, span, children)."""
    outline = Outline(text, path)
    top = [entry for entry in outline.keys if len(entry.path) == 1]
    return [(entry.path[0], entry.span,
             [(child.path[1], child.span) for child in outline.keys
              if len(child.path) == 2 and child.path[0] == entry.path[0]]) for entry in top]


def workspace_symbols(live: EditedInventory, query: str) -> list[tuple[str, str, str]]:
    """(name, kind, file) of the classes and nodes whose name contains `query`."""
    wanted = query.lower()
    found = [(name, "class", file) for name, file in sorted(live.class_files.items())
             if wanted in name.lower()]
    found += [(name, "node", file) for name, file in sorted(live.node_files.items())
              if wanted in name.lower()]
    return found
