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
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._signature import SIGNATURE_ATTR
from .._validation import WEIGHT_RULE, InputLimits, check_limits, weight_ok
from .._version import __version__
from ..exceptions import ValidationError
from ._columns import Chunks, Pool, check_truth_column, object_array, pred_column
from ._inputs import (
    NameCheck,
    case_hint,
    doc_label,
    doc_pairs,
    metadata_columns,
    no_predictions_error,
)
from ._items import ItemsField
from ._kernels import elementwise_similarity, missing_mask
from ._result import OUTCOMES, ExtractionResult, value_column
from ._text import check_document_lengths, check_item_work
from .schema import Field, Items, Schema

__all__ = ["extraction_signature", "score_documents"]

_TP, _FD, _FA, _FN, _TN = range(5)
_OUTCOME_DTYPE = pd.CategoricalDtype(list(OUTCOMES))
_ABSENT = object()
# Line items are scored in blocks of about this many units (see _items.py).
_BLOCK_BUDGET = 1 << 15


# ---------------------------------------------------------------------- scoring


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
    pred_docs: list[Mapping[str, Any]], pool: Pool, out: Chunks, max_chars: int,
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
            check_truth_column(column, where, max_chars)
            values, confidences, _ = pred_column([doc.get(name) for doc in pred_docs], where,
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
    pool, out = Pool(), Chunks()
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


def _schema_fields(schema: Schema) -> tuple[list[_TopField], list[ItemsField]]:
    """The schema's top-level fields and line-item fields, each with its entity field code."""
    code = {name: i for i, name in enumerate(schema.entity_fields)}
    top: list[_TopField] = []
    lists: list[ItemsField] = []
    for order, (name, spec) in enumerate(schema.fields.items()):
        if isinstance(spec, Items):
            lists.append(ItemsField(name, spec, order, code[f"{name}.{next(iter(spec.fields))}"]))
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
    pool: Pool, out: Chunks, names: tuple[str, ...], thresholds: np.ndarray,
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


