"""One-to-one matching of truth and predicted line items (the Hungarian algorithm).

The item similarity of a truth item and a predicted item is the weighted mean (sub-field
weights) of their sub-field similarities over the cells where at least one side has a value
(:func:`item_similarity`). The similarity matrices are built vectorized -- one ``pairwise``
call per sub-field: rapidfuzz ``cdist`` for text, numpy broadcasting on parsed numbers and
dates, the user's own batch for any other
:class:`~confcal.scoring.comparators.BatchedComparator` -- and
``scipy.optimize.linear_sum_assignment`` picks the pairing with the largest total similarity
among pairs whose similarity reaches ``match_threshold``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..exceptions import ValidationError
from ._kernels import missing_mask, pairwise_similarity
from .predictions import LeafError, check_scalar, unwrap_leaf
from .schema import Field, Items

__all__ = ["match_items"]


def item_similarity(sims: np.ndarray, evidence: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Item similarities from sub-field similarities: the one rule of line-item matching.

    ``sims`` and ``evidence`` are ``(k, ...)`` (k sub-fields, then any pair layout);
    ``evidence`` is True where at least one side of the cell has a value; ``weights`` the
    ``(k,)`` sub-field weights. The result is ``sum_f w_f s_f / sum_f w_f`` over the cells
    with evidence: two empty cells say nothing about whether two items are the same record,
    so they count neither for nor against the pair (otherwise a predicted item that leaves
    the same cells empty as the truth item outbids the exact match that fills one more).
    A pair with no value in any cell on either side has similarity 0.0: no evidence of a
    match, so pairing it gains nothing (its rows are TN whether it is paired or not).

    Shared by :func:`match_items` and :func:`confcal.scoring.score_documents`.
    """
    numerator = np.tensordot(weights, np.where(evidence, sims, 0.0), axes=1)
    denominator = np.tensordot(weights, evidence.astype(np.float64), axes=1)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _item_similarity(
    truth_cols: Sequence[Sequence[Any]],
    pred_cols: Sequence[Sequence[Any]],
    specs: Sequence[Field],
    names: Sequence[str],
) -> tuple[np.ndarray, np.ndarray]:
    """``(k, m, n)`` sub-field similarity matrices and their item similarities ``(m, n)``.

    One ``pairwise`` call per sub-field for a comparator that has it (built in or not:
    :class:`~confcal.scoring.comparators.BatchedComparator`), else one call per pair.
    """
    tms = [missing_mask(t) for t in truth_cols]
    pms = [missing_mask(p) for p in pred_cols]
    mats = np.stack([
        pairwise_similarity(spec.comparator, t, p, tm, pm, fields=(name,))
        for spec, name, t, p, tm, pm in zip(specs, names, truth_cols, pred_cols, tms, pms,
                                            strict=True)
    ])
    evidence = np.stack([~(tm[:, None] & pm[None, :]) for tm, pm in zip(tms, pms, strict=True)])
    weights = np.array([spec.weight for spec in specs], dtype=np.float64)
    return mats, item_similarity(mats, evidence, weights)


