"""One handler per LSP feature of `reclass-ng lsp`, and the table server.build_server
registers.

Document changes render in a worker thread (requests are answered meanwhile, from the last
complete render); every request is answered through `guarded`: a failure is logged to the
client and answered empty.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from reclass_ng.lsp import answers
from reclass_ng.lsp.diagnostics import ERROR
from reclass_ng.lsp.documents import Span
from reclass_ng.lsp.inventory_server import (
    InventoryServer,
    guarded,
    live_and_path,
    location,
    lsp_range,
)


def _position(position: types.Position) -> tuple[int, int]:
    return (position.line, position.character)


async def _in_worker(ls: InventoryServer, work: Callable[[], object]) -> None:
    await asyncio.get_running_loop().run_in_executor(None, guarded, ls, None, work)


# -- lifecycle -------------------------------------------------------------------------------

def on_shutdown(ls: InventoryServer, params: None) -> None:
    """Stop loads and publications: the client may close our output next."""
    ls.stopping.set()


def on_exit(ls: InventoryServer, params: None) -> None:
    """As shutdown (a client may exit without it)."""
    ls.stopping.set()


def on_initialized(ls: InventoryServer, params: types.InitializedParams) -> None:
    """Find the workspace's inventories; ask to be told of files changed on disk."""
    guarded(ls, None, ls.find_roots)
    guarded(ls, None, ls.watch_files)


# -- documents -------------------------------------------------------------------------------

async def did_open(ls: InventoryServer, params: types.DidOpenTextDocumentParams) -> None:
    """A document opened: its inventory loaded on first use, its diagnostics published."""
    uri = params.text_document.uri
    if ls.queue_change(uri):
        await _in_worker(ls, lambda: ls.changed(uri))


async def did_change(ls: InventoryServer, params: types.DidChangeTextDocumentParams) -> None:
    """An edit: the nodes reading the document render again (a burst renders once more at
    most, see InventoryServer.queue_change)."""
    uri = params.text_document.uri
    if ls.queue_change(uri):
        await _in_worker(ls, lambda: ls.changed(uri))


async def did_save(ls: InventoryServer, params: types.DidSaveTextDocumentParams) -> None:
    """Saved: the buffer is the disk's content again (lint's file rules apply)."""
    uri = params.text_document.uri
    if ls.queue_change(uri):
        await _in_worker(ls, lambda: ls.changed(uri))


async def did_close(ls: InventoryServer, params: types.DidCloseTextDocumentParams) -> None:
    """Closed: the disk's content replaces the buffer."""
    uri = params.text_document.uri
    await _in_worker(ls, lambda: ls.changed(uri, closed=True))


async def on_watched_files(ls: InventoryServer, params: types.DidChangeWatchedFilesParams
                           ) -> None:
    """Files created, changed or deleted outside the editor (not those it has open)."""
    for change in params.changes:
        path = to_fs_path(change.uri)
        live = ls.inventory_for(path) if path else None
        if path and live is not None and path not in live.buffers:
            await _in_worker(ls, functools.partial(live.file_changed, path))
    guarded(ls, None, ls.publish_open)


# -- requests --------------------------------------------------------------------------------

def on_hover(ls: InventoryServer, params: types.HoverParams) -> types.Hover | None:
    """Values of a key or reference across the nodes reading the file; a class's file."""
    def answer() -> types.Hover | None:
        live, path = live_and_path(ls, params.text_document.uri)
        text = answers.hover(live, path, _position(params.position)) if live else None
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value=text))
    return guarded(ls, None, answer)


def on_definition(ls: InventoryServer, params: types.DefinitionParams
                  ) -> list[types.Location]:
    """A class name's file; the writes of a reference's key."""
    def answer() -> list[types.Location]:
        live, path = live_and_path(ls, params.text_document.uri)
        if live is None:
            return []
        return [location(found) for found in
                answers.definition(live, path, _position(params.position))]
    return guarded(ls, [], answer)


async def on_references(ls: InventoryServer, params: types.ReferenceParams
                        ) -> list[types.Location]:
    """Every file listing a class, or writing or referencing a key."""
    # Reads every file of the inventory: in a worker thread, stopped when the client
    # cancels the request ($/cancelRequest cancels this task).
    stop = threading.Event()

    def answer() -> list[types.Location]:
        live, path = live_and_path(ls, params.text_document.uri)
        if live is None:
            return []
        return [location(found) for found in answers.references(
            live, path, _position(params.position), cancelled=stop.is_set)]
    try:
        return await asyncio.get_running_loop().run_in_executor(None, guarded, ls, [], answer)
    finally:
        stop.set()


