"""The fast path for plain block YAML (storage/yaml_block.py) reads what it reads exactly as
the full PyYAML loader does (its slow reference, yaml_load.parse_yaml_full), and leaves
everything else, invalid YAML included, to that loader."""

from __future__ import annotations

import math
import os

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.errors import YamlFileError
from reclass_ng.storage.yaml_block import NotSimple, block_yaml_text
from reclass_ng.storage.yaml_load import MAX_YAML_DEPTH, YamlLoader, load_yaml_file, parse_yaml_full
from reclass_ng.storage.yaml_rules import MAX_EXPANDED_NODES

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)


def typed(value):
    """`value` with the type of every part spelt out (1, 1.0 and True differ; key order
    counts; NaN equals NaN)."""
    if type(value) is dict:
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if type(value) is list:
        return ("list", [typed(v) for v in value])
    if type(value) is float:
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


# One storage's loader: the fast path and its reference share its memo tables, as they do
# when a storage reads its files.
LOADER = YamlLoader()


def fast(text: str):
    """What the fast path makes of `text`, or NotSimple (the class) when it declines."""
    prepared = block_yaml_text(text.encode())
    if prepared is None:
        return NotSimple
    try:
        return LOADER.block_reader.parse(prepared)
    except NotSimple:
        return NotSimple


def full(text: str):
    """What the full loader makes of `text`, or the YAML error it raises."""
    try:
        return parse_yaml_full(text.encode(), LOADER)
    except yaml.YAMLError as err:
        return err


def assert_same_or_declined(text: str) -> bool:
    """The fast path's answer is the full loader's, or it declines; True when it answered."""
    got = fast(text)
    if got is NotSimple:
        return False
    expected = full(text)
    assert not isinstance(expected, yaml.YAMLError), (text, expected)
    assert typed(got) == typed(expected), text
    assert_nothing_shared(got, set())
    return True


def assert_nothing_shared(value, seen: set[int]) -> None:
    """No list or mapping of `value` appears twice in it (the full loader builds an alias's
    value again, as a copy)."""
    if type(value) is dict or type(value) is list:
        assert id(value) not in seen, "a list or mapping shared by two places"
        seen.add(id(value))
        for item in value.values() if type(value) is dict else value:
            assert_nothing_shared(item, seen)


