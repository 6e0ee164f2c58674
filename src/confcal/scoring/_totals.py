"""WOA, precision, recall and F1 from sums: the one copy of the extraction-summary rules.

Everything that reports extraction quality -- :class:`~confcal.scoring.ExtractionResult`
and its ``by_field``, :func:`confcal.report.compare_runs` (and its document bootstrap), the
sketched :class:`~confcal.report.RunSummary` and ``confcal score`` -- reduces the entity
rows to the sums below and turns them into metrics with the functions below, so the rules
(the ConfBench paper's definitions) are written once:

* WOA = Σ w·s / Σ w over the evaluated rows (TP, FD, FA, FN; TN rows count in neither);
* precision = TP / (TP + FD + FA), recall = TP / (TP + FD + FN);
* F1 = 2 TP / (2 TP + 2 FD + FA + FN), their harmonic mean.

A metric whose denominator is zero is NaN; :data:`UNDEFINED` says why, for the caller's
warning. The functions take scalars or numpy arrays (one value per document or field).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError

__all__ = ["OUTCOME_CODES", "UNDEFINED", "ExtractionTotals", "f1_from_counts", "group_totals",
           "outcome_codes", "precision_from_counts", "recall_from_counts", "woa_from_sums"]

OUTCOME_CODES: dict[str, int] = {"TP": 0, "FD": 1, "FA": 2, "FN": 3, "TN": 4}
"""The outcome codes of the entity table's categorical ``outcome`` column."""

UNDEFINED: dict[str, str] = {
    "woa": "no evaluated entities (every row is TN)",
    "precision": "no predicted entities (TP + FD + FA = 0)",
    "recall": "no ground-truth entities (TP + FD + FN = 0)",
    "f1": "no evaluated entities (every row is TN)",
}
"""Why each metric is NaN when its denominator is zero."""


def outcome_codes(outcome: pd.Series) -> np.ndarray:
    """The :data:`OUTCOME_CODES` of an ``outcome`` column (categorical or labels).

    Raises ValidationError naming the first row whose label is not an outcome (a missing
    value included): nothing is mapped to a default.
    """
    labels = list(OUTCOME_CODES)
    if isinstance(outcome.dtype, pd.CategoricalDtype) and list(outcome.cat.categories) == labels:
        codes = outcome.cat.codes.to_numpy()  # score_documents' table: no lookup needed
    else:
        codes = np.fromiter((OUTCOME_CODES.get(v, -1) if isinstance(v, str) else -1
                             for v in outcome.to_numpy(dtype=object)), dtype=np.int64,
                            count=len(outcome))
    bad = codes < 0
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValidationError(f"outcome must be one of {labels}; found {int(bad.sum())} "
                              f"rows breaking it, first at row {first} ({outcome.iloc[first]!r})")
    return np.asarray(codes)


def _ratio(numerator: Any, denominator: Any) -> Any:
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return float(out) if out.ndim == 0 else out


def woa_from_sums(weighted_similarity: Any, weight: Any) -> Any:
    """Σ w·s / Σ w over the evaluated rows; NaN where Σ w = 0."""
    return _ratio(weighted_similarity, weight)


def precision_from_counts(tp: Any, fd: Any, fa: Any) -> Any:
    """TP / (TP + FD + FA); NaN where the denominator is 0."""
    return _ratio(tp, np.add(np.add(tp, fd), fa))


def recall_from_counts(tp: Any, fd: Any, fn: Any) -> Any:
    """TP / (TP + FD + FN); NaN where the denominator is 0."""
    return _ratio(tp, np.add(np.add(tp, fd), fn))


def f1_from_counts(tp: Any, fd: Any, fa: Any, fn: Any) -> Any:
    """2 TP / (2 TP + 2 FD + FA + FN); NaN where the denominator is 0."""
    tp2 = np.multiply(2, tp)
    return _ratio(tp2, tp2 + np.multiply(2, fd) + np.add(fa, fn))


