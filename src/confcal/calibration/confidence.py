"""Confidence from a model's own output: token log-probabilities and verbalized top-K.

ConfBench compares two families of confidence for each extracted field:

* **Token log-probabilities.** The model generated a JSON answer token by token; the tokens
  that spell a field's value carry log-probabilities. :func:`value_token_spans` finds those
  tokens through a character-to-token map of the decoded answer, :func:`aggregate_logprobs`
  turns their log-probabilities into one confidence ("first", "mean" or "margin"), and
  :func:`confidences_from_logprobs` does both for every field of a schema, returning a
  predicted document in the ``{"value": v, "confidence": c}`` form.
* **Verbalized top-K (1S-TopK).** The model writes its K best candidates with a probability
  each; :func:`parse_topk` reads such an answer into the ``{"candidates": [...]}`` form.

Both outputs are ready for :func:`confcal.scoring.score_documents`.

Tokens are the generated strings, in one of three spellings (``token_style``):

* ``"text"``: plain text pieces (``'{"', 'Agency', '":', ' "', 'AC', 'ME', ' Media', '",'``);
* ``"byte-level"``: GPT-2 style byte-level BPE, where every byte is shown as a printable
  character (``'Ġ'`` is a space, ``'Ċ'`` a newline, ``'Ã©'`` the two bytes of "é");
* ``"sentencepiece"``: ``'▁'`` (U+2581) for a space and ``'<0x0A>'`` for a byte fallback.

``"auto"`` (the default) picks sentencepiece when a token holds ``'▁'``, byte-level when a
token holds one of ``'Ġ' 'Ċ' 'ĉ' 'č'`` and every character of every token is in the
byte-level alphabet, and text otherwise. Pass the style explicitly when you know it: an
answer without spaces or newlines looks the same in every style, and only the decoding of
non-ASCII values (never the token spans) depends on getting it right.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_option, check_positive_int, first_bad, is_real
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..scoring.schema import Field, Items, Schema
from ._json_scan import Node, find_root, member, to_python

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "METHODS",
    "TOKEN_STYLES",
    "ProbabilitySumWarning",
    "aggregate_logprobs",
    "confidences_from_logprobs",
    "parse_topk",
    "value_token_spans",
]

METHODS = ("first", "mean", "margin")
TOKEN_STYLES = ("auto", "text", "byte-level", "sentencepiece")

# Candidate probabilities are decimals written by a model (0.7 + 0.2 + 0.1 sums to
# 0.9999999999999999 or 1.0000000000000002 in floating point): only a sum beyond this
# is "above 1".
_SUM_TOLERANCE = 1e-9


class ProbabilitySumWarning(UserWarning):
    """Verbalized candidate probabilities of a field sum above 1 (kept as given, counted)."""


# ---------------------------------------------------------------------------------------
# log-probabilities
# ---------------------------------------------------------------------------------------
def _check_logprobs(values: Any, name: str) -> np.ndarray:
    """A 1-D float array of natural-log probabilities: numbers <= 0, -inf allowed, no NaN."""
    if values is None or isinstance(values, (str, bytes)):
        raise ValidationError(f"{name} must be a sequence of log-probabilities; found {values!r}")
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValidationError(f"{name} must be a 1-D sequence of log-probabilities; "
                              f"found shape {arr.shape}")
    if arr.size == 0:
        raise ValidationError(f"{name} must not be empty; found 0 values")
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        try:
            if arr.dtype == bool:
                raise TypeError
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValidationError(f"{name} must be numbers (log-probabilities); "
                                  f"found {arr.dtype} values (first {arr[0]!r})") from None
    arr = np.asarray(arr, dtype=np.float64)
    ok = arr <= 0.0  # False for NaN; -inf (probability 0) passes
    if not ok.all():
        raise ValidationError(
            f"{name} must be log-probabilities (numbers <= 0, not NaN); {first_bad(~ok, arr)}"
        )
    return arr


def _top_values(entry: Any, name: str) -> np.ndarray:
    """The log-probabilities of one position's top alternatives, whatever the API's shape."""
    if isinstance(entry, Mapping):
        # {"AC": -0.1, "A": -2.3}: token -> logprob (vLLM, OpenAI completions)
        values: Any = list(entry.values())
    elif isinstance(entry, Sequence) and not isinstance(entry, (str, bytes)):
        # [-0.1, -2.3] or [{"token": "AC", "logprob": -0.1}, ...] (OpenAI chat)
        values = [e["logprob"] if isinstance(e, Mapping) and "logprob" in e else e
                  for e in entry]
    else:
        values = entry
    return _check_logprobs(values, name)


def _margin(top: np.ndarray, name: str) -> float:
    if top.shape[0] < 2:
        raise ValidationError(
            f"{name} must hold at least 2 log-probabilities (the top two at the first "
            f"position); found {top.shape[0]}"
        )
    l2, l1 = np.partition(top, top.shape[0] - 2)[-2:]
    p1, p2 = math.exp(float(l1)), math.exp(float(l2))
    if p1 + p2 == 0.0:
        warnings.warn(f"the margin is undefined: both top log-probabilities in {name} are "
                      "-inf; returning NaN", UndefinedMetricWarning, stacklevel=4)
        return math.nan
    return (p1 - p2) / (p1 + p2)


def _aggregate(logprobs: np.ndarray, method: str, top: np.ndarray | None, top_name: str
               ) -> float:
    if method == "first":
        return math.exp(float(logprobs[0]))
    if method == "mean":
        # the geometric mean of the token probabilities: exp of the mean log-probability
        return math.exp(float(logprobs.mean()))
    if top is None:
        raise ValidationError(f"{top_name} must be given for method='margin' (the top-2 "
                              "vocabulary log-probabilities at the first position); found None")
    return _margin(top, top_name)


def aggregate_logprobs(token_logprobs: ArrayLike, *, method: str = "first",
                       top2: ArrayLike | None = None) -> float:
    """One confidence from the log-probabilities of a value's tokens.

    Parameters
    ----------
    token_logprobs : sequence of float, shape (n_tokens,)
        Natural-log probabilities of the tokens that spell the value, in order (see
        :func:`value_token_spans`). Numbers <= 0; ``-inf`` (probability 0) is allowed.
    method : {"first", "mean", "margin"}, default "first"
        ``"first"``: exp(l_1), the probability of the value's first token, where the model
        commits to an answer. ``"mean"``: exp(mean of l), the geometric mean of the token
        probabilities. ``"margin"``: (p1 − p2) / (p1 + p2) with p1 >= p2 the two highest
        vocabulary probabilities at the *first position* (from ``top2``, not the first two
        tokens of the value): 0 when the model hesitates between two tokens, 1 when it
        does not.
    top2 : sequence of float or mapping of str to float, optional
        The top alternatives' log-probabilities at the value's first position: at least 2;
        the two largest are p1 and p2, in any order. A mapping token -> log-probability or a
        list of ``{"token", "logprob"}`` objects is read by its log-probabilities. Required
        by ``"margin"``; validated but not used by the other methods.

    Returns
    -------
    float in [0, 1]
        NaN with an :class:`UndefinedMetricWarning` for a margin whose top two
        log-probabilities are both ``-inf``.

    Raises
    ------
    ValidationError
        Empty input, NaN or positive log-probabilities, an unknown method, ``"margin"``
        without ``top2`` or with fewer than two alternatives.

    See Also
    --------
    confidences_from_logprobs : every field of an answer at once.

    Examples
    --------
    >>> import math
    >>> lp = [math.log(0.9), math.log(0.4)]
    >>> round(aggregate_logprobs(lp), 12)                    # exp(log 0.9)
    0.9
    >>> round(aggregate_logprobs(lp, method="mean"), 12)     # sqrt(0.9 * 0.4) = sqrt(0.36)
    0.6
    >>> top = [math.log(0.6), math.log(0.2), math.log(0.1)]  # p1 = 0.6, p2 = 0.2
    >>> round(aggregate_logprobs(lp, method="margin", top2=top), 12)  # 0.4 / 0.8
    0.5
    """
    lp = _check_logprobs(token_logprobs, "token_logprobs")
    method = check_option(method, "method", METHODS)
    top = None if top2 is None else _top_values(top2, "top2")
    return _aggregate(lp, method, top, "top2")


# ---------------------------------------------------------------------------------------
# tokens -> bytes, with a byte -> token map
# ---------------------------------------------------------------------------------------
def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: printable character -> the byte it stands for."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars = list(printable)
    shifted = 0
    for b in range(256):
        if b not in printable:  # control bytes, space, DEL...: moved past 255, in order
            printable.append(b)
            chars.append(256 + shifted)
            shifted += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


BYTE_LEVEL_ALPHABET = _byte_level_alphabet()
_BYTE_LEVEL_MARKERS = frozenset("ĠĊĉč")  # space, newline, tab, carriage return
_SP_SPACE = "\u2581"
_SP_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _check_tokens(tokens: Any) -> list[str]:
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValidationError(f"tokens must be a sequence of strings (the generated tokens); "
                              f"found {type(tokens).__name__}")
    if len(tokens) == 0:
        raise ValidationError("tokens must not be empty; found 0 tokens")
    bad = [i for i, t in enumerate(tokens) if not isinstance(t, str)]
    if bad:
        raise ValidationError(f"tokens must be strings; found {len(bad)} that are not, first at "
                              f"index {bad[0]} ({tokens[bad[0]]!r})")
    return list(tokens)


def _resolve_style(tokens: list[str], style: str) -> str:
    if style != "auto":
        return style
    if any(_SP_SPACE in t for t in tokens):
        return "sentencepiece"
    if any(not _BYTE_LEVEL_MARKERS.isdisjoint(t) for t in tokens) and all(
            ch in BYTE_LEVEL_ALPHABET for t in tokens for ch in t):
        return "byte-level"
    return "text"


def _token_bytes(token: str, index: int, style: str) -> bytes:
    if style == "text":
        return token.encode("utf-8", "surrogatepass")
    if style == "byte-level":
        try:
            return bytes(BYTE_LEVEL_ALPHABET[ch] for ch in token)
        except KeyError as exc:
            raise ValidationError(
                f"tokens[{index}] must use the byte-level alphabet (token_style='byte-level'); "
                f"found {token!r} with the character {exc.args[0]!r}") from None
    # sentencepiece: '▁' is a space; '<0xNN>' is one raw byte (byte fallback)
    if _SP_BYTE.fullmatch(token):
        return bytes([int(token[3:5], 16)])
    return token.replace(_SP_SPACE, " ").encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class _Text:
    """The answer's bytes and, for each token, where its bytes start (plus the total)."""

    data: bytes
    starts: np.ndarray  # shape (n_tokens + 1,)

    @classmethod
    def from_tokens(cls, tokens: list[str], style: str) -> _Text:
        pieces = [_token_bytes(t, i, style) for i, t in enumerate(tokens)]
        starts = np.zeros(len(pieces) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in pieces], out=starts[1:])
        return cls(b"".join(pieces), starts)

    def token_at(self, offset: int) -> int:
        """Index of the token holding byte `offset` (empty tokens hold no byte)."""
        return int(np.searchsorted(self.starts, offset, side="right")) - 1

    def tokens_covering(self, start: int, end: int) -> list[int]:
        """Tokens holding at least one byte of [start, end); [] for an empty range."""
        if end <= start:
            return []
        first, last = self.token_at(start), self.token_at(end - 1)
        sizes = np.diff(self.starts[first:last + 2])
        return [first + i for i in np.flatnonzero(sizes).tolist()]


