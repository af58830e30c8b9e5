"""Settings (spec 1.12): where reclass-config.yml is found, precedence, and value checking."""

from __future__ import annotations

from pathlib import Path

import pytest

import reclass_ng
from reclass_ng.errors import ConfigError
from reclass_ng.settings import (
    CONFIG_FILE_NAME,
    Settings,
    find_config_file,
    parse_bool,
)
from reclass_ng.storage import load_settings, read_config_file


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Three candidate directories; cwd and HOME point at two of them."""
    dirs = {name: tmp_path / name for name in ("base", "cwd", "home")}
    for directory in dirs.values():
        directory.mkdir()
    monkeypatch.chdir(dirs["cwd"])
    monkeypatch.setenv("HOME", str(dirs["home"]))
    return dirs


def write_config(directory: Path, text: str) -> Path:
    path = directory / CONFIG_FILE_NAME
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("present, winner", [
    (("base", "cwd", "home"), "base"),
    (("cwd", "home"), "cwd"),
    (("home",), "home"),
    (("base", "home"), "base"),
])
def test_config_lookup_order(places, present, winner) -> None:
    for name in present:
        write_config(places[name], f"default_environment: {name}\n")
    assert find_config_file(str(places["base"])) == str(places[winner] / CONFIG_FILE_NAME)
    assert load_settings(str(places["base"]), {}).default_environment == winner


def test_no_config_file_gives_defaults(places) -> None:
    if Path("/etc/reclass", CONFIG_FILE_NAME).exists():
        pytest.skip("/etc/reclass/reclass-config.yml exists on this machine")
    assert find_config_file(str(places["base"])) is None
    settings = load_settings(str(places["base"]), {})
    assert settings == Settings(inventory_base_uri=str(places["base"]))


def test_explicit_values_override_the_file(places) -> None:
    write_config(places["base"], "compose_node_name: true\ndefault_environment: fromfile\n")
    settings = load_settings(str(places["base"]), {"default_environment": "explicit",
                                                   "group_errors": None})
    assert settings.compose_node_name is True
    assert settings.default_environment == "explicit"
    assert settings.group_errors is True  # None means "not given"
    assert settings.config_file == str(places["base"] / CONFIG_FILE_NAME)


def test_read_config_false_ignores_files(places) -> None:
    write_config(places["base"], "default_environment: fromfile\n")
    assert load_settings(str(places["base"]), {}, read_config=False).default_environment == "base"


def test_load_reads_inventory_config(places) -> None:
    (places["base"] / "nodes" / "sub").mkdir(parents=True)
    (places["base"] / "classes").mkdir()
    (places["base"] / "nodes" / "sub" / "n1.yml").write_text("")
    write_config(places["base"], "compose_node_name: true\n")
    assert reclass_ng.load(str(places["base"])).node_names == ["sub.n1"]
    assert reclass_ng.load(str(places["base"]), compose_node_name=False).node_names == ["n1"]


def test_unknown_keys_are_ignored_and_empty_file_is_defaults(places) -> None:
    write_config(places["base"], "no_such_setting: 1\n")
    assert load_settings(str(places["base"]), {}).default_environment == "base"
    write_config(places["base"], "")
    assert read_config_file(str(places["base"] / CONFIG_FILE_NAME)) == {}


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (1, True), (0, False), ("True", True), ("false", False),
    ("False", False), ("0", False), ("no", False), ("yes", True), ("on", True), ("", False),
])
def test_parse_bool_d3(value, expected) -> None:
    assert parse_bool(value, "x") is expected


@pytest.mark.parametrize("values, word", [
    ({"ignore_class_notfound": "maybe"}, "ignore_class_notfound"),
    ({"compose_node_name": [1]}, "compose_node_name"),
    ({"escape_character": "ab"}, "escape_character"),
    ({"reference_sentinels": ["${"]}, "reference_sentinels"),
    ({"class_mappings": "* common"}, None),  # a single string is accepted as a one-item list
    ({"class_mappings": [1]}, "class_mappings"),
    ({"default_environment": 5}, "default_environment"),
    ({"ignore_class_notfound_regexp": {"a": 1}}, "ignore_class_notfound_regexp"),
])
def test_bad_values_are_config_errors(values, word) -> None:
    if word is None:
        assert Settings.from_mapping(values).class_mappings == ("* common",)
        return
    with pytest.raises(ConfigError) as info:
        Settings.from_mapping(values)
    assert word in str(info.value) and info.value.exit_code == 78


def test_regexp_string_becomes_a_list() -> None:
    assert Settings.from_mapping({"ignore_class_notfound_regexp": "x.*"}) \
        .ignore_class_notfound_regexp == ("x.*",)


@pytest.mark.parametrize("text, fragment", [
    ("a: [unclosed\n", "reclass-config.yml:2:1: invalid YAML"),
    ("- a\n- b\n", "must be a mapping"),
    ("just a string\n", "must be a mapping"),
])
def test_malformed_config_files(places, text: str, fragment: str) -> None:
    path = write_config(places["base"], text)
    with pytest.raises(ConfigError) as info:
        load_settings(str(places["base"]), {})
    assert str(path) in str(info.value) and fragment in str(info.value)
    assert info.value.exit_code == 78


@pytest.mark.parametrize("text, message", [
    # The reason, not just "invalid YAML".
    ("nodes_uri: nodes\nclass_mappings: [1, 2\n",
     "{path}:3:1: invalid YAML in configuration file: did not find expected ',' or ']' (while "
     "parsing a flow sequence opened at line 2, column 17)"),
    # A bad value names the file and the line of the setting.
    ("nodes_uri: nodes\ngroup_errors: maybe\n",
     "{path}:2: Setting group_errors: expected true or false, got 'maybe'"),
])
def test_config_file_errors_say_where_and_why(places, text: str, message: str) -> None:
    path = write_config(places["base"], text)
    with pytest.raises(ConfigError) as info:
        load_settings(str(places["base"]), {})
    assert str(info.value) == message.format(path=path)


def test_a_bad_file_value_overridden_on_the_command_line_is_no_error(places) -> None:
    write_config(places["base"], "group_errors: maybe\n")
    assert load_settings(str(places["base"]), {"group_errors": False}).group_errors is False


@pytest.mark.parametrize("settings, fragment", [
    ({"storage_type": "yaml_git"}, "yaml_git"),
    ({"nodes_uri": "same", "classes_uri": "same"}, "must not be the same"),
    ({"nodes_uri": "inv", "classes_uri": "inv/classes"}, "must not contain each other"),
])
def test_inventory_level_config_errors(tmp_path: Path, settings, fragment) -> None:
    (tmp_path / "inv" / "classes").mkdir(parents=True)
    (tmp_path / "same").mkdir()
    with pytest.raises(ConfigError, match=fragment) as info:
        reclass_ng.load(str(tmp_path), read_config=False, **settings)
    assert info.value.exit_code == 78


def test_prefix_named_directories_do_not_overlap(make_inventory) -> None:
    root = make_inventory({"nodes2/n1.yml": ""})
    assert reclass_ng.load(str(root), read_config=False, nodes_uri="nodes2",
                           classes_uri="nodes").node_names == ["n1"]


# -- through the command line ----------------------------------------------------------------

@pytest.fixture
def inventory(make_inventory) -> Path:
    return make_inventory({"nodes/n1.yml": "classes: [missing]\n"})


def test_cli_flag_overrides_config_file(inventory: Path, run_reclass) -> None:
    write_config(inventory, "ignore_class_notfound: true\nignore_class_notfound_warning: false\n")
    assert run_reclass(["-b", str(inventory), "-n", "n1"]).returncode == 0
    off = run_reclass(["-b", str(inventory), "-n", "n1", "-z", "False"])
    assert off.returncode == 65 and "Class missing not found" in off.stderr


def test_cli_reads_config_from_working_directory(inventory: Path, tmp_path, run_reclass) -> None:
    write_config(tmp_path, "ignore_class_notfound: yes\n")
    result = run_reclass(["-b", str(inventory), "-n", "n1"], cwd=tmp_path)
    assert result.returncode == 0
    assert "[WARNING] Reclass class not found: 'missing'. Skipped!" in result.stderr


@pytest.mark.parametrize("args, config", [
    (["-z", "maybe"], None),
    ([], "ignore_class_notfound: maybe\n"),
    ([], "group_errors: [1, 2]\n"),
    ([], "a: [unclosed\n"),
    ([], "- not a mapping\n"),
])
def test_cli_bad_settings_exit_78_without_traceback(inventory, run_reclass, args, config) -> None:
    if config is not None:
        write_config(inventory, config)
    result = run_reclass(["-b", str(inventory), "-n", "n1", *args])
    assert result.returncode == 78, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.strip() and result.stdout == ""


def test_a_config_file_error_as_json_names_file_line_and_setting(inventory, run_reclass) -> None:
    import json

    path = write_config(inventory, "nodes_uri: nodes\ngroup_errors: maybe\n")
    result = run_reclass(["-b", str(inventory), "-n", "n1", "--errors", "json"])
    assert result.returncode == 78
    [error] = json.loads(result.stderr)["errors"]
    assert (error["file"], error["line"], error["key_path"], error["kind"]) == (
        str(path), 2, "group_errors", "config_error")
