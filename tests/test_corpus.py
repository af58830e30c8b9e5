"""The conformance corpus vendored in tests/conformance, one test per scenario.

The scenarios are a copy of the shared corpus (scripts/refresh-conformance.sh refreshes them
from ../shared/conformance), plus scenarios written here (listed in tests/conformance/LOCAL).
A missing or incomplete corpus FAILS the run: compatibility that was not checked must not look
like compatibility that was.

The corpus's own runner (run_corpus.py) is imported and its scenario loading, command building,
output normalisation and checks are reused unchanged. Only *how* the command runs differs: by
default the `reclass` command line is parsed and run in this process (`reclass_ng.cli.reclass.main`
with stdout/stderr captured and the scenario's inventory as working directory), which is about
ten times faster than starting a Python process per scenario. Set
RECLASS_NG_CORPUS_SUBPROCESS=1 to run every scenario as a real `python -m reclass_ng` process,
exactly as run_corpus.py does. RECLASS_NG_CONFORMANCE points at another corpus directory.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cli_in_process import run_reclass_in_process

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

VENDORED_CORPUS = Path(__file__).resolve().parent / "conformance"
CORPUS_DIR = Path(os.environ.get("RECLASS_NG_CONFORMANCE") or VENDORED_CORPUS)
USE_SUBPROCESS = os.environ.get("RECLASS_NG_CORPUS_SUBPROCESS", "") not in ("", "0")
TEMPLATE = "reclass -b {inventory} {args} {mode} -o {format}"
TIMEOUT = 60


def _load_runner() -> ModuleType | None:
    script = CORPUS_DIR / "run_corpus.py"
    if not script.is_file():
        return None
    spec = importlib.util.spec_from_file_location("reclass_ng_corpus_runner", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = _load_runner()
SCENARIOS: list[dict[str, Any]] = RUNNER.load_scenarios(str(CORPUS_DIR)) if RUNNER else []


def run_in_process(cmd: str, cwd: str, timeout: float) -> tuple[int, str, str]:
    """run_corpus.run_command, but calling the CLI's main() here instead of a shell."""
    argv = shlex.split(cmd)
    assert argv[0] == "reclass", cmd
    return run_reclass_in_process(argv[1:], cwd)


def _scenario_id(scenario: dict[str, Any]) -> str:
    return f"{scenario.get('topic', '?')}/{scenario['name']}"


def _is_ok_inventory(scenario: dict[str, Any]) -> bool:
    return scenario.get("mode", "inventory") == "inventory" and scenario.get("expect") == "ok" \
        and not scenario.get("output_format")


def spy_on_streamed_output(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The formats StreamedInventory.write_to printed from now on, in order."""
    from reclass_ng.output.streamed import StreamedInventory

    printed: list[str] = []
    write_to = StreamedInventory.write_to

    def spied(self: StreamedInventory, *args: Any) -> None:
        printed.append(self.fmt)
        write_to(self, *args)

    monkeypatch.setattr(StreamedInventory, "write_to", spied)
    return printed


if not SCENARIOS:
    def test_corpus_missing() -> None:
        pytest.fail(f"CONFORMANCE CORPUS NOT FOUND at {CORPUS_DIR}: the kapicorp-reclass "
                    "compatibility scenarios were NOT run (restore tests/conformance with "
                    "`git checkout tests/conformance` or scripts/refresh-conformance.sh)")
else:
    @pytest.mark.parametrize("scenario", SCENARIOS, ids=_scenario_id)
    def test_scenario(scenario: dict[str, Any], tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch) -> None:
        assert RUNNER is not None
        # No reclass-config.yml from the developer's home directory may leak into a scenario.
        monkeypatch.setenv("HOME", str(tmp_path))
        if USE_SUBPROCESS:
            template = f"{shlex.quote(sys.executable)} -m reclass_ng -b {{inventory}} {{args}} " \
                       "{mode} -o {format}"
        else:
            template = TEMPLATE
            monkeypatch.setattr(RUNNER, "run_command", run_in_process)
        streamed = spy_on_streamed_output(monkeypatch)
        result = RUNNER.check(scenario, template, TIMEOUT, False)
        assert result["ok"], f"{result['reason']}\ncommand: {result.get('cmd')}"
        if not USE_SUBPROCESS and _is_ok_inventory(scenario):
            # `--inventory` went through the streamed writer (output.streamed)
            assert streamed == ["json"], streamed

    # Every `--inventory` scenario rendered four times more (streamed and whole, two formats):
    # about 45 s of the inner loop. test_scenario above checks that each one streamed, and
    # tests/test_output_streamed.py compares streamed and whole documents in the inner loop.
    @pytest.mark.slow
    @pytest.mark.parametrize("scenario", [s for s in SCENARIOS if _is_ok_inventory(s)],
                             ids=_scenario_id)
    @pytest.mark.parametrize("fmt", ["json", "yaml"])
    def test_streamed_inventory_is_the_whole_documents_bytes(
            scenario: dict[str, Any], fmt: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> None:
        """`--inventory`, streamed node by node, prints byte for byte what output.write prints
        of the inventory rendered whole (the path before streaming), in both formats."""
        import io
        import re

        import reclass_ng
        from reclass_ng.cli.reclass import parse_args, settings_from_args
        from reclass_ng.settings import Speed

        if Speed.from_environment() != Speed():
            pytest.skip("the reference writers are compared in tests/test_output_streamed.py")
        from reclass_ng.output import write

        monkeypatch.setenv("HOME", str(tmp_path))
        inventory_dir = os.path.join(scenario["_dir"], "inventory")
        argv = ["-b", inventory_dir, *scenario.get("args", []), "--inventory", "-o", fmt]
        streamed = spy_on_streamed_output(monkeypatch)
        status, out, err = run_reclass_in_process(argv, inventory_dir)
        assert status == 0, err
        assert streamed == [fmt]
        monkeypatch.chdir(inventory_dir)
        inventory = reclass_ng.load(inventory_dir, warn=lambda message: None,
                                    **settings_from_args(parse_args(argv)))
        whole = io.StringIO()
        write(inventory.inventory(), whole, fmt, inventory.settings.pretty_print,
              floats_exact=inventory.floats_json_exact, speed=inventory.speed)
        timestamp = re.compile(r'^(\s*"?timestamp"?: ).*$', re.MULTILINE)
        assert timestamp.sub(r"\1X", out) == timestamp.sub(r"\1X", whole.getvalue())


def test_corpus_is_complete() -> None:
    """The README announces 296 public scenarios; losing some silently would hide regressions."""
    assert len(SCENARIOS) >= 296, f"only {len(SCENARIOS)} scenarios found in {CORPUS_DIR}"
    assert len({s["name"] for s in SCENARIOS}) == len(SCENARIOS)
