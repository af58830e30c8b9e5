"""The fast YAML loader gives what PyYAML's safe loader gives, and refuses recursive aliases."""

from __future__ import annotations

import datetime
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.errors import YamlFileError
from reclass_ng.storage.yaml_full import SafeLoader
from reclass_ng.storage.yaml_load import _parse, load_yaml_file

DOCUMENTS = [
    "",
    "a: 1\nb: [1, 2.5, .inf, -.inf, 0x1f, 0o17, 017, 1_000, 190:20:30, yes, No, ~, null]\n",
    "t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\nbin: !!binary aGVsbG8=\n",
    "base: &b {x: 1, y: [1]}\nuse:\n  <<: *b\n  y: 2\nmany:\n  <<: [*b, {z: 3}]\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}, {a: 2}]\n",
    "? [1, 2]\n: unhashable\n",
    "? {a: 1}\n: x\n",
    "=: value key\n'quoted': 'yes'\n\"d\": \"1\"\nplain: '1'\n",
    "dup: 1\ndup: 2\n",
    "a: &x [1, 2]\nb: *x\n",
    "1: int key\n2.5: float key\ntrue: bool key\n~: null key\n",
    "text: |\n  multi\n  line\nfolded: >\n  a\n  b\n",
    "!!str 1: x\ny: !!int '3'\nz: !!float '1'\nn: !!null ''\n",
    "b:\n  !!merge <<: {k: 1}\n  j: 2\nc:\n  ? !<tag:yaml.org,2002:merge> <<\n  : {m: 2}\n",
    "n: [1, 1, 1.5, 1.5, true, true, 2001-12-14, 2001-12-14]\nm: {<<: {a: 1}}\n",
]


def _reference(text: str):
    return yaml.load(text, Loader=SafeLoader)


@pytest.mark.parametrize("text", DOCUMENTS)
def test_same_values_as_pyyaml(text):
    try:
        expected = _reference(text)
    except yaml.YAMLError as err:
        with pytest.raises(type(err)):
            _parse(text.encode())
        return
    assert _parse(text.encode()) == expected


scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=12) | st.dates()
           | st.sampled_from(["yes", "off", "~", "0x10", "1:30", "1e3", "-.5", ".NaN", "<<", "="]))
trees = st.recursive(scalars, lambda c: st.lists(c, max_size=4)
                     | st.dictionaries(scalars.filter(lambda v: v == v), c, max_size=4),
                     max_leaves=25)


@settings(max_examples=300)
@given(trees, st.booleans())
def test_dumped_trees_load_the_same(tree, flow):
    text = yaml.safe_dump(tree, default_flow_style=flow)
    assert _parse(text.encode()) == _reference(text)


def test_recursive_alias_is_a_clear_error(tmp_path):
    path = tmp_path / "c.yml"
    path.write_text("parameters: &a\n  x: *a\n")
    with pytest.raises(YamlFileError) as info:
        load_yaml_file(str(path))
    message = str(info.value)
    assert str(path) in message and "alias to itself" in message and ":1:13:" in message


def test_timestamps_are_datetimes():
    loaded = _parse(b"t: 2001-12-14 21:59:43\n")
    assert loaded == {"t": datetime.datetime(2001, 12, 14, 21, 59, 43)}


def test_loader_limits_are_errors_with_file_and_line(tmp_path, monkeypatch):
    """Each limit of the loader (doc/service.rst, Limits) is a YamlFileError naming the file
    and, where there is one, the line; never a crash or a RecursionError."""
    from reclass_ng.storage import yaml_load

    cases = {
        "deep-flow.yml": ("a: " + "[" * 50_000 + "]" * 50_000, "nests deeper than 200", 1),
        "deep-block.yml": ("\n".join(" " * i + "k:" for i in range(1000)) + " 1",
                           "nests deeper than", 201),
        "bomb.yml": ("a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "\n".join(
            f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)),
            "expand to more than", None),
    }
    for name, (text, message, line) in cases.items():
        path = tmp_path / name
        path.write_text(text + "\n")
        with pytest.raises(YamlFileError, match=message) as raised:
            load_yaml_file(str(path))
        assert str(raised.value).startswith(str(path))
        if line is not None:
            assert raised.value.line == line
    os.mkfifo(tmp_path / "fifo.yml")
    (tmp_path / "zero.yml").symlink_to("/dev/zero")
    for name in ("fifo.yml", "zero.yml"):
        with pytest.raises(YamlFileError, match="not a regular file"):
            load_yaml_file(str(tmp_path / name))
    monkeypatch.setattr(yaml_load, "MAX_YAML_FILE_BYTES", 100)
    (tmp_path / "big.yml").write_text("a: " + "x" * 200 + "\n")
    with pytest.raises(YamlFileError, match="the limit is 100"):
        load_yaml_file(str(tmp_path / "big.yml"))
    (tmp_path / "empty.yml").write_text("")
    assert load_yaml_file(str(tmp_path / "empty.yml")) is None


