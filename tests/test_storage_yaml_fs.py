"""yaml_fs storage: scanning, node and class naming, duplicates, unsafe class names (spec 1.2-1.7)."""

from __future__ import annotations

import itertools
import os
import signal
from pathlib import Path

import pytest

from reclass_ng.errors import (
    DuplicateNameError,
    InvalidClassnameError,
    NotFoundError,
    ReclassError,
    YamlFileError,
)
from reclass_ng.storage import yaml_fs
from reclass_ng.storage.yaml_fs import (
    YamlFsStorage,
    check_class_name,
    class_name_for,
    node_name_for,
)


def storage(root: Path, compose: bool = False) -> YamlFsStorage:
    return YamlFsStorage(str(root / "nodes"), str(root / "classes"), compose)


# -- naming functions -----------------------------------------------------------------------

@pytest.mark.parametrize("relpath, compose, name, pathname", [
    ("n1.yml", False, "n1", "n1"),
    ("web.example.org.yml", False, "web.example.org", "web.example.org"),
    ("x/y/n1.yml", False, "n1", "x/y/n1"),
    ("x/y/n1.yaml", True, "x.y.n1", "x/y/n1"),
    ("n1.yml", True, "n1", "n1"),
    ("_hidden/x/n2.yml", True, "n2", "_hidden/x/n2"),
    ("x/_h/n3.yml", True, "x._h.n3", "x/_h/n3"),
    ("prod/db/mysql.yml", True, "prod.db.mysql", "prod/db/mysql"),
])
def test_node_name_for(relpath, compose, name, pathname) -> None:
    assert node_name_for(relpath.replace("/", os.sep), compose) == (name, pathname)


@pytest.mark.parametrize("relpath, name", [
    ("ssh/server.yml", "ssh.server"),
    ("ssh/init.yml", "ssh"),
    ("ssh/init.yaml", "ssh"),
    ("foo/init/x.yml", "foo.init.x"),
    ("init.yml", "init"),
    ("a.b.yml", "a.b"),
    ("a/b/c/d.yml", "a.b.c.d"),
])
def test_class_name_for(relpath: str, name: str) -> None:
    assert class_name_for(relpath) == name


@pytest.mark.parametrize("name", ["/etc/passwd", "/abs", "nul\0byte"])
def test_check_class_name_rejects_paths(name: str) -> None:
    with pytest.raises(ReclassError) as info:
        check_class_name(name)
    assert info.value.exit_code == 65


# -- scanning -------------------------------------------------------------------------------

def test_scan_finds_yml_and_yaml_only(make_inventory) -> None:
    root = make_inventory({"nodes/a.yml": "", "nodes/b.yaml": "", "nodes/c.YML": "",
                           "nodes/d.json": "{}", "nodes/README": "x", "nodes/.e.yml": "",
                           "classes/k.yml": "", "classes/k2.txt": ""})
    found = storage(root)
    assert sorted(found.nodes) == [".e", "a", "b"]
    assert sorted(found.class_paths) == ["k"]


def test_hidden_and_vcs_directories_are_skipped_even_when_adjacent(make_inventory) -> None:
    files = {f"nodes/{d}/x{i}.yml": "" for i, d in enumerate([".hidden", ".h2", ".h3", "CVS",
                                                               "SCCS", ".git"])}
    files.update({"nodes/visible/n1.yml": "", "classes/.svn/c.yml": "", "classes/ok.yml": ""})
    found = storage(make_inventory(files))
    assert sorted(found.nodes) == ["n1"]
    assert sorted(found.class_paths) == ["ok"]


@pytest.mark.parametrize("how", ["listing", "lookup", "lookup of another node"])
def test_duplicate_node_names_name_both_files(make_inventory, how: str) -> None:
    # kapicorp-reclass scans nodes/ before anything: a duplicate fails every lookup.
    root = make_inventory({"nodes/x/n1.yml": "", "nodes/y/n1.yml": "", "nodes/n2.yml": ""})
    found = storage(root)
    with pytest.raises(DuplicateNameError) as info:
        if how == "listing":
            sorted(found.nodes)
        else:
            found.nodes.get("n1" if how == "lookup" else "n2")
    message = str(info.value)
    assert "n1" in message
    assert str(root / "nodes/x/n1.yml") in message and str(root / "nodes/y/n1.yml") in message
    assert info.value.exit_code == 65


