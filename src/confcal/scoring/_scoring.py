"""Score predicted documents against ground truth: the entity table, WOA, precision/recall/F1.

:func:`score_documents` turns ground-truth and predicted documents into the entity table
that every calibration metric reads: one row per evaluated leaf, with its outcome

* **TP**: truth and prediction present, ``similarity >= threshold``;
* **FD**: both present, ``similarity < threshold`` (a false discovery: wrong value);
* **FA**: truth missing, prediction present (a false alarm: invented value);
* **FN**: truth present, prediction missing;
* **TN**: both missing.

Line items (:class:`~confcal.scoring.schema.Items`) are paired first
(:func:`~confcal.scoring.matching.match_items`); an unpaired truth item gives FN rows (or TN for
its empty cells), an unpaired predicted item FA rows that keep their confidence.

Work per document is bookkeeping in Python lists; comparisons are batched. Values are pooled
across documents and each distinct string is normalized or parsed once; a top-level field is
compared for all documents in one vectorized call; the line items of all documents are
compared with one kernel call per sub-field (numpy on parsed numbers and dates, a rapidfuzz
``cdist`` per document for text); only the assignment runs document by document; the
DataFrame is built once.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._signature import SIGNATURE_ATTR
from .._validation import WEIGHT_RULE, InputLimits, check_limits, is_missing, weight_ok
from .._version import __version__
from ..exceptions import ValidationError
from ._inputs import (
    NameCheck,
    case_hint,
    doc_label,
    doc_pairs,
    metadata_columns,
    no_predictions_error,
)
from ._kernels import (
    block_pairs,
    elementwise_similarity,
    fix_missing,
    kernel,
    missing_mask,
)
from ._result import OUTCOMES, ExtractionResult, value_column
from ._text import (
    check_block_work,
    check_document_lengths,
    check_item_work,
    check_value_lengths,
    compared_chars,
    value_lengths,
)
from .matching import assign_pairs, item_similarity
from .predictions import FAST_SCALARS, LeafError, check_scalar, unwrap_leaf
from .schema import Field, Items, Schema

__all__ = ["extraction_signature", "score_documents"]

_TP, _FD, _FA, _FN, _TN = range(5)
_OUTCOME_DTYPE = pd.CategoricalDtype(list(OUTCOMES))
_ABSENT = object()
_DICT = frozenset({dict})
_FLOAT = frozenset({float})
_TWO = frozenset({2})
_STR = frozenset({str})
# Line items are scored in blocks of consecutive documents of at most _BLOCK_BUDGET units:
# a document costs its item pairs plus _ITEM_COST per item (about 45 invoices of 20 items
# a block). A block's leaves and (k sub-fields x pairs) similarities stay in the processor's
# cache and in memory the allocator already holds: one block of all 1,000 invoices of the
# scoring benchmark made arrays of 16 MB, each a fresh mapping whose pages faulted in one
# by one, and its passes over 100,000 leaves ran from main memory (0.41 s against 0.31 s
# in blocks). A document larger than the budget is a block of its own.
_BLOCK_BUDGET = 1 << 15
_ITEM_COST = 8


# ---------------------------------------------------------------------- scoring


def object_array(values: list[Any]) -> np.ndarray:
    # fromiter keeps each value as one object; np.array would unpack an empty-list value.
    return np.fromiter(values, dtype=object, count=len(values))


class _Pool:
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


class _Chunks:
    """Per-row arrays of the entity table in pieces, concatenated and sorted once."""

    def __init__(self) -> None:
        self.doc: list[np.ndarray] = []
        self.order: list[np.ndarray] = []  # schema position of the top-level field
        self.rank: list[np.ndarray] = []  # row position within (doc, top-level field)
        self.field: list[np.ndarray] = []  # code into schema.entity_fields
        self.truth_index: list[np.ndarray] = []  # -1: no truth item / top-level field
        self.pred_index: list[np.ndarray] = []
        self.truth_ref: list[np.ndarray] = []  # index into _Pool.truth
        self.pred_ref: list[np.ndarray] = []  # index into _Pool.prediction/confidence
        self.raw: list[np.ndarray] = []  # comparator similarity (read for TP/FD only)


def _leaf_error(doc_id: Any, field: str, exc: LeafError) -> ValidationError:
    return ValidationError(f"{doc_label(doc_id)}, field {field}: {exc}", doc_id=doc_id,
                           field=field)


def _check_truth_column(values: list[Any], where: Callable[[int], tuple[Any, str]],
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


def _pred_column(leaves: list[Any], where: Callable[[int], tuple[Any, str]], max_chars: int
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


def _missing_by_lengths(values: list[Any], lengths: np.ndarray | None) -> np.ndarray:
    """:func:`missing_mask` of a column whose string lengths are known: a column of plain
    strings is decided by those lengths (empty) and one ``str.isspace`` map, and the
    non-ASCII strings that leaves present by :func:`~confcal._validation.is_missing` (a
    string of spaces and format characters such as U+200B is missing too)."""
    if lengths is None or not _STR.issuperset(map(type, values)):
        return missing_mask(values)
    size = len(values)
    missing = (lengths == 0) | np.fromiter(map(str.isspace, values), dtype=bool, count=size)
    ascii_ = np.fromiter(map(str.isascii, values), dtype=bool, count=size)
    for k in np.flatnonzero(~(ascii_ | missing)).tolist():
        missing[k] = is_missing(values[k])
    return missing


class _Columns:
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
               ) -> _Columns | None:
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
        t_missing = _missing_by_lengths(truth_cells, t_chars)
        p_missing = _missing_by_lengths(values, p_chars)
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


class _TopField:
    """A top-level field: where its rows go in the entity table."""

    def __init__(self, name: str, spec: Field, order: int, code: int) -> None:
        self.name, self.spec, self.order, self.code = name, spec, order, code


def _comparator_key(comparator: Any) -> Any:
    try:
        hash(comparator)
    except TypeError:
        return id(comparator)
    return comparator


def _flush_top_fields(
    fields: list[_TopField], doc_ids: list[Any], truth_docs: list[Mapping[str, Any]],
    pred_docs: list[Mapping[str, Any]], pool: _Pool, out: _Chunks, max_chars: int,
) -> None:
    """Read, check and compare every top-level field for all documents at once.

    Fields with equal comparators (the three ``Text()`` fields of an invoice, say) share
    one vectorized comparator call.
    """
    groups: dict[Any, list[_TopField]] = {}
    for f in fields:
        groups.setdefault(_comparator_key(f.spec.comparator), []).append(f)
    n = len(truth_docs)
    docs = np.arange(n, dtype=np.int64)
    none = np.full(n, -1, dtype=np.int64)
    for group in groups.values():
        truth: list[Any] = []
        prediction: list[Any] = []
        confidence: list[float] = []
        for f in group:
            name = f.name

            def where(k: int, name: str = name) -> tuple[Any, str]:
                return doc_ids[k], name

            column = [doc.get(name) for doc in truth_docs]
            _check_truth_column(column, where, max_chars)
            values, confidences, _ = _pred_column([doc.get(name) for doc in pred_docs], where,
                                                  max_chars)
            truth.extend(column)
            prediction.extend(values)
            confidence.extend(confidences)
        truth_flags, pred_flags = missing_mask(truth), missing_mask(prediction)
        raw = elementwise_similarity(group[0].spec.comparator, truth, prediction,
                                     truth_flags, pred_flags, fields=[f.name for f in group])
        truth_base, pred_base = len(pool.truth), len(pool.prediction)
        pool.truth.extend(truth)
        pool.truth_missing.append(truth_flags)
        pool.prediction.extend(prediction)
        pool.pred_missing.append(pred_flags)
        pool.confidence.extend(confidence)
        for g, f in enumerate(group):
            out.doc.append(docs)
            out.order.append(np.full(n, f.order, dtype=np.int64))
            out.rank.append(np.zeros(n, dtype=np.int64))
            out.field.append(np.full(n, f.code, dtype=np.int64))
            out.truth_index.append(none)
            out.pred_index.append(none)
            out.truth_ref.append(truth_base + g * n + docs)
            out.pred_ref.append(pred_base + g * n + docs)
            out.raw.append(raw[g * n:(g + 1) * n])


class _ItemsField:
    """One Items field. The items of all documents are pooled first, then read, checked and
    compared column by column (one kernel call per sub-field); only the assignment runs
    document by document."""

    def __init__(self, name: str, spec: Items, order: int, first_code: int) -> None:
        self.name, self.spec, self.order = name, spec, order
        self.subs = list(spec.fields)
        self.sub_keys = frozenset(self.subs)
        self.specs = list(spec.fields.values())
        # chosen by capability: built-in kernels, a BatchedComparator's batches, or pair by pair
        self.kernels = [kernel(f.comparator, (f"{name}.{sub}",))
                        for sub, f in zip(self.subs, self.specs, strict=True)]
        self.codes = np.arange(first_code, first_code + len(self.subs), dtype=np.int64)
        self.weights = np.array([f.weight for f in self.specs], dtype=np.float64)
        # Item i of the b-th collected document is truth_items[t_start[b] + i].
        self.truth_items: list[Any] = []
        self.pred_items: list[Any] = []
        self.docs: list[int] = []
        self.doc_ids: list[Any] = []
        self.m: list[int] = []
        self.n: list[int] = []

    def _list(self, value: Any, doc_id: Any, side: str) -> Sequence[Any]:
        if is_missing(value):
            return ()
        if not isinstance(value, (list, tuple)):
            raise ValidationError(
                f"{doc_label(doc_id)}, field {self.name}: {side} must be a list of items "
                f"(mappings); found {type(value).__name__} {value!r:.80}",
                doc_id=doc_id, field=self.name,
            )
        return value

    def collect(
        self, doc_pos: int, doc_id: Any, truth_doc: Mapping[str, Any], pred_doc: Mapping[str, Any]
    ) -> None:
        truth_items = self._list(truth_doc.get(self.name), doc_id, "the truth value")
        pred_items = self._list(pred_doc.get(self.name), doc_id, "the prediction")
        if truth_items or pred_items:
            self.truth_items.extend(truth_items)
            self.pred_items.extend(pred_items)
            self.docs.append(doc_pos)
            self.doc_ids.append(doc_id)
            self.m.append(len(truth_items))
            self.n.append(len(pred_items))

    @staticmethod
    def _locator(starts: np.ndarray, doc_ids: list[Any]) -> Callable[[int], tuple[Any, int]]:
        """Item index in a block -> (doc id, index of the item in that document's list),
        ``starts`` and ``doc_ids`` of the block's documents."""
        def locate(k: int) -> tuple[Any, int]:
            # the last document starting at or before k (empty lists share a start)
            b = int(np.searchsorted(starts, k, side="right")) - 1
            return doc_ids[b], k - int(starts[b])
        return locate

    def _cells(
        self, items: list[Any], side: str, locate: Callable[[int], tuple[Any, int]],
        tally: dict[str, int], names: NameCheck,
    ) -> list[Any]:
        """The sub-field leaves of every item, item after item (``cells[i * k + s]`` is
        sub-field ``s`` of item ``i``), once items are mappings; keys outside the schema are
        counted (or refused).

        Item after item is the order in which a document's leaves lie in memory, so every
        later pass over the leaves reads memory forwards; a pass over one sub-field of all
        items jumps across the whole corpus, several times slower on 100,000 leaves.
        """
        all_dicts = _DICT.issuperset(map(type, items))
        if not all_dicts:
            for k, item in enumerate(items):
                if not isinstance(item, Mapping):
                    doc_id, i = locate(k)
                    raise ValidationError(
                        f"{doc_label(doc_id)}, field {self.name}[{i}]: {side} item must be a "
                        f"mapping of sub-fields; found {type(item).__name__} {item!r:.80}",
                        doc_id=doc_id, field=f"{self.name}[{i}]",
                    )
        subs = self.subs
        if all_dicts and frozenset({len(subs)}).issuperset(map(len, items)):
            # k keys of which k are sub-fields: exactly the sub-fields, nothing to count
            try:
                if len(subs) == 1:
                    return list(map(operator.itemgetter(subs[0]), items))
                return list(itertools.chain.from_iterable(
                    map(operator.itemgetter(*subs), items)))
            except KeyError:
                pass
        sub_keys = self.sub_keys
        for k, item in enumerate(items):
            if item.keys() <= sub_keys:
                continue
            if side == "truth":
                tally["unscored_truth_fields"] += len(item.keys() - sub_keys)
                continue
            doc_id, i = locate(k)
            tally["unknown_fields"] += names.unknown(item.keys(), sub_keys, doc_id, self.name,
                                                     f"[{i}]")
        return [item.get(sub) for item in items for sub in subs]

    def _columns(self, truth_cells: list[Any], pred_cells: list[Any],
                 locate_truth: Callable[[int], tuple[Any, int]],
                 locate_pred: Callable[[int], tuple[Any, int]], max_chars: int) -> _Columns:
        """The checked columns of every sub-field: all leaves checked at once in item order
        when they take the common shapes, else column by column, which names the first
        bad leaf (sub-field by sub-field, truth before prediction)."""
        fast = _Columns.common(truth_cells, pred_cells, len(self.subs), max_chars)
        if fast is not None:
            return fast

        def where(locate: Callable[[int], tuple[Any, int]], sub: str
                  ) -> Callable[[int], tuple[Any, str]]:
            def describe(j: int) -> tuple[Any, str]:
                doc_id, i = locate(j)
                return doc_id, f"{self.name}[{i}].{sub}"
            return describe

        k = len(self.subs)
        cols = _Columns()
        for s, sub in enumerate(self.subs):
            column = truth_cells[s::k]
            t_chars = _check_truth_column(column, where(locate_truth, sub), max_chars)
            leaves = pred_cells[s::k]
            values, confidences, p_chars = _pred_column(leaves, where(locate_pred, sub),
                                                        max_chars)
            cols.truth.append(column)
            cols.pred.append(values)
            cols.confidence.append(confidences)
            cols.leaves.append(leaves)
            cols.chars.append((t_chars, p_chars))
            cols.truth_missing.append(_missing_by_lengths(column, t_chars))
            cols.pred_missing.append(_missing_by_lengths(values, p_chars))
        return cols

    def flush(self, pool: _Pool, out: _Chunks, tally: dict[str, int], names: NameCheck,
              budget: int, limits: InputLimits) -> None:
        """Score the collected documents in blocks of consecutive documents of at most
        ``budget`` work units each (:data:`_BLOCK_BUDGET`), each block read, checked and
        compared column by column in one go; a block's faults are found in the order the
        column checks run, and blocks go in document order."""
        if not self.docs:
            return
        m = np.array(self.m, dtype=np.int64)
        n = np.array(self.n, dtype=np.int64)
        sizes = m * n + _ITEM_COST * (m + n)
        t_first, p_first = (np.cumsum(m) - m).tolist(), (np.cumsum(n) - n).tolist()
        for lo, hi in _chunks(sizes.tolist(), budget):
            items = (slice(t_first[lo], t_first[lo] + int(m[lo:hi].sum())),
                     slice(p_first[lo], p_first[lo] + int(n[lo:hi].sum())))
            self._flush_block(lo, hi, m[lo:hi], n[lo:hi], items, pool, out, tally, names,
                              limits)

    def _flush_block(self, lo: int, hi: int, m: np.ndarray, n: np.ndarray,
                     items: tuple[slice, slice], pool: _Pool, out: _Chunks,
                     tally: dict[str, int], names: NameCheck, limits: InputLimits) -> None:
        """Documents ``lo`` to ``hi`` of the collected ones, with ``m`` truth and ``n``
        predicted items each, ``items`` their places in the collected truth and predicted
        items."""
        k = len(self.subs)
        t_start, p_start = np.cumsum(m) - m, np.cumsum(n) - n
        truth_items, pred_items = self.truth_items[items[0]], self.pred_items[items[1]]
        doc_ids = self.doc_ids[lo:hi]
        locate_truth = self._locator(t_start, doc_ids)
        locate_pred = self._locator(p_start, doc_ids)
        truth_cells = self._cells(truth_items, "truth", locate_truth, tally, names)
        pred_cells = self._cells(pred_items, "predicted", locate_pred, tally, names)
        cols = self._columns(truth_cells, pred_cells, locate_truth, locate_pred,
                             limits.max_value_chars)
        # before any comparison: a document whose items would cost too much is refused
        check_block_work(doc_ids, self.name, k, m, n, cols.compared, limits)

        tm, pm = cols.truth_missing, cols.pred_missing
        prepared_t = [kern._prepare(col, mask)
                      for kern, col, mask in zip(self.kernels, cols.truth, tm, strict=True)]
        prepared_p = [kern._prepare(col, mask)
                      for kern, col, mask in zip(self.kernels, cols.pred, pm, strict=True)]
        truth_base = np.empty(k, dtype=np.int64)
        pred_base = np.empty(k, dtype=np.int64)
        for s in range(k):
            truth_base[s], pred_base[s] = len(pool.truth), len(pool.prediction)
            pool.truth.extend(cols.truth[s])
            pool.truth_missing.append(tm[s])
            pool.prediction.extend(cols.pred[s])
            pool.pred_missing.append(pm[s])
            pool.confidence.extend(cols.confidence[s])

        ti, pj = block_pairs(t_start, m, p_start, n)
        sims = np.empty((k, len(ti)))
        for s, kern in enumerate(self.kernels):
            raw = kern._blocks(prepared_t[s], prepared_p[s], t_start, m, p_start, n, ti, pj)
            sims[s] = fix_missing(raw, tm[s][ti], pm[s][pj])
        evidence = np.stack([~(tm[s][ti] & pm[s][pj]) for s in range(k)])
        item_sim = item_similarity(sims, evidence, self.weights)
        docs = np.array(self.docs[lo:hi], dtype=np.int64)
        self._emit(docs, t_start, m, p_start, n, sims, item_sim, self.spec.match_threshold,
                   truth_base, pred_base, out)

    def _emit(
        self, docs: np.ndarray, t_start: np.ndarray, m: np.ndarray, p_start: np.ndarray,
        n: np.ndarray, sims: np.ndarray, item_sim: np.ndarray, threshold: float,
        truth_base: np.ndarray, pred_base: np.ndarray, out: _Chunks,
    ) -> None:
        """Assign items document by document, then build the rows of all of them at once."""
        block_start = np.cumsum(m * n) - m * n
        rows, cols, lone_truth, lone_pred = [], [], [], []
        for start, mb, nb in zip(block_start.tolist(), m.tolist(), n.tolist(), strict=True):
            r, c, lt, lp = assign_pairs(item_sim[start:start + mb * nb].reshape(mb, nb), threshold)
            rows.append(r)
            cols.append(c)
            lone_truth.append(lt)
            lone_pred.append(lp)
        n_pairs = np.array([len(r) for r in rows], dtype=np.int64)
        n_lt = np.array([len(x) for x in lone_truth], dtype=np.int64)
        n_lp = np.array([len(x) for x in lone_pred], dtype=np.int64)
        block = np.arange(len(docs))

        def within(counts: np.ndarray) -> np.ndarray:
            return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)

        pair_block = np.repeat(block, n_pairs)
        lt_block = np.repeat(block, n_lt)
        lp_block = np.repeat(block, n_lp)
        r, c = np.concatenate(rows), np.concatenate(cols)
        lt, lp = np.concatenate(lone_truth), np.concatenate(lone_pred)
        # Entries of a document: pairs (by truth index), unpaired truth, unpaired predicted;
        # -1 marks the side without an item, whose references point at the pool sentinel.
        entry_block = np.concatenate([pair_block, lt_block, lp_block])
        entry_rank = np.concatenate([
            within(n_pairs), n_pairs[lt_block] + within(n_lt),
            n_pairs[lp_block] + n_lt[lp_block] + within(n_lp),
        ])
        ti = np.concatenate([r, lt, np.full(len(lp), -1, dtype=np.int64)])
        pj = np.concatenate([c, np.full(len(lt), -1, dtype=np.int64), lp])
        e, k = len(ti), len(self.subs)
        raw = np.zeros((e, k))
        raw[: len(r)] = sims[:, block_start[pair_block] + r * n[pair_block] + c].T
        truth_ref = np.where(
            ti[:, None] >= 0, truth_base[None, :] + (t_start[entry_block] + ti)[:, None], 0
        )
        pred_ref = np.where(
            pj[:, None] >= 0, pred_base[None, :] + (p_start[entry_block] + pj)[:, None], 0
        )
        out.doc.append(np.repeat(docs[entry_block], k))
        out.order.append(np.full(e * k, self.order, dtype=np.int64))
        out.rank.append((entry_rank[:, None] * k + np.arange(k)).ravel())
        out.field.append(np.tile(self.codes, e))
        out.truth_index.append(np.repeat(ti, k))
        out.pred_index.append(np.repeat(pj, k))
        out.truth_ref.append(truth_ref.ravel())
        out.pred_ref.append(pred_ref.ravel())
        out.raw.append(raw.ravel())