def test_depth_limit_holds_whatever_the_recursion_limit(tmp_path):
    """The nesting limit is the loader's own: a render in another thread raises the
    interpreter's recursion limit, and a file must not load then that fails otherwise."""
    import sys

    path = tmp_path / "deep.yml"
    path.write_text("\n".join(" " * i + "k:" for i in range(300)) + " 1\n")
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(30000)
    try:
        with pytest.raises(YamlFileError, match="nests deeper than 200") as raised:
            load_yaml_file(str(path))
    finally:
        sys.setrecursionlimit(previous)
    assert raised.value.line == 201


def test_overlapping_renders_restore_the_recursion_limit():
    """Renders in two threads that enter and leave out of order leave the limit as it was."""
    import sys
    import threading

    from reclass_ng.render import deep_recursion

    before = sys.getrecursionlimit()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with deep_recursion():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with deep_recursion():
            second_in.set()
            first_out.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sys.getrecursionlimit() == before


def test_the_loaders_memo_tables_stay_bounded(tmp_path):
    # Spellings no other test writes: each one is new to the tables.
    import uuid

    from reclass_ng.storage.yaml_load import YamlLoader

    loader = YamlLoader(memo_entries=50)
    numbers = [uuid.uuid4().int % 10**15 for _ in range(300)]
    words = [f"w{uuid.uuid4().hex[:12]}" for _ in range(300)]
    path = tmp_path / "many.yml"
    path.write_text("numbers: [" + ", ".join(map(str, numbers)) + "]\n"
                    "words: [" + ", ".join(words) + "]\n")
    assert loader.load_file(str(path)) == {"numbers": numbers, "words": words}
    assert 0 < len(loader.scalar_values) <= 50
    assert 0 < len(loader.plain_tags) <= 50
    # Loading again, with the tables holding other spellings, gives the same values.
    assert loader.load_file(str(path)) == {"numbers": numbers, "words": words}


# plain_scalar_tag, the fast path, against PyYAML's resolver (the reference).
_RESOLVER = yaml.resolver.Resolver()
_PLAIN_WORDS = ["yes", "Yes", "YES", "yEs", "no", "NO", "nO", "on", "ON", "off", "Off", "n", "y",
                "true", "TRUE", "tRue", "false", "null", "Null", "NULL", "nULL", "~", "~~", "0",
                "00", "01", "08", "10", "123", "1_0", "0x1f", "0b1", "0o7", "1:30", "1.5", "1e3",
                "2001-12-14", "-1", "+1", ".5", ".inf", "<<", "=", "", "\u0661\u0662", "node01",
                "1.", "3.14", "0.5", "1.2.3", "10.0.0.1", "1..2", "1.5e3", "1_0.5", "1.2\n",
                "0.pool.ntp.org", "3rd", "2fa", "1.0.2k", "1e3x", "0x1g", "2001-12-14t", "1_0:30 Z", ".", "..", ".web", ".5", ".5e+3", ".inf", ".Inf", ".iNf", ".nan", ".NaN", ".nAn", "<", "<<<", "<a", "==", "=a"]
# Shapes of real inventories' values (issue 29): options, hashes, port mappings, MAC and IP
# addresses with ports, octal modes, multi-line text, PyYAML's `yaml` indicators.
_REAL_SHAPES = ["-c", "--insecure", "-Xms512m -Xmx512m", "--port=443", "-", "+", "-.5", "+.inf",
                "-1_0", "-2..+2", "24x7", "30d", "3FE869A9", "0640", "0689", "0_7", "07_",
                "4096 87380 16777216", "58118E89F3A912897C070ADBF76221572C52609D",
                "85543e49238903ac", "1.10.x", "0.0.0.0:4954", "10.0.1.90:5000", "15000:5000",
                "1389:389", "52:54:00:00:01:01", "1:60", "0:30", "1::2", "1:2.5", "1:2:3.5",
                "12:30", "190:20:30.15", "1e5", "1E+5", "1e+5", "0x", "0b", "0xZ", "1x5", "1b0",
                "2001-12-14 1:2:3", "2001-12-14T10:00:00Z", "2001-12-14 21:59:43.10 -5",
                "*", "**", "*a", "!", "!!", "&", "&a", "** $HOST$ **", "a\nb", "-----BEGIN\nx\n",
                "yes\n", "1\n", "\n", "\n\n", "x\n\n", "fluentd_stop\n", ". ./f.bash\n",
                "1.5\n", "~\n", "-1_000.5", "+0b101", "-0x1f", "-1:30", "+1.5e+3", "-1-2",
                "-2001-12-14", "-1.5.6", "-0.0.0.0", "..", ".1.2"]


