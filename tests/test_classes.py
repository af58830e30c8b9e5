"""Class expansion (spec 1.8-1.11, 2): order, cycles, relative names, mappings, missing classes."""

from __future__ import annotations

import pytest

from reclass_ng.classes import mapped_classes, parse_class_mapping
from reclass_ng.errors import (
    ClassIncludeCycle,
    ClassNameResolveError,
    ClassNotFound,
    MappingFormatError,
)

ORDER_EXAMPLE = {
    "nodes/n1.yml": "classes: [A, B]\nparameters:\n  order: [node]\n",
    "classes/A.yml": "classes: [C, D]\nparameters:\n  order: [A]\n",
    "classes/B.yml": "classes: [C, E]\nparameters:\n  order: [B]\n",
    "classes/C.yml": "parameters:\n  order: [C]\n",
    "classes/D.yml": "classes: [F]\nparameters:\n  order: [D]\n",
    "classes/E.yml": "parameters:\n  order: [E]\n",
    "classes/F.yml": "parameters:\n  order: [F]\n",
}


def test_merge_order_is_post_order_each_class_once(render) -> None:
    info = render(ORDER_EXAMPLE)
    assert info["parameters"]["order"] == ["C", "F", "D", "A", "E", "B", "node"]


def test_classes_list_is_each_entity_list_in_merge_order(render) -> None:
    assert render(ORDER_EXAMPLE)["classes"] == ["F", "C", "D", "E", "A", "B"]


def test_later_classes_and_node_override_earlier(params) -> None:
    files = {"classes/a.yml": "parameters: {v: a, w: a}\n",
             "classes/b.yml": "parameters: {v: b, w: b}\n",
             "nodes/n1.yml": "classes: [a, b]\nparameters: {w: node}\n"}
    assert params(files) == {"v": "b", "w": "node"}


@pytest.mark.parametrize("classes, cycle", [
    ({"a": "[a]"}, "a -> a"),
    ({"a": "[b]", "b": "[a]"}, "a -> b -> a"),
    ({"a": "[b]", "b": "[c]", "c": "[a]"}, "a -> b -> c -> a"),
    ({"a": "[b]", "b": "[c]", "c": "[b]"}, "b -> c -> b"),
])
def test_include_cycles_are_errors_naming_the_cycle(render, classes, cycle) -> None:
    files = {f"classes/{name}.yml": f"classes: {listed}\n" for name, listed in classes.items()}
    files["nodes/n1.yml"] = "classes: [a]\n"
    with pytest.raises(ClassIncludeCycle) as info:
        render(files)
    message = str(info.value)
    assert cycle in message and "cycle" in message
    assert message.startswith("-> n1")
    assert info.value.exit_code == 65


def test_diamond_is_not_a_cycle(render) -> None:
    files = {"classes/a.yml": "classes: [c]\n", "classes/b.yml": "classes: [c]\n",
             "classes/c.yml": "parameters: {c: 1}\n", "nodes/n1.yml": "classes: [a, b, c]\n"}
    assert render(files)["classes"] == ["c", "a", "b"]


# -- relative names --------------------------------------------------------------------------

@pytest.mark.parametrize("listed, target", [
    (".beta", "one.beta"), ("..four", "four"), ("..two.gamma", "two.gamma"),
    ("..init", "init"), ("....four", "four"),
])
def test_relative_names_in_classes(render, listed: str, target: str) -> None:
    files = {"classes/one/alpha.yml": f"classes: ['{listed}']\n",
             f"classes/{target.replace('.', '/')}.yml": "parameters: {hit: yes}\n",
             "nodes/n1.yml": "classes: [one.alpha]\n"}
    info = render(files)
    assert info["parameters"]["hit"] is True
    assert info["classes"][0] == target


def test_relative_names_in_init_class_use_its_parent(render) -> None:
    files = {"classes/x/init.yml": "classes: [.y.z]\n", "classes/y/z.yml": "",
             "nodes/n1.yml": "classes: [x]\n"}
    assert render(files)["classes"] == ["y.z", "x"]


def test_relative_names_in_nodes_use_node_name(render) -> None:
    files = {"classes/web/example/foo.yml": "", "classes/web/bar.yml": "",
             "nodes/web.example.org.yml": "classes: [.foo, ..bar]\n"}
    assert render(files, "web.example.org")["classes"] == ["web.example.foo", "web.bar"]


