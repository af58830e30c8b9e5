"""The service under concurrent writers and hostile input, driven through a real
`reclass-ng serve` on loopback (bounded loops throughout).

* read-modify-write clients lose no update, with one and with two server processes;
* every hostile body gets a 4xx and leaves every file loadable;
* `kill -9` during writes leaves whole files, and the temporary files are cleaned;
* one slow request (a held lock, a nasty regex) does not stall the others;
* half-sent requests are cut off and connections are capped.

RECLASS_NG_RELIABILITY_INCREMENTS sets the increments per client (default 25; the figure in
doc/service.rst is for 200, i.e. 1,600 writes).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml
from lost_updates import run_increments
from server_helpers import (
    ROOT_ID,
    TOKEN,
    WEB_ID,
    client,
    copy_inventory,
    cpu_seconds,
    has_open,
    running_server,
    running_server_process,
    serve_command,
    server_log,
)
from server_process import start_server_process, stop_server_process

import reclass_ng
from reclass_ng.classifier.group_files import read_group_files

INCREMENTS = int(os.environ.get("RECLASS_NG_RELIABILITY_INCREMENTS", "25"))


def assert_inventory_loads(inventory: Path) -> None:
    """Every group file and node file parses, the group tree is valid, reclass renders."""
    groups, problems = read_group_files(inventory)
    assert not problems, problems
    assert groups
    reclass_ng.load(str(inventory)).inventory()
    leftovers = [p for p in inventory.rglob("*") if p.name.startswith(".reclass-ng-tmp.")]
    assert not leftovers, leftovers


@pytest.fixture
def inventory(tmp_path):
    return copy_inventory(tmp_path / "inventory")


@pytest.mark.parametrize("servers", [1, 2])
def test_concurrent_read_modify_write_loses_no_update(inventory, tmp_path, servers):
    with running_server(inventory, tmp_path / "a.sqlite3") as first, \
            running_server(inventory, tmp_path / "b.sqlite3") as second:
        bases = [first, second][:servers]
        result = run_increments(bases, TOKEN, WEB_ID, clients=8, increments=INCREMENTS,
                                max_seconds=300)
    assert result["successful_writes"] == 8 * INCREMENTS, result
    assert result["lost_updates"] == 0, result
    assert result["server_errors"] == 0, result
    assert_inventory_loads(inventory)


def _deep(levels: int, leaf: object = 1) -> str:
    return "[" * levels + json.dumps(leaf) + "]" * levels


def _hostile_requests() -> list[tuple[str, str, str, dict[str, str], str]]:
    """(name, method, path, headers, raw body) of requests that must all get a 4xx."""
    web = f"/v1/groups/{WEB_ID}"
    nel_name = json.dumps({"name": "Web\u0085servers"})
    return [
        ("json 100k deep", "POST", web, {}, _deep(100_000)),
        ("rule 190 deep", "POST", web, {},
         '{"rule": ' + "[\"not\", " * 190 + '["=", "name", "x"]' + "]" * 190 + "}"),
        ("variables 500 deep", "POST", web, {},
         '{"variables": {"v": ' + '{"a": ' * 500 + "1" + "}" * 500 + "}}"),
        ("NaN", "POST", web, {}, '{"variables": {"v": NaN}}'),
        ("Infinity", "POST", web, {}, '{"variables": {"v": Infinity}}'),
        ("-Infinity in a fact", "POST", "/v1/classified/nodes/web1.example.com", {},
         '{"fact": {"v": -Infinity}}'),
        ("1e999", "POST", web, {}, '{"variables": {"v": 1e999}}'),
        ("lone surrogate value", "POST", web, {}, '{"variables": {"v": "\\ud800"}}'),
        ("lone surrogate key", "POST", web, {}, '{"variables": {"\\udfff": 1}}'),
        ("lone surrogate fact", "POST", "/v1/classified/nodes/web9.example.com", {},
         '{"fact": {"role": "\\ud800"}}'),
        ("lone surrogate runtime", "PUT", "/nodes/web1.example.com/runtime", {},
         '{"fact": {"role": "\\ud800"}}'),
        ("NaN in configuration", "PUT", "/nodes/web1.example.com/configuration", {},
         '{"parameters": {"x": NaN}}'),
        ("NEL in a name", "POST", web, {}, nel_name),
        ("10,003-character name", "POST", "/v1/groups", {},
         json.dumps({"name": "n" * 10_003, "parent": ROOT_ID})),
        ("990 KB regex in validate", "POST", "/v1/validate/group", {},
         json.dumps({"name": "r", "parent": ROOT_ID, "rule": ["~", "name", "a" * 990_000]})),
        ("lookahead regex", "POST", web, {}, '{"rule": ["~", "name", "(?=web)"]}'),
        ("empty If-Match", "POST", web, {"If-Match": ""}, '{"description": "x"}'),
        ("malformed If-Match", "POST", web, {"If-Match": "abc"}, '{"description": "x"}'),
        ("unquoted If-Match list", "POST", web, {"If-Match": '"a", b'}, '{"description": "x"}'),
        ("overlong node name", "POST", "/v1/classified/nodes/" + "n" * 10_003, {}, "{}"),
        ("NEL in a node name", "POST", "/v1/classified/nodes/web%C2%85x", {}, "{}"),
        ("huge body", "POST", web, {}, '{"description": "' + "x" * 1_100_000 + '"}'),
        ("not JSON", "POST", web, {}, "{'a': 1}"),
        ("bad page size", "GET", "/v1/nodes?limit=-1", {}, ""),
    ]


def test_hostile_bodies_get_4xx_and_leave_every_file_loadable(inventory, tmp_path):
    files_before = {p: p.read_bytes() for p in inventory.rglob("*.yml")}
    with running_server_process(inventory, tmp_path / "state.sqlite3") as (base, server), \
            client(base) as http:
        for name, method, path, headers, body in _hostile_requests():
            # The server's CPU time, not the wall clock: a busy machine stretches the latter.
            started = cpu_seconds(server.pid)
            response = http.request(method, path, content=body.encode("utf-8"),
                                    headers={"Content-Type": "application/json", **headers})
            assert 400 <= response.status_code < 500, (name, response.status_code,
                                                       response.text[:500])
            assert set(response.json()) == {"kind", "msg", "details"}, name
            assert cpu_seconds(server.pid) - started < 5, name
        assert {p: p.read_bytes() for p in inventory.rglob("*.yml")} == files_before
        assert http.get("/v1/nodes").status_code == 200
        assert http.get(f"/v1/groups/{WEB_ID}").status_code == 200
    assert_inventory_loads(inventory)


def test_writes_that_empty_a_commented_mapping_leave_valid_yaml(inventory, tmp_path):
    """Each of these once wrote a comment followed by `{}` at column 0."""
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        assert http.post(f"/v1/groups/{WEB_ID}",
                         json={"classes": {"nginx": None}}).status_code == 200
        assert http.post(f"/v1/groups/{ROOT_ID}",
                         json={"variables": {"support_team": None}}).status_code == 200
        assert http.put(f"/v1/groups/{WEB_ID}",
                        json={"name": "Web servers", "parent": ROOT_ID}).status_code == 201
        node = "/nodes/web1.example.com/configuration"
        config = http.get(node).json()
        config["parameters"] = {"nginx": {}}
        assert http.put(node, json=config).status_code == 200, http.put(node, json=config).text
        assert http.get(f"/v1/groups/{WEB_ID}").json()["classes"] == {}
        assert http.get(node).json()["parameters"] == {"nginx": {}}
        response = http.post("/v1/classified/nodes/web1.example.com",
                             json={"fact": {"role": "web"}})
        assert response.status_code == 200, response.text
    assert_inventory_loads(inventory)
    web = yaml.safe_load((inventory / "groups" / "web-servers.yml").read_text())
    assert web["classes"] == {} and web["name"] == "Web servers"


def test_head_gives_the_etag_that_a_conditional_write_needs(inventory, tmp_path):
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        for path in (f"/v1/groups/{WEB_ID}", "/nodes/web1.example.com/configuration"):
            head, get = http.head(path), http.get(path)
            assert head.status_code == 200 and head.content == b""
            assert head.headers["etag"] == get.headers["etag"]
        assert http.head("/nodes/web1.example.com").status_code == 200
        etag = http.head(f"/v1/groups/{WEB_ID}").headers["etag"]
        assert http.post(f"/v1/groups/{WEB_ID}", json={"description": "one"},
                         headers={"If-Match": etag}).status_code == 200
        assert http.post(f"/v1/groups/{WEB_ID}", json={"description": "two"},
                         headers={"If-Match": etag}).status_code == 409


def test_a_same_size_edit_that_restores_the_mtime_is_seen(inventory, tmp_path):
    """`cp -p` and `rsync -a` keep size and mtime; the serial must still change."""
    web = inventory / "groups" / "web-servers.yml"
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        before = http.get(f"/v1/groups/{WEB_ID}").json()
        stat = web.stat()
        web.write_text(web.read_text().replace("http_cache: true", "http_cache: nope"))
        os.utime(web, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert web.stat().st_size == stat.st_size
        after = http.get(f"/v1/groups/{WEB_ID}").json()
        assert after["variables"]["http_cache"] == "nope"
        assert after["serial_number"] != before["serial_number"]
        stale = http.post(f"/v1/groups/{WEB_ID}", json={"description": "x",
                                                        "serial_number": before["serial_number"]})
        assert stale.status_code == 409


def test_anonymous_classification_records_nothing(inventory, tmp_path):
    with running_server(inventory, tmp_path / "state.sqlite3", token=None) as base, \
            client(base, token=None) as http:
        response = http.post("/v1/classified/nodes/web1.example.com", json={"fact": {"a": "b"}})
        assert response.status_code == 200, response.text
        assert http.get("/nodes/web1.example.com/runtime").status_code == 404
        assert http.get("/v1/nodes").json() == []
    with running_server(inventory, tmp_path / "state2.sqlite3", "--record-anonymous-check-ins",
                        token=None) as base, client(base, token=None) as http:
        assert http.post("/v1/classified/nodes/web1.example.com",
                         json={"fact": {"a": "b"}}).status_code == 200
        assert http.get("/nodes/web1.example.com/runtime").json()["fact"] == {"a": "b"}
    with running_server(inventory, tmp_path / "state3.sqlite3", "--open-reads") as base, \
            client(base, token="not-the-token") as anonymous, client(base) as http:
        assert anonymous.post("/v1/classified/nodes/web1.example.com",
                              json={"fact": {"a": "c"}}).status_code == 200
        assert http.get("/nodes/web1.example.com/runtime").status_code == 404
        assert http.post("/v1/classified/nodes/web1.example.com",
                         json={"fact": {"a": "d"}}).status_code == 200
        assert http.get("/nodes/web1.example.com/runtime").json()["fact"] == {"a": "d"}


def test_check_in_history_is_bounded_and_nodes_are_paged(inventory, tmp_path):
    with running_server(inventory, tmp_path / "state.sqlite3", "--check-in-history", "3"
                        ) as base, client(base) as http:
        for number in range(5):
            for node in ("web1.example.com", "web2.example.com", "db1.example.com"):
                assert http.post(f"/v1/classified/nodes/{node}",
                                 json={"fact": {"n": str(number)}}).status_code == 200
        first = http.get("/v1/nodes", params={"limit": 2})
        assert first.headers["x-total-count"] == "3"
        assert [n["name"] for n in first.json()] == ["db1.example.com", "web1.example.com"]
        assert all(len(n["check_ins"]) == 3 for n in first.json())
        assert 'offset=2>; rel="next"' in first.headers["link"]
        second = http.get("/v1/nodes", params={"limit": 2, "offset": 2})
        assert [n["name"] for n in second.json()] == ["web2.example.com"]
        assert "link" not in second.headers


@pytest.mark.parametrize(("write", "answer"), [
    ({"url": f"/v1/groups/{WEB_ID}", "json": {"description": "after the lock"}}, 200),
    ({"url": f"/v1/groups/{WEB_ID}/pin", "json": {"nodes": ["web9.example.com"]}}, 204),
], ids=["group-update", "pin"])
def test_a_held_lock_delays_only_writes(inventory, tmp_path, write, answer):
    """An external holder of the lock file: reads and classifications go on while a write
    waits for the lock, and the write goes through once the lock is released.

    No wall clock: the server holding the lock file open shows that the write is waiting (it
    opens the file to wait and closes it when it gives up after LOCK_TIMEOUT_SECONDS), so reads
    that return while it is still open did not wait for the write."""
    lock_path = inventory / ".reclass-ng.lock"
    with running_server_process(inventory, tmp_path / "state.sqlite3") as (base, server), \
            client(base) as http:
        # Taken once the server has started (its start-up cleanup waits for the lock too).
        assert http.get("/v1/groups").status_code == 200
        lock = open(lock_path, "a")  # noqa: SIM115 (held across threads)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        statuses: list[int] = []
        writer = threading.Thread(target=lambda: statuses.append(
            client(base).post(**write).status_code))
        writer.start()
        deadline = time.monotonic() + 60
        while not has_open(server.pid, lock_path):
            assert time.monotonic() < deadline and not statuses, statuses
            time.sleep(0.01)
        for _ in range(2):
            assert http.get(f"/v1/groups/{WEB_ID}").status_code == 200
            assert http.post("/v1/classified/nodes/web1.example.com").status_code == 200
        assert has_open(server.pid, lock_path) and not statuses, statuses
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        lock.close()
        writer.join(timeout=60)
        assert statuses == [answer]


def test_a_catastrophic_regex_does_not_stall_classification(inventory, tmp_path):
    with running_server_process(inventory, tmp_path / "state.sqlite3") as (base, server), \
            client(base) as http:
        response = http.post(f"/v1/groups/{WEB_ID}", json={"rule": ["~", ["fact", "f"],
                                                                     "(a+)+$"]})
        assert response.status_code == 200, response.text
        # A backtracking engine needs about 2**26 steps (seconds of CPU) for this text.
        started = cpu_seconds(server.pid)
        response = http.post("/v1/classified/nodes/web1.example.com",
                             json={"fact": {"f": "a" * 26 + "!"}})
        assert response.status_code == 200
        assert cpu_seconds(server.pid) - started < 2


def test_a_symlinked_lock_file_is_not_followed(inventory, tmp_path):
    outside = tmp_path / "outside.lock"
    (inventory / ".reclass-ng.lock").symlink_to(outside)
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        response = http.post(f"/v1/groups/{WEB_ID}", json={"description": "x"})
        assert response.status_code == 503 and response.json()["kind"] == "inventory-locked"
    assert not outside.exists()


def test_half_sent_requests_are_cut_off_and_connections_capped(inventory, tmp_path):
    with running_server(inventory, tmp_path / "state.sqlite3", "--header-timeout", "1",
                        "--max-connections", "8") as base, client(base) as http:
        port = int(base.rsplit(":", 1)[1])
        sockets = []
        for _ in range(30):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /v1/groups HTTP/1.1\r\nHost: x\r\n")  # never finished
            sockets.append(sock)
        # Each recv returns once the server closes (or resets) the connection: after the 1 s
        # header timeout, or at once past the connection cap. A server that keeps a half-sent
        # request open would make it time out instead, which counts as not closed.
        closed = 0
        for sock in sockets:
            sock.settimeout(60)
            try:
                closed += sock.recv(100) == b""
            except TimeoutError:
                pass
            except OSError:
                closed += 1
            sock.close()
        assert closed == len(sockets)
        assert http.get("/v1/groups").status_code == 200


def _serve(inventory: Path, state: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A server to kill: started and waited for, but stopped by the test itself."""
    return start_server_process(serve_command(inventory, state), server_log(state),
                                env={**os.environ, "RECLASS_NG_TOKEN": TOKEN})