def on_completion(ls: InventoryServer, params: types.CompletionParams
                  ) -> list[types.CompletionItem]:
    """Class names in a `classes` list; key paths after `${`."""
    kinds = {"class": types.CompletionItemKind.Module, "key": types.CompletionItemKind.Property}

    def answer() -> list[types.CompletionItem]:
        live, path = live_and_path(ls, params.text_document.uri)
        if live is None:
            return []
        return [types.CompletionItem(label=label, kind=kinds[kind]) for label, kind in
                answers.completions(live, path, _position(params.position))]
    return guarded(ls, [], answer)


def on_document_symbol(ls: InventoryServer, params: types.DocumentSymbolParams
                       ) -> list[types.DocumentSymbol]:
    """The document's top-level keys and their children's."""
    def symbol(name: str, span: Span, children: list[types.DocumentSymbol] | None
               ) -> types.DocumentSymbol:
        return types.DocumentSymbol(name=name, kind=types.SymbolKind.Key, range=lsp_range(span),
                                    selection_range=lsp_range(span), children=children)

    def answer() -> list[types.DocumentSymbol]:
        uri = params.text_document.uri
        text = ls.workspace.get_text_document(uri).source
        return [symbol(name, span, [symbol(child, child_span, None)
                                    for child, child_span in children])
                for name, span, children in answers.document_symbols(text, to_fs_path(uri)
                                                                     or uri)]
    return guarded(ls, [], answer)


def on_workspace_symbol(ls: InventoryServer, params: types.WorkspaceSymbolParams
                        ) -> list[types.WorkspaceSymbol]:
    """Classes and nodes whose name contains the query, in every loaded inventory."""
    def answer() -> list[types.WorkspaceSymbol]:
        loaded = [live for root in ls.roots if (live := ls.inventories.get(root.path))]
        return [types.WorkspaceSymbol(
            name=name, container_name=kind,
            kind=types.SymbolKind.Class if kind == "class" else types.SymbolKind.Object,
            location=types.Location(uri=from_fs_path(file) or file,
                                    range=lsp_range(((0, 0), (0, 0)))))
            for live in loaded for name, kind, file in answers.workspace_symbols(live,
                                                                                 params.query)]
    return guarded(ls, [], answer)


def on_code_action(ls: InventoryServer, params: types.CodeActionParams
                   ) -> list[types.CodeAction]:
    """Quick fixes: an unknown class name replaced by a suggested one."""
    def answer() -> list[types.CodeAction]:
        actions = []
        for diagnostic in params.context.diagnostics:
            data: Any = diagnostic.data
            if diagnostic.severity != ERROR or not isinstance(data, dict):
                continue
            actions += [types.CodeAction(
                title=f"Replace with {name}", kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic], edit=types.WorkspaceEdit(changes={
                    params.text_document.uri: [types.TextEdit(range=diagnostic.range,
                                                              new_text=name)]}))
                for name in data.get("replacements", [])]
        return actions
    return guarded(ls, [], answer)


# (method, handler, options) for each feature, as build_server registers them
FEATURES: list[tuple[str, Callable[..., Any], Any]] = [
    (types.SHUTDOWN, on_shutdown, None),
    (types.EXIT, on_exit, None),
    (types.INITIALIZED, on_initialized, None),
    (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
    (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
    (types.TEXT_DOCUMENT_DID_SAVE, did_save, None),
    (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, on_watched_files, None),
    (types.TEXT_DOCUMENT_HOVER, on_hover, None),
    (types.TEXT_DOCUMENT_DEFINITION, on_definition, None),
    (types.TEXT_DOCUMENT_REFERENCES, on_references, None),
    (types.TEXT_DOCUMENT_COMPLETION, on_completion,
     types.CompletionOptions(trigger_characters=["{", ":", "."])),
    (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, on_document_symbol, None),
    (types.WORKSPACE_SYMBOL, on_workspace_symbol, None),
    (types.TEXT_DOCUMENT_CODE_ACTION, on_code_action, None),
]