READ_FAST = [
    "a: 1\n",
    "classes:\n- a.b\n- .c\nparameters:\n  x: ${a:b}\n  y:\n    z: '10.0.0.1'\n",
    "a:\n  - 1\n  - x: 1\n    y:\n    - 2\n  -\n  - ~\nb: [a, -1, 1.5, yes, Off, null]\n",
    "k: 'it''s'\nd: \"plain\"\ne: []\nf: {}\ng: [ ]\nh: a#b\ni: a  b # comment\n",
    "# comment\n\nx:   # comment\n  # comment\n  y: 1e3\n  ~z: -.5\n  =w: .inf\nn: 0x1f\no: 017\n",
    "1: int\n2.5: float\ntrue: bool\n~: null\nnull: null again\nt: -\"x\"\nu: a:b\n",
    "deep:\n- a:\n  - b\n  c: d\n- e\nlast:\n",
    "trailing: spaces   \nkey:    \n  x: 1   \n",
    "",  # no document: None
    "# only a comment\n\n  \n",
    "'quoted key': 1\n\"null\": ~\n'it''s': \"v\"\n\"\": ''\n",
    "a: [\"x\", 'y', z, '']\nb: ['.*', '[x]', 'a # b', \"1\", '{a: 1}', \"it's\"]\n",
    "a:\n- x: [\"a\", 'b']\n",
    # Kapitan's secret references and other plain scalars starting with `?` or `:`
    "password: ?{base64:targets/${target_name}/mysql/password||randomstr|base64}\n"
    "l:\n- ?{gpg:x||random:str}\n- ::1\n- :x # c\n",
    # block scalars: literal and folded, every chomping, indentation indicators, blank lines
    # before, inside and after the text, more-indented lines, `#` inside the text
    "a: |\n  text\n",
    "a: |-\n  x\n\n",
    "a: |+\n  x\n\n\nb: 1\n",
    "a: >\n  a\n  b\n\n  c\n   d\n  e\n",
    "a: >-\n  x\n \n  y\n",
    "a: >\n\n  x\n\n\n  y\n",
    "a: |2-\n    x\n  y\n",
    "a: >+1\n  x\n\n",
    "a: |-2  # c\n     x\n",
    "a:\n- |\n  x\n  # not a comment\n- >\n\n   p\n   q\n# comment\nb: |\n     \nc: 1\n",
    "a:\n  - k: >+\n\n      p\n      q  \n\n\n    j: |\n  # ends it\n",
    "a:\n  |\n    below its key\nb:\n-\n  >-\n   below its dash\n",
    "a: |\n  no final line break",
    "a: |\n  x\n  ",
    "a: |\n  tab\tinside\n  \tat the start\n",
    # the document's start marker
    "---\na: 1\n",
    "# c\n\n--- # start\na: 1\n",
    "---   \n",
    # quoted scalars followed by a comment, and escapes
    "a: 'x'   # c\nb: \"y\" # c\nc:\n- '@wheel'   # c\n- \"it's\" #\n",
    "a: \"\\N\\_\\e\\x41\\u00e9\\U0001F600\\/\\\\ \\\"\\t\\0\"\nb: [\"x\\n\", \"\\\\\"]\n",
    "a: \"%syslogtag:1:32%%msg:::sp-if-no-1st-sp%%msg%\\\\n\"\n",
    # non-ASCII text
    "a: caf\u00e9\ncl\u00e9: 'na\u00efve'\nb: \"\u65e5\u672c\"\n"
    "c: [\u00fc, '\u00df']\nd: \U0001F600\n",
    "\u00a0a: b\u00a0\n",
    # a scalar on the lines below its key (plain ones folded), and spaces before a key's `:`
    "a:\n  ${x:y}\nb:\n  one\n  two\n\n  three\n    four\nc:\n  'q' # c\nd:\n  1\n",
    "nagios :\n  a : 1\n",
    # anchors on scalars, block scalars, mappings, sequences and flow lists, and aliases to
    # them (mindwm's shapes); a flow list of URLs (kapitan-reference's)
    "a: &x 1\nb: *x\n",
    "panes:\n  -\n    - &activate_venv |\n      cd x\n      . venv/bin/activate\n"
    "    - python3 ./x.py\n  -\n    - *activate_venv\n",
    "g:\n  IoDocument:\n    io_context: &io_context_rel_to\n      rel_to:\n"
    "        class: IoContext\n  IoContext:\n    io_context: *io_context_rel_to\n",
    "x:\n  name: &ex mindwm-context\nq:\n  exchange_name: *ex\n  queue_name: *ex  # c\n",
    "values: &helm_values\n  envs:\n    config:\n      K: \"${a}:${b}\"\n"
    "  service:\n    type: NodePort\nhelm:\n  kafka-ui: *helm_values\n",
    "a: &l\n- 1\n- [x, y]\nb: *l\nc:\n  d: *l\n",
    "a: &f [1, 'q']\nb: &e {}\nc: *f\nd: *e\n",
    "a: &n\nb: *n\nc: &q 'it''s'\nd: *q\ne: &s # c\n  k: v\nf: *s\n",
    "a:\n- &m\n  k: v\n- *m\n- &t x\n- *t\n- &z\n- *z\n",
    "a: &o\n  b: &i\n    c: 1\n  d: *i\ne: *o\nf: *i\n",
    "a: &x1\n  text below\nb: *x1\n",
    "oauth_scopes: [https://www.googleapis.com/auth/cloud-platform]\n",
    # quoted keys after a dash (Salt's security group rules: `- 'direction': 'ingress'`)
    "r:\n  - 'direction': 'ingress'\n    'x': 1\ns:\n- \"a\": b\n- 'c':\n    d: 1\n- 'e':\n"
    "- 'a: b'\n- 'q' # c:\n",
    # merge keys: the aliased mapping's entries first, the mapping's own override them
    "x: &x\n  a: 1\nz:\n  <<: *x\n",
    "a: &a\n  x: 1\n  y: [1]\nb:\n  x: 3\n  <<: *a\n  z: 4\n  y: 5\n",
    "a: &a\n  x: 1\nb: &b\n  <<: *a # c\n  y: 2\nc: *b\n",
    "a: &a\n  x: 1\nl:\n- <<: *a\n  y: 2\n- k: 1\n  <<: *a\n",
    "a: &a\n  k: 1\n<<: *a\n",
    "a: &a\n  x: 1\n  y:\n  - 1\n  z: |\n    t\n  # c\n\n  w: 2\nc:\n  <<: *a\n",
    "l:\n- &a\n  x: 1\n  y: 2\n- <<: *a\n",
    "a: [x:y, a:-b, -:b, 'a:b', \"c:d\", http://x:80/p, 1:30, x :y]\n",
]
READ_FULL_WAY = [
    "- a\n- b\n",
    "a: 1\n---\nb: 2\n",
    "a: !!str 1\n",
    "a: multi\n  line\n",
    "a: 'multi\n  line'\n",
    "a:\tb\n",
    "a: |\n\tx\n",
    "a: |\n  x\n\tb: 1\n",
    "a: x\t# c\n",
    "a: |0\n x\n",
    "a: | x\n",
    "a: |++\n x\n",
    "a: |#c\n x\n",
    "a: |\n     \n  x\n",
    "a: |\n  x\n y\n",
    "---\na: 1\n---\nb: 2\n",
    "--- a: 1\n",
    "----\na: 1\n",
    "a: 1\n...\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: x\x85y\n",
    "a: x\u2028y\n",
    "\ufeffa: 1\n",
    "a: \x01\n",
    "a: \"\\'\"\n",
    "a: \"\\x4\"\n",
    "a: \"\\ud800\"\n",
    "a: \"x\\\n  y\"\n",
    "a: 'x'#c\n",
    "a:\n  x\n  b: 1\n",
    "a:\n  x # c\n  y\n",
    "a:\n  x\n  - y\n",
    "a: b\r\n",
    "<<: {a: 1}\n",
    "a: 2001-12-14\n",
    "a: [1, [2]]\n",
    "a: {b: 1}\n",
    "\"a: b\": c\n",
    "'a'b: c\n",
    "a: ['x', y']\n",
    "a: ['a, b']\n",
    "a: [x'y]\n",
    "a: ['x' #c]\n",
    "a: [\"x\" \"y\"]\n",
    "  a: 1\n",
    "a:\n    b: 1\n  c: 2\n",
    "a: 1\n- b\n",
    "a: b: c\n",
    "a: - b\n",
    "- - a\n",
    "a: [b, ]\n",
    # anchors and aliases PyYAML refuses or reads otherwise, and merge keys
    "a: &x 1\nb: &x 2\nc: *x\n",
    "a: *x\n",
    "a: &x\n  b: 1\n  c: *x\n",
    "a: &x\n- *x\n",
    "a:\n- &x\n  - *x\n",
    "- &a k: v\n",
    "a:\n- &a k: v\n- *a\n",
    "&a a: b\nc: *a\n",
    "a: &a.b v\nb: *a.b\n",
    "a: &a:b v\n",
    "a: & x\n",
    "a: &x v\nb: *x x\n",
    "a: &x v\nb: *x#c\n",
    "a: &x *y\n",
    "a: &x &y v\n",
    "a: &x !!str 1\n",
    "a: &x v\nb:\n  *x\n",
    "a: &x {b: 1}\n",
    "a: &x [*y]\n",
    "<<: {a: 1}\n",
    "a: &a\n  x: 1\nb:\n  <<: *a\n  <<: *a\n",
    "a: &a 1\nb:\n  <<: *a\n",
    "a: &a [1]\nb:\n  <<: *a\n",
    "a: &a\n  x: 1\nb:\n  <<:\n    x: 2\n",
    "a: &a\n  x: 1\nb:\n  << : *a\n",
    # a merged mapping written with a key twice, or with a merge key: PyYAML keeps the first
    # or the last of its entries with one key, as their keys' strings are one object or not
    "a: &a\n  x: 1\nb: &b\n  <<: *a\n  x: 2\nc:\n  <<: *b\n",
    "a: &a\n  xx: 1\n  xx: 2\nc:\n  <<: *a\n",
    "a: &a\n  x: 1\nb: &b\n  <<: *a\n  y: 2\nd:\n  <<: *b\n  x: 0\n",
    "a: &a\n  x: 1\n  x: 2\nb:\n  x: 0\n  x: 9\n  <<: *a\n",
    "a:\n - &n0\n  a: &n1\n   - v\n  a:\n   a: v\nb:\n a:\n  <<: *n0\n",
    # `:` in flow items that PyYAML's two scanners (or libyaml's versions) read otherwise
    "a: [x:]\n",
    "a: [x:, y]\n",
    "a: [:x]\n",
    "a: [a: b]\n",
    "a: [a:b: c]\n",
    "a: [a:?b]\n",
    "r:\n- 'x':y\n",
    "r:\n- 'a: b': c\n",
]


