"""The `reclass` command line read without argparse, when it is written plainly.

argparse with the gettext and locale modules it imports at parse time is about a tenth of a
`reclass --nodeinfo` start. Most command lines are a few exact options with separate values
(`-b inv --nodeinfo n1 -o json`); those are read here. Anything else (help, --version,
abbreviations, `-bVALUE`, grouped flags, values starting with `-`, positional words, a bad
choice or number) returns None and goes to argparse, which decides and words every error.
`reclass_ng.cli.reclass.build_parser` stays the reference: tests/test_cli_plain_argv.py checks
that both read every generated command line the same.
"""

from __future__ import annotations

import sys

from reclass_ng.cli.failures import ERROR_FORMATS

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import SimpleNamespace
else:
    # types.SimpleNamespace (what argparse's Namespace is to its readers), without the
    # `types` module: 0.9 M instructions of every start.
    SimpleNamespace = type(sys.implementation)

# What build_parser defines: option string -> (destination, how its value is read).
_VALUE, _INT, _ERRORS, _TRUE, _FALSE = "value", "int", "errors", "true", "false"
OPTIONS = {
    "-s": ("storage_type", _VALUE), "--storage-type": ("storage_type", _VALUE),
    "-b": ("inventory_base_uri", _VALUE), "--inventory-base-uri": ("inventory_base_uri", _VALUE),
    "-u": ("nodes_uri", _VALUE), "--nodes-uri": ("nodes_uri", _VALUE),
    "-c": ("classes_uri", _VALUE), "--classes-uri": ("classes_uri", _VALUE),
    "-z": ("ignore_class_notfound", _VALUE),
    "--ignore-class-notfound": ("ignore_class_notfound", _VALUE),
    "-a": ("compose_node_name", _TRUE), "--compose-node-name": ("compose_node_name", _TRUE),
    "-x": ("ignore_class_notfound_regexp", _VALUE),
    "--ignore-class-notfound-regexp": ("ignore_class_notfound_regexp", _VALUE),
    "-o": ("output", _VALUE), "--output": ("output", _VALUE),
    "-y": ("pretty_print", _TRUE), "--pretty-print": ("pretty_print", _TRUE),
    "-r": ("no_refs", _TRUE), "--no-refs": ("no_refs", _TRUE),
    "-1": ("group_errors", _FALSE), "--single-error": ("group_errors", _FALSE),
    "-0": ("group_errors", _TRUE), "--multiple-errors": ("group_errors", _TRUE),
    "-i": ("inventory", _TRUE), "--inventory": ("inventory", _TRUE),
    "-n": ("nodeinfo", _VALUE), "--nodeinfo": ("nodeinfo", _VALUE),
    "-j": ("jobs", _INT), "--jobs": ("jobs", _INT),
    "-q": ("quiet", _TRUE), "--quiet": ("quiet", _TRUE),
    "-v": ("verbose", _TRUE), "--verbose": ("verbose", _TRUE),
    "--cache-dir": ("cache_dir", _VALUE),
    "--errors": ("errors", _ERRORS),
}
DEFAULTS = {"storage_type": None, "inventory_base_uri": None, "nodes_uri": None,
            "classes_uri": None, "ignore_class_notfound": None, "compose_node_name": None,
            "ignore_class_notfound_regexp": None, "output": None, "pretty_print": None,
            "no_refs": None, "group_errors": None, "inventory": False, "nodeinfo": None,
            "jobs": None, "quiet": False, "verbose": False, "cache_dir": None, "errors": "text"}


def parse_plain_argv(argv: Sequence[str]) -> SimpleNamespace | None:
    """What `build_parser().parse_args(argv)` returns, or None when argparse must decide."""
    values: dict[str, object] = dict(DEFAULTS)
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word.startswith("--") and "=" in word:
            word, value = word.split("=", 1)
            known = OPTIONS.get(word)
            if known is None or known[1] in (_TRUE, _FALSE):
                return None
        else:
            known = OPTIONS.get(word)
            if known is None:
                return None
            if known[1] in (_TRUE, _FALSE):
                values[known[0]] = known[1] == _TRUE
                continue
            if index == len(argv) or argv[index].startswith("-"):
                return None
            value = argv[index]
            index += 1
        dest, kind = known
        if kind == _INT:
            try:
                values[dest] = int(value)
            except ValueError:
                return None
        elif kind == _ERRORS and value not in ERROR_FORMATS:
            return None
        else:
            values[dest] = value
    return SimpleNamespace(args=[], **values)
