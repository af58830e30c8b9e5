"""argparse for the `reclass` command: its help at the terminal's width without importing
shutil, and usage errors worded as reclass words them (exit status 2)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def _terminal_columns() -> int:
    # shutil.get_terminal_size(), without importing shutil (and zlib, bz2 and lzma with it).
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, the same width: every add_argument makes one, and argparse's
    own imports shutil for the terminal width (a few ms of every start)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class ReclassArgumentParser(argparse.ArgumentParser):
    """argparse.ArgumentParser with reclass's help width and usage errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)
