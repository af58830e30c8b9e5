"""The explorer in a real headless Chromium, against inventory-example: the node list and its
search, a node's values and their origins (checked against `reclass-ng explain`), a class's
include graph, the groups with stored facts, and a diff between two git revisions (checked
against `reclass-ng diff`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from browser_helpers import explorer_ui
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait
from server_helpers import TOKEN, client, running_server

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", *args],
                          capture_output=True, text=True, check=False)


def wait_for(driver, css: str, timeout: float = 60):
    return WebDriverWait(driver, timeout).until(
        EC.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_for_new_page(driver, css: str, navigate) -> None:
    """Run `navigate()` (a submit or a click that loads another page), then wait until the
    current page's `css` element is gone and the new page's is there: the old node table
    matches the same selector, so waiting for presence alone could read the old rows."""
    old = driver.find_element(By.CSS_SELECTOR, css)
    navigate()
    WebDriverWait(driver, 60).until(EC.staleness_of(old))
    wait_for(driver, css)


def rows(driver) -> list[str]:
    return [r.get_attribute("data-node") for r in
            driver.find_elements(By.CSS_SELECTOR, "table.nodes tbody tr")]


@pytest.fixture(scope="module")
def ui(example_repo: Path, tmp_path_factory: pytest.TempPathFactory):
    """`reclass-ng ui -b INVENTORY`, as a user starts it."""
    state = tmp_path_factory.mktemp("explorer-state") / "observed.sqlite3"
    with explorer_ui(example_repo, state) as url:
        yield url


@pytest.fixture(scope="module")
def served(example_repo: Path, tmp_path_factory: pytest.TempPathFactory):
    """`reclass-ng serve` with a token (to store facts) and open reads: the explorer at /ui/."""
    state = tmp_path_factory.mktemp("explorer-served") / "observed.sqlite3"
    with running_server(example_repo, state, "--open-reads") as base:
        yield base


def test_node_list_search_and_open(browser, ui: str, doc_screenshot) -> None:
    browser.get(ui)
    wait_for(browser, "table.nodes")
    assert browser.current_url.endswith("/ui/nodes")
    assert len(rows(browser)) == 6
    doc_screenshot("nodes")
    search = browser.find_element(By.ID, "filter-q")
    search.send_keys("staging")
    wait_for_new_page(browser, "table.nodes", search.submit)
    assert rows(browser) == ["db1.staging.example.com", "web1.staging.example.com"]
    Select(browser.find_element(By.ID, "filter-environment")).select_by_visible_text("staging")
    browser.find_element(By.ID, "filter-class").send_keys("role.web")
    wait_for_new_page(browser, "table.nodes",
                      browser.find_element(By.CSS_SELECTOR, "form.filters button").click)
    assert rows(browser) == ["web1.staging.example.com"]
    browser.find_element(By.LINK_TEXT, "web1.staging.example.com").click()
    assert wait_for(browser, "h1 .node-name").text == "web1.staging.example.com"


def test_node_list_filters_by_parameter_value(browser, ui: str) -> None:
    browser.get(ui + "nodes?parameter=nginx:worker_processes%3D6")
    wait_for(browser, "#node-count")
    assert rows(browser) == ["web1.example.com", "web1.staging.example.com"]  # web2 has 8
    browser.get(ui + "nodes?application=postgresql")
    wait_for(browser, "#node-count")
    assert rows(browser) == ["db1.example.com", "db1.staging.example.com"]


def _final_place(explain_report: dict) -> str:
    final = [c for c in explain_report["contributions"] if c["final"]]
    return f"{final[-1]['source']} — {final[-1]['file']}:{final[-1]['line']}"


def test_value_origin_and_history_match_explain(browser, ui: str, example_repo: Path,
                                                doc_screenshot) -> None:
    explained = cli("explain", "-b", str(example_repo), "-o", "json", "web1.example.com",
                    "nginx:worker_processes")
    assert explained.returncode == 0, explained.stderr
    report = json.loads(explained.stdout)
    assert _final_place(report) == "role.web — classes/role/web.yml:6"

    browser.get(ui + "nodes/web1.example.com")
    assert wait_for(browser, ".node-file").text == "nodes/production/web1.example.com.yml"
    leaf = wait_for(browser, "li.leaf[data-path='nginx:worker_processes']")
    assert not leaf.is_displayed()  # folded until its mapping is expanded
    browser.find_element(By.CSS_SELECTOR, "details[data-path='nginx'] > summary").click()
    assert leaf.is_displayed()
    assert leaf.find_element(By.CSS_SELECTOR, ".value").text == "6"
    origin = leaf.find_element(By.CSS_SELECTOR, "a.origin")
    WebDriverWait(browser, 60).until(lambda _: "pending" not in origin.get_attribute("class"))
    assert origin.text == _final_place(report)
    origin.click()
    history = wait_for(browser, "#history .history-report[data-path='nginx:worker_processes']")
    writes = history.find_elements(By.CSS_SELECTOR, "ol.writes > li")
    assert len(writes) == len(report["contributions"]) == 2
    assert "classes/service/nginx.yml:6" in writes[0].text
    assert "overridden by role.web (classes/role/web.yml:6)" in writes[0].text
    assert "in the final value" in writes[1].text
    doc_screenshot("node")

    # A value written through a reference shows the reference chain.
    browser.find_element(By.CSS_SELECTOR,
                         "li.leaf[data-path='nginx:server_name'] a.origin").click()
    history = wait_for(browser, "#history .history-report[data-path='nginx:server_name']")
    references = history.find_elements(By.CSS_SELECTOR, ".reference")
    assert "${site:public_hostname}" in references[0].text
    assert "shop.${site:domain}" in references[0].text  # the chain goes on to env.production
    assert any("${site:domain}" in r.text for r in references[1:])

    # Classes with the include chain of each, as `reclass-ng explain --class` gives it.
    chain = cli("explain", "-b", str(example_repo), "-o", "json", "web1.example.com",
                "--class", "service.nginx")
    links = json.loads(chain.stdout)["chain"]
    row = browser.find_element(By.XPATH, "//section[@id='classes']//tr[td[2]/a[text()="
                                         "'service.nginx']]")
    cell = row.find_element(By.CSS_SELECTOR, "td.chain").text
    for link in links:
        assert f"{link['file']}:{link['line']}" in cell


def test_class_page_draws_the_include_graph(browser, ui: str, doc_screenshot) -> None:
    browser.get(ui + "classes")
    browser.find_element(By.LINK_TEXT, "profile.webserver").click()
    svg = wait_for(browser, "#graph svg.graph")
    shown = {a.get_attribute("data-class") for a in
             svg.find_elements(By.CSS_SELECTOR, "a.graph-node")}
    assert {"role.web", "profile.webserver", "profile.base", "service.nginx",
            "common"} <= shown
    assert len(svg.find_elements(By.CSS_SELECTOR, "path.edge")) >= 4
    focus = svg.find_element(By.CSS_SELECTOR, "a.graph-node.focus")
    assert focus.get_attribute("data-class") == "profile.webserver"
    assert browser.find_element(By.CSS_SELECTOR, ".class-file").text == \
        "classes/profile/webserver.yml"
    nodes = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#class-nodes a")]
    assert nodes == ["web1.example.com", "web1.staging.example.com", "web2.example.com"]
    doc_screenshot("class")
    wait_for_new_page(browser, "h1 .class-name", svg.find_element(
        By.CSS_SELECTOR, "a.graph-node[data-class='role.web']").click)
    assert wait_for(browser, "h1 .class-name").text == "role.web"


def test_diff_between_two_revisions_matches_the_diff_tool(browser, ui: str,
                                                         example_repo: Path,
                                                         doc_screenshot) -> None:
    expected = cli("diff", "-b", str(example_repo), "--from", "HEAD~1", "--to", "HEAD",
                   "-o", "json")
    assert expected.returncode == 1, expected.stderr
    nodes = json.loads(expected.stdout)["nodes"]
    browser.get(ui + "diff")
    old = Select(wait_for(browser, "#diff-from"))
    labels = [o.text for o in old.options]
    assert labels[0] == "working tree" and "the example inventory" in labels[2]
    old.select_by_index(2)  # the first commit
    Select(browser.find_element(By.ID, "diff-to")).select_by_index(1)  # the second commit
    browser.find_element(By.ID, "diff-run").click()
    summary = wait_for(browser, "#diff-summary").text
    assert summary.startswith(f"{len(nodes)} nodes changed")
    for node in nodes:
        section = browser.find_element(By.CSS_SELECTOR,
                                       f"section.node-change[data-node='{node['node']}']")
        for change in node["changes"]:
            row = section.find_element(By.XPATH, f".//tr[td[2]/code[text()='{change['path']}']]")
            source = change["source"]
            assert row.find_element(By.CSS_SELECTOR, "td.old").text == json.dumps(change["old"])
            assert row.find_element(By.CSS_SELECTOR, "td.new").text == json.dumps(change["new"])
            assert f"{source['file']}:{source['line']}" in row.text
    assert "classes/role/web.yml:6" in browser.find_element(By.CSS_SELECTOR,
                                                            "table.changes").text
    doc_screenshot("diff")


def test_groups_tree_with_stored_facts(browser, served: str, doc_screenshot) -> None:
    with client(served, TOKEN) as api:
        stored = api.put("/nodes/web2.example.com/runtime",
                         json={"fact": {"processors": {"count": 16}, "role": "web"}})
        assert stored.status_code == 200, stored.text
    browser.get(served + "/ui/groups")
    large = wait_for(browser, "li.group[id='group-ce75cef1-f707-4a3b-8e43-665d3ef12991']")
    assert 'fact.processors.count >= "8"' in large.find_element(By.CSS_SELECTOR, ".rule").text
    matched_list = large.find_element(By.CSS_SELECTOR, "details.matched")
    assert matched_list.get_attribute("open") is not None  # few nodes: the list starts open
    matched = matched_list.text
    assert "web2.example.com" in matched and '"count": 16' in matched
    assert "web1.example.com" not in matched
    browser.execute_script("arguments[0].scrollIntoView()", browser.find_element(
        By.CSS_SELECTOR, "li.group[id='group-b0f03a26-d797-4a9c-aa99-dbe317af6331']"))
    doc_screenshot("groups")
    browser.get(served + "/ui/nodes/web2.example.com")
    groups = wait_for(browser, "#groups").text
    assert "Large web servers" in groups and "leaf" in groups
    assert "node has 16" in groups


def test_render_error_shows_the_cli_message(browser, tmp_path: Path) -> None:
    inventory = tmp_path / "broken"
    (inventory / "nodes").mkdir(parents=True)
    (inventory / "classes").mkdir()
    (inventory / "classes" / "app.yml").write_text("parameters:\n  url: http://${host:name}/\n")
    (inventory / "nodes" / "n1.yml").write_text("classes:\n  - app\n")
    (inventory / "nodes" / "n2.yml").write_text("parameters:\n  fine: yes\n")
    rendered = subprocess.run([sys.executable, "-m", "reclass_ng.cli.reclass", "-b",
                               str(inventory), "--nodeinfo", "n1"],
                              capture_output=True, text=True, check=False)
    assert rendered.returncode != 0 and rendered.stderr.strip()
    with explorer_ui(inventory, tmp_path / "state.sqlite3") as url:
        browser.get(url + "nodes")
        assert "fails to render" in wait_for(browser, "tr[data-node='n1']").text
        browser.find_element(By.LINK_TEXT, "n1").click()
        message = wait_for(browser, "pre.error-message").text
        assert message == rendered.stderr.strip()
        assert httpx.get(url + "nodes/nope").status_code == 404
