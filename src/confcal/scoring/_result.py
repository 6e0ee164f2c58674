"""The result of scoring: the entity table, its counts, signature and summaries."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import UndefinedMetricWarning
from ._totals import (
    UNDEFINED,
    ExtractionTotals,
    f1_from_counts,
    group_totals,
    outcome_codes,
    precision_from_counts,
    recall_from_counts,
    woa_from_sums,
)

__all__ = ["ENTITY_COLUMNS", "OUTCOMES", "ExtractionResult", "value_column"]

OUTCOMES: tuple[str, ...] = ("TP", "FD", "FA", "FN", "TN")
"""Outcome labels, in the category order of the entity table's ``outcome`` column."""

ENTITY_COLUMNS: tuple[str, ...] = (
    "doc_id", "field", "truth_index", "pred_index", "truth", "prediction",
    "similarity", "threshold", "correct", "outcome", "confidence", "weight",
)
"""The entity table's columns, in order; metadata columns follow them."""


# ------------------------------------------------------------------------- values
def value_column(values: Sequence[Any] | np.ndarray) -> pd.Series:
    """A ``truth``/``prediction`` column: an object Series holding ``values`` as they are.

    No type is inferred: a column of strings stays an object column (pandas would make it
    ``str`` and turn None into NaN), an empty-list value stays one list, and ``"100"``,
    ``100`` and ``100.0`` stay apart. On disk each value is its JSON text
    (:func:`confcal.scoring.io.write_entities`), read back into the same value.

    Examples
    --------
    >>> column = value_column(["100", 100, 100.0, True, None, []])
    >>> column.dtype, column.tolist()
    (dtype('O'), ['100', 100, 100.0, True, None, []])
    >>> column.str.upper().tolist()[:2], (column == 100).tolist()
    (['100', nan], [False, True, True, False, False, False])
    """
    # fromiter keeps each value as one object; np.array would unpack an empty-list value
    data = (values if isinstance(values, np.ndarray)
            else np.fromiter(values, dtype=object, count=len(values)))
    return pd.Series(data, dtype=object, copy=False)


# ------------------------------------------------------------------------- result



