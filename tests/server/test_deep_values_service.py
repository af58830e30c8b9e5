"""Values nested deep through references, through the service: classifying a node whose
group variables nest past resolve.MAX_RENDERED_DEPTH through references, or walk down
thousands of levels through them (resolve.MAX_NESTING_IN_PROGRESS), is a 422 naming the
node and the reason, never a 500 or a crashed server (doc/performance.rst, "Rendered-depth
limit"); other nodes still classify."""

from __future__ import annotations

import yaml
from server_helpers import TOKEN, assert_error, client, copy_inventory, running_server

from reclass_ng.resolve import MAX_NESTING_IN_PROGRESS, MAX_RENDERED_DEPTH


def nested_variables(levels: list[int]) -> dict:
    """p0, p1, ...: p<i> is levels[i] nested lists around `${p<i+1>}` (the last around
    `end`)."""
    variables = {}
    for i, depth in enumerate(levels):
        value: object = f"${{p{i + 1}}}" if i + 1 < len(levels) else "end"
        for _ in range(depth):
            value = [value]
        variables[f"p{i}"] = value
    return variables


def test_classifying_a_node_with_values_too_deep_is_a_422(tmp_path):
    inventory = copy_inventory(tmp_path / "inventory")
    web = inventory / "groups" / "web-servers.yml"
    data = yaml.safe_load(web.read_text())
    with running_server(inventory, tmp_path / "state.sqlite3", "--open-reads") as base, \
            client(base, token=TOKEN) as http:
        cases = {
            # p0 and p1's lists, under p0's key: one level past the limit
            f"nest deeper than {MAX_RENDERED_DEPTH} levels": [128, MAX_RENDERED_DEPTH - 128],
            # 40 x 150 levels through references
            f"more than {MAX_NESTING_IN_PROGRESS:,} levels": [150] * 40,
        }
        for reason, levels in cases.items():
            data["variables"] = nested_variables(levels)
            web.write_text(yaml.safe_dump(data))
            response = http.post("/v1/classified/nodes/web1.example.com",
                                 json={"fact": {"role": "web"}})
            body = assert_error(response, 422, "node-render-error")
            assert reason in body["msg"] and "web1.example.com" in body["msg"], body
        # The server still works: another node the group does not classify.
        response = http.post("/v1/classified/nodes/db1.staging.example.com",
                             json={"fact": {"role": "db"}})
        assert response.status_code == 200, response.text