@pytest.mark.parametrize("text", READ_FAST)
def test_plain_block_yaml_is_read_by_the_fast_path_as_pyyaml_reads_it(text):
    assert assert_same_or_declined(text), f"the fast path declined {text!r}"


@pytest.mark.parametrize("text", READ_FULL_WAY)
def test_everything_else_is_left_to_the_full_loader(text):
    assert fast(text) is NotSimple


@pytest.mark.parametrize("byte", range(256))
def test_a_file_of_one_odd_byte_reads_fast_only_when_the_byte_is_plain_text(byte):
    # block_yaml_text passes printable ASCII and newlines in one pass, and only then looks at
    # what else a file holds: a tab (inside block scalars), valid UTF-8 (checked per
    # character), never a control byte, DEL or a lone byte of a multi-byte character.
    data = b"a: x" + bytes([byte]) + b"y\n"
    text = block_yaml_text(data)
    if 0x20 <= byte < 0x7F or byte in (0x09, 0x0A):
        assert text == data.decode("ascii")
    else:
        assert text is None


def test_plain_and_odd_files_are_told_apart_whatever_their_length():
    line = "key: value with spaces and ${ref:path}\n"
    for repeat in (1, 7, 300):
        plain = (line * repeat).encode()
        assert block_yaml_text(plain) == line * repeat
        for odd, read in ((b"\x00", False), (b"\x7f", False), (b"\r", False),
                          (b"\t", True), ("\u00e9".encode(), True), ("\u0085".encode(), False)):
            data = plain[:-1] + odd + b"\n"
            assert (block_yaml_text(data) is not None) is read, (repeat, odd)


