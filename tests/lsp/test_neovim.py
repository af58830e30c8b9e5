"""End to end through a real editor: headless Neovim's own LSP client (vim.lsp.start_client,
buf_attach_client: Neovim 0.7+) opens a class file and gets diagnostics, hover and definition
from `reclass-ng lsp`."""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_session import SERVER, position, server_env, uri

NVIM = shutil.which("nvim")
CLIENT = Path(__file__).resolve().parent / "neovim_client.lua"
NVIM_SECONDS = 150
MEMORY_LIMIT = 3 * 1024 ** 3  # Neovim and the server it starts, each


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (scripts/install-test-tools.sh)")
def test_neovim_gets_diagnostics_hover_and_definition(inventory: Path, tmp_path: Path) -> None:
    app = inventory / "inv/classes/app/init.yml"
    # web1 renders; web2 fails on a reference only web1's node file satisfies
    text = app.read_text().replace("${port}/", "${port}/${tier}")
    app.write_text(text)
    web1 = inventory / "inv/nodes/web1.yml"
    web1.write_text(web1.read_text() + "parameters:\n  tier: gold\n")
    hover_at, definition_at = position(text, "port: 80"), position(text, "app.web", 3)
    out = tmp_path / "answers.json"
    env = {**server_env(), "RECLASS_LSP_FILE": str(app), "RECLASS_LSP_ROOT": str(inventory),
           "RECLASS_LSP_CMD": json.dumps(SERVER), "RECLASS_LSP_OUT": str(out),
           "RECLASS_LSP_HOVER_LINE": str(hover_at.line),
           "RECLASS_LSP_HOVER_CHAR": str(hover_at.character),
           "RECLASS_LSP_DEF_LINE": str(definition_at.line),
           "RECLASS_LSP_DEF_CHAR": str(definition_at.character),
           "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    assert NVIM is not None
    done = subprocess.run([NVIM, "--headless", "--clean", "-c", f"luafile {CLIENT}"],
                          env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=NVIM_SECONDS, preexec_fn=_limits, stdin=subprocess.DEVNULL)
    assert out.is_file(), (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    answers = json.loads(out.read_text())
    assert answers["diagnosed"] is True
    [diagnostic] = answers["diagnostics"]
    assert diagnostic["range"]["start"] == {"line": 5, "character": 2}  # url:
    assert "Cannot resolve ${tier}" in diagnostic["message"]
    assert "1 node affected: web2" in diagnostic["message"]
    hover = answers["hover"]["contents"]["value"]
    assert "`parameters:port`" in hover
    assert "- `80` on 1 (web1)" in hover
    assert "On web1 (`80`):\n- this write wins" in hover
    assert "1 node reading this file fails to render (see the diagnostics): web2" in hover
    assert [location["uri"] for location in answers["definition"]] == [
        uri(inventory / "inv/classes/app/web.yml")]
