"""Hover and go-to-definition of `reclass-ng lsp`, driven over stdio by a real LSP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_session import (
    change_file,
    definitions,
    hover_text,
    lsp_session,
    open_file,
    position,
    uri,
)
from lsprotocol import types


def test_hover_on_a_key_gives_values_across_nodes_and_who_overrides(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    text = app.read_text()

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, app)
            shown = await hover_text(lsp, app, position(text, "port: 80"))
            assert shown is not None
            assert "**2 values across 2 nodes**" in shown
            assert "- `80` on 1 (web1)" in shown
            assert "- `443` on 1 (web2)" in shown
            assert "On web1 (`80`):\n- this write wins" in shown
            assert "this write is replaced by classes/prod.yml:4 (`~`)" in shown

    asyncio.run(session())


def test_hover_on_a_reference_and_a_class_name(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    text = app.read_text()

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, app)
            shown = await hover_text(lsp, app, position(text, "${site}", 3))
            assert shown is not None and shown.startswith("`${site}`")
            assert "**1 value across 2 nodes**" in shown
            assert '- `"north"` on 2 (web1, web2)' in shown
            assert "Written at: classes/common.yml:3" in shown
            shown = await hover_text(lsp, app, position(text, "app.web", 2))
            assert shown is not None
            assert "class `app.web`" in shown and "file: classes/app/web.yml" in shown
            assert "included by 2 nodes" in shown
            assert "on web1: app.web <- app <- web1" in shown

    asyncio.run(session())


def test_hover_shows_the_unsaved_buffer(inventory: Path) -> None:
    common = inventory / "inv/classes/common.yml"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, common)
            edited = "parameters:\n  dns: 10.0.0.9\n  site: north\n"
            assert await change_file(lsp, common, edited, 2) == []
            shown = await hover_text(lsp, common, position(edited, "dns"))
            assert shown is not None
            assert '- `"10.0.0.9"` on 3 (db1, web1, web2)' in shown
            assert "10.0.0.1" not in shown

    asyncio.run(session())


def test_definition_of_class_names_and_references(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    web = inventory / "inv/classes/app/web.yml"
    text, web_text = app.read_text(), web.read_text()

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, app)
            assert await definitions(lsp, app, position(text, "app.web")) == [
                (uri(web), 0)]
            assert await definitions(lsp, app, position(text, "common")) == [
                (uri(inventory / "inv/classes/common.yml"), 0)]
            await open_file(lsp, web)
            assert await definitions(lsp, web, position(web_text, ".base", 1)) == [
                (uri(inventory / "inv/classes/app/base.yml"), 0)]
            assert await definitions(lsp, app, position(text, "${port}", 2)) == [
                (uri(app), 4)]
            # a node's class list: `app` is app/init.yml
            node = inventory / "inv/nodes/web2.yml"
            prod = inventory / "inv/classes/prod.yml"
            await open_file(lsp, prod)
            assert await definitions(lsp, prod, position(prod.read_text(), "app")) == [
                (uri(app), 0)]
            assert await definitions(lsp, node, types.Position(line=1, character=5)) == [
                (uri(prod), 0)]

    asyncio.run(session())