def _value_span(node: Node, text: _Text) -> list[int]:
    if node.kind == "null" or (node.kind == "string" and node.end == node.start):
        return []  # null and "" are missing values: no token carries them
    return text.tokens_covering(node.start, node.end)


# ---------------------------------------------------------------------------------------
# value_token_spans
# ---------------------------------------------------------------------------------------
def _prepare_tokens(tokens: Any, token_style: str) -> tuple[list[str], _Text, Node]:
    tokens = _check_tokens(tokens)
    token_style = check_option(token_style, "token_style", TOKEN_STYLES)
    text = _Text.from_tokens(tokens, _resolve_style(tokens, token_style))

    def where(offset: int) -> str:
        if offset >= len(text.data):
            return "the end of the tokens"
        return f"tokens[{text.token_at(offset)}]"

    return tokens, text, find_root(text.data, "tokens", where)


def _locate(root: Node, key: str, occurrence: int) -> tuple[Node, str]:
    """The node of `key` (see value_token_spans) and its path for messages."""
    top_keys = [name for name, _ in root.members]
    if key in top_keys:
        if occurrence != 0:
            raise ValidationError(f"occurrence must be 0 for the top-level key {key!r}; "
                                  f"found {occurrence}")
        return member(root, key, ""), key  # type: ignore[return-value]
    list_name, sub = None, key
    head, dot, tail = key.partition(".")
    if dot and head in top_keys:
        list_name, sub = head, tail
    else:
        # a bare sub-field name: the one top-level list whose records use it
        lists = [name for name, child in root.members if child.kind == "array"
                 and any(it.kind == "object" and any(k == key for k, _ in it.members)
                         for it in child.items)]
        if len(lists) > 1:
            raise ValidationError(f"key {key!r} is ambiguous: records of the lists {lists} all "
                                  f"have it; name one, as '{lists[0]}.{key}'")
        if not lists:
            raise ValidationError(f"key {key!r} must be a top-level key of the answer, "
                                  "'<list>.<key>', or a key of the records of a top-level list; "
                                  f"found top-level keys {top_keys}")
        list_name = lists[0]
    array = member(root, list_name, "")
    assert array is not None
    if array.kind != "array":
        raise ValidationError(f"field {list_name} must be a list of records to look up "
                              f"{key!r}; found a JSON {array.kind}")
    if occurrence >= len(array.items):
        raise ValidationError(f"occurrence must index a record of {list_name} "
                              f"({len(array.items)} records); found {occurrence}")
    record = array.items[occurrence]
    path = f"{list_name}[{occurrence}]"
    if record.kind != "object":
        raise ValidationError(f"field {path} must be a record (a JSON object); "
                              f"found a JSON {record.kind}")
    node = member(record, sub, path)
    if node is None:
        # never the next record's key: that would attach another item's value
        raise ValidationError(f"field {path} must have the key {sub!r}; found keys "
                              f"{[k for k, _ in record.members]}")
    return node, f"{path}.{sub}"


