"""storage/lookup.py: one node's or class's file found without the full scan, compared with
the full scans of yaml_fs (the reference) on generated trees, and what a lookup reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reclass_ng.errors import DuplicateNameError
from reclass_ng.storage import lookup
from reclass_ng.storage.yaml_fs import YamlFsStorage

# Path components chosen to collide: dotted names against directories, init files, `_` trees,
# both extensions, hidden and VCS directories.
COMPONENTS = ["a", "b", "a.b", "init", "_h", "c.d", ".hid", "CVS"]
FILES = st.lists(st.tuples(st.lists(st.sampled_from(COMPONENTS), max_size=3),
                           st.sampled_from(COMPONENTS + ["b.c"]),
                           st.sampled_from([".yml", ".yaml"])),
                 min_size=1, max_size=8)


def _write_tree(top: Path, files: list[tuple[list[str], str, str]]) -> None:
    top.mkdir(parents=True)
    for directories, stem, extension in files:
        directory = top.joinpath(*directories)
        if directory.is_file() or any(p.is_file() for p in directory.parents if top in p.parents):
            continue  # a file already stands where this directory would go
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / (stem + extension)
        if not target.is_dir():
            target.write_text("")


def _outcome(call):
    try:
        return call()
    except DuplicateNameError as err:
        return ("duplicate", err.args)


def _names_to_try(tree: dict[str, str] | tuple) -> list[str]:
    names = set(tree) if isinstance(tree, dict) else set()
    return sorted(names | {"a", "b", "a.b", "a.b.c", "init", "a.init", "c.d", "b.c", "h",
                           "_h.a", "a._h", "missing", ".hid.a", "CVS.a"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=FILES)
def test_class_lookup_finds_what_the_scan_names(tmp_path_factory, files) -> None:
    root = tmp_path_factory.mktemp("classes")
    _write_tree(root / "classes", files)
    (root / "nodes").mkdir()
    scanned = _outcome(lambda: YamlFsStorage(str(root / "nodes"), str(root / "classes")).class_paths)
    for name in _names_to_try(scanned):
        fresh = YamlFsStorage(str(root / "nodes"), str(root / "classes"))
        looked_up = _outcome(lambda: fresh.class_path(name))  # noqa: B023 - called at once
        if isinstance(scanned, dict):
            assert looked_up == scanned.get(name), name
        elif isinstance(looked_up, tuple):
            assert looked_up == scanned  # the first duplicate of the tree, as the scan says


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=FILES, compose=st.booleans())
def test_node_lookup_finds_what_the_scan_names(tmp_path_factory, files, compose) -> None:
    root = tmp_path_factory.mktemp("nodes")
    _write_tree(root / "nodes", files)
    (root / "classes").mkdir()
    nodes_dir, classes_dir = str(root / "nodes"), str(root / "classes")

    def listed() -> dict[str, tuple[str, str]]:
        found = YamlFsStorage(nodes_dir, classes_dir, compose).nodes
        return {name: (found[name].path, found[name].pathname) for name in found}

    scanned = _outcome(listed)
    for name in _names_to_try(scanned):
        fresh = YamlFsStorage(nodes_dir, classes_dir, compose).nodes

        def one() -> tuple[str, str] | None:
            record = fresh.get(name)  # noqa: B023 - called at once
            return None if record is None else (record.path, record.pathname)

        looked_up = _outcome(one)
        if isinstance(scanned, dict):
            assert looked_up == scanned.get(name), name
        elif isinstance(looked_up, tuple) and looked_up[0] == "duplicate":
            assert looked_up == scanned


def test_a_class_lookup_lists_only_the_directories_its_name_leads_to(make_inventory,
                                                                       monkeypatch) -> None:
    files = {f"classes/cluster/c{i}/init.yml": "" for i in range(30)}
    files.update({"classes/system/ssh/server.yml": "", "classes/system/ssh.client.yml": "",
                  "nodes/n1.yml": ""})
    root = make_inventory(files)
    listed: list[str] = []
    real = lookup.list_directory
    monkeypatch.setattr(lookup, "list_directory", lambda d: listed.append(d) or real(d))
    found = YamlFsStorage(str(root / "nodes"), str(root / "classes"))
    assert found.class_path("cluster.c7") == str(root / "classes/cluster/c7/init.yml")
    assert found.class_path("system.ssh.client") == str(root / "classes/system/ssh.client.yml")
    classes = str(root / "classes")
    assert sorted(os.path.relpath(d, classes) for d in listed) == [
        ".", "cluster", "cluster/c7", "system", "system/ssh"]


def test_nodeinfo_of_one_node_reads_no_other_duplicate_and_inventory_reports_it(
        load_inventory) -> None:
    # reclass scans both trees before anything: a duplicate elsewhere fails every command.
    # reclass-ng's --nodeinfo reads what the node needs (doc/compatibility.rst); a render of
    # every node still reports every duplicate first.
    inventory = load_inventory({"nodes/ok.yml": "classes: [a]\n", "nodes/x/dup.yml": "",
                                "nodes/y/dup.yml": "", "classes/a.yml": "parameters: {p: 1}\n",
                                "classes/b.yml": "", "classes/b/init.yml": ""})
    assert inventory.nodeinfo("ok")["parameters"]["p"] == 1
    with pytest.raises(DuplicateNameError, match="'dup'"):
        inventory.nodeinfo("dup")
    with pytest.raises(DuplicateNameError, match="'dup'"):
        inventory.inventory()


def test_inventory_reports_a_duplicate_class_no_node_reads(load_inventory) -> None:
    inventory = load_inventory({"nodes/ok.yml": "classes: [a]\n", "classes/a.yml": "",
                                "classes/b.yml": "", "classes/b/init.yml": ""})
    assert inventory.nodeinfo("ok")["classes"] == ["a"]
    with pytest.raises(DuplicateNameError, match="'b'"):
        inventory.inventory()


def test_names_not_found_are_not_kept(make_inventory) -> None:
    # A long-running service is asked for any name: only found files may be remembered.
    root = make_inventory({"nodes/n1.yml": "", "classes/a.yml": ""})
    found = YamlFsStorage(str(root / "nodes"), str(root / "classes"))
    for index in range(50):
        assert found.nodes.get(f"missing{index}") is None
        assert found.class_path(f"missing.{index}") is None
    assert found.nodes.get("n1") is not None and found.class_path("a") is not None
    assert list(found.nodes._made) == ["n1"] and list(found._class_files) == ["a"]


def test_entry_kind_is_the_one_rule_of_every_scan(tmp_path):
    for name in ("walked", ".hidden", "CVS", "SCCS"):
        (tmp_path / name).mkdir()
    (tmp_path / "file.yml").write_text("")
    (tmp_path / "to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / ".to-walked").symlink_to(tmp_path / "walked")
    (tmp_path / "dangling.yml").symlink_to(tmp_path / "missing")
    kinds = {entry.name: lookup.entry_kind(entry) for entry in os.scandir(tmp_path)}
    assert kinds == {
        "walked": lookup.WALKED_DIRECTORY, "to-walked": lookup.WALKED_DIRECTORY,
        ".hidden": lookup.SKIPPED_DIRECTORY, ".to-walked": lookup.SKIPPED_DIRECTORY,
        "CVS": lookup.SKIPPED_DIRECTORY, "SCCS": lookup.SKIPPED_DIRECTORY,
        "file.yml": lookup.FILE, "dangling.yml": lookup.FILE}
