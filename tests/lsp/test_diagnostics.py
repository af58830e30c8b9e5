"""Diagnostics of `reclass-ng lsp`, driven over stdio by a real LSP client."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_session import change_file, lsp_session, open_file, position, uri, wait_diagnostics
from lsprotocol import types
from pytest_lsp import LanguageClient


def test_unknown_class_is_reported_where_it_is_listed_with_a_quick_fix(inventory: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    text = app.read_text().replace("  - common\n", "  - comon\n")
    app.write_text(text)

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            found = await open_file(lsp, app)
            assert len(found) == 1, found
            diagnostic = found[0]
            assert diagnostic.range.start == position(text, "comon")
            assert diagnostic.range.end == position(text, "comon", len("comon"))
            assert "Class comon not found" in diagnostic.message
            assert "did you mean common" in diagnostic.message
            assert "2 nodes affected: web1, web2" in diagnostic.message
            actions = await asyncio.wait_for(lsp.text_document_code_action_async(
                types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri(app)),
                                       range=diagnostic.range,
                                       context=types.CodeActionContext(diagnostics=found))), 30)
            assert actions and actions[0].edit is not None
            edits = actions[0].edit.changes[uri(app)]  # type: ignore[index]
            assert [edit.new_text for edit in edits] == ["common"]
            assert edits[0].range == diagnostic.range

    asyncio.run(session())


def test_unsaved_edits_are_diagnosed_and_cured_in_the_buffer(inventory: Path) -> None:
    common = inventory / "inv/classes/common.yml"
    broken = "parameters:\n  dns: [10.0.0.1\n  site: north\n"
    missing_ref = "parameters:\n  dns: ${nowhere:at_all}\n  site: north\n"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, common)
            found = await change_file(lsp, common, broken, 2)
            assert [d.code for d in found] == ["yaml-syntax"]
            assert found[0].range.start.line in (2, 3)  # where PyYAML sees the list unclosed
            found = await change_file(lsp, common, missing_ref, 3)
            assert len(found) == 1, found
            assert found[0].range.start == position(missing_ref, "dns")
            assert "nowhere:at_all" in found[0].message
            assert "3 nodes affected: db1, web1, web2" in found[0].message
            found = await change_file(lsp, common, common.read_text(), 4)
            assert found == []
            assert common.read_text() == "parameters:\n  dns: 10.0.0.1\n  site: north\n"

    asyncio.run(session())


def test_merge_conflict_and_include_cycle_are_published_for_their_files(inventory: Path) -> None:
    prod = inventory / "inv/classes/prod.yml"
    web = inventory / "inv/classes/app/web.yml"
    conflict = "classes:\n  - app\nparameters:\n  port:\n    number: 443\n"
    cycle = "classes:\n  - prod\n  - .base\nparameters:\n  server: nginx\n"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, prod)
            found = await change_file(lsp, prod, conflict, 2)
            assert any("port" in d.message and "1 node affected: web2" in d.message
                       for d in found), found
            await open_file(lsp, web)
            found = await change_file(lsp, web, cycle, 2)
            assert any("cycle" in d.message.lower() for d in found), found

    asyncio.run(session())


def test_files_outside_an_inventory_and_broken_inventories_get_empty_answers(tmp_path: Path
                                                                            ) -> None:
    stray = tmp_path / "notes.yml"
    stray.write_text("a: [\n")

    async def session() -> None:
        async with lsp_session(tmp_path) as lsp:
            await open_file(lsp, stray)
            hover = await asyncio.wait_for(lsp.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri(stray)),
                position=types.Position(line=0, character=0))), 30)
            assert hover is None
            found = await change_file(lsp, stray, "a: 1\n", 2)
            assert found == []

    asyncio.run(session())


def test_an_edit_renders_again_only_the_nodes_that_read_the_file(inventory: Path) -> None:
    web = inventory / "inv/classes/app/web.yml"
    db1 = inventory / "inv/nodes/db1.yml"

    def rendered_again(lsp: LanguageClient, name: str) -> list[str]:
        return [m.message for m in lsp.log_messages
                if m.message.startswith(f"reclass-ng: {name} changed")]

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, web)  # the text on disk: nothing to render again
            assert rendered_again(lsp, "classes/app/web.yml")[-1].startswith(
                "reclass-ng: classes/app/web.yml changed: 0 of 3 nodes rendered again")
            edited = web.read_text().replace("nginx", "caddy")
            await change_file(lsp, web, edited, 2)
            assert rendered_again(lsp, "classes/app/web.yml")[-1].startswith(
                "reclass-ng: classes/app/web.yml changed: 2 of 3 nodes rendered again")
            web.write_text(edited)  # the editor saves: the file now holds what was rendered
            lsp.diagnostics.pop(uri(web), None)
            lsp.text_document_did_save(types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri(web))))
            await wait_diagnostics(lsp, web)
            assert rendered_again(lsp, "classes/app/web.yml")[-1].startswith(
                "reclass-ng: classes/app/web.yml changed: 0 of 3 nodes rendered again")
            await open_file(lsp, db1)
            await change_file(lsp, db1, db1.read_text().replace("south", "east"), 2)
            assert rendered_again(lsp, "nodes/db1.yml")[-1].startswith(
                "reclass-ng: nodes/db1.yml changed: 1 of 3 nodes rendered again")

    asyncio.run(session())


def test_schema_violations_are_published_at_the_write_and_follow_edits(inventory: Path) -> None:
    base = inventory / "inv"
    (base / "reclass-config.yml").write_text("schemas:\n  port: schemas/port.yml\n")
    (base / "schemas").mkdir()
    (base / "schemas/port.yml").write_text("type: integer\nmaximum: 1000\n")
    prod = base / "classes/prod.yml"  # `~port: 443` here is fine; 8443 breaks `maximum`
    too_big = "classes:\n  - app\nparameters:\n  ~port: 8443\n"
    app = base / "classes/app/init.yml"
    as_text = app.read_text().replace("port: 80", "port: eighty")

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            assert await open_file(lsp, prod) == []
            found = await change_file(lsp, prod, too_big, 2)
            assert len(found) == 1, found
            diagnostic = found[0]
            assert diagnostic.code == "schema"
            assert diagnostic.range.start == position(too_big, "~port")  # as validate: line:column
            assert "port is 8443" in diagnostic.message
            assert "rule maximum at schemas/port.yml#/maximum" in diagnostic.message
            assert "1 node affected: web2" in diagnostic.message
            # The node file of web1 writes nothing bad; web1's bad value is in the class.
            found = await open_file(lsp, app, as_text)
            assert len(found) == 1, found
            assert found[0].range.start == position(as_text, "port: eighty")
            assert "rule type at schemas/port.yml#/type" in found[0].message
            assert "1 node affected: web1" in found[0].message  # web2 overrides it
            found = await change_file(lsp, prod, prod.read_text(), 3)
            assert found == []

    asyncio.run(session())