def _pyyaml_tag(value: str) -> str:
    return _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))


def test_plain_scalar_tags_are_pyyamls_for_common_words():
    from reclass_ng.storage.yaml_load import plain_scalar_tag
    from reclass_ng.storage.yaml_rules import standard_resolver_table

    assert standard_resolver_table()  # the installed PyYAML: the fast path answers
    answered = 0
    words = _PLAIN_WORDS + _REAL_SHAPES
    for value in words + [w + "\n" for w in words] + [w + " x" for w in words]:
        tag = plain_scalar_tag(value)
        if tag is not None:
            answered += 1
            assert tag == _pyyaml_tag(value), value
    assert answered > len(_PLAIN_WORDS)


@settings(max_examples=500)
@given(st.text(alphabet="yYesnNotTrufaFlOL~0123456789_.:+-xbe<=! \n\u0661", max_size=8)
       | st.sampled_from(_PLAIN_WORDS + _REAL_SHAPES))
def test_plain_scalar_tag_is_pyyamls_or_none(value):
    from reclass_ng.storage.yaml_load import plain_scalar_tag

    tag = plain_scalar_tag(value)
    assert tag is None or tag == _pyyaml_tag(value)


@settings(max_examples=1000)
@given(st.text(alphabet="0123456789:._-+ \tabcdefxABCDEFTtZ!&*\n", max_size=12)
       | st.from_regex(r"[-+]?[0-9][0-9_]{0,4}(\.[0-9_]{0,3})?([eE][-+]?[0-9]{0,2})?",
                       fullmatch=True)
       | st.from_regex(r"[0-9]{1,5}(:[0-9]{0,3}){1,4}(\.[0-9]{0,2})?", fullmatch=True)
       | st.from_regex(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{2}:[0-9]{2})?",
                       fullmatch=True))
def test_plain_scalar_tag_of_number_like_text_is_pyyamls_or_none(value):
    # Numbers, sexagesimals, timestamps, hex and near misses of each: the digit rules.
    from reclass_ng.storage.yaml_load import plain_scalar_tag

    tag = plain_scalar_tag(value)
    assert tag is None or tag == _pyyaml_tag(value), value


def test_plain_scalar_tag_answers_the_shapes_of_real_inventories():
    # Each of these was left to PyYAML's resolver, whose patterns need `re` (a sixth of a
    # small whole render); the digits, signs and dots of the others still are.
    from reclass_ng.storage.yaml_load import plain_scalar_tag

    answered = ["", "-c", "--insecure", "-Xms512m -Xmx512m", "--port=443", "-", "24x7", "30d",
                "3FE869A9", "0640", "0689", "4096 87380 16777216",
                "58118E89F3A912897C070ADBF76221572C52609D", "85543e49238903ac", "1.10.x",
                "0.0.0.0:4954", "10.0.1.90:5000", "15000:5000", "1389:389", "52:54:00:00:01:01",
                "*", "!", "&a", "** $HOST$ **", "a\nb", "-----BEGIN\nx\n", "yes\n",
                "fluentd_stop\n", ". ./f.bash\n", "-2..+2", "-1", "-0640", "-1.5",
                "-0.0.0.0", "../x"]
    assert [value for value in answered if plain_scalar_tag(value) is None] == []


@settings(max_examples=300)
@given(st.text(alphabet="yYesnNotTrufaFlOL~0123456789_.:+-xbe ", max_size=8)
       | st.sampled_from(_PLAIN_WORDS))
def test_plain_scalar_values_are_pyyamls_without_pyyaml(value):
    # The block reader's values of the scalars plain_scalar_tag types (without importing
    # PyYAML) against PyYAML's safe constructor, under the tag PyYAML resolves and under an
    # explicit tag of each kind.
    from reclass_ng.storage.yaml_load import _NOT_PLAIN, _plain_typed_value

    constructor = yaml.constructor.SafeConstructor()
    for tag in {_pyyaml_tag(value), *(f"tag:yaml.org,2002:{kind}"
                                      for kind in ("int", "float", "bool", "null"))}:
        ours = _plain_typed_value(tag, value)
        if ours is _NOT_PLAIN:
            continue
        expected = constructor.yaml_constructors[tag](constructor, yaml.ScalarNode(tag, value))
        assert type(ours) is type(expected) and ours == expected, (tag, value)