def test_yml_and_yaml_of_one_node_collide(make_inventory) -> None:
    with pytest.raises(DuplicateNameError, match="n1.yaml"):
        sorted(storage(make_inventory({"nodes/n1.yml": "", "nodes/n1.yaml": ""})).nodes)
    with pytest.raises(DuplicateNameError, match="n1.yaml"):
        storage(make_inventory({"nodes/n1.yml": "", "nodes/n1.yaml": ""})).nodes.get("n1")


def test_compose_node_name_dotted_file_collides_with_directory(make_inventory) -> None:
    root = make_inventory({"nodes/a.1.yml": "", "nodes/a/1.yml": ""})
    assert sorted(storage(root).nodes) == ["1", "a.1"]
    with pytest.raises(DuplicateNameError, match="'a.1'"):
        sorted(storage(root, compose=True).nodes)
    with pytest.raises(DuplicateNameError, match="'a.1'"):
        storage(root, compose=True).nodes.get("a.1")


@pytest.mark.parametrize("first, second", [
    ("classes/a.b.yml", "classes/a/b.yml"),
    ("classes/foo.yml", "classes/foo/init.yml"),
    ("classes/x.yml", "classes/x.yaml"),
])
def test_duplicate_class_names_name_both_files(make_inventory, first, second) -> None:
    root = make_inventory({first: "", second: ""})
    with pytest.raises(DuplicateNameError) as info:
        storage(root).class_paths  # noqa: B018 - the scan's result, or its error
    assert str(root / first) in str(info.value) and str(root / second) in str(info.value)


def test_a_duplicate_node_no_render_reads_fails_every_path(load_inventory) -> None:
    # kapicorp-reclass scans both trees when it starts: its --nodeinfo of any node fails.
    inventory = load_inventory({"nodes/ok.yml": "classes: [a]\n", "nodes/x/dup.yml": "",
                                "nodes/y/dup.yml": "", "classes/a.yml": "parameters: {p: 1}\n"})
    for render in (lambda: inventory.nodeinfo("ok"), inventory.inventory):
        with pytest.raises(DuplicateNameError, match="'dup'"):
            render()


def test_a_duplicate_class_no_node_reads_fails_every_path(load_inventory) -> None:
    inventory = load_inventory({"nodes/ok.yml": "classes: [a]\n", "nodes/bare.yml": "",
                                "classes/a.yml": "", "classes/b.yml": "",
                                "classes/b/init.yml": ""})
    for render in (lambda: inventory.nodeinfo("ok"), lambda: inventory.nodeinfo("bare"),
                   inventory.inventory):
        with pytest.raises(DuplicateNameError, match="'b'"):
            render()


def test_names_not_found_are_not_kept(make_inventory) -> None:
    # A long-running service is asked for any name: only found files may be remembered.
    root = make_inventory({"nodes/n1.yml": "", "classes/a.yml": ""})
    found = YamlFsStorage(str(root / "nodes"), str(root / "classes"))
    for index in range(50):
        assert found.nodes.get(f"missing{index}") is None
        assert found.class_path(f"missing.{index}") is None
    assert found.nodes.get("n1") is not None and found.class_path("a") is not None
    assert list(found.nodes._made) == ["n1"] and list(found.class_paths) == ["a"]


def test_duplicates_fail_every_command_even_for_other_nodes(load_inventory) -> None:
    # The classes tree is scanned while the first node is read; the duplicate still fails the
    # render of any node, before any other error of that node.
    inventory = load_inventory({"nodes/ok.yml": "classes: [missing]\n", "classes/a.yml": "",
                                "classes/a/init.yml": "", "classes/b.yml": ""})
    with pytest.raises(DuplicateNameError):
        inventory.nodeinfo("ok")
    with pytest.raises(DuplicateNameError):
        inventory.inventory()


def test_class_found_before_the_scan_ends_is_the_scanned_one(make_inventory) -> None:
    root = make_inventory({"classes/a/b.yml": "", "classes/c/init.yaml": "", "nodes/n.yml": ""})
    found = storage(root)
    assert found.class_path("a.b") == str(root / "classes/a/b.yml")
    assert found.class_path("c") == str(root / "classes/c/init.yaml")
    assert found.class_path("nope") is None
    found.check_classes()
    assert found.class_paths == {"a.b": str(root / "classes/a/b.yml"),
                                 "c": str(root / "classes/c/init.yaml")}


@pytest.mark.parametrize("missing", ["nodes", "classes"])
def test_missing_directory_is_not_found(tmp_path: Path, missing: str) -> None:
    (tmp_path / "nodes").mkdir()
    (tmp_path / "classes").mkdir()
    (tmp_path / missing).rmdir()
    with pytest.raises(NotFoundError) as info:
        storage(tmp_path)
    assert f"No such directory: {tmp_path / missing}" in str(info.value)
    assert info.value.exit_code == 74