# Lines built from pieces that sit on the edges of what the fast path reads: odd keys,
# scalars PyYAML types, comments, quotes, flow collections, dashes and any indentation.
KEYS = st.sampled_from(["a", "b", "k1", "~a", "=a", "=", "<<", "1", "1.5", "true", "null", "~",
                        "a b", "a:b", "-a", "'q'", '"q"', "a #c", "a#c", "?", "a ", ":", "x",
                        "[a]", "&a", "!a", "@a", "0x10", "2001-12-14"])
VALUES = st.sampled_from([
    "v", "1", "-1", "+1", "1.5", "1e-5", "1e3", "0x1f", "017", "1_000", "1:30", "yes", "No",
    "~", "null", "", "'s'", "'it''s'", "'bad' '", "'a' # c", "''", '"d"', '"e\\n"', '""',
    "[]", "{}", "[a, b]", "[a, [b]]", "[ ]", "[a, ]", "[a,b]", "[1, yes, ~]", "[- a]", "[-1]",
    "{a: 1}", "a #c", "a#c", "# c", "a: b", "a:", "a:b", "${x:y}", "$[x]", "&a", "*a", "!t x",
    "|", ">", "2001-12-14", ".5", ".inf", ".NaN", "%x", "@x", "`x", "-", "- x", "-x", "?x",
    ":x", "a  b", "v   ", "'", "\"", "a 'b'", ",a", "a,b", "=", "<<", "?{a:b||c|d}", "?{x}",
    "::1", "?", ":", "? x", ": x", "?x #c", "?a: b", "?[a]", "|-", ">+2", "|2", "| # c", "|x",
    "&b", "&b x", "&a [x]", "&b |", "&a 'q'", "&a # c", "*b", "*a # c", "*a:", "&a *b",
    "[https://x]", "[a:b, 'c:d']", "[x:]", "[:x]", "[a: b]", "[a :b]",
    "'x' # c", '"x"  #c', "'x'#c", "caf\u00e9", "'\u00e9'", "x\ty", "\tx", '"\\u00e9\\t"',
    '"\\q"', "--- x", "---", "\u2028", "\U0001F600"])
LINES = st.tuples(st.integers(0, 6), st.sampled_from(["key", "key:", "dash", "dash-key", "dash:",
                                                    "-", "comment", "blank", "value"]),
                  KEYS, VALUES)


def _line(indent: int, form: str, key: str, value: str) -> str:
    text = {"key": f"{key}: {value}", "key:": f"{key}:", "dash": f"- {value}",
            "dash-key": f"- {key}: {value}", "dash:": f"- {key}:", "-": "-",
            "comment": f"# {value}", "blank": "", "value": value}[form]
    return " " * indent + text


@settings(max_examples=600)
@given(st.lists(LINES, min_size=1, max_size=12))
def test_generated_lines_read_fast_only_as_pyyaml_reads_them(lines):
    assert_same_or_declined("\n".join(_line(*line) for line in lines) + "\n")


# Whole documents laid out as block YAML (mostly valid, so the fast path answers often), with
# the same edge pieces as scalars and keys, indentation steps of 1 to 4, sequences at their
# key's indentation or deeper, comments, blank lines and trailing spaces.
COMMON_KEYS = st.sampled_from(["a", "b", "k1", "~a", "=a", "1", "true", "null", "a b", "a:b",
                               "x", "0x10", "1.5", "a#c"])
COMMON_VALUES = st.sampled_from(["v", "1", "-1", "1.5", "yes", "~", "'s'", "'it''s'", '"d"', "[]",
                                 "{}", "[a, b]", "a #c", "a#c", "${x:y}", "a:b", "a  b", ".5",
                                 "0x1f", "1e3", "null", "[1, yes, ~]", "-x", "''", "'x' # c",
                                 "caf\u00e9", '"e\\n"'])
DOCUMENT_KEYS = st.one_of(COMMON_KEYS, COMMON_KEYS, COMMON_KEYS, KEYS)
NODES = st.recursive(
    st.one_of(COMMON_VALUES, COMMON_VALUES, COMMON_VALUES, VALUES),
    lambda inner: st.tuples(st.just("map"), st.lists(st.tuples(DOCUMENT_KEYS, inner),
                                                     min_size=1, max_size=4))
    | st.tuples(st.just("seq"), st.lists(inner, min_size=1, max_size=4)), max_leaves=20)


