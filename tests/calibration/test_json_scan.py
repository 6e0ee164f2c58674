"""confcal.calibration._json_scan: the JSON object of a model's answer, in byte offsets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confcal.calibration._json_scan import MAX_DEPTH, Node, find_root, member, to_python
from confcal.exceptions import ValidationError

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-999, 999) | st.floats(-1e6, 1e6)
    | st.text(st.characters(codec="utf-8"), max_size=6),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=3), inner, max_size=3),
    max_leaves=12)
_PROSE = st.text(st.characters(codec="utf-8", exclude_characters="{"), max_size=8)


def _where(offset: int) -> str:
    return f"byte {offset}"


def _walk(node: Node, data: bytes) -> None:
    """Every node's byte range holds its value: the literal, the string's content, the
    container's brackets and what is inside."""
    raw = data[node.start:node.end]
    if node.kind == "string":
        assert json.loads(b'"' + raw + b'"') == node.value
    elif node.kind in ("object", "array"):
        assert json.loads(raw) == to_python(node, "")
    else:
        assert json.loads(raw) == node.value
    for child in [*node.items, *(child for _, child in node.members)]:
        assert node.start < child.start <= child.end < node.end
        _walk(child, data)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=3), _VALUES, max_size=4), _PROSE, _PROSE,
       st.booleans())
def test_byte_ranges_of_non_ascii_answers_hold_their_values(document: dict[str, Any],
                                                            before: str, after: str,
                                                            ascii_only: bool) -> None:
    # "é" is two bytes and "€" three: a character offset would point into the wrong token
    data = f"{before}{json.dumps(document, ensure_ascii=ascii_only)}{after}".encode()
    root = find_root(data, "answer", _where)
    assert to_python(root, "") == document
    assert data[root.start:root.end] == json.dumps(document, ensure_ascii=ascii_only).encode()
    _walk(root, data)


def test_byte_offsets_count_the_bytes_of_each_character():
    # "€" is 3 bytes and the space 1: "{" at byte 4, the content of "é" at 4 + 7 = 11 to
    # 13 (2 bytes), then '", "b": ' (8 bytes): "[" at 21, the list ends at 24
    data = '€ {"a": "é", "b": [1]}'.encode()
    root = find_root(data, "answer", _where)
    a, b = member(root, "a", ""), member(root, "b", "")
    assert (root.start, a.start, a.end, b.start, b.end) == (4, 11, 13, 21, 24)
    assert data[a.start:a.end].decode() == "é"


@pytest.mark.parametrize("data, reason", [
    (b'{"a": "\xff"}', r"breaks at byte 7: a string does not decode \(it is not UTF-8\)"),
    (b'{"a": 1 \xff', r"breaks at byte 8: ',' or '\}' was expected; found the byte 0xff"),
    (b'{"a": NaN}', r"breaks at byte 6: a JSON value was expected; found 'N'"),
    (b'{"a": [1,]}', r"breaks at byte 9: a JSON value was expected; found '\]'"),
    (b'{"a": "\\q"}', r"breaks at byte 7: a string does not decode \(Invalid \\escape\)"),
    (b'{"a" 1}', r"breaks at byte 5: ':' after a key was expected; found '1'"),
    (b'{"a": [1 2]}', r"breaks at byte 9: ',' or '\]' was expected; found '2'"),
    (b'{"a": 1', r"breaks at byte 7: the answer ends where ',' or '\}' was expected"),
    (b'{"a": ' + b"[" * 300, rf"breaks at byte {6 + MAX_DEPTH - 1}: the answer nests deeper "
                            rf"than {MAX_DEPTH} levels"),
])
def test_a_broken_answer_names_the_byte_and_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(ValidationError, match=r"^answer must contain a valid JSON object; the "
                                              r"object starting at byte 0 " + reason):
        find_root(data, "answer", _where)


def test_what_surrounds_the_object_is_not_read():
    # prose after the answer may nest as deeply or be as broken as it likes; a raw newline
    # inside a string is the model's text
    deep = "[" * 1000
    root = find_root(f'{{"a": "x\ny"}} and then {deep} "'.encode(), "answer", _where)
    assert to_python(root, "") == {"a": "x\ny"}
    # MAX_DEPTH levels, the object counted, are read
    nested = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert find_root(nested.encode(), "answer", _where).kind == "object"
