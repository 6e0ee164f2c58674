"""A JSON reader that remembers where every value is: the byte range of each value.

The standard library's ``json`` decodes values but forgets their positions, and
:func:`confcal.calibration.confidence.value_token_spans` needs them: which tokens of a
model's answer spell the value of a field, so that their log-probabilities can be
aggregated. :func:`find_root` finds the answer's JSON object inside the decoded text (models
wrap it in prose or code fences), :func:`member` looks a key up, :func:`to_python` decodes a
node. Nesting deeper than :data:`MAX_DEPTH` is refused instead of recursing without bound.
Scalars are decoded with ``json.loads`` on their own bytes, so the values agree with the
standard library's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import ValidationError

__all__ = ["MAX_DEPTH", "Node", "find_root", "member", "to_python"]

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects read; deeper answers are refused."""


@dataclass
class Node:
    """A JSON value and its byte range: a string's range is its content between the quotes
    (escapes included as written); other scalars the literal; containers the brackets."""

    kind: str  # "object", "array", "string", "number", "bool", "null"
    start: int
    end: int
    value: Any = None  # scalars: the decoded value
    members: list[tuple[str, Node]] = field(default_factory=list)  # objects, in order
    items: list[Node] = field(default_factory=list)  # arrays


class _ScanError(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


_WS = frozenset(b" \t\r\n")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING_BODY = re.compile(rb'(?:[^"\\]|\\.)*', re.DOTALL)
_LITERALS = ((b"true", "bool", True), (b"false", "bool", False), (b"null", "null", None))


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.n = len(data)

    def skip(self, i: int) -> int:
        data, n = self.data, self.n
        while i < n and data[i] in _WS:
            i += 1
        return i

    def expect(self, i: int, what: str) -> int:
        if i >= self.n:
            raise _ScanError(f"the answer ends where {what} was expected", i)
        return self.data[i]

    def value(self, i: int, depth: int) -> tuple[Node, int]:
        i = self.skip(i)
        ch = self.expect(i, "a value")
        if ch == 0x7B:  # {
            return self.object(i, depth)
        if ch == 0x5B:  # [
            return self.array(i, depth)
        if ch == 0x22:  # "
            return self.string(i)
        for literal, kind, value in _LITERALS:
            if self.data.startswith(literal, i):
                return Node(kind, i, i + len(literal), value), i + len(literal)
        m = _NUMBER.match(self.data, i)
        if m:
            return Node("number", i, m.end(), json.loads(m.group())), m.end()
        raise _ScanError(f"a JSON value was expected; found {chr(ch)!r}", i)

    def string(self, i: int) -> tuple[Node, int]:
        end = _STRING_BODY.match(self.data, i + 1).end()  # type: ignore[union-attr]
        if end >= self.n:
            raise _ScanError("the string that starts there is not terminated", i)
        raw = self.data[i:end + 1]
        try:
            # strict=False: a raw newline inside a string is the model's text, not an error
            value = json.loads(raw.decode("utf-8"), strict=False)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _ScanError(f"a string does not decode ({exc})", i) from None
        return Node("string", i + 1, end, value), end + 1

    def object(self, i: int, depth: int) -> tuple[Node, int]:
        if depth > MAX_DEPTH:
            raise _ScanError(f"the answer nests deeper than {MAX_DEPTH} levels", i)
        node = Node("object", i, i)
        i = self.skip(i + 1)
        if self.expect(i, "a key or '}'") == 0x7D:
            node.end = i + 1
            return node, i + 1
        while True:
            i = self.skip(i)
            if self.expect(i, "a key") != 0x22:
                raise _ScanError(f"a quoted key was expected; found {chr(self.data[i])!r}", i)
            key, i = self.string(i)
            i = self.skip(i)
            if self.expect(i, "':'") != 0x3A:
                raise _ScanError(f"':' was expected after a key; found {chr(self.data[i])!r}", i)
            value, i = self.value(i + 1, depth + 1)
            node.members.append((key.value, value))
            i = self.skip(i)
            ch = self.expect(i, "',' or '}'")
            if ch == 0x2C:
                i += 1
            elif ch == 0x7D:
                node.end = i + 1
                return node, i + 1
            else:
                raise _ScanError(f"',' or '}}' was expected; found {chr(ch)!r}", i)

    def array(self, i: int, depth: int) -> tuple[Node, int]:
        if depth > MAX_DEPTH:
            raise _ScanError(f"the answer nests deeper than {MAX_DEPTH} levels", i)
        node = Node("array", i, i)
        i = self.skip(i + 1)
        if self.expect(i, "a value or ']'") == 0x5D:
            node.end = i + 1
            return node, i + 1
        while True:
            item, i = self.value(i, depth + 1)
            node.items.append(item)
            i = self.skip(i)
            ch = self.expect(i, "',' or ']'")
            if ch == 0x2C:
                i += 1
            elif ch == 0x5D:
                node.end = i + 1
                return node, i + 1
            else:
                raise _ScanError(f"',' or ']' was expected; found {chr(ch)!r}", i)


_OBJECT_START = re.compile(rb'\{[ \t\r\n]*["}]')


def find_root(data: bytes, name: str, where: Callable[[int], str]) -> Node:
    """The answer's JSON object: the first '{' followed by a key or '}', read to its end.

    Text around it (a code fence, an explanation, an end-of-text token) is ignored. A '{'
    not followed by a quoted key is prose ("use {braces}") and skipped; once an object has
    started, it must parse: reading on to a later '{' would silently take a nested line
    item for the whole answer.
    """
    m = _OBJECT_START.search(data)
    if m is None:
        raise ValidationError(f"{name} must contain a JSON object; found no '{{' followed by "
                              "a quoted key")
    try:
        return _Reader(data).object(m.start(), 0)[0]
    except _ScanError as exc:
        raise ValidationError(f"{name} must contain a valid JSON object; the object starting "
                              f"at {where(m.start())} breaks at {where(exc.offset)}: {exc}"
                              ) from None


def to_python(node: Node, path: str) -> Any:
    if node.kind == "object":
        out: dict[str, Any] = {}
        for key, child in node.members:
            if key in out:
                raise ValidationError(f"{_join(path, key)} must appear once in its object; "
                                      "found it repeated")
            out[key] = to_python(child, _join(path, key))
        return out
    if node.kind == "array":
        return [to_python(child, f"{path}[{i}]") for i, child in enumerate(node.items)]
    return node.value


def _join(path: str, key: str) -> str:
    return key if not path else f"{path}.{key}"


def member(node: Node, key: str, path: str) -> Node | None:
    """The member `key` of an object node; None when absent; repeated keys are an error."""
    found = [child for name, child in node.members if name == key]
    if len(found) > 1:
        raise ValidationError(
            f"field {_join(path, key)} must appear once in its object; found it {len(found)} "
            "times (a JSON reader keeps only the last; say which one you mean)")
    return found[0] if found else None
