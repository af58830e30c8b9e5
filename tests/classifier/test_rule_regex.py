"""`~` patterns: RE2 semantics, and the differences from backtracking engines the docs list."""

from __future__ import annotations

import re
import time

import pytest

from reclass_ng.classifier.rule_parser import RuleSyntaxError, parse_rule
from reclass_ng.classifier.rule_regex import (
    MAX_RULE_REGEX_LENGTH,
    RuleRegexError,
    compile_rule_regex,
)

SAME_AS_PYTHON = [
    ("^web[0-9]+\\.", ["web1.example.com", "xweb1.", "web.x"]),
    ("\\.example\\.com$", ["a.example.com", "a.example.com.au", "example.com"]),
    ("(?i)WEB", ["web1", "Web", "db"]),
    ("\\d{2,3}-\\w+\\s?x", ["12-ab x", "1-ab x", "1234-abx"]),
    ("a|b|^c", ["xa", "c1", "1c"]),
    ("[[:alpha:]]+", ["abc", "123"]),
    (".*", ["", "anything"]),
]


@pytest.mark.parametrize("pattern, texts", SAME_AS_PYTHON)
def test_rule_patterns_search_as_python_does(pattern, texts):
    compiled = compile_rule_regex(pattern)
    for text in texts:
        python = re.compile(pattern.replace("[[:alpha:]]", "[a-zA-Z]")).search(text)
        assert (compiled.search(text) is not None) == (python is not None), (pattern, text)


@pytest.mark.parametrize("pattern", ["(?=web)", "(?<!x)a", "(a)\\1", "(?P<n>a)(?P=n)", "a\\Z"])
def test_backtracking_only_features_are_refused_with_the_reason(pattern):
    with pytest.raises(RuleRegexError, match="backtracking engine"):
        compile_rule_regex(pattern)


def test_invalid_and_oversized_patterns_are_refused():
    with pytest.raises(RuleRegexError, match="invalid regular expression"):
        compile_rule_regex("(unclosed")
    with pytest.raises(RuleRegexError, match=f"at most {MAX_RULE_REGEX_LENGTH}"):
        compile_rule_regex("a" * (MAX_RULE_REGEX_LENGTH + 1))


def test_dollar_matches_only_at_the_very_end():
    """The documented difference: Python's `$` also matches before a final newline."""
    assert re.search("a$", "a\n") is not None
    assert compile_rule_regex("a$").search("a\n") is None
    assert compile_rule_regex("(?m)a$").search("a\n") is not None


def test_catastrophic_patterns_match_in_linear_time():
    compiled = compile_rule_regex("(a+)+$")
    # This thread's CPU time (RE2 matches in the calling thread): the wall clock would also
    # count the time a busy machine gives to other processes.
    started = time.thread_time()
    assert compiled.search("a" * 100_000 + "!") is None
    assert time.thread_time() - started < 1


def test_the_rule_parser_reports_the_position():
    with pytest.raises(RuleSyntaxError) as raised:
        parse_rule(["and", ["=", "name", "x"], ["~", "name", "(?=x)"]])
    assert "rule[2][2]" in str(raised.value)
