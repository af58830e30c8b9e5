"""Real Kapitan compiling a small project (tests/integration/kapitan_project: targets, classes, a
jsonnet and a jinja2 component) with its `reclass` backend (kapicorp-reclass) and with
`reclass-ng`, through `kapitan-ng` and `reclass-ng kapitan`.

Kapitan lives in a virtualenv of its own, `.venv-kapitan` (scripts/install-test-tools.sh), with
this checkout installed there: its pinned dependencies clash with the test virtualenv's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tool_helpers import INSTALL_HINT, REPO, missing_tool, run_tool

PROJECT = Path(__file__).resolve().parent / "kapitan_project"
KAPITAN_BIN = REPO / ".venv-kapitan" / "bin"


@pytest.fixture(scope="module")
def kapitan_bin() -> Path:
    for name in ("kapitan", "kapitan-ng", "reclass-ng"):
        if not (KAPITAN_BIN / name).is_file():
            missing_tool(f"{KAPITAN_BIN / name} is not installed; {INSTALL_HINT}")
    return KAPITAN_BIN


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    return copy


def kapitan(bin_dir: Path, command: str, *args: str, cwd: Path) -> str:
    result = run_tool([str(bin_dir / command), *args], cwd=cwd, env={"HOME": str(cwd)})
    assert result.returncode == 0, f"{command} {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def files_below(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes()
            for path in sorted(root.rglob("*")) if path.is_file()}


def test_compiled_outputs_are_byte_identical(kapitan_bin: Path, project: Path) -> None:
    kapitan(kapitan_bin, "kapitan", "--mp-method", "fork", "compile", "--output-path",
            "with-reclass", cwd=project)
    # Kapitan's default start method, spawn: the backend is pickled into fresh workers.
    kapitan(kapitan_bin, "kapitan-ng", "compile", "--inventory-backend", "reclass-ng",
            "--output-path", "with-reclass-ng", cwd=project)
    reference = files_below(project / "with-reclass" / "compiled")
    assert set(reference) == {
        f"{target}/{path}" for target in ("web-dev", "web-prod") for path in (
            "docs/README.md.j2", "manifests/deployment.yaml", "manifests/inventory.yaml",
            "manifests/service.yaml")}
    assert b"- web-prod: www.example.org" in reference["web-prod/docs/README.md.j2"]
    assert files_below(project / "with-reclass-ng" / "compiled") == reference


def test_kapitan_inventory_with_the_backend_chosen_in_dot_kapitan(kapitan_bin: Path,
                                                                   project: Path) -> None:
    reference = kapitan(kapitan_bin, "kapitan", "inventory", cwd=project)
    (project / ".kapitan").write_text("global:\n  inventory-backend: reclass-ng\n")
    assert kapitan(kapitan_bin, "reclass-ng", "kapitan", "inventory", cwd=project) == reference
    verbose = kapitan(kapitan_bin, "kapitan-ng", "inventory", "--verbose", cwd=project)
    assert "Using ReclassNgInventory as inventory backend" in verbose


def test_an_inventory_error_stops_the_compile_with_reclass_ngs_message(kapitan_bin: Path,
                                                                       project: Path) -> None:
    target = project / "inventory" / "targets" / "web-dev.yml"
    target.write_text(target.read_text() + "  broken: ${app:nmae}\n")
    result = run_tool([str(kapitan_bin / "kapitan-ng"), "compile", "--inventory-backend",
                       "reclass-ng"], cwd=project, env={"HOME": str(project)})
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Inventory reclass-ng error" in output and "app:nmae" in output, output
    assert "web-dev" in output
    # The whole of what `reclass` says, not only kapicorp's first two lines.
    assert f"      written at {target}:10:11 (node web-dev)\n" in output, output
    assert "      did you mean ${app:name}, ${app:image}?\n" in output, output
    assert "Traceback" not in output
    assert not (project / "compiled").exists()


def test_without_kapitan_the_commands_say_how_to_install_it(tmp_path: Path) -> None:
    from tool_helpers import VENV_BIN

    if (VENV_BIN / "kapitan").exists():
        pytest.skip("Kapitan is installed in the test virtualenv")
    for command in (["kapitan-ng", "compile"], ["reclass-ng", "kapitan", "compile"]):
        result = run_tool([str(VENV_BIN / command[0]), *command[1:]], cwd=tmp_path)
        assert result.returncode == 78
        message = result.stderr.strip()
        assert message.startswith("kapitan-ng needs Kapitan: in a checkout of reclass-ng, pip "
                                  "install '.[kapitan]'; elsewhere, pip install "
                                  "'WHEEL[kapitan]' with a wheel built"), message
        assert "reclass-ng[kapitan]" not in message  # no package index has it


def test_a_repo_git_would_read_as_an_option_stops_the_compile_unrun(kapitan_bin: Path,
                                                                    project: Path) -> None:
    # The inventory's reclass-config.yml, as Kapitan's get_reclass_config reads it.
    marker = project / "upload-pack-ran"
    hostile = f"--upload-pack=touch {marker};false"
    config = project / "inventory" / "reclass-config.yml"
    config.write_text(f"storage_type: yaml_git\nnodes_uri:\n  repo: '{hostile}'\n"
                      f"classes_uri:\n  repo: '{hostile}'\n")
    result = run_tool([str(kapitan_bin / "kapitan-ng"), "compile", "--inventory-backend",
                       "reclass-ng"], cwd=project, env={"HOME": str(project)})
    assert not marker.exists(), "the repo value ran as a git option"
    assert result.returncode != 0
    output = result.stdout + result.stderr
    # Kapitan names the file by its inventory path, relative to the project: ./inventory/...
    assert "Setting nodes_uri.repo in " in output, output
    assert "inventory/reclass-config.yml: '--upload-pack=" in output, output


def test_reclass_config_is_read_as_kapitans_reclass_backend_reads_it(kapitan_bin: Path,
                                                                      project: Path) -> None:
    """inventory_base_uri, the keys of reclass's command line and unknown keys are ignored, and
    a relative classes_uri is taken from the inventory directory, never the working one."""
    inventory = project / "inventory"
    (inventory / "classes").rename(project / "shared-classes")
    (inventory / "reclass-config.yml").write_text(
        "inventory_base_uri: .\n"          # Kapitan's example terraform project has this
        "classes_uri: ../shared-classes\n"
        "pretty_print: sometimes\n"        # not a boolean, but read by nobody here
        "kapitan_note: unknown to reclass\n")
    kapitan(kapitan_bin, "kapitan", "--mp-method", "fork", "compile", "--output-path",
            "with-reclass", cwd=project)
    output = kapitan(kapitan_bin, "kapitan-ng", "compile", "--inventory-backend", "reclass-ng",
                     "--output-path", "with-reclass-ng", cwd=project)
    reference = files_below(project / "with-reclass" / "compiled")
    assert len(reference) == 8
    assert files_below(project / "with-reclass-ng" / "compiled") == reference
    assert "unknown setting 'kapitan_note' ignored" in output
