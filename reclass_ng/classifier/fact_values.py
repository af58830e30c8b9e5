"""How rule comparisons see node values: field lookup and the classifier's coercions.

The Node Classifier is written in Clojure, so its comparisons behave like the JVM: numbers in
rules are read with `Integer.parseInt`, then `Float.parseFloat` (a 32-bit float), and non-string
values are turned into text the way Java prints them. The functions here reproduce that, because
rules written for the real classifier must match the same nodes here.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_JAVA_INT = re.compile(r"[+-]?[0-9]+")
# Float.parseFloat's grammar (Java's FloatingDecimal): decimal or hexadecimal digits, an optional
# exponent and an optional type suffix, after trimming characters up to and including space.
_JAVA_DECIMAL = re.compile(
    r"(?P<sign>[+-]?)(?:(?P<special>NaN|Infinity)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)"
)


class Missing:
    """The value of a field path that leads nowhere; every comparison against it is false."""

    _instance: Missing | None = None

    def __new__(cls) -> Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING = Missing()


def lookup_field(node: Mapping[str, Any], keys: Sequence[str | int]) -> Any:
    """Walk `node` along `keys`; MISSING when a key is absent or a step does not fit.

    A string key looks into a mapping; an integer key (a numeric path component) indexes a
    list, from 0, and finds nothing in a mapping (JSON keys are strings) or past the end.
    A `null` value counts as missing, as it does for the classifier.
    """
    current: Any = node
    for key in keys:
        if isinstance(key, int):
            if not isinstance(current, (list, tuple)) or key >= len(current):
                return MISSING
            current = current[key]
            continue
        if not isinstance(current, Mapping) or key not in current:
            return MISSING
        current = current[key]
    return MISSING if current is None else current


def _to_float32(value: float) -> float:
    """Round a double to the nearest 32-bit float, as Java's Float does (overflow -> infinity)."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def parse_java_number(text: str) -> int | float | None:
    """A rule or fact string as the classifier reads numbers: int32 first, then a 32-bit float.

    Returns None when the text is not a number, which makes the comparison false.
    """
    if _JAVA_INT.fullmatch(text):
        number = int(text)
        if INT32_MIN <= number <= INT32_MAX:
            return number
    # Float.parseFloat trims ASCII control characters and spaces, nothing else.
    trimmed = text.strip("".join(chr(c) for c in range(33)))
    match = _JAVA_DECIMAL.fullmatch(trimmed)
    if match is None:
        return None
    negative = match["sign"] == "-"
    if match["special"]:
        value = math.nan if match["special"] == "NaN" else math.inf
    elif match["dec"]:
        value = float(match["dec"])
    else:
        value = float.fromhex(match["hex"])
    return _to_float32(-value if negative else value)


def java_double_text(value: float) -> str:
    """`Double.toString`: plain decimals between 1e-3 and 1e7, `d.dddE±n` outside."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(value)  # Python's repr is plain and shortest in this range
        return text if "." in text else text + ".0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    digit_text = "".join(map(str, digits)).rstrip("0") or "0"
    mantissa = digit_text[0] + "." + (digit_text[1:] or "0")
    scientific_exponent = int(exponent) + len(digits) - 1
    return ("-" if sign else "") + f"{mantissa}E{scientific_exponent}"


def as_comparable_text(value: Any) -> str | None:
    """A node value as `=` and `~` see it: strings as they are, booleans and numbers as text.

    Maps and lists have no text form; comparing them is false.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_text(value)
    return None


def as_comparable_number(value: Any) -> int | float | None:
    """A node value as `<`, `<=`, `>`, `>=` see it: numbers kept, strings parsed, rest None."""
    if isinstance(value, bool):
        return None  # the classifier compares the text "true" with a number: a type error
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        return parse_java_number(value)
    return None