# -- references in class names ---------------------------------------------------------------

def test_reference_in_class_name_sees_earlier_classes(render) -> None:
    files = {"classes/env.yml": "parameters: {env: prod}\n",
             "classes/lab/prod.yml": "parameters: {lab: prod}\n",
             "nodes/n1.yml": "classes: [env, 'lab.${env}']\n"}
    info = render(files)
    assert info["parameters"]["lab"] == "prod"
    assert info["classes"] == ["env", "lab.${env}"]


def test_reference_in_class_name_to_node_parameter_is_an_error(render) -> None:
    files = {"nodes/n1.yml": "classes: ['lab.${env}']\nparameters: {env: dev}\n"}
    with pytest.raises(ClassNameResolveError) as info:
        render(files)
    assert "Class name lab.${env} not resolvable" in str(info.value)
    assert "nodes/n1.yml" in str(info.value)


def test_class_name_reference_resolved_fully_d7(render) -> None:
    files = {"classes/env.yml": "parameters:\n  real: dev\n  indirect: ${real}\n",
             "classes/lab/dev.yml": "parameters: {ok: 1}\n",
             "nodes/n1.yml": "classes: [env, 'lab.${indirect}']\n"}
    assert render(files)["parameters"]["ok"] == 1


# -- missing classes -------------------------------------------------------------------------

def test_missing_class_error_names_lister_and_directory(render, make_inventory) -> None:
    files = {"classes/a.yml": "classes: [missing]\n", "nodes/n1.yml": "classes: [a]\n"}
    with pytest.raises(ClassNotFound) as info:
        render(files)
    lines = str(info.value).splitlines()
    assert lines[0] == "-> n1"
    assert lines[1].strip().startswith("In yaml_fs://") and lines[1].endswith("classes/a.yml")
    assert lines[2].strip().startswith("Class missing not found under yaml_fs://")


def test_ignore_class_notfound_skips_warns_and_keeps_name(load_inventory) -> None:
    inv = load_inventory({"nodes/n1.yml": "classes: [missing, missing2]\n"},
                         ignore_class_notfound=True)
    info = inv.nodeinfo("n1")
    assert info["classes"] == ["missing", "missing2"]
    assert inv.warnings == ["[WARNING] Reclass class not found: 'missing'. Skipped!",
                            "[WARNING] Reclass class not found: 'missing2'. Skipped!"]


def test_ignore_class_notfound_warning_can_be_silenced(load_inventory) -> None:
    inv = load_inventory({"nodes/n1.yml": "classes: [missing]\n"}, ignore_class_notfound=True,
                         ignore_class_notfound_warning=False)
    inv.nodeinfo("n1")
    assert inv.warnings == []


@pytest.mark.parametrize("name, ignored", [
    ("services.x", True), ("service", True), ("xservice", False), ("other", False),
    ("opt.y", True),
])
def test_ignore_regexp_is_anchored_at_start_and_or_joined(render, name, ignored) -> None:
    files = {"nodes/n1.yml": f"classes: [{name}]\n"}
    settings = {"ignore_class_notfound": True,
                "ignore_class_notfound_regexp": ["service", "opt\\."]}
    if ignored:
        assert render(files, **settings)["classes"] == [name]
    else:
        with pytest.raises(ClassNotFound):
            render(files, **settings)


def test_ignore_class_notfound_off_by_default(render) -> None:
    with pytest.raises(ClassNotFound):
        render({"nodes/n1.yml": "classes: [missing]\n"})


# -- class mappings --------------------------------------------------------------------------

@pytest.mark.parametrize("mapping, subject, classes", [
    (r"\*  common", "n1", ["common"]),
    ("* common other", "anything.at.all", ["common", "other"]),
    ("web* web", "web1", ["web"]),
    ("web* web", "Web1", []),
    ("n? single", "n12", []),
    ("n[12] set", "n2", ["set"]),
    ("/^web(\\d+)$/ web.\\\\1", "web7", ["web.7"]),
    ("/(?P<env>prod|dev)/ env.\\\\g<env>", "a.prod.b", ["env.prod"]),
    ("/re/ single.\\1", "re", ["single.1"]),
    ("/sub\\/n/ path", "sub/n2", ["path"]),
    ("/with space/ spaced", "a with space", ["spaced"]),
    ("pattern-only", "pattern-only", []),
])
def test_class_mapping_patterns(mapping: str, subject: str, classes: list[str]) -> None:
    # Texts are as they arrive from a plain YAML scalar: `web.\\1` there is what shlex turns
    # into the back-reference `\1`; a single `\1` loses its backslash (spec 1.11).
    assert parse_class_mapping(mapping).classes_for(subject) == classes


