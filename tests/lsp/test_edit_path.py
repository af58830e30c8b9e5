"""What an edit costs the server, driven over stdio by a real LSP client: a burst of edits
renders at most twice, only the open documents whose diagnostics the edit may change are
published again, and lint's write rules run for the edited file's nodes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_session import change_file, lsp_session, open_file, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

REQUEST_SECONDS = 60
# Enough nodes that one render (about 0.15 ms a node here) takes longer than the burst takes to
# arrive (6 edits came over more than 100 ms here): at 300 nodes a render took 25 ms and the
# edits were rendered one by one as they came, at 1,500 nodes (200 ms) now and then three times.
BURST_NODES = 4000


def _renders(lsp: LanguageClient) -> list[str]:
    """The server's "N of M nodes rendered again" log lines so far."""
    return [item.message for item in lsp.log_messages if "rendered again" in item.message]


async def _wait_for(condition, what: str) -> None:
    async def waiting() -> None:
        while not condition():
            await asyncio.sleep(0.02)
    try:
        await asyncio.wait_for(waiting(), REQUEST_SECONDS)
    except TimeoutError:
        raise AssertionError(f"no {what} within {REQUEST_SECONDS} s") from None


def test_a_burst_of_edits_renders_at_most_twice_and_ends_on_the_last_text(inventory: Path
                                                                          ) -> None:
    common = inventory / "inv/classes/common.yml"
    for number in range(BURST_NODES):  # a render slower than the edits come
        (inventory / f"inv/nodes/many{number}.yml").write_text("classes:\n  - prod\n")

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, common)
            # The open renders too, and its log line may come after the diagnostics the first
            # load published: the burst's renders are counted from after it.
            await _wait_for(lambda: len(_renders(lsp)) >= 1, "the open's render")
            before = len(_renders(lsp))
            lsp.diagnostics.pop(uri(common), None)
            for version in range(2, 8):  # as fast as a typist's editor sends them
                text = f"parameters:\n  dns: ${{missing{version}}}\n  site: north\n"
                lsp.text_document_did_change(types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri(common),
                                                                        version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

            def last_text_diagnosed() -> bool:
                found = lsp.diagnostics.get(uri(common), [])
                return any("missing7" in item.message for item in found)
            await _wait_for(last_text_diagnosed, "diagnostics of the last text")
            renders = _renders(lsp)[before:]
            assert 1 <= len(renders) <= 2, renders

    asyncio.run(session())


def test_an_edit_publishes_only_the_open_files_its_nodes_read(inventory: Path) -> None:
    base = inventory / "inv/classes/app/base.yml"  # read by web1 and web2
    db1 = inventory / "inv/nodes/db1.yml"  # reads common only

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, db1)
            await open_file(lsp, base)
            lsp.diagnostics.pop(uri(db1), None)
            await change_file(lsp, base, "parameters:\n  server: apache\n  user: ${nobody}\n", 2)
            # A second edit: by its publication the first one's have all been sent.
            found = await change_file(lsp, base, "parameters:\n  server: apache\n  user: x\n", 3)
            assert not [item for item in found if item.code != "dead-value"], found
            assert uri(db1) not in lsp.diagnostics  # db1 read none of it: not published again

    asyncio.run(session())


def test_lint_write_findings_of_the_edited_files_nodes_are_published(inventory: Path) -> None:
    common = inventory / "inv/classes/common.yml"  # read by every node
    # dns written again after common by every node's own files: common's value is dead
    db1 = inventory / "inv/nodes/db1.yml"
    db1.write_text("classes:\n  - common\nparameters:\n  site: south\n  dns: 10.9.9.9\n")
    app = inventory / "inv/classes/app/init.yml"
    app.write_text(app.read_text() + "  dns: 10.8.8.8\n")

    async def session() -> None:
        async with lsp_session(inventory) as lsp:
            await open_file(lsp, common)
            text = "parameters:\n  site: north\n  dns: 10.0.0.1\n"  # unsaved, dns moved
            await change_file(lsp, common, text, 2)

            def dead_value_published() -> bool:  # at the `dns` line of the buffer
                return any(item.code == "dead-value" and item.range.start.line == 2
                           for item in lsp.diagnostics.get(uri(common), []))
            await _wait_for(dead_value_published, "dead-value finding for common.yml")
            dead = [item for item in lsp.diagnostics[uri(common)] if item.code == "dead-value"]
            assert len(dead) == 1, dead
            assert "overridden on every node using the class (3)" in dead[0].message
            assert dead[0].severity == types.DiagnosticSeverity.Warning

    asyncio.run(session())