def value_token_spans(tokens: Sequence[str], key: str, *, occurrence: int = 0,
                      token_style: str = "auto") -> list[int]:
    """Indices of the generated tokens that spell the value of `key` in a JSON answer.

    The tokens are decoded to bytes, each byte remembering its token; the JSON object in
    the answer is read with the byte range of every value; the tokens holding at least one
    byte of the value are returned, in order.

    Parameters
    ----------
    tokens : sequence of str
        The generated tokens, in order, spelling a JSON object (text around it, such as a
        code fence or an end-of-text token, is ignored).
    key : str
        ``"Agency"``: a top-level key. ``"LineItems.Rate"``: the key ``Rate`` in a record of
        the top-level list ``LineItems`` (the entity table's field name). A bare ``"Rate"``
        that is not a top-level key means the same when exactly one top-level list has
        records with that key.
    occurrence : int, default 0
        For a line-item key, which record (0-based): the lookup anchors on that record of
        the list and finds the key inside it. A record without the key is an error, never
        the next record's value. Must be 0 for a top-level key.
    token_style : {"auto", "text", "byte-level", "sentencepiece"}, default "auto"
        How the token strings spell bytes (module docstring).

    Returns
    -------
    list of int
        Ascending token indices. A string's value is its content between the quotes, so a
        token that straddles the boundary (``' "AC'``, ``' Media",'``) counts when it holds
        a character of the content and a token of quote and punctuation only (``'",'``)
        does not; escaped quotes are content. Numbers and ``true``/``false`` are their
        literal. ``null`` and ``""`` are missing values and return ``[]`` (no confidence).
        An object or list value returns the tokens of its brackets and everything inside.

    Raises
    ------
    ValidationError
        The tokens hold no valid JSON object (the message names the token where it breaks),
        the key is absent, repeated in one object or ambiguous, the record does not exist.

    See Also
    --------
    confidences_from_logprobs : uses these spans.

    Examples
    --------
    >>> tokens = ['{"', 'Agency', '":', ' "', 'AC', 'ME', ' Media', '",', ' "', 'Line',
    ...           'Items', '":', ' [{"', 'Rate', '":', ' 1', '50', '},', ' {"', 'Rate',
    ...           '":', ' null', '}]}']
    >>> value_token_spans(tokens, "Agency")        # 'AC', 'ME', ' Media'
    [4, 5, 6]
    >>> value_token_spans(tokens, "LineItems.Rate")  # ' 1', '50'
    [15, 16]
    >>> value_token_spans(tokens, "Rate", occurrence=1)  # null: no value tokens
    []
    """
    occurrence = check_positive_int(occurrence, "occurrence", 0)
    if not isinstance(key, str) or not key:
        raise ValidationError(f"key must be a non-empty string; found {key!r}")
    _, text, root = _prepare_tokens(tokens, token_style)
    node, _ = _locate(root, key, occurrence)
    return _value_span(node, text)