def test_kill_9_during_writes_leaves_whole_files(inventory, tmp_path):
    for round_number in range(3):
        process, base = _serve(inventory, tmp_path / "state.sqlite3")
        try:
            stop = threading.Event()
            landed: list[int] = []

            def write(index: int, stop: threading.Event = stop, landed: list[int] = landed,
                      round_number: int = round_number, base: str = base) -> None:
                with client(base) as http:
                    number = 0
                    while not stop.is_set():
                        number += 1
                        try:
                            response = http.post(f"/v1/groups/{WEB_ID}", json={
                                "description": f"round {round_number} writer {index} #{number}",
                                "variables": {"blob": "x" * 20_000}})
                        except httpx.TransportError:
                            return
                        landed.append(response.status_code)

            writers = [threading.Thread(target=write, args=(i,)) for i in range(4)]
            for writer in writers:
                writer.start()
            # Killed while the writers are busy: after some writes have been answered (a
            # counted number, not a sleep, which a busy machine could spend before the first).
            deadline = time.monotonic() + 60
            while len(landed) < 4 + 4 * round_number:
                assert time.monotonic() < deadline, f"only {len(landed)} writes answered"
                time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            process.wait()
            stop.set()
            for writer in writers:
                writer.join(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        groups, problems = read_group_files(inventory)
        assert not problems, problems
    # A new server cleans what the killed writes left behind.
    process, base = _serve(inventory, tmp_path / "state.sqlite3")
    try:
        with client(base) as http:
            assert http.post(f"/v1/groups/{WEB_ID}", json={"description": "done"}
                             ).status_code == 200
    finally:
        stop_server_process(process)
    assert_inventory_loads(inventory)


def test_a_hostile_group_file_is_an_error_answer_not_a_crash(inventory, tmp_path):
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        hostile = inventory / "groups" / "deep.yml"
        hostile.write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
        response = http.post("/v1/classified/nodes/web1.example.com")
        assert response.status_code == 500
        assert "nests deeper than" in response.text and "groups/deep.yml:1" in response.text
        hostile.unlink()
        assert http.post("/v1/classified/nodes/web1.example.com").status_code == 200


def test_sigterm_stops_the_server_when_a_client_stopped_reading(tmp_path):
    # uvicorn waits for every connection to finish its response before it stops: a client
    # that stopped reading (a stalled proxy, a paused pager) held the server up for ever after
    # SIGTERM. Requests in progress now get SHUTDOWN_GRACE_SECONDS, then they are cut.
    from reclass_ng.cli.http_serving import SHUTDOWN_GRACE_SECONDS

    inventory = tmp_path / "inventory"
    (inventory / "nodes").mkdir(parents=True)
    (inventory / "classes").mkdir()
    # A response larger than what the sockets hold on their way (4 MiB each at most here).
    (inventory / "nodes" / "big.yml").write_text(
        "parameters:\n  notes:\n" + "".join(f"    - {'x' * 100_000}\n" for _ in range(120)))
    state, log = tmp_path / "state.sqlite3", tmp_path / "server.log"
    process, base = start_server_process(serve_command(inventory, state), log,
                                         env={**os.environ, "RECLASS_NG_TOKEN": TOKEN})
    try:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        with socket.socket() as stalled:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stalled.settimeout(30)
            stalled.connect((host, int(port)))
            stalled.sendall(f"GET /nodes/big HTTP/1.1\r\nHost: {host}\r\n"
                            f"X-Authentication: {TOKEN}\r\n\r\n".encode())
            assert stalled.recv(12) == b"HTTP/1.1 200"  # and reads nothing more
            time.sleep(0.5)
            process.send_signal(signal.SIGTERM)
            started = time.monotonic()
            try:
                process.wait(timeout=SHUTDOWN_GRACE_SECONDS + 20)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still serving {SHUTDOWN_GRACE_SECONDS + 20} s after SIGTERM:\n"
                            + log.read_text(errors="replace"))
            assert time.monotonic() - started >= SHUTDOWN_GRACE_SECONDS - 1  # a grace it had
            assert process.returncode == 0, log.read_text(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stopped_server_exits_0(inventory, tmp_path, stop):
    # doc/usage.rst: serve exits 0 when stopped by Ctrl-C or SIGTERM. uvicorn raises SIGTERM
    # again once it has stopped, so that the process died of it (-15) before serve handled it.
    process, base = _serve(inventory, tmp_path / "state.sqlite3")
    try:
        with client(base) as http:
            assert http.get("/v1/groups").status_code == 200
        process.send_signal(stop)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