def test_symlinked_directories_are_followed(make_inventory, tmp_path: Path) -> None:
    elsewhere = tmp_path / "shared_classes"
    (elsewhere / "app").mkdir(parents=True)
    (elsewhere / "app" / "init.yml").write_text("parameters: {x: 1}\n")
    root = make_inventory({"nodes/n1.yml": "classes: [linked.app]\n"})
    (root / "classes" / "linked").symlink_to(elsewhere, target_is_directory=True)
    assert "linked.app" in storage(root).class_paths


def test_a_symlinked_directory_names_its_classes_under_both_paths(make_inventory) -> None:
    # kapicorp-reclass walks with os.walk(followlinks=True): `alias -> app` lists app's files
    # twice, once under each name; the scan and the class lookup of one node agree.
    root = make_inventory({"nodes/n1.yml": "", "classes/app/db.yml": "", "classes/app/init.yml": ""})
    (root / "classes" / "alias").symlink_to("app", target_is_directory=True)
    found = storage(root)
    assert found.class_paths == {
        "alias": str(root / "classes/alias/init.yml"), "alias.db": str(root / "classes/alias/db.yml"),
        "app": str(root / "classes/app/init.yml"), "app.db": str(root / "classes/app/db.yml")}
    assert storage(root).class_path("app.db") == str(root / "classes/app/db.yml")


def test_a_symlinked_node_directory_is_a_duplicate_of_its_nodes(make_inventory) -> None:
    root = make_inventory({"nodes/prod/web1.yml": "", "nodes/db1.yml": ""})
    (root / "nodes" / "alias").symlink_to("prod", target_is_directory=True)
    with pytest.raises(DuplicateNameError, match="'web1'"):
        storage(root).nodes.get("db1")
    assert sorted(storage(root, compose=True).nodes) == ["alias.web1", "db1", "prod.web1"]


def test_links_that_multiply_the_paths_end_in_a_clear_error(make_inventory, monkeypatch) -> None:
    # Each level links twice to the next: 2**depth paths. The scan stops at its limit.
    root = make_inventory({"nodes/n1.yml": ""})
    levels = [root / "classes" / f"l{i}" for i in range(12)]
    for level in levels:
        level.mkdir()
    for upper, lower in itertools.pairwise(levels):
        (upper / "a").symlink_to(lower, target_is_directory=True)
        (upper / "b").symlink_to(lower, target_is_directory=True)
    monkeypatch.setattr(yaml_fs, "MAX_SCANNED_DIRECTORIES", 1000)
    with pytest.raises(ReclassError, match="more than 1000 directories") as info:
        storage(root).class_paths  # noqa: B018 - the scan, for its error
    assert "doc/storage.rst" in str(info.value)


def _hang_guard(signum: int, frame: object) -> None:
    raise TimeoutError("scanning did not finish within 20 seconds")


def test_symlink_loop_does_not_hang(make_inventory) -> None:
    root = make_inventory({"nodes/n1.yml": "", "classes/a/b.yml": ""})
    (root / "classes" / "a" / "loop").symlink_to(root / "classes", target_is_directory=True)
    (root / "nodes" / "self").symlink_to(root / "nodes", target_is_directory=True)
    previous = signal.signal(signal.SIGALRM, _hang_guard)
    signal.alarm(20)
    try:
        found = storage(root)
        class_paths = found.class_paths  # the classes are scanned in a thread: wait for it
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert list(found.nodes) == ["n1"]
    assert "a.b" in class_paths


# -- class names that try to leave classes/ ------------------------------------------------

@pytest.mark.parametrize("listed", ["../secret", "a/b", "/etc/passwd", "has space",
                                    "..//etc/passwd"])
def test_class_names_with_paths_are_rejected(render, tmp_path: Path, listed: str) -> None:
    (tmp_path / "secret.yml").write_text("parameters: {stolen: true}\n")
    with pytest.raises(InvalidClassnameError) as info:
        render({"nodes/n1.yml": f"classes: ['{listed}']\n"})
    assert info.value.exit_code == 65
    assert "n1" in str(info.value)


def test_class_symlink_outside_classes_cannot_be_named_with_dots(render, tmp_path) -> None:
    # `..secret` is a relative class name (parent of n1 is the top), i.e. class `secret`.
    (tmp_path / "secret.yml").write_text("parameters: {stolen: true}\n")
    with pytest.raises(ReclassError, match="Class secret not found"):
        render({"nodes/n1.yml": "classes: [..secret]\n"})