# A loader whose fast path declines a mapping writing a key twice (lint's YAML checks)
UNIQUE = YamlLoader(block_reader=True, unique_keys=True)


def written_twice(node) -> bool:
    """Whether a mapping of a composed document writes a key twice (the same tag and text;
    merge keys aside), as lint's duplicate-key rule finds it."""
    stack, seen = [node], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys = [(k.tag, k.value) for k, _ in node.value
                    if isinstance(k, yaml.ScalarNode) and k.value != "<<"]
            if len(keys) != len(set(keys)):
                return True
            stack.extend(value for _, value in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return False


def assert_unique_or_declined(text: str) -> bool:
    """With unique_keys the fast path declines, or reads what it reads without them from a
    document writing no key twice; True when it read."""
    read, document = UNIQUE.block_read(text.encode())
    if not read:
        return False
    assert typed(document) == typed(fast(text)), text
    assert not written_twice(yaml.compose(text)), text
    return True


def _layout(node, indent, step, indentless, noise, out):
    kind, items = node
    for item in items:
        pad = " " * indent
        if noise.draw(st.integers(0, 9)) == 0:
            out.append(noise.draw(st.sampled_from(["", "   ", pad + "# note", "#"])))
        if kind == "map":
            key, value = item
            head = f"{pad}{key}:"
        else:
            value, head = item, pad + "-"
        if isinstance(value, str):
            out.append(f"{head} {value}" + noise.draw(st.sampled_from(["", "", " ", " # c"])))
            continue
        if kind == "seq" and value[0] == "map" and noise.draw(st.booleans()):
            # `- key: value` with the mapping's other keys under the first one
            nested: list[str] = []
            _layout(value, indent + 2, step, indentless, noise, nested)
            out.append(head + " " + nested[0].lstrip(" ") if nested and nested[0].strip()
                       and not nested[0].lstrip(" ").startswith("#") else head)
            out.extend(nested[1:] if nested and nested[0].strip()
                       and not nested[0].lstrip(" ").startswith("#") else nested)
            continue
        out.append(head)
        deeper = indent if (kind == "map" and value[0] == "seq" and indentless) else indent + step
        _layout(value, deeper, step, indentless, noise, out)


@settings(max_examples=250)
@given(st.lists(st.tuples(DOCUMENT_KEYS, NODES), min_size=1, max_size=5), st.integers(1, 4),
       st.booleans(), st.data())
def test_generated_documents_read_fast_only_as_pyyaml_reads_them(pairs, step, indentless, data):
    lines: list[str] = []
    _layout(("map", pairs), 0, step, indentless, data, lines)
    assert_same_or_declined("\n".join(lines) + "\n")


@settings(max_examples=150)
@given(st.lists(st.tuples(DOCUMENT_KEYS, NODES), min_size=1, max_size=5), st.integers(1, 4),
       st.booleans(), st.data())
def test_with_unique_keys_the_fast_path_reads_only_documents_writing_no_key_twice(
        pairs, step, indentless, data):
    lines: list[str] = []
    _layout(("map", pairs), 0, step, indentless, data, lines)
    assert_unique_or_declined("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", [
    "a: 1\nb: 2\na: 3\n",
    "x:\n  a: 1\n  a: 1\n",  # the second line as the memo of lines has it
    "l:\n- a: 1\n  a: 2\n",
    "yes: 1\ntrue: 2\n",  # two spellings of one key (declined: lint's rule composes the file)
    "base: &b\n  k: 1\nm:\n  <<: *b\n  k: 2\n",  # a key after a merge key gave it
])
def test_with_unique_keys_a_key_written_twice_is_declined(text):
    assert assert_same_or_declined(text)  # what the storage's fast path reads
    assert not assert_unique_or_declined(text)


def test_with_unique_keys_keys_written_once_take_the_fast_path():
    text = "a: 1\nb:\n  a: 2\n  c: [1, 2]\nl:\n- a: 1\n- a: 2\nm: &m\n  k: 1\nn: *m\n"
    assert assert_unique_or_declined(text)


scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
           | st.text(alphabet=" ab\n\t\u00e9\u00a0\u2028\x85\U0001F600#:-'\"\\", max_size=12)
           | st.sampled_from(["yes", "off", "~", "0x10", "1:30", "1e3", "-.5", ".NaN", "a: b",
                              "- x", "'q'", "a #b", "${a:b}"]))
trees = st.recursive(scalars, lambda c: st.lists(c, max_size=4)
                     | st.dictionaries(scalars.filter(lambda v: v == v), c, max_size=4),
                     max_leaves=25)


@settings(max_examples=150)
@given(st.dictionaries(st.text(alphabet="abcxyz_~=.-1 ", min_size=1, max_size=6), trees,
                       min_size=1, max_size=5),
       st.integers(2, 4), st.booleans())
