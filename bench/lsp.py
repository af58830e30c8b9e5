#!/usr/bin/env python3
"""Benchmark of `reclass-ng lsp` (doc/editor.rst): the server process driven over stdio.

    python bench/lsp.py [--nodes 2000] [--repeat 20] [--repository CHECKOUT]

On the generated mcp inventory (bench/generate.py): the first load (didOpen of a class file
until its diagnostics arrive), hover on a parameter key of that class and go-to-definition on a
class name in a node file once loaded (wall milliseconds per request: median and max), the
diagnostics after an edit to a class used by ~5% of the nodes (didChange until the class file's
diagnostics of that version arrive; then until lint's write findings of its nodes are done),
and the server's peak and final resident memory (VmHWM, VmRSS). Targets (issue 30): hover
and definition under 50 ms, diagnostics after the edit under 500 ms, memory under 600 MB.
Wall time: run it on an idle machine (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import yaml
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

BENCH_DIR = Path(__file__).resolve().parent
REPOSITORY = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from generate import generate  # noqa: E402
from incremental import class_file, class_used_by, load_average  # noqa: E402

SECONDS = 1800  # for any one wait: a 2,000-node first load on a busy machine
LINT_SECONDS = 120  # for the lint pass after the first load


class Client(LanguageClient):
    """pygls's client, keeping the diagnostics published per URI (with the version they are
    of) and the server's log lines."""

    def __init__(self) -> None:
        super().__init__("bench-lsp", "1")
        self.published: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self.logged: list[str] = []

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (params.version, list(params.diagnostics))

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            self.logged.append(params.message)

    async def diagnostics_for(self, uri: str, version: int) -> list[types.Diagnostic]:
        """The first diagnostics of `uri` published for `version` of its text."""
        async def published() -> list[types.Diagnostic]:
            while self.published.get(uri, (None, []))[0] != version:
                await asyncio.sleep(0.002)
            return self.published[uri][1]
        return await asyncio.wait_for(published(), SECONDS)

    async def logged_line(self, *parts: str, seconds: float = SECONDS) -> str | None:
        """The first server log line containing every one of `parts` (None: none logged
        within `seconds`)."""
        async def logged() -> str:
            while True:
                for line in self.logged:
                    if all(part in line for part in parts):
                        return line
                await asyncio.sleep(0.002)
        try:
            return await asyncio.wait_for(logged(), seconds)
        except TimeoutError:
            return None


def _uri(path: Path) -> str:
    found = from_fs_path(str(path))
    assert found is not None
    return found


def _first_key(path: Path, section: str) -> types.Position:
    root = yaml.compose(path.read_text(), Loader=yaml.SafeLoader)
    for key, value in root.value:
        if key.value == section:
            first = value.value[0]
            node = first[0] if isinstance(first, tuple) else first
            return types.Position(line=node.start_mark.line, character=node.start_mark.column)
    raise SystemExit(f"{path}: no {section}")


def _cpu_seconds(pid: int | None) -> float:
    """User plus system CPU seconds process `pid` used so far (0 when unknown)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _milliseconds(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


async def measure(inventory: Path, changed: Path, repeat: int, repository: Path) -> None:
    client = Client()
    env = {**os.environ, "PYTHONPATH": str(repository)}
    # Started in the repository's directory: `-m` puts the current directory first on
    # sys.path, which must not be another checkout's.
    await client.start_io(sys.executable, "-m", "reclass_ng.cli.main", "lsp", env=env,
                          cwd=str(repository))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=_uri(inventory),
        workspace_folders=[types.WorkspaceFolder(uri=_uri(inventory), name="bench")]))
    client.initialized(types.InitializedParams())
    text = changed.read_text()
    uri = _uri(changed)
    name = changed.relative_to(inventory).as_posix()
    started = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.
                                  TextDocumentItem(uri=uri, language_id="yaml", version=1,
                                                   text=text)))
    await client.diagnostics_for(uri, 1)
    print(f"first load (didOpen until diagnostics): {time.perf_counter() - started:.1f} s")
    # Loaded: the lint pass that follows the first diagnostics is over too (a server
    # before that pass existed logs none).
    lint_line = await client.logged_line("write rules on " + name, "(version 1)",
                                         seconds=LINT_SECONDS)
    print(f"  then {lint_line or 'no lint pass logged'}")

    hover_at = _first_key(changed, "parameters")
    hovers = []
    for _ in range(repeat):
        started = time.perf_counter()
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=hover_at))
        hovers.append(time.perf_counter() - started)
    print(f"hover on a key of the class: {_milliseconds(hovers)}")

    node = sorted((inventory / "nodes").rglob("*.yml"))[0]
    node_uri = _uri(node)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.
                                  TextDocumentItem(uri=node_uri, language_id="yaml", version=1,
                                                   text=node.read_text())))
    await client.diagnostics_for(node_uri, 1)
    definition_at = _first_key(node, "classes")
    definitions = []
    for _ in range(repeat):
        started = time.perf_counter()
        await client.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=node_uri), position=definition_at))
        definitions.append(time.perf_counter() - started)
    print(f"definition of a class name in a node file: {_milliseconds(definitions)}")

    server = getattr(client, "_server", None)
    pid = server.pid if server is not None else None
    edits, linted, cpu = [], [], []
    for version in range(2, 7):
        edited = text.replace("parameters:\n", f"parameters:\n  bench_edit: {version}\n", 1)
        started, cpu_before = time.perf_counter(), _cpu_seconds(pid)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)]))
        await client.diagnostics_for(uri, version)
        edits.append(time.perf_counter() - started)
        cpu.append(_cpu_seconds(pid) - cpu_before)
        if lint_line is not None:
            await client.logged_line("write rules on " + name, f"(version {version})")
            linted.append(time.perf_counter() - started)
    print(f"diagnostics after an edit to the class: {_milliseconds(edits)}")
    # The server's CPU time meanwhile: what wall time would be on an idle machine.
    print(f"  server CPU until those diagnostics: {_milliseconds(cpu)}")
    if linted:
        print(f"  and lint's write findings of its nodes: {_milliseconds(linted)}")
    print("  " + next(line for line in reversed(client.logged) if "rendered again" in line))

    if server is not None:
        status = Path(f"/proc/{server.pid}/status").read_text()
        for field in ("VmHWM", "VmRSS"):
            value = next(line for line in status.splitlines() if line.startswith(field))
            print(f"server {'peak' if field == 'VmHWM' else 'current'} resident memory: "
                  f"{value.split(':')[1].strip()}")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--repository", type=Path, default=REPOSITORY,
                        help="the checkout whose reclass_ng the server runs (a before/after "
                             "comparison runs an older worktree's); default: this one")
    args = parser.parse_args(argv)
    work = BENCH_DIR / ".work" / "lsp"
    shutil.rmtree(work, ignore_errors=True)
    inventory = work / f"mcp-{args.nodes}"
    generate("mcp", args.nodes, 1, inventory)
    name, users = class_used_by(inventory, 0.05)
    print(f"lsp bench: mcp shape, {args.nodes} nodes; load average {load_average()}")
    print(f"class edited: {name}, used by {users} nodes")
    print(f"server code: {args.repository}")
    asyncio.run(measure(inventory, class_file(inventory, name), args.repeat,
                        args.repository.resolve()))
    print(f"load average at end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