@dataclass(frozen=True, eq=False)
class ExtractionResult:
    """The scored entities of a set of documents and the summaries computed from them.

    Attributes
    ----------
    entities : pandas.DataFrame
        One row per evaluated leaf; columns ``doc_id, field, truth_index, pred_index, truth,
        prediction, similarity, threshold, correct, outcome, confidence, weight`` then the
        metadata columns. ``field`` is the top-level field name (``"Agency"``) or
        ``"<items>.<sub-field>"`` for a line-item sub-field (``"LineItems.Rate"``), whose
        ``truth_index``/``pred_index`` are the item positions in the truth and predicted lists
        (``<NA>`` on the side without an item, and for top-level fields). ``truth`` and
        ``prediction`` are the raw values (the winning candidate's value for a top-K leaf), in
        object columns; :func:`confcal.scoring.io.write_entities` writes each as its JSON text
        and :func:`~confcal.scoring.io.read_entities` restores it, type included.
        ``similarity`` is the comparator similarity for TP/FD rows, 0.0 for FA/FN, 1.0 for
        TN. ``correct`` is True for TP and TN. ``confidence`` is NaN where the prediction
        carries none. ``field`` and ``outcome`` are categoricals (schema order,
        :data:`OUTCOMES` order).
    counts : dict of str to int
        ``TP, FD, FA, FN, TN`` (row counts); ``documents`` (truth documents scored);
        ``docs_missing_prediction`` (truth documents without a prediction, scored as if
        every predicted value were missing); ``unknown_fields`` (predicted keys, top-level or
        inside a line item, that the schema does not define; ignored);
        ``unscored_truth_fields`` (ground-truth keys the schema does not define; ignored);
        ``without_confidence`` (entity rows with no confidence, left out of
        :meth:`to_calibration`). With ``conventions="stickler-1.0"`` also
        ``excluded_by_conventions`` (line-item leaves stickler-eval leaves unlabelled, so
        without a row) and ``whole_item_outcomes`` (outcomes it gives whole items or lists,
        counted in TP...TN without a row).
    signature : str
        The settings that produced the table (:mod:`confcal._signature`): confcal's version,
        the schema's name and digest, the conventions and the line-item match threshold,
        e.g. ``confcal:0.1.0|schema:fcc-invoice@afba760d3140|conventions:confcal|match:0.0``.
        Two results are comparable when their signatures are equal. Empty for a result
        built by hand.
    unknown_field_names : tuple of str
        The predicted keys that ``counts["unknown_fields"]`` counts, each once, in the order
        first met: a top-level field as it is spelled (``"grosstotal"``), a line-item
        sub-field as ``"<items>.<key>"`` (``"LineItems.rate"``).

    See Also
    --------
    score_documents : builds it.
    confcal.scoring.io.write_entities : its entity table to a file.

    Notes
    -----
    precision = TP / (TP + FD + FA), recall = TP / (TP + FD + FN), F1 their harmonic mean
    = 2 TP / (2 TP + 2 FD + FA + FN); row counts, unweighted. WOA is the weighted mean of
    ``similarity`` over TP, FD, FA and FN rows (weights from the ``weight`` column). TN rows
    count in neither. A metric whose denominator is zero emits
    :class:`~confcal.exceptions.UndefinedMetricWarning` and is NaN.
    """

    entities: pd.DataFrame
    counts: dict[str, int]
    signature: str = ""
    unknown_field_names: tuple[str, ...] = ()

    @property
    def totals(self) -> ExtractionTotals:
        """The sums behind :attr:`woa`, :attr:`precision`, :attr:`recall` and :attr:`f1`
        (mergeable across chunks: :class:`~confcal.scoring.ExtractionTotals`)."""
        e = self.entities
        return ExtractionTotals.from_codes(outcome_codes(e["outcome"]),
                                           e["weight"].to_numpy(np.float64),
                                           e["similarity"].to_numpy(np.float64))

    def _metric(self, name: str) -> float:
        value: float = getattr(self.totals, name)
        if math.isnan(value):
            warnings.warn(f"{name} is undefined: {UNDEFINED[name]}; returning NaN",
                          UndefinedMetricWarning, stacklevel=3)
        return value

    @property
    def woa(self) -> float:
        """Weighted overall accuracy: weighted mean similarity of the non-TN rows."""
        return self._metric("woa")

    @property
    def precision(self) -> float:
        """TP / (TP + FD + FA)."""
        return self._metric("precision")

    @property
    def recall(self) -> float:
        """TP / (TP + FD + FN)."""
        return self._metric("recall")

    @property
    def f1(self) -> float:
        """2 TP / (2 TP + 2 FD + FA + FN), the harmonic mean of precision and recall."""
        return self._metric("f1")

    def by_field(self) -> pd.DataFrame:
        """Per-field summary in schema order.

        Returns
        -------
        pandas.DataFrame
            Columns ``field, n, woa, precision, recall, f1, TP, FD, FA, FN, TN``; ``n`` is the
            number of evaluated rows (TP + FD + FA + FN). A metric with a zero denominator is
            NaN, and one :class:`~confcal.exceptions.UndefinedMetricWarning` names the fields.
        """
        field = self.entities["field"]
        if isinstance(field.dtype, pd.CategoricalDtype):
            names = list(field.cat.categories)
            fcodes = field.cat.codes.to_numpy().astype(np.int64)
        else:
            fcodes_raw, uniques = pd.factorize(field, sort=False)
            names, fcodes = list(uniques), fcodes_raw.astype(np.int64)
        sums = group_totals(fcodes, len(names), outcome_codes(self.entities["outcome"]),
                            self.entities["weight"].to_numpy(dtype=np.float64),
                            self.entities["similarity"].to_numpy(dtype=np.float64))
        tp, fd, fa, fn = (sums[k] for k in ("TP", "FD", "FA", "FN"))
        out = pd.DataFrame({
            "field": names,
            "n": (tp + fd + fa + fn).astype(np.int64),
            "woa": woa_from_sums(sums["weighted_similarity"], sums["weight"]),
            "precision": precision_from_counts(tp, fd, fa),
            "recall": recall_from_counts(tp, fd, fn),
            "f1": f1_from_counts(tp, fd, fa, fn),
        })
        for label in OUTCOMES:
            out[label] = sums[label].astype(np.int64)
        undefined = out.loc[out[["woa", "precision", "recall", "f1"]].isna().any(axis=1), "field"]
        if len(undefined):
            warnings.warn(
                "by_field: a metric is undefined (zero denominator) for fields "
                f"{list(undefined)}; returning NaN there",
                UndefinedMetricWarning,
                stacklevel=2,
            )
        return out

    def to_calibration(self) -> tuple[np.ndarray, np.ndarray, int]:
        """The calibration input: every row that carries a confidence, any outcome.

        Returns
        -------
        correct : numpy.ndarray of bool
            True for TP and TN rows (a confident "nothing here" that is right is correct).
        confidence : numpy.ndarray of float
        n_without_confidence : int
            Rows left out because they carry no confidence (``counts["without_confidence"]``);
            ``len(entities) == len(confidence) + n_without_confidence``.
        """
        confidence = self.entities["confidence"].to_numpy(dtype=np.float64)
        has = ~np.isnan(confidence)
        correct = self.entities["correct"].to_numpy(dtype=bool)[has]
        return correct, confidence[has], int((~has).sum())