def test_dumped_mappings_read_fast_as_pyyaml_reads_them(tree, indent, sort_keys):
    for unicode in (False, True):
        text = yaml.safe_dump(tree, default_flow_style=False, indent=indent,
                              sort_keys=sort_keys, width=10_000, allow_unicode=unicode)
        assert_same_or_declined(text)
    # multi-line strings as literal block scalars, which PyYAML writes with an indentation
    # indicator when they start with a space, and `|-`/`|+` for their final line breaks
    assert_same_or_declined(yaml.dump(tree, Dumper=_LiteralDumper, default_flow_style=False,
                                      indent=indent, sort_keys=sort_keys, allow_unicode=True))


class _LiteralDumper(yaml.SafeDumper):
    """Writes every string that holds a line break as a literal block scalar (where the
    emitter allows one)."""


_LiteralDumper.add_representer(
    str, lambda dumper, value: dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None))


# Documents laid out as above with anchors on entries (on the block below a key or dash, or
# on its one-line value) and aliases in place of one-line values, mostly to names anchored
# and closed before; at times a name anchored twice, an alias inside the block it names, or
# to a name never anchored, and merge keys (`<<: *name`) among a mapping's entries.
COMMON_NODES = st.recursive(
    COMMON_VALUES, lambda inner: st.tuples(st.just("map"), st.lists(
        st.tuples(COMMON_KEYS, inner), min_size=1, max_size=4))
    | st.tuples(st.just("seq"), st.lists(inner, min_size=1, max_size=4)), max_leaves=20)
# One time in twenty (hypothesis draws small integers far more often than others).
RARELY = st.sampled_from(range(20)).map(lambda number: number == 7)


def _anchored_layout(node, indent, step, draw, names, out):
    kind, items = node
    for item in items:
        pad = " " * indent
        if kind == "map":
            key, value = item
            head = f"{pad}{key}:"
        else:
            value, head = item, pad + "-"
        if kind == "map" and names["maps"] and (item is items[0] or draw(RARELY)) \
                and draw(st.booleans()):
            merged = names["closed"] if draw(RARELY) else names["maps"]
            out.append(f"{pad}<<: *{draw(st.sampled_from(merged))}")  # a merge key
        anchor = name = ""
        if draw(st.integers(0, 2)) == 0:
            name = draw(st.sampled_from(names["closed"])) \
                if names["closed"] and draw(RARELY) else f"n{names['count']}"
            names["count"] += 1
            anchor = " &" + name + draw(st.sampled_from(["", "", " # c"]))
        if isinstance(value, str):
            if not anchor and names["closed"] and draw(st.integers(0, 1)) == 0:
                alias = "unknown" if draw(RARELY) else draw(st.sampled_from(
                    names["open"] if names["open"] and draw(RARELY) else names["closed"]))
                out.append(f"{head} *{alias}" + draw(st.sampled_from(["", " # c"])))
            elif anchor and "#" in anchor:
                out.append(head + anchor)  # an anchored null
            else:
                out.append(f"{head}{anchor} {value}")
            if name:
                names["closed"].append(name)
            continue
        out.append(head + anchor)
        if name:
            names["open"].append(name)
        _anchored_layout(value, indent + step, step, draw, names, out)
        if name:
            names["open"].remove(name)
            names["closed"].append(name)
            if value[0] == "map":
                names["maps"].append(name)


@settings(max_examples=150)
@given(st.lists(st.tuples(COMMON_KEYS, COMMON_NODES), min_size=1, max_size=5), st.integers(1, 4),
       st.data())
def test_generated_anchors_and_aliases_read_fast_only_as_pyyaml_reads_them(pairs, step, data):
    lines: list[str] = []
    _anchored_layout(("map", pairs), 0, step, data.draw,
                     {"open": [], "closed": [], "maps": [], "count": 0}, lines)
    assert_same_or_declined("\n".join(lines) + "\n")


def test_anchors_and_aliases_take_the_fast_path():
    # What the property above checks is not vacuous: anchored blocks and scalars, aliased.
    text = ("a: &m\n  k: [1, x]\n  l:\n  - &s v\n  - &b |\n    text\nb: *m\nc:\n- *s\n"
            "- *b\n- *m\n")
    assert assert_same_or_declined(text)
    assert fast(text)["c"][2] == {"k": [1, "x"], "l": ["v", "text\n"]}