# -- YAML loading ---------------------------------------------------------------------------

def test_invalid_yaml_names_file_and_line(render, make_inventory) -> None:
    with pytest.raises(YamlFileError) as info:
        render({"nodes/n1.yml": "parameters:\n  a: 1\n  b: [unclosed\n  c: 2\n"})
    assert info.value.path.endswith("nodes/n1.yml")
    assert info.value.line is not None and info.value.line >= 3
    assert f"n1.yml:{info.value.line}" in str(info.value)


def test_non_mapping_document_is_an_error(render) -> None:
    with pytest.raises(ReclassError, match="mapping"):
        render({"nodes/n1.yml": "- a\n- b\n"})


def test_empty_file_is_an_empty_entity(render) -> None:
    info = render({"nodes/n1.yml": ""})
    assert info["classes"] == [] and info["applications"] == []
    assert set(info["parameters"]) == {"_reclass_"}


@pytest.mark.parametrize("yaml_text, value", [
    ("yes", True), ("Off", False), ("010", 8), ("0x10", 16), ("0o10", "0o10"),
    ("1:20", 80), ("1e3", "1e3"), ("1.0e+3", 1000.0), ("~", None), ("'010'", "010"),
])
def test_yaml_1_1_typing(params, yaml_text: str, value: object) -> None:
    result = params({"nodes/n1.yml": f"parameters:\n  v: {yaml_text}\n"})["v"]
    assert result == value and type(result) is type(value)


def test_parameter_keys_become_strings(params) -> None:
    result = params({"nodes/n1.yml": "parameters:\n  1: a\n  1.5: b\n  false: c\n  ~: d\n"})
    assert result == {"1": "a", "1.5": "b", "False": "c", "None": "d"}


def test_keys_1_and_true_collapse_as_in_pyyaml(params) -> None:
    # PyYAML builds a Python dict first, where 1 == True: one key, the later value.
    assert params({"nodes/n1.yml": "parameters:\n  1: a\n  true: b\n"}) == {"1": "b"}


def test_anchors_and_merge_keys_within_one_file(params) -> None:
    text = "parameters:\n  base: &b {x: 1, y: 2}\n  other:\n    <<: *b\n    y: 3\n  copy: *b\n"
    result = params({"nodes/n1.yml": text})
    assert result["other"] == {"x": 1, "y": 3}
    assert result["copy"] == {"x": 1, "y": 2}


def test_each_file_is_parsed_once(make_inventory) -> None:
    root = make_inventory({"nodes/n1.yml": "classes: [a]\n", "classes/a.yml": "parameters: {}\n"})
    found = storage(root)
    path = found.class_paths["a"]
    assert found.parsed(path) is found.parsed(path)


def test_an_overlay_is_read_instead_of_the_file_and_the_listing_stays_the_disks(tmp_path):
    """An editor's unsaved buffer (reclass_ng.lsp): the storage parses the overlay's content
    for that file; files are still listed from disk."""
    from reclass_ng.storage.yaml_fs import YamlFsStorage

    (tmp_path / "nodes").mkdir()
    (tmp_path / "classes").mkdir()
    node = tmp_path / "nodes" / "n1.yml"
    node.write_text("parameters:\n  a: disk\n")
    unsaved = str(tmp_path / "nodes" / "n2.yml")  # not on disk: not a node
    storage = YamlFsStorage(str(tmp_path / "nodes"), str(tmp_path / "classes"),
                            overlay={str(node): b"parameters:\n  a: buffer\n",
                                     unsaved: b"parameters: {}\n"})
    assert list(storage.nodes) == ["n1"]
    assert storage.parsed(str(node)) == {"parameters": {"a": "buffer"}}
    assert YamlFsStorage(str(tmp_path / "nodes"), str(tmp_path / "classes")).parsed(
        str(node)) == {"parameters": {"a": "disk"}}


def test_a_buffer_is_composed_within_the_loaders_limits():
    """compose_yaml_bytes: positions of a buffer, its nesting refused as a file's would be."""
    import pytest

    from reclass_ng.errors import YamlFileError
    from reclass_ng.storage.yaml_load import compose_yaml_bytes

    root = compose_yaml_bytes(b"a:\n  b: 1\n", "buffer.yml")
    assert root.value[0][1].value[0][0].start_mark.line == 1
    with pytest.raises(YamlFileError, match="nests deeper"):
        compose_yaml_bytes(b"[" * 60000 + b"]" * 60000, "deep.yml")
