"""The regular expressions of `~` rule conditions, matched by RE2: time linear in the text.

A backtracking engine (Python's `re`, Java's, which the Node Classifier uses) takes exponential
time on patterns such as `(a+)+$` against a short fact, and one such rule stalls every request
that classifies. RE2 (the `google-re2` package) never backtracks. Patterns are compiled when a
group is read or written, so an unsupported or oversized pattern is refused there, with the
group and the rule position, not at classification time.

What differs from backtracking engines (doc/node-groups.rst lists it for users):
- lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), backreferences (`\\1`, `(?P=name)`), possessive
  quantifiers and atomic groups are refused: they are what makes backtracking necessary;
- `\\Z` is refused (write `\\z` or `$`); `$` without `(?m)` matches only at the very end of the
  text, while Python and Java also match just before a final newline;
- everything else a rule needs (classes, `\\d`, `\\w`, `\\s`, anchors, `(?i)`, alternation,
  bounded repetition up to 1000) behaves the same.
"""

from __future__ import annotations

from typing import Any

import re2  # type: ignore[import-untyped]

# Longest pattern accepted; rules match host names and facts, not documents.
MAX_RULE_REGEX_LENGTH = 1024
# Memory RE2 may use to compile one pattern (its default is 8 MiB as well; stated, not implied).
_MAX_PROGRAM_BYTES = 8 << 20


class RuleRegexError(ValueError):
    """A `~` pattern that cannot be used; the message says why."""


def _options() -> Any:
    options = re2.Options()
    options.max_mem = _MAX_PROGRAM_BYTES
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    return options


_OPTIONS = _options()


def compile_rule_regex(pattern: str) -> Any:
    """The compiled pattern (has `.search(text)`); RuleRegexError when it is too long, invalid,
    or uses a backtracking-only feature."""
    if len(pattern) > MAX_RULE_REGEX_LENGTH:
        raise RuleRegexError(f"the regular expression has {len(pattern)} characters; at most "
                             f"{MAX_RULE_REGEX_LENGTH} are allowed")
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        reason = _re2_reason(err)
    # RE2's reason alone decides: a pattern it refuses is never handed to Python's `re`, whose
    # parser recurses per nesting level (a thousand `(` within the length limit overflow it).
    if _needs_backtracking(reason):
        raise RuleRegexError(
            f"the regular expression {_shown(pattern)} needs a backtracking engine ({reason}); "
            "rules are matched by RE2, in time linear in the text, so lookaround, "
            "backreferences and \\Z are not supported (see doc/node-groups.rst)")
    raise RuleRegexError(f"invalid regular expression {_shown(pattern)}: {reason}")


# RE2's messages for the constructs only a backtracking engine has: lookaround and named
# backreferences (`(?=`, `(?<!`, `(?P=n)`) are an "invalid perl operator"; numbered
# backreferences and `\Z` are invalid escapes (other invalid escapes are simply invalid).
_PERL_OPERATOR = "invalid perl operator: "
_ESCAPE = "invalid escape sequence: "
_BACKTRACKING_ESCAPE = re2.compile(r"\\(?:[1-9]|Z)")
# Characters of a pattern or of RE2's reason quoted in a message (RE2 repeats the pattern).
_SHOWN_CHARACTERS = 80


def _needs_backtracking(reason: str) -> bool:
    if reason.startswith(_PERL_OPERATOR):
        return True
    return reason.startswith(_ESCAPE) and \
        _BACKTRACKING_ESCAPE.match(reason[len(_ESCAPE):]) is not None


def _shown(text: str) -> str:
    return repr(text if len(text) <= _SHOWN_CHARACTERS else text[:_SHOWN_CHARACTERS] + "...")


def _re2_reason(err: Exception) -> str:
    """RE2's reason (`missing ): ((((...`), its quoted part cut to _SHOWN_CHARACTERS."""
    raw = err.args[0] if err.args else ""
    reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    kind, sep, quoted = reason.partition(": ")
    if len(quoted) > _SHOWN_CHARACTERS:
        quoted = quoted[:_SHOWN_CHARACTERS] + "..."
    return kind + sep + quoted
