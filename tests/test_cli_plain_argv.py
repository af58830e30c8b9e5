"""cli/plain_argv.py: the `reclass` command lines it reads, it reads as argparse does
(cli.reclass.build_parser, the reference); all others it leaves to argparse."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.cli.plain_argv import OPTIONS, parse_plain_argv
from reclass_ng.cli.reclass import build_parser

OPTION_WORDS = sorted(OPTIONS) + ["--nodei", "--inv", "-iy", "-bx", "-b=x", "--", "-h",
                                  "--help", "--version", "--nodeinfo=n=1", "--jobs=2",
                                  "--errors=json", "--errors=xml", "--quiet=1", "-", "-5"]
VALUES = st.sampled_from(["n1", "", "inv dir", "json", "yaml", "text", "3", " 4", "x1",
                          "-x", "--inventory", "a=b", "ünï", "0"])
ARGV = st.lists(st.sampled_from(OPTION_WORDS) | VALUES, max_size=7)


def _argparse_result(argv: list[str]) -> object:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return vars(build_parser().parse_args(argv))
        except SystemExit as stop:
            return ("exit", stop.code)


@settings(max_examples=400, deadline=None)
@given(argv=ARGV)
def test_plain_command_lines_read_as_argparse_reads_them(argv: list[str]) -> None:
    plain = parse_plain_argv(argv)
    if plain is not None:
        assert vars(plain) == _argparse_result(argv)


@pytest.mark.parametrize("argv", [
    ["-b", "inv", "--nodeinfo", "n1", "-o", "json"],
    ["--inventory", "-b", "inv", "-j", "2", "--errors", "json", "-z", "True", "-a", "-y"],
    ["--inventory-base-uri=inv", "--inventory", "-1", "--cache-dir", "c"],
])
def test_common_command_lines_need_no_argparse(argv: list[str]) -> None:
    plain = parse_plain_argv(argv)
    assert plain is not None and vars(plain) == _argparse_result(argv)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["--nodei", "n1"], ["-bx"],
                                  ["-b"], ["-b", "-x"], ["extra"], ["-j", "two"],
                                  ["--errors", "xml"], ["-iy"]])
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert parse_plain_argv(argv) is None
