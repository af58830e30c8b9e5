"""What error messages add to help a user: where a value was written (file:line:column) and
"did you mean" suggestions.

Everything here runs only after an error happened, never while rendering works: files are read
again with positions (loading keeps none, for speed) and parameter trees are walked for
suggestions only when a message is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import yaml

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_SUGGESTIONS = 3
SIMILARITY_CUTOFF = 0.6
# Whole key paths share their first keys, which makes any two of them look alike: stricter.
WHOLE_PATH_CUTOFF = 0.8
# A candidate much further away than the best one is noise next to it.
NEARLY_AS_CLOSE = 0.1
# A walk over a huge parameter tree for suggestions stops after this many keys; what was seen
# until then is still searched.
MAX_KEYS_WALKED = 50_000


def _compose(path: str) -> tuple[str, yaml.Node | None] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        return text, yaml.compose(text, Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def _key_matches(key_node: yaml.Node, key: object) -> bool:
    if not isinstance(key_node, yaml.ScalarNode):
        return False
    # Keys may carry the `~` (override) and `=` (constant) prefixes in the file.
    return key_node.value == str(key) or key_node.value.lstrip("~=") == str(key)


def _descend(node: yaml.Node | None, keys: Sequence[object],
             pick: Callable[[yaml.Node], bool] | None) -> yaml.Node | None:
    """The deepest node on `keys` (a partial path ends at its last existing step)."""
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            found = [value for key_node, value in node.value if _key_matches(key_node, key)]
            if not found:
                return node
            node = found[-1]  # YAML keeps the last of duplicate keys
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
                and -len(node.value) <= key < len(node.value):
            node = node.value[key]
        else:
            return node
    if pick is not None and isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if pick(item):
                return item
    return node


def _line_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def locate(path: str | None, keys: Sequence[object], needle: str | None = None,
           pick: Callable[[yaml.Node], bool] | None = None) -> tuple[int, int] | None:
    """1-based (line, column) of the value at `keys` in a YAML file.

    With `needle` (e.g. the text of a reference) the position is that of the needle inside the
    value when it is written there literally; `pick` chooses an item of a sequence at `keys`.
    """
    if not path:
        return None
    composed = _compose(path)
    if composed is None or composed[1] is None:
        return None
    text, root = composed
    node = _descend(root, keys, pick)
    if node is None or node is root:
        return None
    start, end = node.start_mark.index, node.end_mark.index
    if needle:
        found = text.find(needle, start, max(end, start + len(needle)))
        if found >= 0:
            return _line_column(text, found)
    return node.start_mark.line + 1, node.start_mark.column + 1


def _ratio(a: str, b: str) -> float:
    import difflib  # only when an error asks for suggestions: not part of every start

    return difflib.SequenceMatcher(None, a, b).ratio()


def _best(scored: dict[str, float]) -> list[str]:
    """The best candidates: at most a few, and only those nearly as close as the closest."""
    ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
    if not ranked:
        return []
    floor = ranked[0][1] - NEARLY_AS_CLOSE
    return [name for name, score in ranked[:MAX_SUGGESTIONS] if score >= floor]


def similar_names(name: str, names: Iterable[str]) -> list[str]:
    """The existing names nearest to `name` ("did you mean"), ranked by the whole name; the
    last dotted part only breaks ties. When no whole name is close, names whose last part is
    (a class looked for in the wrong place is found by its own name)."""
    last = name.rsplit(".", 1)[-1]
    whole: dict[str, tuple[float, float]] = {}
    by_last: dict[str, tuple[float, float]] = {}
    for candidate in names:
        if candidate == name:
            continue
        scores = (_ratio(name, candidate), _ratio(last, candidate.rsplit(".", 1)[-1]))
        if scores[0] >= SIMILARITY_CUTOFF:
            whole[candidate] = scores
        elif scores[1] >= SIMILARITY_CUTOFF:
            by_last[candidate] = (scores[1], scores[0])
    return _best_ranked(whole or by_last)


def _best_ranked(scored: dict[str, tuple[float, float]]) -> list[str]:
    """Like _best, for (score, tie-breaker) pairs."""
    ranked = sorted(scored.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    if not ranked:
        return []
    floor = ranked[0][1][0] - NEARLY_AS_CLOSE
    return [name for name, (score, _) in ranked[:MAX_SUGGESTIONS] if score >= floor]


def _key_paths(tree: Any, delimiter: str, depth: int) -> list[str]:
    """Every key path of `depth` components in a tree of mappings (lists are not entered)."""
    paths: list[str] = []
    budget = MAX_KEYS_WALKED
    stack: list[tuple[str, Any, int]] = [("", tree, 0)]
    while stack and budget > 0:
        prefix, node, level = stack.pop()
        if not isinstance(node, dict):
            continue
        for key in node:
            budget -= 1
            path = prefix + delimiter + str(key) if prefix else str(key)
            if level + 1 == depth:
                paths.append(path)
            elif level + 1 < depth:
                stack.append((path, node[key], level + 1))
    return paths


def _has_path(node: Any, keys: Sequence[str]) -> bool:
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def similar_paths(ref_path: str, tree: Any, delimiter: str) -> list[str]:
    """The existing key paths nearest to a reference path that does not exist.

    Two kinds of candidates, ranked together by similarity to the whole path: paths of the same
    length that are close as a whole (a typo anywhere), and the siblings of the first key that
    does not exist which are close to that key (`${nginx:prot}` -> `nginx:port`).
    """
    keys = ref_path.split(delimiter)
    scored = {}
    for candidate in _key_paths(tree, delimiter, len(keys)):
        score = _ratio(ref_path, candidate)
        if score >= WHOLE_PATH_CUTOFF:
            scored[candidate] = score
    node: Any = tree
    for i, key in enumerate(keys):
        if isinstance(node, dict) and key in node:
            node = node[key]
            continue
        if isinstance(node, dict):
            for sibling in node:
                if _ratio(key, str(sibling)) >= SIMILARITY_CUTOFF:
                    # The rest of the path only when it exists below the sibling too.
                    rest = keys[i + 1:] if _has_path(node[sibling], keys[i + 1:]) else []
                    candidate = delimiter.join(keys[:i] + [str(sibling)] + rest)
                    scored[candidate] = _ratio(ref_path, candidate)
        break
    scored.pop(ref_path, None)
    return _best(scored)
