"""The service keeps one live inventory (reclass_ng.server.inventory_state): edits of class and
node files show in the next classification, through a real `reclass-ng serve` on loopback."""

from __future__ import annotations

import os

import pytest
from server_helpers import (
    TOKEN,
    client,
    copy_inventory,
    running_server,
    serve_command,
    server_log,
)
from server_process import server_process

WEB1 = {"fact": {"role": "web"}, "trusted": {"certname": "web1.example.com"}}


def public_hostname(http) -> str:
    response = http.post("/v1/classified/nodes/web1.example.com", json=WEB1)
    assert response.status_code == 200, response.text
    return response.json()["parameters"]["site"]["public_hostname"]


def test_a_same_size_class_edit_that_restores_the_mtime_is_classified(tmp_path):
    """`cp -p` and `rsync -a` keep size and mtime; the rendered classes must still change."""
    inventory = copy_inventory(tmp_path / "inventory")
    production = inventory / "classes" / "env" / "production.yml"
    with running_server(inventory, tmp_path / "state.sqlite3") as base, client(base) as http:
        assert public_hostname(http).startswith("shop.")
        for before, after in (("shop.", "shoq."), ("shoq.", "shop.")):
            stat = production.stat()
            production.write_text(production.read_text().replace(before, after))
            os.utime(production, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            assert production.stat().st_size == stat.st_size
            assert public_hostname(http).startswith(after)


SERVER_MEMORY_LIMIT = 1024 * 1024 * 1024  # address space: a read without end fails fast


@pytest.mark.parametrize("case", ["dev-urandom", "fifo"])
def test_an_unreadable_class_file_is_an_error_answer_until_it_is_fixed(tmp_path, case):
    """A class file a `git pull` made a link to /dev/urandom or a FIFO: each request that
    needs it gets the error naming it (the service's digests read as the loader does, never
    without end, never blocking), and once the file is fixed requests work again."""
    inventory = copy_inventory(tmp_path / "inventory")
    production = inventory / "classes" / "env" / "production.yml"
    original = production.read_bytes()
    state_db = tmp_path / "state.sqlite3"
    command = ["prlimit", f"--as={SERVER_MEMORY_LIMIT}", "--",
               *serve_command(inventory, state_db)]
    env = {**{k: v for k, v in os.environ.items() if k != "RECLASS_NG_TOKEN"},
           "RECLASS_NG_TOKEN": TOKEN}
    with server_process(command, server_log(state_db), env=env) as (_process, base), \
            client(base) as http:
        assert public_hostname(http).startswith("shop.")
        production.unlink()
        if case == "fifo":
            os.mkfifo(production)
        else:
            production.symlink_to("/dev/urandom")
        for _ in range(2):  # the second is not stuck behind the first
            response = http.post("/v1/classified/nodes/web1.example.com", json=WEB1)
            assert response.status_code == 422, response.text
            assert response.json()["kind"] == "node-render-error"
            assert "production.yml: not a regular file" in response.json()["msg"]
        production.unlink()
        production.write_bytes(original)
        assert public_hostname(http).startswith("shop.")


def test_a_release_switch_of_the_whole_inventory_is_classified(tmp_path):
    """`-b /srv/current` with `current -> releases/r1` switched to r2 (`ln -sfn`): the
    service serves the release the path names now, not the one it named at start."""
    first = copy_inventory(tmp_path / "releases" / "r1")
    second = copy_inventory(tmp_path / "releases" / "r2")
    production = second / "classes" / "env" / "production.yml"
    production.write_text(production.read_text().replace("shop.", "shoq."))
    current = tmp_path / "current"
    current.symlink_to(first, target_is_directory=True)
    with running_server(current, tmp_path / "state.sqlite3") as base, client(base) as http:
        assert public_hostname(http).startswith("shop.")
        switched = tmp_path / "current.new"
        switched.symlink_to(second, target_is_directory=True)
        os.replace(switched, current)
        assert public_hostname(http).startswith("shoq.")
