"""The explorer's pages over HTTP (the service's ASGI app in-process), and its small helpers."""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from reclass_ng.explorer.catalogue import NodeCatalogue, NodeFilter, page_of
from reclass_ng.explorer.group_pages import rule_text
from reclass_ng.explorer.svg_graph import include_graph_svg
from reclass_ng.server import ServerConfig, create_app

with warnings.catch_warnings():  # starlette's own note about its httpx-based client
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

EXAMPLE = Path(__file__).resolve().parents[2] / "inventory-example"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of inventory-example: the service's start-up takes the inventory's write lock,
    which leaves a lock file behind, and the repository's copy must stay as committed."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "inventory-example"))


def app_client(inventory: Path, state: Path, **config: object) -> TestClient:
    return TestClient(create_app(ServerConfig(inventory_dir=str(inventory),
                                              state_path=str(state), **config)))


@pytest.fixture
def hostile(make_inventory, tmp_path: Path) -> TestClient:
    """An inventory whose values and class names look like HTML."""
    inventory = make_inventory({
        "classes/x.yml": "parameters:\n  motd: '<script>alert(1)</script>'\n"
                         "  link: '\"><img src=x onerror=alert(2)>'\n",
        "nodes/n1.yml": "classes:\n  - x\n",
    })
    return app_client(inventory, tmp_path / "state.sqlite3")


def test_inventory_text_is_escaped(hostile: TestClient) -> None:
    page = hostile.get("/ui/nodes/n1").text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page
    history = hostile.get("/ui/nodes/n1/history", params={"path": "motd"}).text
    assert "<script>alert" not in history


def test_bad_requests_get_pages_not_tracebacks(example: Path, tmp_path: Path) -> None:
    with app_client(example, tmp_path / "s.sqlite3") as http:
        missing = http.get("/ui/nodes/no-such-node")
        assert missing.status_code == 404
        assert "No node 'no-such-node'" in html.unescape(missing.text)
        assert http.get("/ui/classes/no.such.class").status_code == 404
        assert http.get("/ui/static/../app.py").status_code == 404
        bad_path = http.get("/ui/nodes/web1.example.com/history", params={"path": "nginx:nope"})
        assert bad_path.status_code == 200
        assert "has no parameter 'nginx:nope'" in html.unescape(bad_path.text)
        bad_revision = http.get("/ui/diff", params={"from": "no-such-revision"})
        assert bad_revision.status_code == 200 and 'class="error' in bad_revision.text
        assert http.get("/ui/").status_code == 200  # redirected to the node list
        assert http.get("/ui/static/explorer.js").headers["content-type"].startswith(
            "text/javascript")


def test_origins_of_a_mapping_as_json(example: Path, tmp_path: Path) -> None:
    with app_client(example, tmp_path / "s.sqlite3") as http:
        found = http.get("/ui/nodes/web1.example.com/origins", params={"path": "nginx"})
        assert found.status_code == 200
        assert found.json() == {
            "nginx:worker_processes": "role.web — classes/role/web.yml:6",
            "nginx:listen_port": "service.nginx — classes/service/nginx.yml:7",
            "nginx:server_name": "service.nginx — classes/service/nginx.yml:9"}
        page = http.get("/ui/nodes/web1.example.com").text
        assert 'data-origins="/ui/nodes/web1.example.com/origins?path=nginx"' in page
        missing = http.get("/ui/nodes/nope/origins", params={"path": "nginx"})
        assert missing.status_code == 422 and "nope" in missing.json()["msg"]


def test_reads_need_the_token_when_the_api_reads_do(example: Path, tmp_path: Path) -> None:
    with app_client(example, tmp_path / "s.sqlite3", token="secret-token-123") as http:
        refused = http.get("/ui/nodes")
        assert refused.status_code == 401 and "Authentication required" in refused.text
        allowed = http.get("/ui/nodes", headers={"Authorization": "Bearer secret-token-123"})
        assert allowed.status_code == 200


