"""Start `reclass-ng lsp` as a real process and drive it with pytest-lsp's client over stdio.

The server runs under resource limits (address space, CPU seconds) so a regression that
loops or balloons fails fast instead of taking the machine; every request has a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPOSITORY = Path(__file__).resolve().parent.parent.parent
MEMORY_LIMIT = 2 * 1024 ** 3  # bytes of address space for the server
CPU_SECONDS = 120
REQUEST_SECONDS = 30

# The server command: the real CLI entry point, behind rlimits set in the child itself.
SERVER = [sys.executable, "-c",
          "import resource, sys;"
          f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}));"
          f"resource.setrlimit(resource.RLIMIT_CPU, ({CPU_SECONDS}, {CPU_SECONDS}));"
          "from reclass_ng.cli.main import main; sys.exit(main(['lsp']))"]


def uri(path: Path | str) -> str:
    """The file: URI of a path."""
    found = from_fs_path(str(path))
    assert found is not None
    return found


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")]))
    return env


@contextlib.asynccontextmanager
async def lsp_session(workspace: Path, client: str = "visual-studio-code"
                      ) -> AsyncIterator[LanguageClient]:
    """An initialized session of a fresh server whose workspace folder is `workspace`."""
    config = ClientServerConfig(server_command=SERVER, server_env=server_env())
    lsp = await config.start()
    assert isinstance(lsp, LanguageClient)
    try:
        await asyncio.wait_for(lsp.initialize_session(types.InitializeParams(
            capabilities=client_capabilities(client), root_uri=uri(workspace),
            workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="ws")])),
            REQUEST_SECONDS)
        yield lsp
        await asyncio.wait_for(lsp.shutdown_session(), REQUEST_SECONDS)
    finally:
        # A failed test leaves the server running: stop() would wait for it forever.
        server = getattr(lsp, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()
        await asyncio.wait_for(lsp.stop(), REQUEST_SECONDS)


async def open_file(lsp: LanguageClient, path: Path, text: str | None = None
                    ) -> list[types.Diagnostic]:
    """didOpen `path` (with `text`, else its content on disk); its diagnostics."""
    lsp.diagnostics.pop(uri(path), None)
    lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="yaml", version=1,
        text=path.read_text() if text is None else text)))
    return await wait_diagnostics(lsp, path)


async def wait_diagnostics(lsp: LanguageClient, path: Path) -> list[types.Diagnostic]:
    """The diagnostics published for `path` since its entry was removed from the client's."""
    wanted = uri(path)

    async def published() -> list[types.Diagnostic]:
        # The client keeps the last list per URI: the caller removes it before the request,
        # so its return is the next publication (waiting for the notification itself would
        # miss one sent in the same batch as another file's).
        while wanted not in lsp.diagnostics:
            await asyncio.sleep(0.02)
        return list(lsp.diagnostics[wanted])

    return await asyncio.wait_for(published(), REQUEST_SECONDS)


async def change_file(lsp: LanguageClient, path: Path, text: str, version: int
                      ) -> list[types.Diagnostic]:
    """Replace the buffer of `path` with `text` (unsaved) and return its new diagnostics."""
    lsp.diagnostics.pop(uri(path), None)
    lsp.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    return await wait_diagnostics(lsp, path)


def position(text: str, needle: str, offset: int = 0) -> types.Position:
    """The position of the first `needle` in `text` (+ `offset` characters)."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


async def hover_text(lsp: LanguageClient, path: Path, at: types.Position) -> str | None:
    """The Markdown of a hover (None: no hover)."""
    found = await asyncio.wait_for(lsp.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), position=at)),
        REQUEST_SECONDS)
    if found is None:
        return None
    assert isinstance(found.contents, types.MarkupContent)
    return found.contents.value


async def definitions(lsp: LanguageClient, path: Path, at: types.Position
                      ) -> list[tuple[str, int]]:
    """(URI, line) of each location go-to-definition answers."""
    found = await asyncio.wait_for(lsp.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), position=at)),
        REQUEST_SECONDS)
    assert isinstance(found, list)
    return [(item.uri, item.range.start.line) for item in found
            if isinstance(item, types.Location)]