def _chunks(sizes: list[int], budget: int) -> list[tuple[int, int]]:
    """Consecutive [lo, hi) ranges of documents of at most ``budget`` total size each (a
    single document larger than that gets a range of its own)."""
    ranges, lo, held = [], 0, 0
    for i, size in enumerate(sizes):
        if held + size > budget and i > lo:
            ranges.append((lo, i))
            lo, held = i, 0
        held += size
    ranges.append((lo, len(sizes)))
    return ranges


def nullable_index(values: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(np.where(values < 0, 0, values), values < 0)


def score_documents(
    schema: Schema,
    truths: Mapping[Any, Mapping[str, Any]] | Iterable[tuple[Any, Mapping[str, Any]]],
    predictions: Mapping[Any, Mapping[str, Any]] | Iterable[tuple[Any, Mapping[str, Any]]],
    *,
    metadata: Mapping[Any, Mapping[str, Any]] | None = None,
    strict: bool = False,
    allow_case_mismatch: bool = False,
    conventions: str = "confcal",
    limits: InputLimits | None = None,
    allow_empty: bool = False,
) -> ExtractionResult:
    """Score predicted documents against ground truth.

    Parameters
    ----------
    schema : Schema
        The fields to score (e.g. :data:`confcal.scoring.presets.FCC_INVOICE`).
    truths : mapping doc_id -> document, or iterable of (doc_id, document)
        Ground-truth documents: mappings of field name -> value (a list of mappings for an
        :class:`~confcal.scoring.schema.Items` field). Doc ids must be unique and not missing.
    predictions : mapping doc_id -> document, or iterable of (doc_id, document)
        Predicted documents. Leaves are raw values, ``{"value", "confidence"}`` or
        ``{"candidates": [{"value", "probability"}, ...]}``.
    metadata : mapping doc_id -> {column: value}, optional
        Columns carried into the entity table for every row of that document (model,
        modality, pipeline, tier, ...). A document without an entry gets ``None``.
    strict : bool, default False
        Raise instead of counting when a truth document has no prediction or a prediction
        has a field the schema does not define.
    allow_case_mismatch : bool, default False
        A predicted field or line-item sub-field whose name equals a schema name after case
        folding (``grosstotal`` for ``GrossTotal``) is an error naming both spellings, since
        every value under it would otherwise be scored as missing; True counts and ignores
        it like any other unknown field.
    conventions : {"confcal", "stickler-1.0"}, default "confcal"
        ``"confcal"``: the semantics documented here. ``"stickler-1.0"``: reproduce
        stickler-eval 1.0.0, the ConfBench paper's scorer, to compare with published
        numbers: its counts (``counts["TP"]`` ... ``["TN"]``, which then include outcomes of
        whole line items and lists, ``counts["whole_item_outcomes"]``), its labels
        (``correct``) and the leaves it labels; the line-item leaves it leaves out are
        counted in ``counts["excluded_by_conventions"]``. Text is accepted at 0.5 and line
        items are paired at 0.7 whatever the schema's thresholds; see
        ``docs/concepts.md`` for every rule.
    limits : InputLimits, optional
        Its ``max_value_chars`` (default 10,000) bounds the length of every string value
        compared, truth and prediction: text similarity is quadratic in the length.
    allow_empty : bool, default False
        Score ``predictions`` with no document at all: every truth document is then scored
        as all-missing and counted in ``counts["docs_missing_prediction"]``. By default no
        predicted documents is an error (most often a wrong path or filter upstream), as
        for :func:`confcal.scoring.io.read_documents` and ``confcal score --allow-empty``.

    Returns
    -------
    ExtractionResult

    Raises
    ------
    ValidationError
        Naming the document id and field path (``doc 'inv-17', field LineItems[3].Rate:
        ...``): a document that is not a mapping, an Items value that is not a list, a truth
        value that is not a scalar, a malformed predicted leaf (confidence outside [0, 1],
        bad candidates list), a string value longer than ``limits.max_value_chars``, a
        prediction for a doc id absent from truths (with the truth's id when the two
        differ only in case), a predicted field named as a schema field in another case
        (unless ``allow_case_mismatch``), a repeated doc id, no truth documents, no
        predicted documents (unless ``allow_empty``),
        a schema weight whose entity weight falls outside [1e-100, 1e100]
        (:data:`confcal._validation.MAX_WEIGHT`: sums must stay finite). The same location
        is in the error's ``doc_id``, ``field`` and ``index`` (position in ``truths``)
        attributes.

    See Also
    --------
    score_documents_iter : the same scoring as a stream, in bounded memory.
    confcal.scoring.io.read_documents : documents and predictions from files.
    match_items : how line items are paired.
    compare_runs : the runs table of the entity table.

    Notes
    -----
    Every schema field yields rows for every truth document (TN when both sides are
    missing), except an Items field empty on both sides, which has no leaves. A truth
    document without a prediction is scored as if every prediction were missing (FN/TN
    rows) and counted in ``counts["docs_missing_prediction"]``. Fields outside the schema
    are ignored and counted (``unknown_fields`` for predictions, ``unscored_truth_fields``
    for ground truth); the result's ``unknown_field_names`` names the predicted ones.
    Rows are ordered by document (truth order), then schema field, then line-item entry
    (pairs by truth index, unpaired truth items, unpaired predicted items), then sub-field.

    Examples
    --------
    >>> from confcal.scoring.comparators import Number, Text
    >>> schema = Schema({"Agency": Field(Text()),
    ...                  "LineItems": Items({"Description": Field(Text()),
    ...                                      "Rate": Field(Number())})})
    >>> truth = {"inv-1": {"Agency": "ACME Media",
    ...                    "LineItems": [{"Description": "News at 6", "Rate": "100.00"}]}}
    >>> pred = {"inv-1": {"Agency": {"value": "ACME Media", "confidence": 0.9},
    ...                   "LineItems": [{"Description": "News at 6", "Rate": {"value": 150,
    ...                                                                       "confidence": 0.8}},
    ...                                 {"Description": "Weather", "Rate": {"value": 40,
    ...                                                                     "confidence": 0.99}}]}}
    >>> result = score_documents(schema, truth, pred)
    >>> result.entities[["field", "truth_index", "pred_index", "outcome", "confidence"]]
                      field  truth_index  pred_index outcome  confidence
    0                Agency         <NA>        <NA>      TP        0.90
    1  LineItems.Description            0           0      TP         NaN
    2         LineItems.Rate            0           0      FD        0.80
    3  LineItems.Description         <NA>           1      FA         NaN
    4         LineItems.Rate         <NA>           1      FA        0.99
    >>> result.woa, result.precision, result.recall  # WOA: (1 + 1 + 0 + 0 + 0) / 5
    (0.4, 0.4, 0.6666666666666666)
    >>> correct, confidence, n_without = result.to_calibration()
    >>> correct.tolist(), confidence.tolist(), n_without
    ([True, False, False], [0.9, 0.8, 0.99], 2)
    """
    if not isinstance(schema, Schema):
        raise ValidationError(f"schema must be a confcal Schema; found {type(schema).__name__}")
    if not isinstance(strict, bool):
        raise ValidationError(f"strict must be True or False; found {strict!r}")
    if not isinstance(allow_case_mismatch, bool):
        raise ValidationError(
            f"allow_case_mismatch must be True or False; found {allow_case_mismatch!r}")
    if not isinstance(allow_empty, bool):
        raise ValidationError(f"allow_empty must be True or False; found {allow_empty!r}")
    names = NameCheck(strict, allow_case_mismatch)
    checked_limits = check_limits(limits)
    max_chars = checked_limits.max_value_chars
    from . import _stickler

    stickler = _stickler.check_conventions(conventions) == "stickler-1.0"
    truth_docs, pred_docs, doc_pos = _paired_inputs(truths, predictions, allow_empty)
    doc_ids = [doc_id for doc_id, _ in truth_docs]
    meta = metadata_columns(metadata, doc_ids, doc_pos)
    signature = extraction_signature(schema, conventions)
    thresholds, weights = _leaf_settings(schema)
    if stickler:
        check_item_work(schema, truth_docs, pred_docs, checked_limits.max_pair_chars,
                        max_chars, checked_limits.max_item_pairs)
        check_document_lengths(schema, truth_docs, pred_docs, max_chars)
        return _signed(_stickler.score(schema, truth_docs, pred_docs, doc_ids, meta, names),
                       signature)

    top, lists = _schema_fields(schema)
    known = frozenset(schema.fields)
    tally = {"docs_missing_prediction": 0, "unknown_fields": 0, "unscored_truth_fields": 0}
    pool, out = _Pool(), _Chunks()
    truth_list: list[Mapping[str, Any]] = []
    pred_list: list[Mapping[str, Any]] = []
    for pos, (doc_id, truth_doc) in enumerate(truth_docs):
        pred_doc = _checked_documents(doc_id, truth_doc, pred_docs.get(doc_id, _ABSENT), known,
                                      tally, names)
        truth_list.append(truth_doc)
        pred_list.append(pred_doc)
        for it in lists:
            it.collect(pos, doc_id, truth_doc, pred_doc)

    _flush_top_fields(top, doc_ids, truth_list, pred_list, pool, out, max_chars)
    for it in lists:
        it.flush(pool, out, tally, names, _BLOCK_BUDGET, checked_limits)
    result = _assemble(pool, out, schema.entity_fields, thresholds, weights, doc_ids, meta,
                       tally)
    return _signed(replace(result, unknown_field_names=tuple(names.seen)), signature)


def _paired_inputs(
    truths: Any, predictions: Any, allow_empty: bool,
) -> tuple[list[tuple[Any, Any]], dict[Any, Any], dict[Any, int]]:
    """The (doc_id, document) pairs of truths, the predictions by doc id, and each truth
    doc id's position: at least one truth document, at least one predicted document unless
    ``allow_empty``, no prediction for an absent doc id."""
    truth_docs = doc_pairs(truths, "truths")
    if not truth_docs:
        raise ValidationError("truths must contain at least one document; found 0")
    pred_docs = dict(doc_pairs(predictions, "predictions"))
    if not pred_docs and not allow_empty:
        raise no_predictions_error(len(truth_docs))
    doc_pos = {doc_id: i for i, (doc_id, _) in enumerate(truth_docs)}
    stray = [doc_id for doc_id in pred_docs if doc_id not in doc_pos]
    if stray:
        raise ValidationError(
            f"predictions doc ids must be doc ids of truths; found {len(stray)} absent from "
            f"truths, first {stray[0]!r}{case_hint(stray[0], doc_pos)}", doc_id=stray[0]
        )
    return truth_docs, pred_docs, doc_pos


def _schema_fields(schema: Schema) -> tuple[list[_TopField], list[_ItemsField]]:
    """The schema's top-level fields and line-item fields, each with its entity field code."""
    code = {name: i for i, name in enumerate(schema.entity_fields)}
    top: list[_TopField] = []
    lists: list[_ItemsField] = []
    for order, (name, spec) in enumerate(schema.fields.items()):
        if isinstance(spec, Items):
            lists.append(_ItemsField(name, spec, order, code[f"{name}.{next(iter(spec.fields))}"]))
        else:
            top.append(_TopField(name, spec, order, code[name]))
    return top, lists


def _checked_documents(doc_id: Any, truth_doc: Any, pred_doc: Any, known: frozenset[str],
                       tally: dict[str, int], names: NameCheck) -> Mapping[str, Any]:
    """One document's prediction once both sides are mappings (``{}`` for a missing
    prediction), the fields outside the schema counted (or refused: :class:`NameCheck`)."""
    if not isinstance(truth_doc, Mapping):
        raise ValidationError(
            f"{doc_label(doc_id)}: the truth document must be a mapping of field names to "
            f"values; found {type(truth_doc).__name__}", doc_id=doc_id
        )
    if pred_doc is _ABSENT:
        if names.strict:
            raise ValidationError(
                f"{doc_label(doc_id)}: every truth document must have a prediction "
                "({option}); found none", doc_id=doc_id, option=("strict", True)
            )
        tally["docs_missing_prediction"] += 1
        pred_doc = {}
    elif not isinstance(pred_doc, Mapping):
        raise ValidationError(
            f"{doc_label(doc_id)}: the predicted document must be a mapping of field names "
            f"to leaves; found {type(pred_doc).__name__}", doc_id=doc_id
        )
    if not pred_doc.keys() <= known:
        tally["unknown_fields"] += names.unknown(pred_doc.keys(), known, doc_id)
    if not truth_doc.keys() <= known:
        tally["unscored_truth_fields"] += len(truth_doc.keys() - known)
    return pred_doc


def extraction_signature(schema: Schema, conventions: str) -> str:
    """Version, schema name and digest, conventions, line-item match thresholds.

    The schema name is ``custom`` when a field uses a custom comparator (its digest names
    the callable, not what it computes), else the schema's ``name`` or ``unnamed``.
    ``match`` is the ``match_threshold`` of the one Items field, ``none`` without one, and
    ``LineItems=0.7,Other=0.5`` with several; with ``stickler-1.0`` conventions it is the
    threshold that stickler-eval applies (0.7).
    """
    name = "custom" if schema.has_custom_comparators else (schema.name or "unnamed")
    lists = [(n, s.match_threshold) for n, s in schema.fields.items() if isinstance(s, Items)]
    if conventions == "stickler-1.0":
        from ._stickler import MATCH_THRESHOLD

        # stickler-eval pairs line items at its own threshold, whatever the schema says
        lists = [(n, MATCH_THRESHOLD) for n, _ in lists]
    if not lists:
        match = "none"
    elif len(lists) == 1:
        match = repr(lists[0][1])
    else:
        match = ",".join(f"{n}={t!r}" for n, t in lists)
    return (f"confcal:{__version__}|schema:{name}@{schema.digest}"
            f"|conventions:{conventions}|match:{match}")


def _signed(result: ExtractionResult, signature: str) -> ExtractionResult:
    """The result with its signature, also carried by the entity table (written to Parquet
    by :func:`confcal.scoring.io.write_entities`, read back by
    :func:`confcal.scoring.io.read_entities`)."""
    result.entities.attrs[SIGNATURE_ATTR] = signature
    return replace(result, signature=signature)


def _leaf_settings(schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    """Threshold and weight of every entity field, in ``schema.entity_fields`` order."""
    thresholds: list[float | None] = []  # resolved by Field, never None here
    weights: list[float] = []
    for spec in schema.fields.values():
        if isinstance(spec, Items):
            thresholds.extend(f.threshold for f in spec.fields.values())
            weights.extend(spec.weight * f.weight for f in spec.fields.values())
        else:
            thresholds.append(spec.threshold)
            weights.append(spec.weight)
    weight = np.array(weights, dtype=np.float64)
    bad = ~weight_ok(weight)
    if bad.any():
        field = schema.entity_fields[int(np.flatnonzero(bad)[0])]
        raise ValidationError(
            f"schema field {field}: the entity weight (the field's weight, times its Items "
            f"weight for a line-item sub-field) must be {WEIGHT_RULE} so that sums stay "
            f"finite; found {float(weight[bad][0]):g}", field=field)
    return np.array(thresholds, dtype=np.float64), weight


@functools.lru_cache(maxsize=64)
def field_dtype(names: tuple[str, ...]) -> pd.CategoricalDtype:
    # Building a CategoricalDtype validates its categories, which costs more than the rest
    # of a small scoring call; schemas are few, so the dtype is made once per schema.
    return pd.CategoricalDtype(list(names))


def _assemble(
    pool: _Pool, out: _Chunks, names: tuple[str, ...], thresholds: np.ndarray,
    weights: np.ndarray, doc_ids: list[Any], meta: dict[str, np.ndarray],
    tally: dict[str, int],
) -> ExtractionResult:
    def cat(chunks: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=dtype)

    doc = cat(out.doc, np.int64)
    sort = np.lexsort((cat(out.rank, np.int64), cat(out.order, np.int64), doc))
    doc = doc[sort]
    field = cat(out.field, np.int64)[sort]
    truth_ref = cat(out.truth_ref, np.int64)[sort]
    pred_ref = cat(out.pred_ref, np.int64)[sort]
    raw = cat(out.raw, np.float64)[sort]
    tm = np.concatenate(pool.truth_missing)[truth_ref]
    pm = np.concatenate(pool.pred_missing)[pred_ref]
    threshold = thresholds[field]
    outcome = np.where(
        tm,
        np.where(pm, _TN, _FA),
        np.where(pm, _FN, np.where(raw >= threshold, _TP, _FD)),
    ).astype(np.int8)
    similarity = np.where(outcome <= _FD, raw, np.where(outcome == _TN, 1.0, 0.0))
    confidence = np.array(pool.confidence, dtype=np.float64)[pred_ref]
    columns: dict[str, Any] = {
        # Plain object array: pandas infers "str" when every id is a string, else object.
        "doc_id": object_array(doc_ids)[doc],
        "field": pd.Categorical.from_codes(field, dtype=field_dtype(names)),
        "truth_index": nullable_index(cat(out.truth_index, np.int64)[sort]),
        "pred_index": nullable_index(cat(out.pred_index, np.int64)[sort]),
        # The raw values, in one object column each: no "str" inference turning None into
        # NaN; write_entities writes each value's JSON text, read_entities restores it.
        "truth": value_column(object_array(pool.truth)[truth_ref]),
        "prediction": value_column(object_array(pool.prediction)[pred_ref]),
        "similarity": similarity,
        "threshold": threshold,
        "correct": (outcome == _TP) | (outcome == _TN),
        "outcome": pd.Categorical.from_codes(outcome, dtype=_OUTCOME_DTYPE),
        "confidence": confidence,
        "weight": weights[field],
    }
    for column, values in meta.items():
        columns[column] = pd.Series(values[doc], dtype=object).infer_objects()
    entities = pd.DataFrame(columns, copy=False)
    counts = {label: int(c) for label, c in zip(OUTCOMES, np.bincount(outcome, minlength=5),
                                                strict=True)}
    counts["documents"] = len(doc_ids)
    counts.update(tally)
    counts["without_confidence"] = int(np.isnan(confidence).sum())
    return ExtractionResult(entities=entities, counts=counts)