def test_catalogue_filters_and_pages(load_inventory) -> None:
    files = {f"nodes/n{i:02}.yml": f"classes: [{'a' if i % 2 else 'b'}]\nparameters:\n"
                                   f"  port: {8000 + i % 3}\n" for i in range(60)}
    files.update({"classes/a.yml": "applications: [web]\n", "classes/b.yml": ""})
    inventory = load_inventory(files)
    catalogue = NodeCatalogue.build(inventory, None, lambda name: None)
    odd = catalogue.select(NodeFilter(class_name="a"))
    assert [n.name for n in odd][:3] == ["n01", "n03", "n05"] and len(odd) == 30
    assert len(catalogue.select(NodeFilter(application="web"))) == 30
    assert len(catalogue.select(NodeFilter(parameter="port=8001"))) == 20
    assert len(catalogue.select(NodeFilter(parameter="port"))) == 60
    assert catalogue.select(NodeFilter(parameter="nope")) == []
    assert [n.name for n in catalogue.select(NodeFilter(text="N5"))] == [f"n5{i}" for i in
                                                                      range(10)]
    shown, current, pages = page_of(catalogue.nodes, 2, size=50)
    assert (len(shown), current, pages) == (10, 2, 2)
    assert page_of(catalogue.nodes, 99, size=50)[1] == 2


def test_rule_text_reads_like_an_expression() -> None:
    rule = ["and", ["~", "name", "^web\\d+"],
            ["or", ["=", ["fact", "os", "family"], "Debian"], ["not", [">", "x", "3"]]]]
    assert rule_text(rule) == ('name ~ "^web\\d+" and (fact.os.family = "Debian" or '
                               'not (x > "3"))')


def test_include_graph_orders_rows_and_links_boxes() -> None:
    layers = [["top"], ["mid"], ["z", "a"]]
    edges = [("top", "mid"), ("mid", "a"), ("mid", "z")]
    svg = include_graph_svg(layers, edges, "mid", lambda n: f"/ui/classes/{n}")
    assert svg.count('class="edge"') == 3
    assert svg.index('data-class="a"') < svg.index('data-class="z"')
    assert 'class="graph-node focus" data-class="mid"' in svg
    assert 'href="/ui/classes/top"' in svg


def test_include_graph_counts_what_does_not_fit() -> None:
    wide = [f"cluster.c{i:02}.openstack.control" for i in range(30)]
    svg = include_graph_svg([wide, ["focus"]], [(w, "focus") for w in wide], "focus",
                            lambda n: f"/ui/classes/{n}")
    drawn = svg.count('class="graph-node class"')
    assert 0 < drawn < 30
    assert f"+{30 - drawn} more" in svg
    assert svg.count('class="edge"') == drawn


def test_origin_lines_read_once_per_file_match_explain(load_inventory) -> None:
    """The one-read-per-file line table gives the lines NodeTrace.line_of (one parse per key)
    gives, for every write of every node of the example inventory and of prefixed keys."""
    from reclass_ng import load
    from reclass_ng.explorer.provenance import NodeExplanation

    inventories = [load(str(EXAMPLE)), load_inventory({
        "classes/a.yml": "parameters:\n  ~x:\n    y: 1\n  =z: 2\n  l:\n    - 1\n",
        "classes/b.yml": "classes: [a]\nparameters:\n  x:\n    y: 3\n  l:\n    - 2\n",
        "nodes/n.yml": "classes: [b]\nparameters:\n  5: five\n",
    })]
    compared = 0
    for inventory in inventories:
        for node in inventory.node_names:
            prov = NodeExplanation(inventory, node)
            for leaf in prov.leaves():
                for contribution in prov.trace.trace(leaf.keys):
                    path = contribution.file
                    keys = ("parameters", *contribution.key)
                    assert prov.line_of(path, keys) == prov.trace.line_of(path, keys), keys
                    compared += 1
    assert compared > 100


