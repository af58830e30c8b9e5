"""Find references, completion and symbols of `reclass-ng lsp`, over stdio with a real client."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_session import (
    REQUEST_SECONDS,
    change_file,
    definitions,
    lsp_session,
    open_file,
    position,
    uri,
    wait_diagnostics,
)
from lsprotocol import types
from pytest_lsp import LanguageClient


async def references(lsp: LanguageClient, path: Path, at: types.Position
                     ) -> list[tuple[str, int, int]]:
    found = await asyncio.wait_for(lsp.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), position=at,
        context=types.ReferenceContext(include_declaration=True))), REQUEST_SECONDS)
    return sorted((item.uri, item.range.start.line, item.range.start.character)
                  for item in found or [])


async def completion_labels(lsp: LanguageClient, path: Path, at: types.Position) -> list[str]:
    found = await asyncio.wait_for(lsp.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), position=at)),
        REQUEST_SECONDS)
    items = found.items if isinstance(found, types.CompletionList) else (found or [])
    return [item.label for item in items]


def test_references_of_a_class_and_of_a_key(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    text = app.read_text()
    files = {name: uri(inventory / "inv" / name) for name in
             ("classes/app/init.yml", "nodes/db1.yml", "classes/prod.yml", "nodes/web1.yml")}

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, app)
            assert await references(lsp, app, position(text, "common")) == sorted([
                (files["classes/app/init.yml"], 1, 4), (files["nodes/db1.yml"], 1, 4)])
            assert await references(lsp, app, position(text, "port: 80")) == sorted([
                (files["classes/app/init.yml"], 4, 2),  # port: 80
                (files["classes/app/init.yml"], 5, 22),  # ${port}
                (files["classes/prod.yml"], 3, 2)])  # ~port: 443
            # `app` is listed by a node and a class: init.yml is the class app
            prod = inventory / "inv/classes/prod.yml"
            await open_file(lsp, prod)
            assert await references(lsp, prod, position(prod.read_text(), "app")) == sorted([
                (files["classes/prod.yml"], 1, 4), (files["nodes/web1.yml"], 1, 4)])

    asyncio.run(session())


def test_completion_of_class_names_and_key_paths(inventory: Path) -> None:
    web = inventory / "inv/classes/app/web.yml"
    app = inventory / "inv/classes/app/init.yml"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, web)
            typing = "classes:\n  - .base\n  - \nparameters:\n  server: nginx\n"
            await change_file(lsp, web, typing, 2)
            labels = await completion_labels(lsp, web, types.Position(line=2, character=4))
            assert {"common", "app", "app.web", "app.base", "prod", ".base", ".web"} \
                <= set(labels)
            await open_file(lsp, app)
            typing = app.read_text().replace("port: 80\n", "port: 80\n  user: ${\n")
            await change_file(lsp, app, typing, 2)
            labels = await completion_labels(lsp, app, position(typing, "${\n", 2))
            assert {"dns", "site", "port", "server", "user", "url"} <= set(labels)
            assert "classes" not in labels

    asyncio.run(session())


def test_document_and_workspace_symbols(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, app)
            found = await asyncio.wait_for(lsp.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(
                    uri=uri(app)))), REQUEST_SECONDS)
            assert [(s.name, [c.name for c in s.children or []]) for s in found or []
                    if isinstance(s, types.DocumentSymbol)] == [
                ("classes", []), ("parameters", ["port", "url"])]
            found = await asyncio.wait_for(lsp.workspace_symbol_async(
                types.WorkspaceSymbolParams(query="web")), REQUEST_SECONDS)
            assert sorted((s.name, s.container_name) for s in found or []) == [
                ("app.web", "class"), ("web1", "node"), ("web2", "node")]

    asyncio.run(session())


def test_class_mappings_in_reclass_config_lead_to_their_class(inventory: Path) -> None:
    config = inventory / "inv/reclass-config.yml"
    text = "class_mappings:\n  - '*  prod'\n  - 'db* app.web common'\n"
    config.write_text(text)

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, config)
            assert await definitions(lsp, config, position(text, "app.web")) == [
                (uri(inventory / "inv/classes/app/web.yml"), 0)]
            assert await definitions(lsp, config, position(text, "db*")) == []

    asyncio.run(session())


def test_files_created_outside_the_editor_are_seen_when_the_client_says(inventory: Path
                                                                       ) -> None:
    prod = inventory / "inv/classes/prod.yml"
    text = "classes:\n  - app\n  - extra\nparameters:\n  ~port: 443\n"
    prod.write_text(text)
    extra = inventory / "inv/classes/extra.yml"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            found = await open_file(lsp, prod)
            assert ["Class extra not found" in d.message for d in found] == [True]
            extra.write_text("parameters:\n  extra: yes\n")  # a checkout, another program
            lsp.diagnostics.pop(uri(prod), None)
            lsp.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=uri(extra), type=types.FileChangeType.Created)]))
            assert await wait_diagnostics(lsp, prod) == []

    asyncio.run(session())
