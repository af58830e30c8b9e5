"""Every shell and Python example in README.rst and doc/*.rst runs, and shows what it prints.

How a literal block of the documentation is treated (one test per document; the blocks of a
document run in order in one work directory, so a later block sees what an earlier one made):

* ``.. code-block:: console`` blocks, and ``::`` blocks whose first line starts with ``$ ``,
  are terminal sessions: each ``$ command`` (continued over lines ending in ``\\``) runs in
  one bash process for the whole block, standard error merged into standard output. When the
  document shows lines under a command, they must be what it prints: trailing spaces are
  ignored, a line ``...`` stands for any number of lines and ``...`` inside a line for any
  text. A command with no lines under it must exit 0.
* ``.. code-block:: sh``/``bash``/``shell`` blocks, and ``::`` blocks whose first line starts
  with a command (``reclass``, ``reclass-ng``, ``curl``, ``pip``, ``python3``, ``make``, a
  variable assignment, ...), are scripts: run with bash, they must exit 0.
* ``.. code-block:: python`` blocks, and ``::`` blocks whose first line is an ``import``, are
  Python: run with this interpreter, they must exit 0 (an ``assert`` in the block checks a
  value).
* Every other block (YAML, INI, JSON, output shown without a command, grammars) is data and is
  not run.

Markers, written in the document source as RST comments (invisible in the rendered text), each
about the next literal block or, for ``setup`` and ``serve``, about the rest of the document:

``.. doc-example: skip REASON``
    The next block is not run; the reason is required (a command that takes minutes, needs a
    Puppet master, is a synopsis with placeholders, ...). A skip without a reason fails.
``.. doc-example: setup`` followed by an indented shell script
    Runs at that point (prepares files a later example reads, e.g. a broken copy of the example
    inventory). Variables it sets are seen by the later blocks (``ID=...``). Not shown to
    readers.
``.. doc-example: checkout``
    The document's examples run in a copy of the repository's files (as a fresh clone has them)
    instead of a directory with ``inventory-example/`` alone: for the README's setup command.
``.. doc-example: serve ARGS``
    Starts ``reclass-ng serve ARGS --listen 127.0.0.1:0`` (a free loopback port, read from the
    line it prints) with the token ``doc-token``;
    later blocks see ``$URL`` (``http://127.0.0.1:PORT``) and ``$RECLASS_NG_TOKEN``. The
    server is stopped when the document's test ends.
``.. runs-against: inventory-example``
    The next block is run by tests/server/test_catalog_doc_examples.py (against its own server
    with a known state); it is not run a second time here.

The work directory holds a copy of every ``*-example/`` directory of the repository
(``inventory-example/``, ``puppet-code-example/``). Absolute paths under ``/tmp/``,
``/srv/`` and ``/etc/reclass-ng/`` in commands are moved into the work directory (and moved
back in what the commands print), so examples may use the paths a reader would, and runs never
touch the real ones. ``reclass`` and the other commands are this checkout's (the virtualenv's
bin directory comes first on PATH); HOME is the work directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from server_process import start_server_process, stop_server_process

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([REPO / "README.rst", *(REPO / "doc").glob("*.rst")])
MAPPED_ROOTS = ("/tmp/", "/srv/", "/etc/reclass-ng/")
TOKEN = "doc-token"
TIMEOUT = 300

MARKER = re.compile(r"^\.\. doc-example:\s*(?P<kind>\S+)\s*(?P<rest>.*)$")
RUN_ELSEWHERE = re.compile(r"^\.\. runs-against:\s*\S+")
CODE_BLOCK = re.compile(r"^(?P<indent>\s*)\.\. code-block::\s*(?P<lang>\S*)\s*$")
COMMAND_START = re.compile(
    r"^(reclass|reclass-ng|reclass-puppet|reclass-salt|reclass-ansible|python3?|pip|make|curl|"
    r"git|cd|export|ansible|ansible-inventory|salt-call|[A-Za-z_][A-Za-z0-9_]*=)(\s|$)")
SHELL_LANGS = {"sh", "bash", "shell"}


@dataclass
class Block:
    """A literal block of a document, or a setup script / server start from a marker."""

    document: str
    line: int                      # 1-based line of the block's first text line
    kind: str                      # console, shell, python, data, setup, serve
    text: str                      # the block's text, dedented
    skip: str | None = None        # the reason a marker gave, when skipped

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented_body(lines: list[str], start: int, parent_indent: int) -> tuple[int, int, str]:
    """(first text line, index after the block, dedented text) of the block after `start`."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    first = i
    body: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > parent_indent):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    depth = min((_indent(b) for b in body if b.strip()), default=0)
    return first, i, "\n".join(b[depth:] for b in body)


