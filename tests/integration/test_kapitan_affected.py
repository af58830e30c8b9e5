"""Compile only the Kapitan targets a change affects: `reclass-ng affected --kapitan -o json`
over two git revisions of a real Kapitan project, then the real `kapitan-ng compile
--targets-from` (doc/review.rst)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from git_repos import git
from test_kapitan_compile import PROJECT, kapitan, kapitan_bin  # noqa: F401 - a fixture
from tool_helpers import VENV_BIN, run_tool


def test_only_the_affected_targets_are_compiled(kapitan_bin: Path,  # noqa: F811
                                                tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "project", cwd=project)
    tls = project / "inventory/classes/app/tls.yml"
    tls.write_text(tls.read_text().replace("ports: [443]", "ports: [8443]"))

    def affected(*args: str) -> dict:
        done = run_tool([str(VENV_BIN / "reclass-ng"), "affected", "-b", "inventory",
                         "--kapitan", "-o", "json", *args], cwd=project, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        return json.loads(done.stdout)

    document = affected("--from", "HEAD")
    # Only web-prod reads app.tls; web-dev reads app, common and its own file.
    assert document["nodes"] == ["web-prod"]
    assert document["reasons"]["web-prod"] == ["class app.tls (classes/app/tls.yml) changed"]
    (project / "affected.json").write_text(json.dumps(document))
    output = kapitan(kapitan_bin, "kapitan-ng", "compile", "--inventory-backend", "reclass-ng",
                     "--targets-from", "affected.json", cwd=project)
    assert sorted(p.name for p in (project / "compiled").iterdir()) == ["web-prod"], output
    assert "8443" in (
        project / "compiled/web-prod/manifests/service.yaml").read_text()

    # Nothing affected: nothing compiled (Kapitan given no target would compile them all).
    git("commit", "-q", "-am", "port 8443", cwd=project)
    shutil.rmtree(project / "compiled")
    document = affected("--from", "HEAD")
    assert document["nodes"] == []
    (project / "affected.json").write_text(json.dumps(document))
    output = kapitan(kapitan_bin, "kapitan-ng", "compile", "--inventory-backend", "reclass-ng",
                     "--targets-from", "affected.json", cwd=project)
    assert "--targets-from lists no target: nothing to compile" in output
    assert not (project / "compiled").exists()
    done = run_tool([str(kapitan_bin / "kapitan-ng"), "compile", "--targets-from", "absent"],
                    cwd=project, env={"HOME": str(project)})
    assert done.returncode == 74 and "Traceback" not in done.stderr
    assert "cannot read --targets-from absent" in done.stderr
