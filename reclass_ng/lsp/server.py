"""`reclass-ng lsp`: the Language Server Protocol server (pygls) over stdio.

One EditedInventory per inventory root of the workspace, loaded on first use with
`$/progress` reports; renders run in a worker thread so requests are answered meanwhile
(against the last complete render). A failing request is logged to the client and answered
empty; the server keeps running.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from reclass_ng.lsp import answers
from reclass_ng.lsp.diagnostics import ERROR, diagnostic_data, file_diagnostics
from reclass_ng.lsp.documents import Span
from reclass_ng.lsp.live import EditedInventory, disk_content
from reclass_ng.lsp.roots import InventoryRoot, find_inventory_roots, root_of_file
from reclass_ng.version import __version__

T = TypeVar("T")


def _range(span: Span) -> types.Range:
    return types.Range(start=types.Position(line=span[0][0], character=span[0][1]),
                       end=types.Position(line=span[1][0], character=span[1][1]))


def _location(found: tuple[str, Span]) -> types.Location:
    return types.Location(uri=from_fs_path(found[0]) or found[0], range=_range(found[1]))


class InventoryServer(LanguageServer):
    """The server: workspace inventories, open buffers, and what each answer needs."""

    def __init__(self) -> None:
        super().__init__("reclass-ng", __version__)
        self.roots: list[InventoryRoot] = []
        self.inventories: dict[str, EditedInventory] = {}
        self.render_lock = threading.Lock()  # one render at a time
        self.inventories_lock = threading.Lock()
        # Set by shutdown/exit: a load in a worker thread stops between nodes, so the process
        # can exit without rendering the rest of a large inventory first.
        self.stopping = threading.Event()
        self.progress_tokens = 0

    # -- inventories -----------------------------------------------------------------------

    def find_roots(self) -> None:
        folders = [to_fs_path(folder.uri) for folder in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        self.roots = find_inventory_roots(folder for folder in folders if folder)

    def inventory_for(self, path: str, load: bool = True) -> EditedInventory | None:
        """The live inventory holding `path`; with `load`, one not known yet is loaded now
        (with progress: call from a worker thread), else None is returned for it."""
        root = root_of_file(path, self.roots)
        if root is None:
            return None
        with self.inventories_lock:
            live = self.inventories.get(root.path)
            if live is None and not load:
                return None
            new = live is None
            if live is None:
                live = EditedInventory(root, warn=lambda message: self.log(message, False))
                self.inventories[root.path] = live
        if new:
            self._load(live)
        return live

    def _load(self, live: EditedInventory) -> None:
        self.progress_tokens += 1
        token = f"reclass-ng-load-{self.progress_tokens}"
        reporting = self._begin_progress(token, f"Loading inventory {live.root.path}")
        last = [-1]

        def report(done: int, total: int) -> None:
            percent = done * 100 // max(total, 1)
            if reporting and percent != last[0] and (percent % 5 == 0 or done == total):
                last[0] = percent
                self.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{done}/{total} nodes", percentage=percent))

        with self.render_lock:
            live.render_all(report, cancelled=self.stopping.is_set)
        if reporting and not self.stopping.is_set():
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message=f"{len(live.nodes)} nodes"))

    def _begin_progress(self, token: str, title: str) -> bool:
        capabilities = self.client_capabilities.window
        if capabilities is None or not capabilities.work_done_progress:
            return False
        try:
            self.work_done_progress.create(token)
            self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title=title, percentage=0, cancellable=False))
        except Exception:  # noqa: BLE001 - progress is a courtesy; the load goes on
            return False
        return True

    def watch_files(self) -> None:
        """Ask the client to tell us of YAML files created, changed or deleted outside the
        editor (a git checkout, another program): the only way a file's disk change reaches
        the server. Clients without dynamic registration are not asked."""
        workspace = self.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if watched is None or not watched.dynamic_registration:
            return
        self.client_register_capability(types.RegistrationParams(registrations=[
            types.Registration(
                id="reclass-ng-yaml-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    types.FileSystemWatcher(glob_pattern="**/*.{yml,yaml}")]))]))

    # -- publishing ------------------------------------------------------------------------

    def log(self, message: str, error: bool = True) -> None:
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Error if error else types.MessageType.Warning,
            message=message))

    def publish(self, uri: str) -> None:
        path = to_fs_path(uri)
        # After shutdown the client may have closed our stdout: pygls, told to write there
        # from a worker thread, reports the failure by writing there again, without end.
        if not path or self.stopping.is_set():
            return
        document = self.workspace.get_text_document(uri)
        live = self.inventory_for(path)
        found = file_diagnostics(live, path, document.source)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=document.version, diagnostics=[
                types.Diagnostic(range=_range(item.span), message=item.message,
                                 severity=types.DiagnosticSeverity(item.severity),
                                 source="reclass-ng", code=item.code,
                                 data=diagnostic_data(item)) for item in found]))

    def publish_open(self, live: EditedInventory | None = None) -> None:
        """Diagnostics again for every open document of `live` (all when None)."""
        for uri in list(self.workspace.text_documents):
            path = to_fs_path(uri)
            if path and (live is None or root_of_file(path, self.roots) is live.root
                         or path.startswith(live.root.path + os.sep)):
                self.publish(uri)

    def changed(self, uri: str, closed: bool = False) -> None:
        """The document `uri` was opened, edited, saved or (`closed`) closed: its inventory
        renders again what reads it and the open documents get their diagnostics."""
        path = to_fs_path(uri)
        if not path:
            return
        live = self.inventory_for(path)
        if live is None:
            if not closed:
                self.publish(uri)
            return
        with self.render_lock:
            # The text is read now, under the lock, not when the notification came: edits
            # queued behind a render are applied newest last whatever order the threads run.
            content = None
            if not closed and uri in self.workspace.text_documents:
                content = self.workspace.get_text_document(uri).source.encode("utf-8")
                if content == disk_content(path):
                    content = None  # saved: read from disk (and lint's file rules apply)
            started = time.perf_counter()
            rendered = live.set_buffer(path, content)
            took = time.perf_counter() - started
        if self.stopping.is_set():
            return  # nothing is sent after shutdown (see publish)
        # What an edit cost, for whoever reads the editor's LSP log.
        self.window_log_message(types.LogMessageParams(
            type=types.MessageType.Log,
            message=f"reclass-ng: {os.path.relpath(path, live.root.path)} changed: "
                    f"{len(rendered)} of {len(live.nodes)} nodes rendered again "
                    f"({took * 1000:.0f} ms)"))
        self.publish_open(live)


def guarded(server: InventoryServer, empty: T, answer: Callable[[], T]) -> T:
    """`answer()`, or `empty` after logging the failure to the client: the server stays up."""
    try:
        return answer()
    except Exception as err:  # noqa: BLE001 - any failure of one request is logged, not fatal
        server.log(f"reclass-ng lsp: {type(err).__name__}: {err}\n{traceback.format_exc()}")
        return empty


def _live_and_path(server: InventoryServer, uri: str) -> tuple[EditedInventory | None, str]:
    """The inventory of a document (as last rendered: requests never wait for a load)."""
    path = to_fs_path(uri) or ""
    return (server.inventory_for(path, load=False) if path else None), path


def _position(position: types.Position) -> tuple[int, int]:
    return (position.line, position.character)


def build_server() -> InventoryServer:
    server = InventoryServer()

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: InventoryServer, params: None) -> None:
        ls.stopping.set()

    @server.feature(types.EXIT)
    def on_exit(ls: InventoryServer, params: None) -> None:
        ls.stopping.set()

    @server.feature(types.INITIALIZED)
    def initialized(ls: InventoryServer, params: types.InitializedParams) -> None:
        guarded(ls, None, ls.find_roots)
        guarded(ls, None, ls.watch_files)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: InventoryServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        await asyncio.get_running_loop().run_in_executor(
            None, guarded, ls, None, lambda: ls.changed(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: InventoryServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        await asyncio.get_running_loop().run_in_executor(
            None, guarded, ls, None, lambda: ls.changed(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: InventoryServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        await asyncio.get_running_loop().run_in_executor(
            None, guarded, ls, None, lambda: ls.changed(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: InventoryServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        await asyncio.get_running_loop().run_in_executor(
            None, guarded, ls, None, lambda: ls.changed(uri, closed=True))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: InventoryServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = to_fs_path(change.uri)
            live = ls.inventory_for(path) if path else None
            if path and live is not None and path not in live.buffers:
                await asyncio.get_running_loop().run_in_executor(
                    None, guarded, ls, None, functools.partial(live.file_changed, path))
        guarded(ls, None, ls.publish_open)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: InventoryServer, params: types.HoverParams) -> types.Hover | None:
        def answer() -> types.Hover | None:
            live, path = _live_and_path(ls, params.text_document.uri)
            text = answers.hover(live, path, _position(params.position)) if live else None
            if text is None:
                return None
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                            value=text))
        return guarded(ls, None, answer)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: InventoryServer, params: types.DefinitionParams
                      ) -> list[types.Location]:
        def answer() -> list[types.Location]:
            live, path = _live_and_path(ls, params.text_document.uri)
            if live is None:
                return []
            return [_location(found) for found in
                    answers.definition(live, path, _position(params.position))]
        return guarded(ls, [], answer)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def on_references(ls: InventoryServer, params: types.ReferenceParams
                            ) -> list[types.Location]:
        # Reads every file of the inventory: in a worker thread, stopped when the client
        # cancels the request ($/cancelRequest cancels this task).
        stop = threading.Event()

        def answer() -> list[types.Location]:
            live, path = _live_and_path(ls, params.text_document.uri)
            if live is None:
                return []
            return [_location(found) for found in answers.references(
                live, path, _position(params.position), cancelled=stop.is_set)]
        try:
            return await asyncio.get_running_loop().run_in_executor(
                None, guarded, ls, [], answer)
        finally:
            stop.set()

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=["{", ":", "."]))
    def on_completion(ls: InventoryServer, params: types.CompletionParams
                      ) -> list[types.CompletionItem]:
        def answer() -> list[types.CompletionItem]:
            live, path = _live_and_path(ls, params.text_document.uri)
            if live is None:
                return []
            kinds = {"class": types.CompletionItemKind.Module,
                     "key": types.CompletionItemKind.Property}
            return [types.CompletionItem(label=label, kind=kinds[kind]) for label, kind in
                    answers.completions(live, path, _position(params.position))]
        return guarded(ls, [], answer)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def on_document_symbol(ls: InventoryServer, params: types.DocumentSymbolParams
                           ) -> list[types.DocumentSymbol]:
        def answer() -> list[types.DocumentSymbol]:
            uri = params.text_document.uri
            text = ls.workspace.get_text_document(uri).source
            return [types.DocumentSymbol(
                name=name, kind=types.SymbolKind.Key, range=_range(span),
                selection_range=_range(span), children=[types.DocumentSymbol(
                    name=child, kind=types.SymbolKind.Key, range=_range(child_span),
                    selection_range=_range(child_span)) for child, child_span in children])
                for name, span, children in answers.document_symbols(text, to_fs_path(uri)
                                                                     or uri)]
        return guarded(ls, [], answer)

    @server.feature(types.WORKSPACE_SYMBOL)
    def on_workspace_symbol(ls: InventoryServer, params: types.WorkspaceSymbolParams
                            ) -> list[types.WorkspaceSymbol]:
        def answer() -> list[types.WorkspaceSymbol]:
            found: list[types.WorkspaceSymbol] = []
            for root in ls.roots:
                live = ls.inventories.get(root.path)
                if live is None:
                    continue
                found += [types.WorkspaceSymbol(
                    name=name, kind=types.SymbolKind.Class if kind == "class"
                    else types.SymbolKind.Object, container_name=kind,
                    location=types.Location(uri=from_fs_path(file) or file,
                                            range=_range(((0, 0), (0, 0)))))
                    for name, kind, file in answers.workspace_symbols(live, params.query)]
            return found
        return guarded(ls, [], answer)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
    def on_code_action(ls: InventoryServer, params: types.CodeActionParams
                       ) -> list[types.CodeAction]:
        def answer() -> list[types.CodeAction]:
            actions = []
            for diagnostic in params.context.diagnostics:
                data: Any = diagnostic.data
                if diagnostic.severity != ERROR or not isinstance(data, dict):
                    continue
                for name in data.get("replacements", []):
                    actions.append(types.CodeAction(
                        title=f"Replace with {name}", kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic], edit=types.WorkspaceEdit(changes={
                            params.text_document.uri: [types.TextEdit(
                                range=diagnostic.range, new_text=name)]})))
            return actions
        return guarded(ls, [], answer)

    return server


def serve_stdio() -> None:
    """Run the server on stdin/stdout until the client exits it."""
    build_server().start_io()
