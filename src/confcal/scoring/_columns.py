"""The columns the scorer compares: the pool of every value, the rows of the entity table in
pieces, and the leaves of a field read and checked column by column.

Shared by the top-level fields (:mod:`._scoring`) and the line items (:mod:`._items`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._validation import is_missing
from ..exceptions import ValidationError
from ._inputs import doc_label
from ._kernels import missing_mask
from ._text import check_value_lengths, compared_chars, value_lengths
from .predictions import FAST_SCALARS, LeafError, check_scalar, unwrap_leaf

_DICT = frozenset({dict})
_FLOAT = frozenset({float})
_TWO = frozenset({2})
_STR = frozenset({str})


def object_array(values: list[Any]) -> np.ndarray:
    # fromiter keeps each value as one object; np.array would unpack an empty-list value.
    return np.fromiter(values, dtype=object, count=len(values))


class Pool:
    """Every truth and predicted value once, in flat lists; entity rows refer to them.

    Index 0 of each list is the "no item" sentinel (a missing value without confidence)
    that the sides of unpaired line items and documents without a prediction point to.
    Values are gathered into the table's object columns with one fancy index at the end;
    the missing flags are kept as arrays, concatenated there.
    """

    def __init__(self) -> None:
        self.truth: list[Any] = [None]
        self.truth_missing: list[np.ndarray] = [np.ones(1, dtype=bool)]
        self.prediction: list[Any] = [None]
        self.pred_missing: list[np.ndarray] = [np.ones(1, dtype=bool)]
        self.confidence: list[float] = [math.nan]


class Chunks:
    """Per-row arrays of the entity table in pieces, concatenated and sorted once."""

    def __init__(self) -> None:
        self.doc: list[np.ndarray] = []
        self.order: list[np.ndarray] = []  # schema position of the top-level field
        self.rank: list[np.ndarray] = []  # row position within (doc, top-level field)
        self.field: list[np.ndarray] = []  # code into schema.entity_fields
        self.truth_index: list[np.ndarray] = []  # -1: no truth item / top-level field
        self.pred_index: list[np.ndarray] = []
        self.truth_ref: list[np.ndarray] = []  # index into Pool.truth
        self.pred_ref: list[np.ndarray] = []  # index into Pool.prediction/confidence
        self.raw: list[np.ndarray] = []  # comparator similarity (read for TP/FD only)


def _leaf_error(doc_id: Any, field: str, exc: LeafError) -> ValidationError:
    return ValidationError(f"{doc_label(doc_id)}, field {field}: {exc}", doc_id=doc_id,
                           field=field)


def check_truth_column(values: list[Any], where: Callable[[int], tuple[Any, str]],
                        max_chars: int) -> np.ndarray:
    """Every truth value is a scalar or missing, and no longer than ``max_chars``;
    ``where(k)`` is (doc id, field path) of value k, for the error. Returns the values'
    lengths (0 for a value that is not a string)."""
    if not FAST_SCALARS.issuperset(map(type, values)):
        for k, value in enumerate(values):
            try:
                check_scalar(value, "truth value")
            except LeafError as exc:
                raise _leaf_error(*where(k), exc) from None
    return check_value_lengths(values, where, "the truth value", max_chars)


def pred_column(leaves: list[Any], where: Callable[[int], tuple[Any, str]], max_chars: int
                 ) -> tuple[list[Any], list[float], np.ndarray | None]:
    """Values and confidences (NaN when absent) of a column of predicted leaves, and the
    characters each leaf is compared by (None when some leaf is a candidates list: the
    work bound reads its longest candidate, :func:`compared_chars`); no value longer than
    ``max_chars``."""
    values, confidences, plain = _unwrap_column(leaves, where)
    lengths = check_value_lengths(values, where, "the predicted value", max_chars)
    return values, confidences, lengths if plain else None


def _unwrap_column(leaves: list[Any], where: Callable[[int], tuple[Any, str]]
                   ) -> tuple[list[Any], list[float], bool]:
    """Values and confidences of a column of leaves, and whether no leaf is a candidates
    list; the first malformed leaf is an error at its location."""
    common = _common_column(leaves)
    if common is not None:
        return common[0], common[1], True
    try:
        parsed = [unwrap_leaf(leaf) for leaf in leaves]
    except LeafError:
        for k, leaf in enumerate(leaves):  # find the first bad leaf for the message
            try:
                unwrap_leaf(leaf)
            except LeafError as exc:
                raise _leaf_error(*where(k), exc) from None
        raise  # pragma: no cover - the loop above always finds it
    plain = not any(isinstance(leaf, Mapping) and "candidates" in leaf for leaf in leaves)
    return [v for v, _ in parsed], [c for _, c in parsed], plain


_VALUE, _CONFIDENCE = operator.itemgetter("value"), operator.itemgetter("confidence")


def _common_column(leaves: list[Any]) -> tuple[list[Any], list[float]] | None:
    """The common all-{"value", "confidence"} column, checked with C-level builtins instead
    of leaf by leaf (the rules of :func:`unwrap_leaf`'s fast case); None for any other
    shape, which takes the general path."""
    if not (leaves and _DICT.issuperset(map(type, leaves)) and _TWO.issuperset(map(len, leaves))):
        return None
    try:
        values = list(map(_VALUE, leaves))
        confidences = list(map(_CONFIDENCE, leaves))
    except KeyError:
        return None
    if not _FLOAT.issuperset(map(type, confidences)):
        return None
    if (
        math.isnan(sum(confidences))  # NaN anywhere makes the sum NaN
        or not 0.0 <= min(confidences)
        or not max(confidences) <= 1.0
        or not FAST_SCALARS.issuperset(map(type, values))
    ):
        return None
    return values, confidences


def missing_by_lengths(values: list[Any], lengths: np.ndarray | None) -> np.ndarray:
    """:func:`missing_mask` of a column whose string lengths are known.

    A column of plain strings is decided by those lengths (empty) and one ``str.isspace``
    map; what that leaves present is missing only if it is made of spaces and format
    characters (U+200B and the rest of category Cf, which
    :func:`~confcal._validation.is_missing` reads as missing). A format character is
    neither ASCII nor printable, so only the non-ASCII strings that ``str.isprintable``
    refuses are asked (``isascii`` costs nothing per character; text with accents pays
    one ``isprintable`` each).
    """
    if lengths is None or not _STR.issuperset(map(type, values)):
        return missing_mask(values)
    size = len(values)
    missing = (lengths == 0) | np.fromiter(map(str.isspace, values), dtype=bool, count=size)
    ascii_ = np.fromiter(map(str.isascii, values), dtype=bool, count=size)
    rest = np.flatnonzero(~(ascii_ | missing))
    if rest.size:
        texts = [values[k] for k in rest.tolist()]
        printable = np.fromiter(map(str.isprintable, texts), dtype=bool, count=len(texts))
        for k in rest[~printable].tolist():
            missing[k] = is_missing(values[k])
    return missing


class Columns:
    """The sub-field columns of one Items field, checked: per sub-field the truth values,
    the predicted values and confidences, the characters each value is compared by
    (``chars``: truth, prediction; the prediction's None when it holds a candidates list)
    and the missing flags of both sides."""

    def __init__(self) -> None:
        self.truth: list[list[Any]] = []
        self.pred: list[list[Any]] = []
        self.confidence: list[list[float]] = []
        self.leaves: list[list[Any]] = []  # the predicted leaves, for compared_chars
        self.chars: list[tuple[np.ndarray, np.ndarray | None]] = []
        self.truth_missing: list[np.ndarray] = []
        self.pred_missing: list[np.ndarray] = []

    def compared(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(t, compared_chars(leaves) if p is None else p)
                for (t, p), leaves in zip(self.chars, self.leaves, strict=True)]

    @classmethod
    def common(cls, truth_cells: list[Any], pred_cells: list[Any], k: int, max_chars: int
               ) -> Columns | None:
        """The columns of ``k`` sub-fields from leaves in item order when every truth value
        is a plain scalar, every predicted leaf a ``{"value", "confidence"}`` (or there is
        none) and no value is longer than ``max_chars``, each checked once over all the
        leaves; None otherwise, and the column-by-column checks name what is wrong."""
        if not FAST_SCALARS.issuperset(map(type, truth_cells)):
            return None
        if pred_cells:
            common = _common_column(pred_cells)
            if common is None:
                return None
            values, confidences = common
        else:
            values, confidences = [], []
        t_chars, p_chars = value_lengths(truth_cells), value_lengths(values)
        if any(len(c) and int(c.max()) > max_chars for c in (t_chars, p_chars)):
            return None
        t_missing = missing_by_lengths(truth_cells, t_chars)
        p_missing = missing_by_lengths(values, p_chars)
        cols = cls()
        for s in range(k):
            cols.truth.append(truth_cells[s::k])
            cols.pred.append(values[s::k])
            cols.confidence.append(confidences[s::k])
            cols.leaves.append(pred_cells[s::k])
            cols.chars.append((t_chars[s::k], p_chars[s::k]))
            cols.truth_missing.append(t_missing[s::k])
            cols.pred_missing.append(p_missing[s::k])
        return cols