def test_exports_tree_and_its_origins(make_inventory, tmp_path: Path) -> None:
    inventory = make_inventory({
        "classes/web.yml": "exports:\n  web:\n    port: 80\n    host: ${name}\n",
        "nodes/n1.yml": "classes: [web]\nparameters:\n  name: n1\n",
    })
    with app_client(inventory, tmp_path / "s.sqlite3") as http:
        page = http.get("/ui/nodes/n1").text
        assert 'id="exports"' in page
        assert 'data-origins="/ui/nodes/n1/origins?path=web&amp;section=exports"' in page
        origins = http.get("/ui/nodes/n1/origins", params={"path": "web", "section": "exports"})
        assert origins.json() == {"web:port": "web — classes/web.yml:3",
                                  "web:host": "web — classes/web.yml:4"}
        history = http.get("/ui/nodes/n1/history", params={"path": "web:host",
                                                           "section": "exports"})
        assert "${name}" in history.text and "classes/web.yml:4" in history.text


def test_ui_command_refuses_bad_arguments_without_a_traceback(example: Path,
                                                             tmp_path: Path) -> None:
    def ui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", "ui", *args],
                              capture_output=True, text=True, timeout=60, check=False)

    missing = ui("-b", str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "does not exist" in missing.stderr
    bad_port = ui("-b", str(example), "--port", "70000", "--state-db", str(tmp_path / "s"))
    assert bad_port.returncode != 0 and "--port" in bad_port.stderr
    assert "Traceback" not in missing.stderr + bad_port.stderr


def explorer_group_members(page_html: str) -> dict[str, set[str]]:
    """Group id -> the nodes the groups page lists as matching it."""
    import re

    found = {}
    for match in re.finditer(r'id="group-([^"]+)".*?<details class="matched"[^>]*><summary>'
                             r"(\d+) matching nodes</summary><ul>(.*?)</ul></details>",
                             page_html, re.DOTALL):
        names = set(re.findall(r'class="node-link" href="[^"]*">([^<]+)</a>', match[3]))
        assert len(names) == int(match[2])
        found[match[1]] = {html.unescape(name) for name in names}
    return found


def test_group_membership_is_what_classification_returns(example: Path, tmp_path: Path) -> None:
    """For nodes without stored facts the page matches rules with the trusted data Puppet
    always sends (certname = the node's name), as `reclass-ng classify` and the API do."""
    import json

    with app_client(example, tmp_path / "s.sqlite3") as http:
        members = explorer_group_members(http.get("/ui/groups").text)
    assert members["c0e066b3-4b61-4d79-8884-b465aa297ec3"]  # Production: rule on certname
    nodes = sorted(path.stem for path in (example / "nodes").rglob("*.yml"))
    for node in nodes:
        classified = subprocess.run(
            [str(Path(sys.executable).parent / "reclass-ng"), "classify", "-b", str(example),
             node, "--groups-only", "-o", "json"], capture_output=True, text=True, timeout=120)
        assert classified.returncode == 0, classified.stderr
        on_page = {group for group, names in members.items() if node in names}
        assert on_page == set(json.loads(classified.stdout)["groups"]), node


def test_the_environment_filter_keeps_failing_nodes(example: Path, tmp_path: Path) -> None:
    nginx = example / "classes" / "service" / "nginx.yml"
    nginx.write_text(nginx.read_text().replace("${site:http_port}", "${site:http_prot}"))
    with app_client(example, tmp_path / "s.sqlite3") as http:
        listed = html.unescape(http.get("/ui/nodes", params={"environment": "staging"}).text)
    assert "web1.staging.example.com" in listed and "db1.staging.example.com" in listed
    assert listed.count("fails to render</span>") == 1  # web1.staging, shown as failing
    assert "web2.example.com" not in listed  # production