def _classify(lang: str | None, text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if lang == "console" or (lang is None and first.startswith("$ ")):
        return "console"
    if lang == "python" or (lang is None and re.match(r"^(import|from)\s", first)):
        return "python"
    if lang in SHELL_LANGS or (lang is None and COMMAND_START.match(first)):
        return "shell"
    return "data"


def parse_document(path: Path, name: str | None = None) -> list[Block]:
    """The blocks of a document, with the markers applied."""
    name = name or str(path.relative_to(REPO))
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending_skip: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if RUN_ELSEWHERE.match(line):
            pending_skip = "run by tests/server/test_catalog_doc_examples.py"
            i += 1
            continue
        marker = MARKER.match(line)
        if marker:
            kind, rest = marker.group("kind"), marker.group("rest").strip()
            if kind == "skip":
                pending_skip = rest or "(no reason given)"
                if not rest:
                    blocks.append(Block(name, i + 1, "bad-marker", "skip needs a reason"))
                i += 1
            elif kind == "setup":
                first, i, text = _indented_body(lines, i + 1, _indent(line))
                blocks.append(Block(name, first + 1, "setup", text))
            elif kind == "checkout":
                blocks.append(Block(name, i + 1, "checkout", ""))
                i += 1
            elif kind == "serve":
                blocks.append(Block(name, i + 1, "serve", rest))
                i += 1
            else:
                blocks.append(Block(name, i + 1, "bad-marker", f"unknown marker {kind!r}"))
                i += 1
            continue
        code = CODE_BLOCK.match(line)
        literal = (line.rstrip().endswith("::") and not line.lstrip().startswith("..")
                   and line.strip() != "")
        if code or literal:
            lang = code.group("lang") if code else None
            j = i + 1
            if code:  # directive options (:linenos: ...)
                while j < len(lines) and lines[j].strip().startswith(":"):
                    j += 1
            first, end, text = _indented_body(lines, j, _indent(line))
            if text:
                blocks.append(Block(name, first + 1, _classify(lang, text), text, pending_skip))
                pending_skip = None
            i = max(end, i + 1)
            continue
        i += 1
    return blocks


# -- running ---------------------------------------------------------------------------------

@dataclass
class Session:
    """The work directory and environment the blocks of one document run in."""

    work: Path
    env: dict[str, str]
    servers: list[subprocess.Popen] = field(default_factory=list)

    def map_paths(self, text: str) -> str:
        for root in MAPPED_ROOTS:
            text = text.replace(root, f"{self.work}{root}")
        return text

    def unmap_paths(self, text: str) -> str:
        for root in MAPPED_ROOTS:
            text = text.replace(f"{self.work}{root}", root)
        return text.replace(f"{self.work}/", "")

    def bash(self, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", self.map_paths(script)], cwd=self.work, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=TIMEOUT)


def new_session(tmp_path: Path) -> Session:
    work = tmp_path / "work"
    work.mkdir()
    for example in sorted(REPO.glob("*-example")):
        if example.is_dir():
            shutil.copytree(example, work / example.name)
    for root in MAPPED_ROOTS:
        (work / root.strip("/")).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(HOME=str(work), PYTHONIOENCODING="utf-8", LC_ALL="C.UTF-8", COLUMNS="100",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("RECLASS_NG_TOKEN", None)
    return Session(work, env)


def console_commands(text: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for each `$ ` command of a terminal session."""
    commands: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command += "\n" + lines[i]
            commands.append((command, []))
        elif commands:
            commands[-1][1].append(line)
        i += 1
    return [(command, _trim(output)) for command, output in commands]


def _trim(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def _line_matches(shown: str, actual: str) -> bool:
    if "..." not in shown:
        return shown == actual
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return re.fullmatch(pattern, actual) is not None


def output_matches(shown: list[str], actual: list[str]) -> bool:
    """Shown lines against printed ones; `...` alone stands for any number of lines."""
    if not shown:
        return not actual
    if shown[0].strip() == "...":
        return any(output_matches(shown[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and _line_matches(shown[0], actual[0]) and \
        output_matches(shown[1:], actual[1:])


SEPARATOR = "@@doc-example-command-{}@@"


def run_console(session: Session, block: Block) -> list[str]:
    commands = console_commands(block.text)
    script = ["__status=0"]
    for index, (command, _) in enumerate(commands):
        # `$?` of the previous command survives the bookkeeping (for `$ echo $?`).
        script.append(f"printf '\\n{SEPARATOR.format(index)}\\n'; (exit $__status)")
        script.append(command)
        script.append('__status=$?; echo "@@status $__status@@"')
    done = session.bash("\n".join(script) + "\n")
    pieces = re.split(r"\n@@doc-example-command-\d+@@\n", "\n" + done.stdout)[1:]
    problems = []
    for (command, shown), piece in zip(commands, pieces, strict=False):
        status_match = re.search(r"\n?@@status (\d+)@@\n?$", piece)
        status = int(status_match.group(1)) if status_match else -1
        printed = _trim(session.unmap_paths(piece[:status_match.start()] if status_match
                                            else piece).splitlines())
        if shown and not output_matches(shown, printed):
            problems.append(f"$ {command}\n--- shown in the document\n" + "\n".join(shown)
                            + "\n--- printed\n" + "\n".join(printed))
        elif not shown and status != 0:
            problems.append(f"$ {command}\nexit status {status}\n" + "\n".join(printed))
    if len(pieces) < len(commands):
        problems.append(f"the session stopped early:\n{done.stdout[-2000:]}")
    return problems


def run_block(session: Session, block: Block) -> list[str]:
    """Problems with one block (an empty list when it does what the document says)."""
    if block.kind == "console":
        return run_console(session, block)
    if block.kind == "setup":
        # `set -a`: what the script assigns is exported, and kept for the later blocks.
        environment = session.work / ".doc-example-environment"
        session.env["DOC_EXAMPLE_ENVIRONMENT"] = str(environment)
        done = session.bash(f"set -a\n{block.text}\nenv -0 > \"$DOC_EXAMPLE_ENVIRONMENT\"")
        if done.returncode == 0 and environment.exists():
            pairs = environment.read_bytes().decode().split("\0")
            session.env.update(pair.split("=", 1) for pair in pairs if "=" in pair)
    elif block.kind == "shell":
        done = session.bash(block.text)
    if block.kind in ("shell", "setup"):
        if done.returncode != 0:
            return [f"exit status {done.returncode}\n{block.text}\n--- printed\n"
                    + session.unmap_paths(done.stdout)[-3000:]]
        return []
    if block.kind == "python":
        done = subprocess.run([sys.executable, "-c", session.map_paths(block.text)],
                              cwd=session.work, env=session.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        if done.returncode != 0:
            return [f"exit status {done.returncode}\n{block.text}\n--- printed\n"
                    + session.unmap_paths(done.stdout)[-3000:]]
        return []
    if block.kind == "serve":
        return start_server(session, block.text)
    if block.kind == "checkout":
        copy_checkout(session.work)
        return []
    if block.kind == "bad-marker":
        return [block.text]
    return []


def copy_checkout(work: Path) -> None:
    """The files of the repository a fresh clone has (tracked and new, not ignored) into `work`."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source, target = REPO / name, work / name
        if source.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def start_server(session: Session, args: str) -> list[str]:
    number = len(session.servers)
    env = dict(session.env, RECLASS_NG_TOKEN=TOKEN)
    # exec: the server is the process itself, in its own process group (stopped as a group).
    command = ["bash", "-c", f"exec reclass-ng serve {session.map_paths(args)} "
                             f"--listen 127.0.0.1:0 --state-db serve-{number}.sqlite3 "
                             "--log-level warning"]
    try:
        server, url = start_server_process(command, session.work / f"serve-{number}.log",
                                           env=env, cwd=session.work, new_session=True)
    except AssertionError as failure:
        return [f"reclass-ng serve {args}: {failure}"]
    session.servers.append(server)
    session.env.update(URL=url, RECLASS_NG_TOKEN=TOKEN, T=TOKEN)
    return []


def stop_servers(session: Session) -> None:
    for server in session.servers:
        stop_server_process(server)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_document_examples_run(document: Path, tmp_path: Path) -> None:
    session = new_session(tmp_path)
    problems = []
    try:
        for block in parse_document(document):
            if block.skip is not None or block.kind == "data":
                continue
            for problem in run_block(session, block):
                problems.append(f"{block.where} ({block.kind}): {problem}")
    finally:
        stop_servers(session)
    assert not problems, "\n\n".join(problems)


def test_every_runnable_block_runs_or_says_why_not() -> None:
    """The classification the runner relies on: skips carry reasons, and the documents hold
    runnable examples at all (a parser that found none would make every test above pass)."""
    blocks = [block for document in DOCUMENTS for block in parse_document(document)]
    assert not [b.where for b in blocks if b.kind == "bad-marker"]
    runnable = [b for b in blocks if b.kind in ("console", "shell", "python")]
    assert len([b for b in runnable if b.skip is None]) >= 30
    assert all(b.skip and b.skip != "(no reason given)" for b in runnable if b.skip is not None)


def test_the_runner_compares_output_and_fails_on_a_wrong_one(tmp_path: Path) -> None:
    doc = tmp_path / "doc.rst"
    doc.write_text("Try::\n\n    $ echo hello\n    hullo\n\nand::\n\n    $ echo a; echo b; echo c\n"
                   "    a\n    ...\n\n.. doc-example: skip not run\n\n::\n\n    $ false\n")
    blocks = parse_document(doc, "doc.rst")
    session = new_session(tmp_path)
    assert [b.kind for b in blocks] == ["console", "console", "console"]
    assert run_block(session, blocks[0]) and not run_block(session, blocks[1])
    assert blocks[2].skip == "not run"



def test_install_instructions_name_no_package_index() -> None:
    """reclass-ng is on no package index: no page or message may tell users to install it from
    one (`pip install reclass-ng`, `salt-pip install 'reclass-ng[...]'`)."""
    from_index = re.compile(r"pip install\s+['\"]?reclass[-_]ng(?![-\w.])")  # not a wheel file
    texts = [*DOCUMENTS, *sorted((REPO / "reclass_ng").rglob("*.py"))]
    said = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
            for path in texts if path.name != "install.py"
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if from_index.search(line)]
    assert said == []


def test_the_exit_code_table_has_every_command() -> None:
    """doc/usage.rst's "Exit codes of every command" names each command `reclass-ng --help`
    lists (with its actions, for commands that have them)."""
    import argparse

    from reclass_ng.cli.main import SUBCOMMANDS, build_parser

    text = (REPO / "doc" / "usage.rst").read_text()
    table = text[text.index("Exit codes of every command"):text.index("Python API\n")]
    listed = set(re.findall(r"^``reclass-ng ([a-z]+(?: [a-z]+)?)``", table, re.MULTILINE))
    missing = []
    for name in SUBCOMMANDS:  # the parser has the arguments (and actions) of one command
        commands = next(a for a in build_parser(name)._actions
                        if isinstance(a, argparse._SubParsersAction))
        parser = commands.choices[name]
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        wanted = [f"{name} {action}" for action in actions[0].choices] if actions else [name]
        missing += [w for w in wanted if w not in listed and w.split()[0] not in listed]
    assert missing == []