# ---------------------------------------------------------------------------------------
# confidences_from_logprobs
# ---------------------------------------------------------------------------------------
def _check_top_logprobs(top_logprobs: Any, n: int) -> list[Any]:
    if isinstance(top_logprobs, (str, bytes, Mapping)) or not isinstance(top_logprobs, Sequence):
        raise ValidationError("top_logprobs must be a sequence with one entry per token; "
                              f"found {type(top_logprobs).__name__}")
    if len(top_logprobs) != n:
        raise ValidationError(f"tokens, top_logprobs must have the same length; tokens has {n} "
                              f"and top_logprobs has {len(top_logprobs)}")
    return [None if entry is None else _top_values(entry, f"top_logprobs[{i}]")
            for i, entry in enumerate(top_logprobs)]


def _check_scalar_node(node: Node, path: str) -> None:
    if node.kind in ("object", "array"):
        raise ValidationError(f"field {path} must be a scalar (string, number, bool or null); "
                              f"found a JSON {node.kind}")


def confidences_from_logprobs(tokens: Sequence[str], token_logprobs: ArrayLike,
                              schema: Schema, *,
                              top_logprobs: Sequence[Sequence[Mapping[str, Any]] | None]
                              | None = None, method: str = "first",
                              token_style: str = "auto") -> dict[str, Any]:
    """A predicted document with a token-log-probability confidence on every value.

    Reads the JSON answer the tokens spell and returns it with each schema field (and each
    sub-field of each line item) as ``{"value": v, "confidence": c}``, where ``c`` is
    :func:`aggregate_logprobs` over the value's tokens (:func:`value_token_spans`).

    Parameters
    ----------
    tokens : sequence of str, shape (n_tokens,)
        The generated tokens.
    token_logprobs : sequence of float, shape (n_tokens,)
        The natural-log probability of each generated token.
    schema : Schema
        The fields to read. Line items (:class:`~confcal.scoring.schema.Items`) are lists of
        records in the answer.
    top_logprobs : sequence, shape (n_tokens,), optional
        Per token, its top alternatives' log-probabilities: a mapping token ->
        log-probability, a list of numbers, or a list of ``{"token", "logprob"}`` objects;
        ``None`` for a position without them. Required by ``method="margin"``, which reads
        the entry of each value's first token.
    method : {"first", "mean", "margin"}, default "first"
        See :func:`aggregate_logprobs`.
    token_style : {"auto", "text", "byte-level", "sentencepiece"}, default "auto"

    Returns
    -------
    dict
        The answer's keys in its order. A schema field's value ``v`` is the JSON value
        (strings unescaped, numbers as int or float, booleans); ``null`` and ``""`` get
        ``"confidence": None`` (they have no value tokens). An Items field is a list of
        records built the same way; ``null`` stays ``None``. Keys the schema does not
        define, at the top level or inside a record, are passed through unchanged, so that
        :func:`~confcal.scoring.score_documents` counts them as unknown fields. Schema
        fields absent from the answer are absent from the result (a missing prediction).

    Raises
    ------
    ValidationError
        Naming the field: invalid tokens or log-probabilities, lengths that differ, no
        valid JSON object, a repeated key, a list or object where a scalar belongs, line
        items that are not a list of records, a ``"margin"`` without top log-probabilities
        at a value's first token.

    See Also
    --------
    aggregate_logprobs : one value's tokens to one confidence.
    value_token_spans : which tokens spell which value.
    parse_topk : confidence from verbalized candidates instead.

    Notes
    -----
    A token that straddles the quote (``' "AC'``) is one of the value's tokens, so its
    log-probability, which also covers the quote, enters the confidence: the tokenizer
    decided the boundary, and leaving the token out would drop the value's first
    characters. Confidence is computed from the tokens as generated; nothing is
    renormalised.

    Examples
    --------
    >>> import math
    >>> from confcal.scoring.comparators import Number, Text
    >>> from confcal.scoring.schema import Field, Items, Schema
    >>> schema = Schema({"Agency": Field(Text()), "LineItems": Items({"Rate": Field(Number())})})
    >>> tokens = ['{"', 'Agency', '":', ' "', 'AC', 'ME', '",', ' "', 'LineItems', '":',
    ...           ' [{"', 'Rate', '":', ' 1', '50', '}]}']
    >>> lp = [0.0, 0.0, 0.0, 0.0, math.log(0.8), math.log(0.5), 0.0, 0.0, 0.0, 0.0,
    ...       0.0, 0.0, 0.0, math.log(0.9), math.log(0.9), 0.0]
    >>> doc = confidences_from_logprobs(tokens, lp, schema)
    >>> doc["Agency"]["value"], round(doc["Agency"]["confidence"], 12)   # first token 'AC'
    ('ACME', 0.8)
    >>> doc = confidences_from_logprobs(tokens, lp, schema, method="mean")
    >>> round(doc["Agency"]["confidence"], 12)     # sqrt(0.8 * 0.5) = sqrt(0.4)
    0.632455532034
    >>> doc["LineItems"][0]["Rate"]["value"], round(doc["LineItems"][0]["Rate"]["confidence"], 12)
    (150, 0.9)
    """
    tokens = _check_tokens(tokens)
    lp = _check_logprobs(token_logprobs, "token_logprobs")
    if lp.shape[0] != len(tokens):
        raise ValidationError(f"tokens, token_logprobs must have the same length; tokens has "
                              f"{len(tokens)} and token_logprobs has {lp.shape[0]}")
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    method = check_option(method, "method", METHODS)
    top = None if top_logprobs is None else _check_top_logprobs(top_logprobs, len(tokens))
    if method == "margin" and top is None:
        raise ValidationError("top_logprobs must be given for method='margin'; found None")
    _, text, root = _prepare_tokens(tokens, token_style)

    def leaf(node: Node, path: str) -> dict[str, Any]:
        _check_scalar_node(node, path)
        span = _value_span(node, text)
        if not span:
            return {"value": node.value, "confidence": None}
        first_top = None
        if method == "margin":
            assert top is not None
            first_top = top[span[0]]
            if first_top is None:
                raise ValidationError(
                    f"field {path}: top_logprobs[{span[0]}] (the value's first token) must "
                    "hold the top alternatives for method='margin'; found None")
        c = _aggregate(lp[span], method, first_top, f"top_logprobs[{span[0]}]")
        return {"value": node.value, "confidence": None if math.isnan(c) else c}

    def record(node: Node, spec: Items, path: str) -> Any:
        if node.kind != "object":
            raise ValidationError(f"field {path} must be a record (a JSON object); "
                                  f"found a JSON {node.kind}")
        out: dict[str, Any] = {}
        for key, child in node.members:
            sub_path = f"{path}.{key}"
            if key in out:
                raise ValidationError(f"field {sub_path} must appear once in its record; "
                                      "found it repeated")
            out[key] = (leaf(child, sub_path) if key in spec.fields
                        else to_python(child, sub_path))
        return out

    document: dict[str, Any] = {}
    for key, child in root.members:
        if key in document:
            member(root, key, "")  # raises: the key is repeated
        spec = schema.fields.get(key)
        if spec is None:
            document[key] = to_python(child, key)
        elif isinstance(spec, Field):
            document[key] = leaf(child, key)
        elif child.kind == "null":
            document[key] = None
        elif child.kind != "array":
            raise ValidationError(f"field {key} must be a list of records (line items) or null; "
                                  f"found a JSON {child.kind}")
        else:
            document[key] = [record(item, spec, f"{key}[{i}]")
                             for i, item in enumerate(child.items)]
    return document