def test_aliases_are_read_fast_within_the_limits_the_full_loader_keeps(tmp_path):
    """Aliases expanding to a thousand values are read fast; an alias bomb, a mapping whose
    duplicate keys the full loader counts in each copy, and a copy nesting deeper than its
    limit are left to the full loader, with its errors."""
    def laughs(levels: int) -> str:
        return "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"a{level}: &a{level}\n" + f"- *a{level - 1}\n" * 9 for level in range(1, levels))

    assert assert_same_or_declined(laughs(3))  # 81 copies of a0
    duplicates = ("a: &a\n" + "  k: 1\n" * 2_000 + "b:\n"
                  + "".join(f"  c{number}: *a\n" for number in range(MAX_EXPANDED_NODES // 2_000)))
    deep = ("a: &a\n" + "".join(" " * (level + 2) + f"k{level}:\n" for level in range(150))
            + "".join(" " * level + f"d{level}:\n" for level in range(100)) + " " * 100 + "x: *a\n")
    assert fast(duplicates) is NotSimple  # (the full loader takes 1.5 s to say so)
    for name, text, message in (("bomb.yml", laughs(9), "expand to more than 1000000"),
                                ("deep.yml", deep, "nests deeper than 200 levels")):
        assert fast(text) is NotSimple, name
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(YamlFileError, match=message):
            load_yaml_file(str(path))


def test_dumped_plain_mappings_take_the_fast_path():
    # What the property above checks is not vacuous: ordinary trees are read fast.
    tree = {"classes": ["a.b", "c"], "parameters": {"a": {"b": [1, "x", {"c": None}], "d": 1.5},
                                                    "~e": "${a:b}", "f": "10.0.0.1", "g": []}}
    for indent in (2, 4):
        assert assert_same_or_declined(yaml.safe_dump(tree, indent=indent, sort_keys=False))


# Block scalars in every context: after a key, a dash or a dash and a key, or alone on the line
# below its key or dash; any header (chomping, indentation indicator, comment or junk after
# it); text lines of any indentation, blank lines of any length before, inside and after the
# text, `#` lines, tabs and non-ASCII text; then a sibling entry, a comment or the end of the
# text, with or without its final line break.
BLOCK_TEXT = st.sampled_from(["text", "more text", "# hash", "- dash", "key: v", "", "", " ",
                              "  ", "a\tb", "caf\u00e9 \u00fc", "x  ", "'q'", "|", "a  b",
                              "\tx"])
# Each text line's indentation: the scalar's own (more than its entry's column) plus this.
BLOCK_LINE_SHIFT = st.sampled_from([0, 0, 0, 0, 1, 2, -1])


@settings(max_examples=500)
@given(st.sampled_from(["key: {}", "- {}", "- key: {}", "key:\n{pad}  {}", "-\n{pad}  {}"]),
       st.sampled_from([0, 2]), st.sampled_from("|>"), st.sampled_from(["", "-", "+"]),
       st.sampled_from(["", "", "", "1", "2", "4", "0"]), st.booleans(),
       st.sampled_from(["", "", "", " # c", "  #c", " x", "#c", "\t# c"]), st.integers(1, 3),
       st.lists(st.tuples(BLOCK_LINE_SHIFT, BLOCK_TEXT), max_size=7),
       st.sampled_from(["next", "next", "# c", "  # c", "", "\tx: 1"]), st.booleans())
def test_generated_block_scalars_read_fast_only_as_pyyaml_reads_them(
        form, pad, style, chomping, increment, increment_first, comment, step, body, after,
        final):
    indicators = increment + chomping if increment_first else chomping + increment
    header = style + indicators + comment
    entry = " " * pad + form.format(header, pad=" " * pad)
    lines = (["outer:"] if pad else []) + [entry]
    column = pad + 2 if form.startswith("- key") else pad  # the entry's
    lines += [" " * (column + step + shift) + text if text.strip(" ") else " " * shift + text
              for shift, text in body]
    if after == "next":
        after = " " * pad + ("- next" if form.startswith("-") else "next: 1")
    lines.append(after)
    assert_same_or_declined("\n".join(lines) + ("\n" if final else ""))


def test_block_scalars_take_the_fast_path():
    # What the property above checks is not vacuous: block scalars of every header are read.
    for style in "|>":
        for header in ("", "-", "+", "2", "-2", "2+"):
            for body in ("  a\n  b\n", "\n    x\n     y\n\n    z\n\n"):
                text = f"k:\n- {style}{header}\n{body}- n\nm: {style}{header}\n{body}"
                assert assert_same_or_declined(text), text


def _inventory_files():
    for top in ("inventory-example", os.path.join("tests", "conformance")):
        for directory, _, names in os.walk(os.path.join(REPOSITORY, top)):
            for name in sorted(names):
                if name.endswith((".yml", ".yaml")):
                    yield os.path.join(directory, name)


def test_the_example_inventories_read_the_same_both_ways():
    answered = 0
    for path in _inventory_files():
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
        try:
            answered += assert_same_or_declined(text)
        except UnicodeEncodeError:
            continue
    assert answered > 100


def test_nesting_beyond_the_limit_is_left_to_the_full_loader(tmp_path):
    deep = "".join("  " * level + f"k{level}:\n" for level in range(MAX_YAML_DEPTH + 5))
    assert fast(deep) is NotSimple
    path = tmp_path / "deep.yml"
    path.write_text(deep)
    with pytest.raises(YamlFileError, match="nests deeper than 200 levels"):
        load_yaml_file(str(path))


@pytest.mark.parametrize("leaf", ["k: [a]", "k: []", "k: {}", "- [a]", "k:\n{pad}  [a]"])
def test_a_flow_collection_one_level_past_the_limit_is_left_to_the_full_loader(tmp_path, leaf):
    # Blocks nested to the limit, a flow collection inside the innermost one (a 201st level)
    outer = "".join("  " * level + f"k{level}:\n" for level in range(MAX_YAML_DEPTH - 1))
    pad = "  " * (MAX_YAML_DEPTH - 1)
    assert assert_same_or_declined(outer + pad + "k: x\n")
    text = outer + pad + leaf.replace("{pad}", pad) + "\n"
    assert fast(text) is NotSimple
    path = tmp_path / "deep.yml"
    path.write_text(text)
    with pytest.raises(YamlFileError, match="nests deeper than 200 levels"):
        load_yaml_file(str(path))


def test_invalid_yaml_keeps_the_full_loaders_error_with_its_line(tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text("a:\n    b: 1\n  c: 2\n")
    with pytest.raises(YamlFileError) as caught:
        load_yaml_file(str(path))
    assert "bad.yml:3:3: invalid YAML" in str(caught.value)


def test_the_readers_memo_tables_stay_bounded():
    reader = YamlLoader(memo_entries=10).block_reader
    for number in range(50):
        assert reader.parse(f"key{number}: value{number}\n") == {
            f"key{number}": f"value{number}"}
        # at most the memo's size and one file's (a key and a value here)
        assert len(reader._keys) <= 10 + 1 and len(reader._values) <= 10 + 1


# Documents sharing `key: value` lines at one indentation in places where the whole-line memo
# (BlockYamlReader._entries) holds and where it must not: a sequence's mapping, a sequence
# written at its key's indentation, an entry below a key without a value, a continuation.
_SHARED_LINE_DOCUMENTS = (
    "top:\n  a: 1\n  b: x\nlist:\n  - a: 1\n    b: x\n",
    "list:\n- a: 1\n  b: x\n- b: x\n  a: 1\n",
    "top:\n  k:\n  - x\n  a: 1\n  b: x\n",
    "top:\n  k:\n  a: 1\n  b: x\n",
    "top:\n  k:\n    a: 1\n  b: x\n",
    "k: v\n  a: 1\n",
    "top:\n  k: |\n    a: 1\n  a: 1\n",
    "- a: 1\n",
    "top:\n  a: 1\n  a: 2\n  a: 1\n",
    "a:\n  b:\n    c: 1\n",
    "x:\n  b:\n    c: 1\n  a: 1\n",
    "top:\n  b:\n  a: 1\n",
    "top:\n  b:\n  - x\n  a: 1\n",
    "top:\n  b: # none\n    c: 1\n",
    "list:\n  - b:\n    c: 1\n",
    "top:\n  b:\n    c: 1\n   d: 1\n",
    "top:\n  sub:\n    c: 1\n  a: 1\nb: x\n",
    "top:\n  k:\n  - m:\n      c: 1\n  a: 1\n",
    "top:\n  k:\n    - m:\n        c: 1\n  a: 1\n",
    "top:\n    a: 1\n  b: x\n",
)


@pytest.mark.parametrize("order", [1, -1])
def test_memoised_lines_read_as_pyyaml_reads_them_wherever_they_recur(order):
    loader = YamlLoader()
    answered = 0
    for text in _SHARED_LINE_DOCUMENTS[::order] * 2:
        prepared = block_yaml_text(text.encode())
        try:
            got = loader.block_reader.parse(prepared)
        except NotSimple:
            got = NotSimple
        expected = full(text)
        if got is not NotSimple:
            answered += 1
            assert typed(got) == typed(expected), text
    assert answered >= 28
    # the lines read as `key: value` entries of a mapping are memoised, `- key: value` not
    entries = loader.block_reader._entries
    assert entries["  a: 1"] == (2, "a", 1) and entries["  b: x"] == (2, "b", "x")
    assert "  - a: 1" not in entries and "- a: 1" not in entries
    # and so are `key:` lines opening a block (their value is on the lines below)
    assert entries["  b:"][:2] == (2, "b") and entries["  b: # none"][:2] == (2, "b")
    assert "  - b:" not in entries


def test_the_readers_line_memo_stays_bounded():
    reader = YamlLoader(memo_entries=10).block_reader
    for number in range(50):
        text = "".join(f"key{number}_{line}: value{line}\n" for line in range(4))
        assert reader.parse(text)[f"key{number}_3"] == "value3"
        assert len(reader._entries) <= 10 + 4
