"""One-to-one matching of truth and predicted line items (the Hungarian algorithm).

The item similarity of a truth item and a predicted item is the weighted mean (sub-field
weights) of their sub-field similarities over the cells where at least one side has a value
(:func:`item_similarity`). ``scipy.optimize.linear_sum_assignment`` picks the pairing with
the largest total similarity among pairs whose similarity reaches ``match_threshold``
(:func:`assign_pairs`). Both rules are the scorer's: :func:`confcal.scoring.score_documents`
builds the similarity blocks of many documents at once (one batched call per sub-field:
rapidfuzz ``cdist`` for text, numpy broadcasting on parsed numbers and dates, the user's own
:class:`~confcal.scoring.comparators.BatchedComparator`), and :func:`match_items` is its
one-document case: it scores one document of one line-item field and reads the pairs back
from the entity table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from ..exceptions import ValidationError
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

    See Also
    --------
    score_documents : scores the paired items.
    Schema : the item comparators and the match threshold.

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
    spec = _items_spec(fields, match_threshold)
    _check_item_lists(truth_items, pred_items)
    entities = _score_one_document(spec, truth_items, pred_items)
    return _pairs_from_entities(entities, spec)


def _items_spec(fields: Any, match_threshold: float | None) -> Items:
    """The sub-fields as one :class:`Items`, with ``match_threshold`` when one is given."""
    if isinstance(fields, Items):
        spec = fields
    elif isinstance(fields, Mapping):
        spec = Items(fields, match_threshold=0.0)  # validates the sub-field specs
    else:
        raise ValidationError(
            f"fields must be Items or a mapping of str to Field; found {fields!r}")
    if match_threshold is not None:
        spec = Items(spec.fields, match_threshold=match_threshold)
    return spec


def _check_item_lists(truth_items: Any, pred_items: Any) -> None:
    """Both sides are lists (or tuples) of mappings."""
    for label, items in (("truth_items", truth_items), ("pred_items", pred_items)):
        if not isinstance(items, (list, tuple)):
            raise ValidationError(f"{label} must be a list of items (mappings); found {items!r}")
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ValidationError(
                    f"{label}[{i}] must be a mapping of sub-fields; found {item!r}")


def _score_one_document(spec: Items, truth_items: Sequence[Mapping[str, Any]],
                        pred_items: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The entity table of one document holding the items: the scorer's kernels, evidence
    rule and assignment. Its errors are reworded to name ``truth_items``/``pred_items``."""
    from ._scoring import score_documents
    from .schema import Schema

    schema = Schema({"items": spec})

    def score(pred: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
        return score_documents(schema, [(0, {"items": list(truth_items)})],
                               [(0, {"items": list(pred)})]).entities

    try:
        return score(pred_items)
    except ValidationError as exc:
        # The scorer names the field (items[i].Sub for a value, items.Sub for a comparator)
        # and what was wrong; a value's list is the one that still fails on its own.
        field = exc.field if isinstance(exc.field, str) else ""
        problem = str(exc).split(": ", 1)[-1]
        if field.startswith("items["):
            try:
                score([])
                label = "pred_items"
            except ValidationError:
                label = "truth_items"
            where = label + field.removeprefix("items")
        else:
            where = f"field {field.removeprefix('items.')}" if field else "items"
        raise ValidationError(f"{where}: {problem}", field=where) from None


def _pairs_from_entities(entities: pd.DataFrame,
                         spec: Items) -> list[tuple[int | None, int | None, float]]:
    """The pairs of the entity table with their item similarity, then the unpaired items.

    The item similarity is summed back from the sub-field rows by :func:`item_similarity`'s
    rule: over the cells with evidence (a TN row is a cell empty on both sides).
    """
    truth_index = entities["truth_index"].to_numpy(dtype=np.int64, na_value=-1)
    pred_index = entities["pred_index"].to_numpy(dtype=np.int64, na_value=-1)
    weight = entities["field"].map(
        {f"items.{name}": sub.weight for name, sub in spec.fields.items()}).to_numpy(np.float64)
    weight = np.where((entities["outcome"] != "TN").to_numpy(), weight, 0.0)
    gain = weight * entities["similarity"].to_numpy(np.float64)
    pairs: dict[tuple[int, int], list[float]] = {}
    for t, p, w, g in zip(truth_index.tolist(), pred_index.tolist(), weight.tolist(),
                          gain.tolist(), strict=True):
        total = pairs.setdefault((t, p), [0.0, 0.0])
        total[0] += w
        total[1] += g
    out: list[tuple[int | None, int | None, float]] = sorted(
        (t, p, g / w if w > 0 else 0.0) for (t, p), (w, g) in pairs.items() if t >= 0 and p >= 0)
    out.extend(sorted((t, None, 0.0) for t, p in pairs if p < 0))
    out.extend(sorted((None, p, 0.0) for t, p in pairs if t < 0))
    return out