# ---------------------------------------------------------------------------------------
# parse_topk
# ---------------------------------------------------------------------------------------
class _Sums:
    """Fields whose candidate probabilities sum above 1: counted, reported once."""

    def __init__(self) -> None:
        self.count = 0
        self.fields = 0
        self.first: tuple[str, float] | None = None

    def add(self, path: str, total: float) -> None:
        self.fields += 1
        if total > 1.0 + _SUM_TOLERANCE:
            self.count += 1
            if self.first is None:
                self.first = (path, total)


def _is_probability(p: Any) -> bool:
    return is_real(p) and 0.0 <= float(p) <= 1.0


def _candidates(leaf: Any, path: str, k: int, sums: _Sums) -> Any:
    if leaf is None:
        return None  # the model wrote null: a missing prediction without confidence
    form = leaf
    if isinstance(leaf, Mapping):
        if set(leaf) != {"candidates"}:
            raise ValidationError(
                f"field {path} must be a list of candidates or {{'candidates': [...]}}; "
                f"found an object with keys {sorted(map(str, leaf))}")
        form = leaf["candidates"]
    if isinstance(form, (str, bytes)) or not isinstance(form, Sequence):
        raise ValidationError(f"field {path} must be a list of candidates "
                              f"{{'value', 'probability'}}; found {form!r:.80}")
    if not 1 <= len(form) <= k:
        raise ValidationError(f"field {path} must have 1 to k={k} candidates; "
                              f"found {len(form)}")
    total = 0.0
    for i, cand in enumerate(form):
        where = f"field {path}, candidates[{i}]"
        if not isinstance(cand, Mapping) or set(cand) != {"value", "probability"}:
            found = (f"keys {sorted(map(str, cand))}" if isinstance(cand, Mapping)
                     else f"{cand!r:.80}")
            raise ValidationError(f"{where} must be an object with exactly the keys "
                                  f"'probability', 'value'; found {found}")
        value, p = cand["value"], cand["probability"]
        if isinstance(value, (Mapping, list, tuple, set)):
            raise ValidationError(f"{where}.value must be a scalar (string, number, bool or "
                                  f"null); found {value!r:.80}")
        if not _is_probability(p):
            raise ValidationError(f"{where}.probability must be a number within [0, 1]; "
                                  f"found {p!r}")
        total += float(p)
    sums.add(path, total)
    return {"candidates": [dict(c) for c in form]}


