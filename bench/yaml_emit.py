"""A small, deterministic block-style YAML writer for generated inventories.

The generator does not use a YAML library to write its files, for two reasons:
the bytes must not change when PyYAML changes its formatting, and every
scalar must read back as the same value under YAML 1.1 (PyYAML, used by
kapicorp-reclass and reclass-ng) and YAML 1.2 (serde_yaml, used by
reclass-rs). Strings that either reader could take for a number, boolean,
null, date or other special value are therefore always quoted.
"""

from __future__ import annotations

import math
import re

Scalar = str | int | float | bool | None

# Characters a plain (unquoted) string may consist of, in block context. Flow
# indicators are fine inside a block-context plain scalar, but not at its start.
_PLAIN_WORD = r"[A-Za-z0-9_$/.~{}\[\]:=@+,()<>!*-]+"
_PLAIN_BODY = re.compile(rf"^{_PLAIN_WORD}( {_PLAIN_WORD})*$")
# A leading dot is fine before a letter (".common"), except in .inf and .nan.
_PLAIN_START = re.compile(r"^([A-Za-z_$/~]|\.[A-Za-z])")
# Words that YAML 1.1 or 1.2 resolve to booleans or null in some spelling.
_KEYWORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "~", "=", "<<"}
)
_KEY = re.compile(r"^[~=]?[A-Za-z_][A-Za-z0-9_-]*$")


def needs_quotes(text: str) -> bool:
    """True when ``text`` must be quoted to read back as the same string in YAML 1.1 and 1.2."""
    if not text or text != text.strip():
        return True
    if text.lower() in _KEYWORDS or text.lower() in (".inf", ".nan"):
        return True
    # Anything starting like a number (digits, sign, dot) is quoted: that covers
    # ints, octal, hex, sexagesimal, floats, dates and IP addresses in one rule.
    if not _PLAIN_START.match(text):
        return True
    if not _PLAIN_BODY.match(text):
        return True
    # ": " starts a mapping value and " #" a comment; a trailing ":" is a key.
    return ": " in text or " #" in text or text.endswith(":") or text == "~"


def format_scalar(value: Scalar) -> str:
    """Render one scalar as YAML text."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value) or value != round(value, 6):
            raise ValueError(f"float {value!r} is not supported by the generator")
        text = repr(value)
        # "1e-05" style is read as a string by YAML 1.1; the generator never needs it.
        if "e" in text or "." not in text:
            raise ValueError(f"float {value!r} has no portable plain form")
        return text
    if isinstance(value, str):
        if needs_quotes(value):
            return "'" + value.replace("'", "''") + "'"
        return value
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def format_key(key: str) -> str:
    """Render a mapping key; generated keys are identifiers, optionally with a reclass prefix."""
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"generator produced an unsupported mapping key {key!r}")
    return key


def _emit(value: object, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            head = f"{pad}{format_key(key)}:"
            if isinstance(item, dict) and item:
                lines.append(head)
                _emit(item, indent + 2, lines)
            elif isinstance(item, list) and item:
                # Block sequences under a key are not indented further (PyYAML's style).
                lines.append(head)
                _emit(item, indent, lines)
            else:
                lines.append(f"{head} {_inline(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                first, *rest = _block(item, indent + 2)
                lines.append(f"{pad}- {first.lstrip()}")
                lines.extend(rest)
            elif isinstance(item, list) and item:
                first, *rest = _block(item, indent + 2)
                lines.append(f"{pad}- {first.lstrip()}")
                lines.extend(rest)
            else:
                lines.append(f"{pad}- {_inline(item)}")
    else:
        raise TypeError("top level of a YAML document must be a mapping or a list")


def _block(value: object, indent: int) -> list[str]:
    lines: list[str] = []
    _emit(value, indent, lines)
    return lines


def _inline(value: object) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return format_scalar(value)  # type: ignore[arg-type]


def dump(document: dict) -> str:
    """Serialise one mapping as a block-style YAML document ending in a newline."""
    if not isinstance(document, dict):
        raise TypeError("a reclass file must be a mapping")
    if not document:
        return "{}\n"
    return "\n".join(_block(document, 0)) + "\n"
