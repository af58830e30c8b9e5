"""`${}` reference bombs through the service: a group whose variables expand exponentially
(`b: [${a}, ${a}, ...]`, `c: [${b}, ${b}, ...]`) is refused when written (422
reference-expansion, nothing written), and one written to disk by hand makes classifying a
422 with the reason, never a 500, within bounded CPU and memory (the server runs under an
address-space limit, so a regression fails the test instead of the machine)."""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from server_helpers import (
    LARGE_WEB_ID,
    ROOT_ID,
    TOKEN,
    WEB_ID,
    assert_error,
    client,
    copy_inventory,
    cpu_seconds,
    group_files,
    serve_command,
    server_log,
)
from server_process import server_process

MEMORY_LIMIT_KB = 1024 * 1024  # 1 GiB of address space for the whole server
CPU_SECONDS = 5.0  # what answering one bomb may cost the server at most (it takes ~0.3 s)


def list_bomb(levels: int = 8, width: int = 10) -> dict[str, list[str]]:
    """Variables that expand to width**levels values: 10**8 for the defaults, in ~800 bytes."""
    variables = {"l0": ["x"] * width}
    for level in range(1, levels + 1):
        variables[f"l{level}"] = ["${l" + str(level - 1) + "}"] * width
    return variables


def string_bomb(levels: int = 30) -> dict[str, str]:
    """Variables whose strings double at each level: 2**30 characters in ~600 bytes."""
    variables = {"s0": "abcdefghijklmnopqrst"}
    for level in range(1, levels + 1):
        variables[f"s{level}"] = ("${s" + str(level - 1) + "}") * 2
    return variables


BOMBS = {"lists": list_bomb, "strings": string_bomb}


@contextlib.contextmanager
def limited_server(tmp_path: Path, *args: str) -> Iterator[tuple[str, int, Path]]:
    """`reclass-ng serve ARGS` on a copy of the example inventory, under MEMORY_LIMIT_KB of
    address space; yields (base URL, its pid, the inventory)."""
    inventory = copy_inventory(tmp_path / "inventory")
    state_db = tmp_path / "state.sqlite3"
    command = shlex.join(serve_command(inventory, state_db, *args))
    env = {k: v for k, v in os.environ.items() if k != "RECLASS_NG_TOKEN"}
    env["RECLASS_NG_TOKEN"] = TOKEN
    with server_process(["bash", "-c", f"ulimit -v {MEMORY_LIMIT_KB} && exec {command}"],
                        server_log(state_db), env=env) as (process, base):
        yield base, process.pid, inventory


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_group_write_with_a_reference_bomb_is_refused(tmp_path, bomb):
    with limited_server(tmp_path) as (base, pid, inventory), client(base) as http:
        before = group_files(inventory)
        started = cpu_seconds(pid)
        response = http.post(f"/v1/groups/{WEB_ID}", json={"variables": BOMBS[bomb]()})
        body = assert_error(response, 422, "reference-expansion")
        assert "reference bomb" in body["msg"] and "Web servers" in body["msg"], body
        # The group written comes first; its child "Large web servers" inherits the bomb.
        first = body["details"]["first"]
        assert first["group"] == WEB_ID and first["path"] and first["reference"], body
        assert [p["details"]["group"] for p in body["details"]["problems"]] == \
            [WEB_ID, LARGE_WEB_ID], body
        assert group_files(inventory) == before
        # The same check when only validating, and for a new group inheriting from a parent
        # that holds the first levels (the bomb is in the inherited variables).
        response = http.post("/v1/validate/group", json={
            "name": "Bomb", "parent": ROOT_ID, "rule": ["=", "name", "x"],
            "variables": BOMBS[bomb]()})
        assert_error(response, 422, "reference-expansion")
        assert cpu_seconds(pid) - started < 2 * CPU_SECONDS
        # The server still works: an ordinary write and classification.
        assert http.post(f"/v1/groups/{WEB_ID}",
                         json={"variables": {"a": ["x"], "b": ["${a}", "${a}"]}}).status_code == 200
        response = http.post("/v1/classified/nodes/web1.example.com",
                             json={"fact": {"role": "web"}})
        assert response.status_code == 200, response.text


def test_a_bomb_split_between_parent_and_child_groups_is_refused(tmp_path):
    variables = list_bomb()
    parent_part = {k: v for k, v in variables.items() if k in ("l0", "l1", "l2", "l3")}
    child_part = {k: v for k, v in variables.items() if k not in parent_part}
    with limited_server(tmp_path) as (base, _pid, inventory), client(base) as http:
        # Alone, the child's levels refer to values it does not have: left to classification.
        response = http.post(f"/v1/groups/{LARGE_WEB_ID}", json={"variables": child_part})
        assert response.status_code == 200, response.text
        before = group_files(inventory)
        response = http.post(f"/v1/groups/{WEB_ID}", json={"variables": parent_part})
        body = assert_error(response, 422, "reference-expansion")
        assert body["details"]["group"] == LARGE_WEB_ID, body
        assert "Large web servers" in body["msg"], body
        assert group_files(inventory) == before
        # Replacing every group at once is checked the same way.
        groups = http.get("/v1/groups").json()
        for group in groups:
            if group["id"] == WEB_ID:
                group["variables"] = parent_part
        response = http.post("/v1/import-hierarchy", json=groups)
        assert_error(response, 422, "reference-expansion")
        assert group_files(inventory) == before


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_classifying_with_a_hand_written_bomb_is_a_422_not_a_500(tmp_path, bomb):
    with limited_server(tmp_path, "--open-reads") as (base, pid, inventory), \
            client(base) as http:
        web = inventory / "groups" / "web-servers.yml"
        data = yaml.safe_load(web.read_text())
        data["variables"] = BOMBS[bomb]()
        web.write_text(yaml.safe_dump(data))
        started = cpu_seconds(pid)
        for anonymous in (False, True):
            with client(base, token=None if anonymous else TOKEN) as caller:
                response = caller.post("/v1/classified/nodes/web1.example.com",
                                       json={"fact": {"role": "web"}})
            body = assert_error(response, 422, "node-render-error")
            assert "reference bomb" in body["msg"] and "web1.example.com" in body["msg"], body
        assert cpu_seconds(pid) - started < 2 * CPU_SECONDS
        status = Path(f"/proc/{pid}/status").read_text()
        peak_kb = int(next(line.split()[1] for line in status.splitlines()
                           if line.startswith("VmHWM:")))
        assert peak_kb < 300 * 1024, f"the server's peak resident memory: {peak_kb} kB"
        # Another node, which the group does not classify, is not affected.
        response = http.post("/v1/classified/nodes/db1.staging.example.com",
                             json={"fact": {"role": "db"}})
        assert response.status_code == 200, response.text

