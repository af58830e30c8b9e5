""""Did you mean": the existing names (classes, nodes, settings) and key paths nearest to one
that does not exist, ranked by the whole name.

Everything here runs only after an error happened, never while rendering works: parameter trees
are walked for suggestions only when a message is printed. Where a value is written
(file:line:column) is storage/positions.py's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

MAX_SUGGESTIONS = 3
SIMILARITY_CUTOFF = 0.6
# Whole key paths share their first keys, which makes any two of them look alike: stricter.
WHOLE_PATH_CUTOFF = 0.8
# A candidate much further away than the best one is noise next to it.
NEARLY_AS_CLOSE = 0.1
# A walk over a huge parameter tree for suggestions stops after this many keys; what was seen
# until then is still searched.
MAX_KEYS_WALKED = 50_000


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


def similar_node_names(name: str, names: Iterable[str]) -> list[str]:
    """The node names nearest to `name`: a short host name finds its full names (`web1` ->
    `web1.example.com`) and a full name the short one, before names that are merely alike."""
    names = list(names)
    short = name.split(".", 1)[0]
    same_host = sorted(candidate for candidate in names
                       if candidate.startswith(name + ".") or candidate == short != name)
    return same_host[:MAX_SUGGESTIONS] or similar_names(name, names)


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


def did_you_mean(names: Sequence[str]) -> str:
    """` (did you mean a, b?)` naming `names`, or an empty string when there are none: the one
    spelling of the hint after a message (settings, explain, lint, the editor)."""
    return f" (did you mean {', '.join(names)}?)" if names else ""