def _read_answer(answer: Any) -> Mapping[str, Any]:
    if isinstance(answer, Mapping):
        return answer
    if isinstance(answer, bytes):
        answer = answer.decode("utf-8")
    if not isinstance(answer, str):
        raise ValidationError(f"answer must be the model's text or a parsed JSON object; "
                              f"found {type(answer).__name__}")
    data = answer.encode("utf-8", "surrogatepass")

    def where(offset: int) -> str:
        # character position in the text: count the characters of the bytes before it
        return f"character {len(data[:offset].decode('utf-8', 'ignore'))}"

    return to_python(find_root(data, "answer", where), "")  # type: ignore[no-any-return]


def parse_topk(answer: str | Mapping[str, Any], schema: Schema, *, k: int = 4) -> dict[str, Any]:
    """A verbalized top-K (1S-TopK) answer as a predicted document in the candidates form.

    Parameters
    ----------
    answer : str or mapping
        The model's answer: JSON text (a code fence or text around the JSON object is
        ignored) or the parsed object. Each schema field holds its candidates, either as a
        list ``[{"value": v, "probability": p}, ...]`` or as ``{"candidates": [...]}``;
        ``null`` for no prediction. An Items field holds a list of records whose sub-fields
        hold candidates.
    schema : Schema
    k : int, default 4
        The most candidates a field may have (the paper's top-4).

    Returns
    -------
    dict
        Each schema field as ``{"candidates": [{"value": v, "probability": p}, ...]}`` in the
        model's order (the scorer takes the most probable; equal probabilities: the first
        listed). ``null`` stays ``None``. Keys the schema does not define are passed through
        unchanged (the scorer counts them); absent fields stay absent.

    Raises
    ------
    ValidationError
        Naming the field: no valid JSON object in the text, a repeated key, a field that is
        not a candidate list, 0 or more than k candidates, a candidate without exactly the
        keys ``value`` and ``probability``, a list or object as a value, a probability that
        is not a number within [0, 1].

    Warns
    -----
    ProbabilitySumWarning
        When the candidate probabilities of some fields sum above 1 (beyond 1e-9, the
        rounding of written decimals): they are kept as given, and one warning counts the
        fields and names the first.

    See Also
    --------
    confidences_from_logprobs : confidence from token log-probabilities instead.

    Examples
    --------
    >>> from confcal.scoring.comparators import Number, Text
    >>> from confcal.scoring.schema import Field, Items, Schema
    >>> schema = Schema({"Agency": Field(Text()), "LineItems": Items({"Rate": Field(Number())})})
    >>> text = '''Here you go:
    ... ```json
    ... {"Agency": [{"value": "ACME Media", "probability": 0.7},
    ...             {"value": "ACME", "probability": 0.2}],
    ...  "LineItems": [{"Rate": [{"value": 150, "probability": 0.9}]}]}
    ... ```'''
    >>> doc = parse_topk(text, schema)
    >>> doc["Agency"]["candidates"][0]
    {'value': 'ACME Media', 'probability': 0.7}
    >>> doc["LineItems"][0]["Rate"]
    {'candidates': [{'value': 150, 'probability': 0.9}]}
    >>> parse_topk({"Agency": [{"value": "X", "probability": 1.3}]}, schema)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: field Agency, candidates[0].probability must be a number
    within [0, 1]; found 1.3
    """
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    k = check_positive_int(k, "k", 1)
    data = _read_answer(answer)
    sums = _Sums()
    document: dict[str, Any] = {}
    for key, leaf in data.items():
        spec = schema.fields.get(key)
        if spec is None:
            document[key] = leaf
        elif isinstance(spec, Field):
            document[key] = _candidates(leaf, key, k, sums)
        elif leaf is None:
            document[key] = None
        elif isinstance(leaf, (str, bytes, Mapping)) or not isinstance(leaf, Sequence):
            raise ValidationError(f"field {key} must be a list of records (line items) or "
                                  f"null; found {leaf!r:.80}")
        else:
            records = []
            for i, item in enumerate(leaf):
                path = f"{key}[{i}]"
                if not isinstance(item, Mapping):
                    raise ValidationError(f"field {path} must be a record (an object); "
                                          f"found {item!r:.80}")
                records.append({sub: _candidates(v, f"{path}.{sub}", k, sums)
                                if sub in spec.fields else v for sub, v in item.items()})
            document[key] = records
    if sums.count:
        assert sums.first is not None
        path, total = sums.first
        warnings.warn(
            f"parse_topk: candidate probabilities sum above 1 in {sums.count} of {sums.fields} "
            f"fields (first: {path}, sum {total:.6g}); kept as given",
            ProbabilitySumWarning, stacklevel=2)
    return document
