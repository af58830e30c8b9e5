"""The first load reports `$/progress`, requests are answered while it runs, and bad input
(hostile buffers, a broken reclass-config.yml, a Kapitan layout) never stops the server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsp_session import (
    REQUEST_SECONDS,
    change_file,
    hover_text,
    lsp_session,
    open_file,
    position,
    uri,
    wait_diagnostics,
)
from lsprotocol import types

NODES = 400


def _many_nodes(base: Path) -> None:
    (base / "classes").mkdir(parents=True)
    (base / "nodes").mkdir()
    (base / "classes" / "common.yml").write_text(
        "parameters:\n  site: north\n" + "".join(f"  key{i}: ${{site}}-{i}\n" for i in range(80)))
    for index in range(NODES):
        (base / "nodes" / f"n{index:04}.yml").write_text(
            f"classes:\n  - common\nparameters:\n  number: {index}\n")


def test_first_load_reports_progress_and_requests_are_answered_meanwhile(tmp_path: Path) -> None:
    _many_nodes(tmp_path / "inv")
    common = tmp_path / "inv/classes/common.yml"
    stray = tmp_path / "README.yml"
    stray.write_text("title: not an inventory file\n")

    async def session() -> None:
        async with lsp_session(tmp_path) as lsp:
            lsp.diagnostics.pop(str(common), None)
            lsp.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri(common), language_id="yaml",
                                                     version=1, text=common.read_text())))
            # While the inventory loads (in a worker thread), a request is answered at once.
            started = time.monotonic()
            symbols = await asyncio.wait_for(lsp.text_document_document_symbol_async(
                types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(
                    uri=uri(common)))), REQUEST_SECONDS)
            answered = time.monotonic() - started
            assert [s.name for s in symbols or [] if isinstance(s, types.DocumentSymbol)] \
                == ["parameters"]
            assert await wait_diagnostics(lsp, common) == []
            loaded = time.monotonic() - started
            assert answered < loaded, (answered, loaded)
            reports = [report for token, reports in lsp.progress_reports.items()
                       for report in reports if str(token).startswith("reclass-ng-load")]
            kinds = [getattr(report, "kind", None) for report in reports]
            assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds, kinds
            assert f"{NODES} nodes" in (reports[-1].message or "")
            shown = await hover_text(lsp, common, position(common.read_text(), "key7"))
            assert shown is not None and f"across {NODES} nodes" in shown

    asyncio.run(session())


def test_hostile_buffers_get_diagnostics_and_the_server_keeps_answering(inventory: Path
                                                                       ) -> None:
    common = inventory / "inv/classes/common.yml"
    deep = "parameters:\n  a: " + "[" * 20000 + "]" * 20000 + "\n"
    huge = "parameters:\n" + "".join(f"  k{i}: {'x' * 80}\n" for i in range(60000))

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, common)
            found = await change_file(lsp, common, deep, 2)
            assert any("nests deeper" in d.message for d in found), found
            found = await change_file(lsp, common, huge, 3)
            assert any("larger than" in d.message for d in found), found
            assert await hover_text(lsp, common, types.Position(line=1, character=3)) is None
            found = await change_file(lsp, common, common.read_text(), 4)
            assert found == []
            shown = await hover_text(lsp, common, position(common.read_text(), "dns"))
            assert shown is not None and "across 3 nodes" in shown

    asyncio.run(session())


def test_a_broken_config_is_a_diagnostic_until_it_is_fixed(inventory: Path) -> None:
    config = inventory / "inv/reclass-config.yml"
    config.write_text("storage_type: nowhere\n")
    common = inventory / "inv/classes/common.yml"

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            found = await open_file(lsp, common)
            assert [d.code for d in found] == ["load-error"]
            assert "nowhere" in found[0].message
            await open_file(lsp, config)
            await change_file(lsp, config, "storage_type: yaml_fs\n", 2)  # unsaved
            found = await change_file(lsp, common, common.read_text(), 2)
            assert found == []

    asyncio.run(session())


def test_kapitan_layout_is_an_inventory(tmp_path: Path) -> None:
    base = tmp_path / "inventory"
    (base / "classes").mkdir(parents=True)
    (base / "targets").mkdir()
    (base / "classes" / "common.yml").write_text("parameters:\n  region: eu\n")
    target = base / "targets" / "prod.yml"
    target.write_text("classes:\n  - comon\n")

    async def session() -> None:
        async with lsp_session(tmp_path) as lsp:
            found = await open_file(lsp, target)
            assert len(found) == 1 and "did you mean common" in found[0].message

    asyncio.run(session())


def test_the_server_exits_promptly_during_a_first_load(tmp_path: Path) -> None:
    _many_nodes(tmp_path / "inv")
    common = tmp_path / "inv/classes/common.yml"

    async def session() -> float:
        async with lsp_session(tmp_path) as lsp:
            lsp.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri(common), language_id="yaml",
                                                     version=1, text=common.read_text())))
            await asyncio.sleep(0.3)  # the load has started in a worker thread
            started = time.monotonic()
        return time.monotonic() - started  # shutdown, exit and the process's end

    took = asyncio.run(session())
    # Unstopped, the load ran to its end first: shutdown was not answered within 30 s here.
    assert took < 20, took
