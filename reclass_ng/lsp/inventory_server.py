"""The state of `reclass-ng lsp`'s server (pygls): its inventories, open buffers, renders and
publications; reclass_ng.lsp.handlers answers each LSP feature from it.

One EditedInventory per inventory root of the workspace, loaded on first use with
`$/progress` reports; renders run in a worker thread so requests are answered meanwhile
(against the last complete render). A failing request is logged to the client and answered
empty; the server keeps running.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from reclass_ng.lsp.diagnostics import diagnostic_data, file_diagnostics
from reclass_ng.lsp.documents import Outline, Span
from reclass_ng.lsp.lint_pass import LINT_NODES, write_rule_findings
from reclass_ng.lsp.live import EditedInventory, Generation, disk_content
from reclass_ng.lsp.roots import InventoryRoot, find_inventory_roots, root_of_file
from reclass_ng.version import __version__

T = TypeVar("T")

# Files read by at most this many nodes get lint's write findings in the same publication as
# their render's diagnostics (a provenance record costs a few milliseconds); files read by
# more get them in a second publication, so the render's errors are not held back.
INLINE_LINT_NODES = 16


def lsp_range(span: Span) -> types.Range:
    return types.Range(start=types.Position(line=span[0][0], character=span[0][1]),
                       end=types.Position(line=span[1][0], character=span[1][1]))


def location(found: tuple[str, Span]) -> types.Location:
    return types.Location(uri=from_fs_path(found[0]) or found[0], range=lsp_range(found[1]))


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
        # URIs whose change waits for its render (see queue_change)
        self.queued: set[str] = set()
        self.queue_lock = threading.Lock()

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
                types.Diagnostic(range=lsp_range(item.span), message=item.message,
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

    def queue_change(self, uri: str) -> bool:
        """Whether a render of `uri`'s change must be queued: not when one is queued and not
        started yet (it reads the text when it starts, so it covers this change too). A
        burst of changes renders at most twice: the one running and the one queued."""
        with self.queue_lock:
            if uri in self.queued:
                return False
            self.queued.add(uri)
            return True

    def changed(self, uri: str, closed: bool = False) -> None:
        """The document `uri` was opened, edited, saved or (`closed`) closed: its inventory
        renders again what reads it, the open documents whose diagnostics that changes get
        them, then the document gets the findings of lint's write rules."""
        path = to_fs_path(uri)
        if not path:
            return
        live = self.inventory_for(path)
        if live is None:
            self._started(uri)
            if not closed:
                self.publish(uri)
            return
        with self.render_lock:
            self._started(uri)
            # The text is read now, under the lock, not when the notification came: edits
            # queued behind a render are applied newest last whatever order the threads run.
            content = None
            if not closed and uri in self.workspace.text_documents:
                content = self.workspace.get_text_document(uri).source.encode("utf-8")
                if content == disk_content(path):
                    content = None  # saved: read from disk (and lint's file rules apply)
            before = live.current
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
        if not closed:  # a file few nodes read: its findings in its first publication
            self.run_write_rules(live, uri, INLINE_LINT_NODES)
        self.publish_affected(live, before, rendered, path)
        if not closed and self.run_write_rules(live, uri, LINT_NODES):
            self.publish(uri)  # again, after the render's diagnostics, with the findings

    def _started(self, uri: str) -> None:
        with self.queue_lock:
            self.queued.discard(uri)

    def publish_affected(self, live: EditedInventory, before: Generation, rendered: list[str],
                         path: str) -> None:
        """Diagnostics again for the open documents of `live` that the render of `rendered`
        (after a change to `path`) may have changed; every open one after a whole render."""
        if before.failure is not None or live.failure is not None \
                or len(rendered) >= len(live.nodes) > 0:
            self.publish_open(live)
            return
        files = live.files_read(rendered, before) | {os.path.abspath(path)}
        for uri in list(self.workspace.text_documents):
            if to_fs_path(uri) in files:
                self.publish(uri)

    def run_write_rules(self, live: EditedInventory, uri: str, most_nodes: int) -> bool:
        """Run lint's write rules for the open document `uri` over the nodes reading it, once
        per generation and when at most `most_nodes` read it (lint_pass). Whether it found
        something to publish. Stops when a change is queued: its render comes first."""
        path = to_fs_path(uri)
        generation = live.current
        if not path or uri not in self.workspace.text_documents \
                or os.path.abspath(path) in generation.write_findings:
            return False
        document = self.workspace.get_text_document(uri)
        with self.render_lock:
            started = time.perf_counter()
            found = write_rule_findings(
                live, generation, path, Outline(document.source, path), most_nodes,
                cancelled=lambda: bool(self.queued) or self.stopping.is_set())
            if found is None:
                return False
            generation.write_findings[os.path.abspath(path)] = found
        if not self.stopping.is_set():
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Log,
                message=f"reclass-ng: lint's write rules on "
                        f"{os.path.relpath(path, live.root.path)} (version "
                        f"{document.version}): {len(found)} findings "
                        f"({(time.perf_counter() - started) * 1000:.0f} ms)"))
        return bool(found) and live.current is generation and not self.queued


def guarded(server: InventoryServer, empty: T, answer: Callable[[], T]) -> T:
    """`answer()`, or `empty` after logging the failure to the client: the server stays up."""
    try:
        return answer()
    except Exception as err:  # noqa: BLE001 - any failure of one request is logged, not fatal
        server.log(f"reclass-ng lsp: {type(err).__name__}: {err}\n{traceback.format_exc()}")
        return empty


def live_and_path(server: InventoryServer, uri: str) -> tuple[EditedInventory | None, str]:
    """The inventory of a document (as last rendered: requests never wait for a load)."""
    path = to_fs_path(uri) or ""
    return (server.inventory_for(path, load=False) if path else None), path