def assign_pairs(
    sim: np.ndarray, match_threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (truth rows, pred cols) and the unpaired truth and predicted indices.

    Maximizes the total similarity of the kept pairs. Pairs below the threshold are given
    a gain of zero before solving rather than being cut afterwards: otherwise the solver
    could spend an item on a pair that is then discarded while a slightly lower total made
    of allowed pairs was available.
    """
    m, n = sim.shape
    if m == 0 or n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.arange(m, dtype=np.int64), np.arange(n, dtype=np.int64)
    allowed = sim >= match_threshold
    rows, cols = linear_sum_assignment(np.where(allowed, sim, 0.0), maximize=True)
    keep = allowed[rows, cols]
    rows, cols = rows[keep].astype(np.int64), cols[keep].astype(np.int64)
    paired_truth = np.zeros(m, dtype=bool)
    paired_truth[rows] = True
    paired_pred = np.zeros(n, dtype=bool)
    paired_pred[cols] = True
    return rows, cols, np.flatnonzero(~paired_truth), np.flatnonzero(~paired_pred)


def _columns(
    items: Any, names: Sequence[str], *, predicted: bool, label: str
) -> list[list[Any]]:
    """Sub-field value columns of a list of items (predicted leaves unwrapped)."""
    if not isinstance(items, (list, tuple)):
        raise ValidationError(f"{label} must be a list of items (mappings); found {items!r}")
    cols: list[list[Any]] = [[] for _ in names]
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValidationError(f"{label}[{i}] must be a mapping of sub-fields; found {item!r}")
        for col, name in zip(cols, names, strict=True):
            try:
                if predicted:
                    value = unwrap_leaf(item.get(name))[0]
                else:
                    value = item.get(name)
                    check_scalar(value, "truth value")
            except LeafError as exc:
                raise ValidationError(f"{label}[{i}].{name}: {exc}") from None
            col.append(value)
    return cols


def match_items(
    truth_items: Sequence[Mapping[str, Any]],
    pred_items: Sequence[Mapping[str, Any]],
    fields: Items | Mapping[str, Field],
    *,
    match_threshold: float | None = None,
) -> list[tuple[int | None, int | None, float]]:
    """Pair truth and predicted items so that the total item similarity is maximal.

    Parameters
    ----------
    truth_items : list of mappings
        Ground-truth records, sub-field name -> value.
    pred_items : list of mappings
        Predicted records; leaves may be raw values, ``{"value", "confidence"}`` or
        ``{"candidates": [...]}`` (only the value is used for matching).
    fields : Items or mapping of str to Field
        The sub-fields compared, with their comparators and weights. Keys of an item that
        are not sub-fields are ignored here (:func:`~confcal.scoring.score_documents`
        counts them).
    match_threshold : float in [0, 1], optional
        Minimum item similarity for a pair. Defaults to ``fields.match_threshold`` for an
        :class:`~confcal.scoring.schema.Items`, else 0.0 (every item of the shorter list paired).

    Returns
    -------
    list of (truth_index or None, pred_index or None, similarity)
        The pairs in increasing truth index, then the unpaired truth items
        ``(i, None, 0.0)``, then the unpaired predicted items ``(None, j, 0.0)``.

    Notes
    -----
    The item similarity is ``sum_f w_f * s_f / sum_f w_f`` over the sub-fields where at
    least one of the two items has a value, ``s_f`` the comparator similarity (0.0 when one
    side is missing); two empty cells carry no evidence, and a pair with no value on either
    side scores 0.0 (:func:`item_similarity`).
    Among all one-to-one pairings that only use pairs with similarity ``>= match_threshold``,
    the returned one has the largest total similarity (``linear_sum_assignment`` with
    sub-threshold pairs given zero gain). Which of several equally good pairings is
    returned is not specified.

    Examples
    --------
    >>> from confcal.scoring.comparators import Number, Text
    >>> fields = {"Description": Field(Text()), "Rate": Field(Number())}
    >>> truth = [{"Description": "News at 6", "Rate": 100}, {"Description": "Late Show",
    ...                                                      "Rate": 250}]
    >>> pred = [{"Description": "Late Show", "Rate": "$250.00"},
    ...         {"Description": "News at 6", "Rate": {"value": 100, "confidence": 0.9}},
    ...         {"Description": "Weather", "Rate": 40}]
    >>> match_items(truth, pred, fields)
    [(0, 1, 1.0), (1, 0, 1.0), (None, 2, 0.0)]

    Empty cells are no evidence: the exact match wins over an item that merely leaves the
    same cell empty. Counting the two empty Rates as agreement would give "Weather"
    (0.222 + 1.0) / 2 = 0.61, more than the exact match's (1.0 + 0.0) / 2 = 0.5; without
    them "Weather" scores 0.222 / 1 and the exact match 0.5:

    >>> match_items([{"Description": "News at 6"}],
    ...             [{"Description": "News at 6", "Rate": "100"}, {"Description": "Weather"}],
    ...             fields)
    [(0, 0, 0.5), (None, 1, 0.0)]
    """
    if isinstance(fields, Items):
        specs_map: Mapping[str, Field] = fields.fields
        default_threshold = fields.match_threshold
    elif isinstance(fields, Mapping):
        specs_map = Items(fields).fields  # validates the sub-field specs
        default_threshold = 0.0
    else:
        raise ValidationError(
            f"fields must be Items or a mapping of str to Field; found {fields!r}")
    if match_threshold is None:
        match_threshold = default_threshold
    else:
        match_threshold = Items(specs_map, match_threshold=match_threshold).match_threshold
    names = list(specs_map)
    specs = list(specs_map.values())
    truth_cols = _columns(truth_items, names, predicted=False, label="truth_items")
    pred_cols = _columns(pred_items, names, predicted=True, label="pred_items")
    _, sim = _item_similarity(truth_cols, pred_cols, specs, names)
    rows, cols, unpaired_truth, unpaired_pred = assign_pairs(sim, match_threshold)
    out: list[tuple[int | None, int | None, float]] = [
        (int(i), int(j), float(sim[i, j])) for i, j in zip(rows, cols, strict=True)
    ]
    out.extend((int(i), None, 0.0) for i in unpaired_truth)
    out.extend((None, int(j), 0.0) for j in unpaired_pred)
    return out
