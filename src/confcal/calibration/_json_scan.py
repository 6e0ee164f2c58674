"""The JSON object in a model's answer, with the byte range of every value in it.

:func:`confcal.calibration.confidence.value_token_spans` needs to know which tokens of a
model's answer spell the value of a field, so that their log-probabilities can be
aggregated. :func:`find_root` finds the answer's JSON object inside the decoded bytes
(models wrap it in prose or code fences) and reads it with the package's JSON reader
(:func:`confcal._files.parse_json_nodes`, the standard library's grammar with positions),
giving byte offsets; :func:`member` looks a key up, :func:`to_python` decodes a node.
Nesting deeper than :data:`MAX_DEPTH` is refused before it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .._files import JsonNode, JsonSyntaxError, JsonTooDeep, parse_json_nodes
from ..exceptions import ValidationError

__all__ = ["MAX_DEPTH", "Node", "find_root", "member", "to_python"]

MAX_DEPTH = 200
"""Deepest nesting of arrays and objects read (the answer's object is level 1)."""

Node = JsonNode
"""A value of the answer; its ``start`` and ``end`` are byte offsets (:func:`find_root`)."""

_OBJECT_START = re.compile(rb'\{[ \t\r\n]*["}]')
_UNDECODABLE = re.compile("[\udc80-\udcff]")  # a byte that is no UTF-8, surrogateescape'd
# The standard library's reasons, in the words of an answer that breaks
_REASONS = {
    "Expecting value": "a JSON value",
    "Expecting property name enclosed in double quotes": "a quoted key",
    "Expecting ':' delimiter": "':' after a key",
}


def _reason(exc: JsonSyntaxError, text: str) -> str:
    """Why the answer breaks at ``exc.pos``: what was expected and what was found."""
    if exc.msg.startswith("Unterminated string"):
        return "the string that starts there is not terminated"
    if exc.msg.startswith("Invalid"):  # \escape, \uXXXX escape
        return f"a string does not decode ({exc.msg})"
    if exc.msg == "Expecting ',' delimiter":
        expected = "',' or '}'" if exc.inside == "object" else "',' or ']'"
    else:
        expected = _REASONS.get(exc.msg, exc.msg)
    found = text[exc.pos:exc.pos + 1]
    if not found:
        return f"the answer ends where {expected} was expected"
    if _UNDECODABLE.match(found):
        return f"{expected} was expected; found the byte {ord(found) - 0xDC00:#04x} (not UTF-8)"
    return f"{expected} was expected; found {found!r}"


def _byte_offsets(text: str) -> np.ndarray | None:
    """For each character position of ``text`` (and its end), the offset of its first
    byte in the bytes it was decoded from; None for ASCII text (the same offsets). A
    character standing for an undecodable byte (``surrogateescape``) is one byte."""
    if text.isascii():
        return None
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    size = 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)
    size[(points >= 0xDC80) & (points <= 0xDCFF)] = 1
    offsets = np.zeros(points.size + 1, dtype=np.int64)
    np.cumsum(size, out=offsets[1:])
    return offsets


def _in_bytes(node: Node, offsets: np.ndarray) -> Node:
    """``node`` with byte offsets for its character offsets, and so the nodes inside it."""
    return node._replace(
        start=int(offsets[node.start]), end=int(offsets[node.end]),
        members=[(key, _in_bytes(child, offsets)) for key, child in node.members],
        items=[_in_bytes(child, offsets) for child in node.items])


def find_root(data: bytes, name: str, where: Callable[[int], str]) -> Node:
    """The answer's JSON object: the first '{' followed by a key or '}', read to its end.

    Text around it (a code fence, an explanation, an end-of-text token) is ignored. A '{'
    not followed by a quoted key is prose ("use {braces}") and skipped; once an object has
    started, it must parse: reading on to a later '{' would silently take a nested line
    item for the whole answer. Strings may hold raw newlines (a model writes them);
    ``NaN`` and ``Infinity`` are no values. The nodes' offsets are byte offsets in
    ``data``; ``where`` names a byte offset in messages.

    Raises
    ------
    ValidationError
        ``<name> must contain a JSON object; found no '{' followed by a quoted key``, or
        ``<name> must contain a valid JSON object; the object starting at <where> breaks
        at <where>: <reason>`` (a syntax error, an undecodable byte in a string, nesting
        deeper than :data:`MAX_DEPTH`).

    Examples
    --------
    >>> root = find_root(b'Sure: {"a": "\\xc3\\xa9t\\xc3\\xa9", "b": [1]} done', "answer", str)
    >>> [(key, child.start, child.end) for key, child in root.members]
    [('a', 13, 18), ('b', 26, 29)]
    >>> find_root(b'{"a": 1 "b": 2}', "answer", lambda offset: f"byte {offset}")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: answer must contain a valid JSON object; the object starting
    at byte 0 breaks at byte 8: ',' or '}' was expected; found '"'
    """
    m = _OBJECT_START.search(data)
    if m is None:
        raise ValidationError(f"{name} must contain a JSON object; found no '{{' followed by "
                              "a quoted key")
    text = data.decode("utf-8", "surrogateescape")
    offsets = _byte_offsets(text)
    start = m.start() if offsets is None else int(np.searchsorted(offsets, m.start()))

    def broken(pos: int, reason: str) -> ValidationError:
        at = pos if offsets is None else int(offsets[pos])
        return ValidationError(f"{name} must contain a valid JSON object; the object starting "
                               f"at {where(m.start())} breaks at {where(at)}: {reason}")

    try:
        root, end = parse_json_nodes(text, start, max_depth=MAX_DEPTH, strict=False,
                                     constants=False)
    except JsonTooDeep as exc:
        raise broken(exc.pos, f"the answer nests deeper than {MAX_DEPTH} levels") from None
    except JsonSyntaxError as exc:
        raise broken(exc.pos, _reason(exc, text)) from None
    undecodable = _UNDECODABLE.search(text, start, end)
    if undecodable is not None:  # outside a string it would not have parsed
        raise broken(undecodable.start(), "a string does not decode (it is not UTF-8)")
    return root if offsets is None else _in_bytes(root, offsets)


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
