#!/usr/bin/env python3
"""Turn the runner's markdown report into reStructuredText for doc/performance.rst.

    python bench/rst.py bench/.work/results.md --update-doc doc/performance.rst

Only the constructs the runner writes are handled: the ``##`` heading (dropped:
the document has its own section title), ``###`` headings, paragraphs, pipe tables, bullet lists with one nested level, inline code and
bold. ``--update-doc`` replaces the text between the ``.. results-start`` and
``.. results-end`` comments of the document (atomically); without it the
reStructuredText is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

START, END = ".. results-start", ".. results-end"


def inline(text: str) -> str:
    """Markdown inline code to reStructuredText literals (bold is the same in both)."""
    return re.sub(r"`([^`]+)`", r"``\1``", text)


def table(rows: list[str]) -> list[str]:
    """A markdown pipe table (header, rule, rows) as a list-table directive."""
    cells = [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]
    header, body = cells[0], cells[2:]
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *body]:
        row = row + [""] * (len(header) - len(row))
        for index, cell in enumerate(row):
            marker = "   * - " if index == 0 else "     - "
            lines.append((marker + inline(cell)).rstrip())
    return lines


def markdown_to_rst(text: str) -> str:
    """Convert the runner's report."""
    out: list[str] = []
    lines = text.splitlines()
    index = 0
    in_nested = False
    while index < len(lines):
        line = lines[index]
        heading = re.match(r"^(#{2,3}) (.*)$", line)
        if heading:
            if heading.group(1) == "###":
                title = inline(heading.group(2))
                out += [title, "-" * len(title)]
        elif line.startswith("|"):
            rows = []
            while index < len(lines) and lines[index].startswith("|"):
                rows.append(lines[index])
                index += 1
            out += table(rows)
            continue
        elif line.startswith("  - "):
            if not in_nested:
                out.append("")
                in_nested = True
            out.append("  " + inline(line.strip()))
        else:
            if in_nested and line.strip():
                out.append("")
            in_nested = False
            out.append(inline(line))
        index += 1
    return "\n".join(out).strip() + "\n"


def update_document(document: Path, rst: str) -> None:
    """Replace the results section of ``document`` with ``rst``."""
    text = document.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ValueError(f"{document} has no '{START}' ... '{END}' section")
    head, rest = text.split(START, 1)
    _old, tail = rest.split(END, 1)
    updated = f"{head}{START}\n\n{rst}\n{END}{tail}"
    temporary = document.with_name(f".{document.name}.tmp")
    temporary.write_text(updated, encoding="utf-8")
    os.replace(temporary, document)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="markdown written by bench/run.py")
    parser.add_argument("--update-doc", type=Path, metavar="RST")
    args = parser.parse_args()
    try:
        rst = markdown_to_rst(args.report.read_text(encoding="utf-8"))
        if args.update_doc:
            update_document(args.update_doc, rst)
        else:
            sys.stdout.write(rst)
    except (OSError, ValueError) as error:
        print(f"rst.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