def group_totals(groups: np.ndarray, n_groups: int, outcome: np.ndarray, weight: np.ndarray,
                 similarity: np.ndarray) -> dict[str, np.ndarray]:
    """The sums of :class:`ExtractionTotals` for every group at once.

    ``groups`` are integer group codes in ``[0, n_groups)`` (documents, fields),
    ``outcome`` the outcome codes (:data:`OUTCOME_CODES`). Returns arrays of length
    ``n_groups``: ``weight``, ``weighted_similarity`` (evaluated rows only) and the float
    counts ``TP``, ``FD``, ``FA``, ``FN``, ``TN``.
    """
    groups = np.asarray(groups, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.int64)
    evaluated = outcome != OUTCOME_CODES["TN"]
    w = np.where(evaluated, np.asarray(weight, dtype=np.float64), 0.0)
    s = np.asarray(similarity, dtype=np.float64)
    table = np.bincount(groups * 5 + outcome, minlength=5 * n_groups).reshape(n_groups, 5)
    out = {
        "weight": np.bincount(groups, weights=w, minlength=n_groups),
        "weighted_similarity": np.bincount(groups, weights=np.where(evaluated, w * s, 0.0),
                                           minlength=n_groups),
    }
    for name, code in OUTCOME_CODES.items():
        out[name] = table[:, code].astype(np.float64)
    return out


@dataclass(frozen=True)
class ExtractionTotals:
    """The sums that WOA, precision, recall and F1 are made of; mergeable.

    ``merge`` (or ``+``) adds two parts, so totals of chunks, files or partitions combine
    exactly into the totals of the whole (up to float summation order in the weights).

    Attributes
    ----------
    weight, weighted_similarity : float
        Σ weight and Σ weight·similarity over the evaluated (non-TN) rows.
    tp, fd, fa, fn, tn : int
        Row counts by outcome.

    See Also
    --------
    ExtractionResult : its totals.
    compare_runs : WOA and F1 per run.

    Examples
    --------
    >>> a = ExtractionTotals(weight=3.0, weighted_similarity=2.5, tp=2, fd=1)
    >>> b = ExtractionTotals(weight=1.0, weighted_similarity=0.0, fn=1, tn=4)
    >>> total = a + b
    >>> total.woa, total.precision, total.recall, total.f1   # 2.5/4, 2/3, 2/4, 4/(4+2+1)
    (0.625, 0.6666666666666666, 0.5, 0.5714285714285714)
    """

    weight: float = 0.0
    weighted_similarity: float = 0.0
    tp: int = 0
    fd: int = 0
    fa: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def from_codes(cls, outcome: np.ndarray, weight: np.ndarray, similarity: np.ndarray
                   ) -> ExtractionTotals:
        """Totals of entity rows given as outcome codes, weights and similarities."""
        sums = group_totals(np.zeros(len(outcome), dtype=np.int64), 1, outcome, weight,
                            similarity)
        return cls(weight=float(sums["weight"][0]),
                   weighted_similarity=float(sums["weighted_similarity"][0]),
                   **{k.lower(): int(sums[k][0]) for k in OUTCOME_CODES})

    def merge(self, other: ExtractionTotals) -> ExtractionTotals:
        """The totals of both parts."""
        if not isinstance(other, ExtractionTotals):
            raise TypeError(f"other must be ExtractionTotals; found {type(other).__name__}")
        return ExtractionTotals(
            self.weight + other.weight, self.weighted_similarity + other.weighted_similarity,
            self.tp + other.tp, self.fd + other.fd, self.fa + other.fa, self.fn + other.fn,
            self.tn + other.tn)

    __add__ = merge

    @property
    def woa(self) -> float:
        """Weighted overall accuracy (NaN when every row is TN)."""
        return float(woa_from_sums(self.weighted_similarity, self.weight))

    @property
    def precision(self) -> float:
        """TP / (TP + FD + FA)."""
        return float(precision_from_counts(self.tp, self.fd, self.fa))

    @property
    def recall(self) -> float:
        """TP / (TP + FD + FN)."""
        return float(recall_from_counts(self.tp, self.fd, self.fn))

    @property
    def f1(self) -> float:
        """2 TP / (2 TP + 2 FD + FA + FN)."""
        return float(f1_from_counts(self.tp, self.fd, self.fa, self.fn))
