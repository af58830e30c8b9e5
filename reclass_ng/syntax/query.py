"""The inventory query language inside `$[ ... ]`, as a pyparsing grammar and a tiny AST.

    query   := option* ( "if" tests | PATH [ "if" tests ] )
    option  := "+AllEnvs" | "+IgnoreErrors"
    tests   := test ( ("and" | "or") test )*          evaluated left to right, no precedence
    test    := operand ( "==" | "!=" ) operand
    operand := integer | real | true | false | WORD   (exports:..., self:..., or a literal)

Words are separated by whitespace; keywords and options are case-insensitive.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock, without importing threading

from reclass_ng.records import Record
from reclass_ng.syntax.grammar import SyntaxProblem

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    import pyparsing as pp


_set = object.__setattr__


class ExportPath(Record):
    """`exports:a:b` in a test: a path into the queried node's exports."""

    __slots__ = ("keys",)
    _fields = __slots__
    keys: tuple[str, ...]

    def __init__(self, keys: tuple[str, ...]) -> None:
        _set(self, "keys", keys)


class SelfPath(Record):
    """`self:a:b`: a path into the querying node's own parameters."""

    __slots__ = ("text",)
    _fields = __slots__
    text: str  # the path after `self:`, as a reference would write it

    def __init__(self, text: str) -> None:
        _set(self, "text", text)


class Test(Record):
    __slots__ = ("left", "op", "right")
    _fields = __slots__
    left: Any
    op: str  # "==" or "!="
    right: Any

    def __init__(self, left: Any, op: str, right: Any) -> None:
        _set(self, "left", left)
        _set(self, "op", op)
        _set(self, "right", right)

    def source_text(self) -> str:
        return f"{_operand_text(self.left)} {self.op} {_operand_text(self.right)}"


class QueryExpr(Record):
    __slots__ = ("all_envs", "ignore_errors", "value_path", "tests", "logic")
    _fields = __slots__
    all_envs: bool
    ignore_errors: bool
    value_path: tuple[str, ...] | None  # None for a list query (`if ...` alone)
    tests: tuple[Test, ...]
    logic: tuple[str, ...]  # "and"/"or" between consecutive tests

    def __init__(self, all_envs: bool, ignore_errors: bool, value_path: tuple[str, ...] | None,
                 tests: tuple[Test, ...], logic: tuple[str, ...]) -> None:
        _set(self, "all_envs", all_envs)
        _set(self, "ignore_errors", ignore_errors)
        _set(self, "value_path", value_path)
        _set(self, "tests", tests)
        _set(self, "logic", logic)

    def test_without_export(self) -> Test | None:
        """The first test comparing no export (`if foo:a == 1`), which kapicorp refuses as
        soon as it reads the query ("No export"), or None."""
        for test in self.tests:
            if not (isinstance(test.left, ExportPath) or isinstance(test.right, ExportPath)):
                return test
        return None


def _operand_text(operand: Any) -> str:
    if isinstance(operand, ExportPath):
        return "exports:" + ":".join(operand.keys)
    if isinstance(operand, SelfPath):
        return "self:" + operand.text
    return str(operand)


# Compiled on first use (re keeps them): only a node with queries needs them.
_INT = r"-?\d+\Z"
_REAL = r"-?(\d+\.\d*|\.\d+)\Z"


def _operand(word: str, delimiter: str) -> Any:
    import re

    lower = word.lower()
    if re.match(_INT, word):
        return int(word)
    if re.match(_REAL, word):
        return float(word)
    if lower in ("true", "false"):
        return lower == "true"
    if lower.startswith("exports" + delimiter):
        return ExportPath(tuple(word[len("exports" + delimiter):].split(delimiter)))
    if lower.startswith("self" + delimiter):
        return SelfPath(word[len("self" + delimiter):])
    return word


class QueryParser:
    """Parses query texts for one delimiter, memoised per distinct text."""

    def __init__(self, delimiter: str = ":") -> None:
        self.delimiter = delimiter
        self._grammar: pp.ParserElement | None = None  # built on the first query (pyparsing)
        self._cache: dict[str, QueryExpr] = {}
        self._lock = allocate_lock()

    def parse(self, text: str) -> QueryExpr:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        import pyparsing as pp

        try:
            with self._lock:
                if self._grammar is None:
                    self._grammar = self._build()
                result = self._grammar.parse_string(text, parse_all=True)
        except pp.ParseBaseException as err:
            raise SyntaxProblem(f"{err.msg} at char {err.loc}", err.loc + 1) from None
        expr = self._expr(result)
        self._cache[text] = expr
        return expr

    def _build(self) -> pp.ParserElement:
        import pyparsing as pp

        keyword = pp.CaselessKeyword
        if_, and_, or_ = keyword("if"), keyword("and"), keyword("or")
        not_keyword = ~(if_ | and_ | or_)
        word = not_keyword + pp.Regex(r"[^\s]+").set_name("word")
        op = (pp.Literal("==") | pp.Literal("!=")).set_name("== or !=")
        operand = ~op + word
        test = pp.Group(operand + op + operand).set_name("test")
        tests = pp.Group(test + pp.ZeroOrMore((and_ | or_) + test))
        import re

        option = pp.Regex(r"\+(allenvs|ignoreerrors)(?=\s|$)", flags=re.I).set_name("option")
        options = pp.Group(pp.ZeroOrMore(option))
        list_query = pp.Group(if_.suppress() + tests)("list")
        path = not_keyword + pp.Regex(r"[^\s]+")("path").set_name("path")
        value_query = pp.Group(path + pp.Optional(if_.suppress() + tests("tests")))("value")
        return options("options") + (list_query | value_query)

    def _expr(self, result: pp.ParseResults) -> QueryExpr:
        options = {o.lower() for o in result["options"]}
        if "list" in result:
            path, tests = None, result["list"][0]
        else:
            value = result["value"]
            # The first component of the value path is dropped whatever it says (reclass).
            path = tuple(value["path"].split(self.delimiter)[1:])
            tests = value["tests"] if "tests" in value else []
        parsed, logic = [], []
        for item in tests:
            if isinstance(item, str):
                logic.append(item.lower())
            else:
                left, op, right = item
                parsed.append(Test(_operand(left, self.delimiter), op,
                                   _operand(right, self.delimiter)))
        return QueryExpr("+allenvs" in options, "+ignoreerrors" in options, path, tuple(parsed),
                         tuple(logic))