@pytest.mark.parametrize("text", ["/unclosed x", "'unclosed x", "/bad(/ x"])
def test_malformed_class_mappings(text: str) -> None:
    with pytest.raises(MappingFormatError) as info:
        parse_class_mapping(text)
    assert text in str(info.value) and info.value.exit_code == 65


def test_all_matching_mappings_contribute_deduplicated() -> None:
    mappings = [parse_class_mapping(t) for t in ["* common", "n* glob.n common", "/n(1)/ re.\\1"]]
    assert mapped_classes(mappings, "n1") == ("common", "glob.n", "re.1")


def test_mapped_classes_come_first_and_are_merged_before_node_classes(render) -> None:
    files = {"classes/common.yml": "parameters: {v: common, order: [common]}\n",
             "classes/own.yml": "parameters: {v: own, order: [own]}\n",
             "nodes/n1.yml": "classes: [own, common]\n"}
    info = render(files, class_mappings=["* common"])
    assert info["classes"] == ["common", "own"]
    assert info["parameters"]["order"] == ["common", "own"]
    assert info["parameters"]["v"] == "own"


@pytest.mark.parametrize("match_path, pattern, hit", [
    (True, "sub/*", True), (False, "sub/*", False), (False, "n2", True), (True, "n2", False),
    (True, "top", True),  # D5: a top-level node's path is `top`, not `./top`
])
def test_class_mappings_match_path(render, match_path, pattern, hit) -> None:
    files = {"classes/mapped.yml": "parameters: {mapped: true}\n",
             "nodes/sub/n2.yml": "", "nodes/top.yml": ""}
    node = "top" if pattern == "top" else "n2"
    info = render(files, node, class_mappings=[f"{pattern} mapped"],
                  class_mappings_match_path=match_path)
    assert ("mapped" in info["classes"]) is hit


# -- applications and environment ------------------------------------------------------------

@pytest.mark.parametrize("class_apps, node_apps, expected", [
    ("[a, b]", "[c, a]", ["a", "b", "c"]),
    ("[a, b]", "[~a]", ["b"]),
    ("[]", "[a, ~a]", []),
    ("[]", "[~a, a]", ["a"]),
    ("[~x]", "[x]", ["x"]),
])
def test_applications(render, class_apps, node_apps, expected) -> None:
    files = {"classes/a.yml": f"applications: {class_apps}\n",
             "nodes/n1.yml": f"classes: [a]\napplications: {node_apps}\n"}
    assert render(files)["applications"] == expected


def test_environment_defaults_and_class_environment_is_ignored(render) -> None:
    files = {"classes/a.yml": "environment: fromclass\n", "nodes/n1.yml": "classes: [a]\n",
             "nodes/n2.yml": "environment: prod\n"}
    assert render(files)["environment"] == "base"
    assert render(files, default_environment="dev")["environment"] == "dev"
    info = render(files, "n2")
    assert info["environment"] == "prod"
    assert info["parameters"]["_reclass_"]["environment"] == "prod"


def test_automatic_parameters(render) -> None:
    info = render({"nodes/top.example.yml": ""}, "top.example")
    assert info["parameters"]["_reclass_"]["name"] == {
        "full": "top.example", "short": "example", "parts": ["top", "example"],
        "path": "top/example"}
    assert "_reclass_" not in render({"nodes/n1.yml": ""}, automatic_parameters=False)["parameters"]


@pytest.mark.parametrize("text", ["classes: a\n", "applications: a\n", "classes: [1]\n",
                                  "parameters: [1]\n"])
def test_malformed_entities_are_data_errors(render, text: str) -> None:
    from reclass_ng.errors import ReclassError

    with pytest.raises(ReclassError) as info:
        render({"nodes/n1.yml": text})
    assert info.value.exit_code == 65
    assert "n1.yml" in str(info.value)
