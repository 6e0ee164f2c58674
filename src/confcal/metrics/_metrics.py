"""Calibration metrics on arrays: can the confidence be trusted?

Every function takes ``(correct, confidence, *, ...)``: ``correct`` is bool or 0/1 (1 = the
extraction is right), ``confidence`` floats in [0, 1], of equal length; lists, numpy arrays
and pandas Series are accepted. Scalar metrics return a Python ``float``.

Three questions, three metrics (ConfBench, 2026):

- **AUROC** — does confidence *rank* right answers above wrong ones?
- **ECE** — does a confidence of 0.8 mean right 80% of the time?
- **ECARB** — if a reviewer checks only the least confident b% of predictions, how many
  more errors do they catch than by checking a random b%?

All order-dependent metrics are defined on *runs* of equal confidence, so no result ever
depends on the order of the rows (see :mod:`confcal.metrics._ranking` for the one sort they share).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .._counts import share_count
from ._ranking import Ranking, _dot, scale_weights, squared_error_sum
from .._signature import calibration_signature
from .._validation import (
    check_budget,
    check_budgets,
    check_calibration_data,
    check_correct,
    check_n_bins,
    check_option,
    check_positive_int,
)
from ..exceptions import UndefinedMetricWarning

if TYPE_CHECKING:
    # pandas is imported inside the functions that build a DataFrame: the scalar metrics
    # cost numpy only (STYLE.md 19; tests/test_api.py checks it).
    import pandas as pd

__all__ = [
    "BINNINGS",
    "TIES",
    "CalibrationReport",
    "auroc",
    "brier",
    "calibration_report",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "mce",
    "reliability_bins",
    "review_count",
]

BINNINGS = ("quantile", "uniform")
TIES = ("expected", "stable", "pessimistic", "optimistic")
_DEFAULT_CURVE_BUDGETS = tuple(i / 20 for i in range(1, 21))  # 0.05, 0.1, ..., 1.0


# ---------------------------------------------------------------------------------------
# boundary helpers
# ---------------------------------------------------------------------------------------
def _undefined(metric: str, reason: str) -> float:
    warnings.warn(f"{metric} is undefined: {reason}; returning NaN",
                  UndefinedMetricWarning, stacklevel=3)
    return math.nan


def review_count(budget: float, n: int) -> int:
    """How many of n predictions a budget b reviews: ``k = min(n, max(1, floor(b·n)))``.

    Parameters
    ----------
    budget : float
        Share of predictions reviewed, in (0, 1].
    n : int
        Number of predictions (or, for integer weights, the total weight).

    Notes
    -----
    The float 0.29 is 0.28999999999999998..., so floor(b·n) alone would review 28 of 100.
    ``b·n`` is taken exactly and a product within a relative 1e-9 of a whole number counts
    as that number, so a budget of 0.29 over 100 predictions reviews 29, as a person would
    count. This is confcal's one rule for turning a share into a whole count
    (:mod:`confcal._counts`): the error allowance of
    :func:`confcal.calibration.routing.budget_for_residual_error` and the quantile bins use it too.

    Examples
    --------
    >>> review_count(0.29, 100), review_count(0.3, 100), review_count(0.001, 10)
    (29, 30, 1)
    """
    budget = check_budget(budget)
    n = check_positive_int(n, "n", 1)
    return min(n, max(1, share_count(budget, n)))


# ---------------------------------------------------------------------------------------
# kernels (validated inputs, a Ranking built once)
# ---------------------------------------------------------------------------------------
def _auroc(r: Ranking) -> float:
    n_pos, n_neg = r.n_pos, r.n_neg
    if n_pos == 0 or n_neg == 0:
        label = "correct" if n_neg == 0 else "incorrect"
        return _undefined("auroc", f"all {r.n} predictions are {label} (one class only)")
    start, split, end = r.mixed_runs
    w = r.weights
    if w is None:
        # Mann-Whitney on ranks: the j-th correct prediction (0-based) at rank P[j] has
        # P[j] - j errors below it, tied errors included (they sort first in a run).
        # Subtracting half of (errors x correct) in each mixed run gives ties half credit.
        below2 = 2 * (int(r.pos_positions.sum()) - n_pos * (n_pos - 1) // 2)
        ties = int(_dot(split - start, end - split)) if start.size else 0
        return (below2 - ties) / (2 * n_pos * n_neg)
    if not (r.pos_weight > 0 and r.neg_weight > 0):
        label = "incorrect" if r.pos_weight == 0 else "correct"
        return _undefined("auroc", f"every prediction with positive weight is {label}")
    below = float(_dot(w.pos, w.cum_neg[r.neg_before_pos]))
    if start.size:
        pb_start, pb_split, pb_end = (r.pos_before(start), r.pos_before(split), r.pos_before(end))
        neg_in_run = w.cum_neg[split - pb_split] - w.cum_neg[start - pb_start]
        pos_in_run = w.cum_pos[pb_end] - w.cum_pos[pb_split]
        below -= 0.5 * float(_dot(neg_in_run, pos_in_run))
    return below / (r.pos_weight * r.neg_weight)


@dataclass(frozen=True)
class _Bins:
    index: np.ndarray  # nominal bin number, 0..n_bins-1
    start: np.ndarray  # first rank
    stop: np.ndarray  # one past the last rank
    count: np.ndarray  # predictions in the bin
    weight: np.ndarray  # total weight (== count without weights)
    correct: np.ndarray  # weight of the correct predictions
    confidence: np.ndarray  # weighted sum of confidences
    lower: np.ndarray
    upper: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        """|correct - confidence| per bin, as sums (divide by weight for the mean gap)."""
        return np.abs(self.correct - self.confidence)


def _bin_bounds(r: Ranking, n_bins: int, binning: str) -> tuple[list[int], np.ndarray | None]:
    n = r.n
    if binning == "uniform":
        # Bin i is [i/M, (i+1)/M) with the edge i/M the correctly rounded float of the
        # fraction; the last bin is closed at 1.0. The first rank with confidence >= edge is
        # a search for the edge's packed key with label 0.
        edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
        inner = np.searchsorted(r.keys, edges[1:-1].view(np.int64) << 1, side="left")
        return [0, *map(int, inner), n], edges
    bounds = [0]
    for i in range(1, n_bins):
        # Rank p is nominally in bin whole_floor(M*W_before(p)/W) (W_before = p unweighted),
        # decided exactly on the ratio, with near-whole values counting as whole: five
        # weights of 0.7 (1.4 after scale_weights) used to put rank 3 in bin 2, as
        # 1.4 + 1.4 + 1.4 = 4.199999999999999 and 5 * 4.199999999999999 < 3 * 7.0.
        # Unit weights take the very same comparisons as no weights.
        p = r.first_rank_in_bin(i, n_bins)
        # a run of equal confidences is never split: it stays in the bin of its first rank
        bounds.append(r.next_run_start(p) if p < n else n)
    bounds.append(n)
    return bounds, None


def _bins(r: Ranking, n_bins: int, binning: str) -> _Bins:
    bounds, edges = _bin_bounds(r, n_bins, binning)
    start = np.asarray(bounds[:-1], dtype=np.int64)
    stop = np.asarray(bounds[1:], dtype=np.int64)
    if r.weights is None:
        weight = (stop - start).astype(np.float64)
        correct = (r.pos_before(stop) - r.pos_before(start)).astype(np.float64)
    else:
        # Summed per slice, not as differences of prefix sums: a bin of weight 1e-9 after
        # a prefix of 1.0 would lose 8 digits to cancellation (found by Hypothesis).
        sums = np.array([r.weight_sums(int(a), int(b)) for a, b in zip(start, stop)])
        correct = sums[:, 0]
        weight = sums[:, 0] + sums[:, 1]
    keep = (stop > start) & (weight > 0)  # empty (or weightless) bins are dropped
    idx = np.flatnonzero(keep)
    conf = np.array([r.confidence_sum(int(start[i]), int(stop[i])) for i in idx])
    if edges is None:  # quantile bins: the smallest and largest confidence inside
        lower = r.confidence[start[idx]]
        upper = r.confidence[stop[idx] - 1]
    else:
        lower, upper = edges[idx], edges[idx + 1]
    return _Bins(index=idx, start=start[idx], stop=stop[idx], count=(stop - start)[idx],
                 weight=weight[idx], correct=correct[idx], confidence=conf.reshape(-1),
                 lower=np.asarray(lower, dtype=np.float64),
                 upper=np.asarray(upper, dtype=np.float64))


def _ece_from_bins(bins: _Bins, total_weight: float) -> float:
    # sum_B |B|/N * |acc(B) - conf(B)| == sum_B |correct_B - confidence_sum_B| / N
    return float(bins.gap.sum() / total_weight)


def _mce_from_bins(bins: _Bins) -> float:
    return float((bins.gap / bins.weight).max())


def _brier(y: np.ndarray, c: np.ndarray, w: np.ndarray | None) -> float:
    # Σ(c - y)² directly, not Σc² - 2Σ_{correct}c + n_correct: that cancels terms of size
    # n and gave 0.4099999999999176 for 0.41 on constant data (see squared_error_sum).
    if w is None:
        return squared_error_sum(y, c) / c.shape[0]
    w = scale_weights(w)  # keeps subnormal weights (5e-324) out of the sums
    return squared_error_sum(y, c, w) / float(w.sum())  # contiguous: pairwise, ~1e-16


def _to_int(x: float) -> int:
    i = int(round(x))
    if i != x:  # ECARB's exact tie expectation needs whole units of review
        raise ValueError(f"ECARB needs integer weights; found a total of {x!r}")
    return i


def _ecarb_caught(r: Ranking, k: int, ties: str,
                  y: np.ndarray | None = None, c: np.ndarray | None = None) -> Fraction:
    """Errors among the k lowest-confidence units (exact Fraction for ties='expected')."""
    q = k if r.weights is None else r.first_rank_with_weight_before(k)
    a, b = r.run_start(q - 1), r.run_end(q - 1)  # the run holding the k-th unit
    w_a, w_b = r.weight_before(a), r.weight_before(b)
    before = _to_int(r.neg_weight_before(a))
    taken, size = _to_int(k - w_a), _to_int(w_b - w_a)
    errors = _to_int(r.neg_weight_before(b)) - before
    if taken == size or errors == 0 or errors == size:
        return Fraction(before + (errors if taken == size else
                                  (0 if errors == 0 else taken)))
    if ties == "expected":
        # Hypergeometric mean: taking `taken` of `size` tied units at random catches
        # errors * taken / size of the run's errors on average; exact, so order-free.
        return before + Fraction(errors * taken, size)
    if ties == "pessimistic":  # errors reviewed last
        return Fraction(before + max(0, taken - (size - errors)))
    if ties == "optimistic":  # errors reviewed first
        return Fraction(before + min(taken, errors))
    # "stable": the run is reviewed in the rows' original order
    assert y is not None and c is not None and r.weights is None
    rows = np.flatnonzero(c == r.confidence[a])[:taken]
    return Fraction(before + int(np.count_nonzero(~y[rows])))


def _no_errors(r: Ranking) -> float:
    return _undefined("ecarb", f"there are no errors among the {r.n} predictions (E = 0)")


def _ecarb_value(r: Ranking, budget: float, ties: str,
                 y: np.ndarray | None = None, c: np.ndarray | None = None
                 ) -> tuple[int, Fraction, float, float]:
    """(k, errors caught, ecarb, ceiling) for one budget; the caller handles E = 0."""
    n = _to_int(r.total_weight)
    e_total = _to_int(r.neg_weight)
    k = review_count(budget, n)
    caught = _ecarb_caught(r, k, ties, y, c)
    # ECARB = caught / ((k/n) * E), in exact rational arithmetic rounded once, so that
    # e.g. all-tied confidences give exactly 1.0.
    value = float(caught * n / (k * e_total))
    ceiling = float(Fraction(min(k, e_total) * n, k * e_total))
    return k, caught, value, ceiling


# ---------------------------------------------------------------------------------------
# public metrics
# ---------------------------------------------------------------------------------------
def auroc(correct: Any, confidence: Any, *, sample_weight: Any = None) -> float:
    """Area under the ROC curve of confidence as a detector of correct predictions.

    The probability that a randomly chosen correct prediction has a higher confidence than a
    randomly chosen incorrect one, ties counted as 1/2. It measures ranking only: any
    strictly increasing transform of the confidences leaves it unchanged.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
        1 where the extraction is right.
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional
        A pair (i, j) counts with weight w_i * w_j.

    Returns
    -------
    float
        In [0, 1]; 0.5 is chance. NaN with an :class:`UndefinedMetricWarning` when all
        predictions are correct or all are incorrect.

    Notes
    -----
    Equals ``sklearn.metrics.roc_auc_score(correct, confidence)`` (correct as the positive
    class). Computed from the rank sum of one sort, with exact integer arithmetic when
    unweighted; O(n log n).

    Examples
    --------
    >>> # pairs (correct, incorrect): (0.9, 0.3) win, (0.9, 0.6) win, (0.6, 0.3) win,
    >>> # (0.6, 0.6) tie -> (3 + 0.5) / 4 = 0.875
    >>> auroc([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3])
    0.875
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    return _auroc(Ranking.from_arrays(y, c, w))


def ece(correct: Any, confidence: Any, *, n_bins: int = 5, binning: str = "quantile",
        sample_weight: Any = None) -> float:
    """Expected calibration error: Σ_B |B|/N · |accuracy(B) − mean confidence(B)|.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    n_bins : int, default 5
        M, the number of bins (the paper uses adaptive binning with M = 5).
    binning : {"quantile", "uniform"}, default "quantile"
        ``"quantile"``: equal-mass bins on the sorted confidences. The prediction of rank r
        (0-based, n in all) nominally belongs to bin floor(r·M/n), where r·M/n within a
        relative 1e-9 of a whole number counts as that number (the rule of
        :func:`review_count`); a run of equal confidences is never split and goes wholly to
        the bin of its first element; empty bins are dropped. With weights, r is the total
        weight ranked before the prediction and n the total weight; the rule reads r/n
        exactly, so scaling every weight by the same factor leaves every bin unchanged
        (to the last bit for powers of two; for other factors unless r·M/n lies within
        ~n·1e-16 of the 1e-9 switch) and unit weights are no weights.
        ``"uniform"``: M equal-width bins [i/M, (i+1)/M), the last one closed at 1.0.
    sample_weight : array-like, optional

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> # quantile, M=2, n=4: ranks 0,1 -> bin 0 (conf 0.2, 0.4; 1 correct): |0.5 - 0.3|
    >>> # ranks 2,3 -> bin 1 (conf 0.6, 0.8; 2 correct): |1.0 - 0.7|
    >>> # ECE = 2/4 * 0.2 + 2/4 * 0.3 = 0.25
    >>> round(ece([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2), 12)
    0.25
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    r = Ranking.from_arrays(y, c, w)
    return _ece_from_bins(_bins(r, n_bins, binning), r.total_weight)


def mce(correct: Any, confidence: Any, *, n_bins: int = 5, binning: str = "quantile",
        sample_weight: Any = None) -> float:
    """Maximum calibration error: the largest |accuracy(B) − mean confidence(B)| over bins.

    Bins as in :func:`ece`. Empty bins are dropped, so a sparse bin can dominate: read it
    with the bin counts from :func:`reliability_bins`.

    Examples
    --------
    >>> # same bins as the ece example: gaps 0.2 and 0.3 -> 0.3
    >>> round(mce([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2), 12)
    0.3
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    return _mce_from_bins(_bins(Ranking.from_arrays(y, c, w), n_bins, binning))


def brier(correct: Any, confidence: Any, *, sample_weight: Any = None) -> float:
    """Brier score: the mean of (confidence − correct)², in [0, 1]; lower is better.

    Equals ``sklearn.metrics.brier_score_loss(correct, confidence)``.

    Examples
    --------
    >>> # (0.9-1)^2 + (0.2-0)^2 + (0.5-1)^2 = 0.01 + 0.04 + 0.25 = 0.30; / 3 = 0.1
    >>> round(brier([1, 0, 1], [0.9, 0.2, 0.5]), 12)
    0.1
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    return _brier(y, c, w)


def ecarb(correct: Any, confidence: Any, *, budget: float = 0.3,
          ties: str = "expected") -> float:
    """Error-Catch Amplification at Review Budget b (ECARB).

    Review the k = min(n, max(1, floor(b·n))) least confident predictions; ECARB is the
    number of errors among them divided by what a random review of k would catch on
    average, (k/n)·E, with E the number of errors. 1 is no better than random; the best
    possible value is :func:`ecarb_ceiling`.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    budget : float in (0, 1], default 0.3
        The share reviewed; see :func:`review_count` for how k is rounded.
    ties : {"expected", "stable", "pessimistic", "optimistic"}, default "expected"
        How the run of equal confidences that straddles the review cut-off is split:
        ``"expected"`` is the exact average over every order of the tied predictions, so the
        result never depends on row order; ``"stable"`` keeps the rows' original order;
        ``"pessimistic"`` reviews the tied errors last; ``"optimistic"`` first.

    Returns
    -------
    float
        NaN with an :class:`UndefinedMetricWarning` when there are no errors (E = 0).

    Examples
    --------
    >>> # The paper's example: n=100, E=20, b=0.3 -> k=30; 15 errors among the 30 least
    >>> # confident: 15 / (30/100 * 20) = 15 / 6 = 2.5
    >>> conf = [i / 100 for i in range(100)]
    >>> correct = [0] * 15 + [1] * 15 + [0] * 5 + [1] * 65
    >>> ecarb(correct, conf, budget=0.3)
    2.5
    """
    y, c, _ = check_calibration_data(correct, confidence)
    budget = check_budget(budget)
    ties = check_option(ties, "ties", TIES)
    r = Ranking.from_arrays(y, c)
    if r.n_neg == 0:
        return _no_errors(r)
    return _ecarb_value(r, budget, ties, y, c)[2]


def ecarb_ceiling(correct: Any, *, budget: float = 0.3) -> float:
    """The best ECARB possible at this budget: min(k, E)·n / (k·E).

    Reached when every error is less confident than every correct prediction. It equals the
    paper's min(1/b, n/E) when b·n is whole.

    Examples
    --------
    >>> # n=100, E=20, k=30: min(30, 20) * 100 / (30 * 20) = 2000 / 600 = 3.333...
    >>> round(ecarb_ceiling([0] * 20 + [1] * 80, budget=0.3), 4)
    3.3333
    """
    y = check_correct(correct)
    budget = check_budget(budget)
    n = int(y.shape[0])
    e_total = n - int(np.count_nonzero(y))
    if e_total == 0:
        return _undefined("ecarb_ceiling", f"there are no errors among the {n} predictions (E = 0)")
    k = review_count(budget, n)
    return float(Fraction(min(k, e_total) * n, k * e_total))


def ecarb_curve(correct: Any, confidence: Any, *, budgets: Sequence[float] | None = None,
                ties: str = "expected") -> pd.DataFrame:
    """ECARB at several budgets from one sort.

    Parameters
    ----------
    budgets : sequence of float in (0, 1], optional
        Default: 0.05, 0.10, ..., 1.00.

    Returns
    -------
    DataFrame
        Columns ``budget, k, errors_caught, ecarb, ceiling``. ``errors_caught`` is the
        expected count under ``ties="expected"`` and may be fractional.

    Examples
    --------
    >>> curve = ecarb_curve([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], budgets=[0.25, 0.5, 1.0])
    >>> curve[["budget", "k", "errors_caught", "ecarb"]].values.tolist()
    [[0.25, 1.0, 1.0, 2.0], [0.5, 2.0, 1.0, 1.0], [1.0, 4.0, 2.0, 1.0]]
    """
    y, c, _ = check_calibration_data(correct, confidence)
    budgets = check_budgets(_DEFAULT_CURVE_BUDGETS if budgets is None else budgets)
    ties = check_option(ties, "ties", TIES)
    r = Ranking.from_arrays(y, c)
    if r.n_neg == 0:
        _no_errors(r)
        rows = [(b, review_count(b, r.n), 0.0, math.nan, math.nan) for b in budgets]
    else:
        rows = [(b, k, float(caught), value, ceiling)
                for b in budgets
                for k, caught, value, ceiling in [_ecarb_value(r, b, ties, y, c)]]
    import pandas as pd

    return pd.DataFrame(rows, columns=["budget", "k", "errors_caught", "ecarb", "ceiling"])


def _bins_frame(bins: _Bins, min_count: int, weighted: bool) -> pd.DataFrame:
    import pandas as pd

    mean_conf = bins.confidence / bins.weight
    accuracy = bins.correct / bins.weight
    frame = pd.DataFrame({
        "bin": bins.index.astype(np.int64),
        "lower": bins.lower,
        "upper": bins.upper,
        "count": bins.count.astype(np.int64),
        "mean_confidence": mean_conf,
        "accuracy": accuracy,
        "gap": mean_conf - accuracy,
    })
    if weighted:
        frame.insert(4, "weight", bins.weight)
    return frame[frame["count"] >= min_count].reset_index(drop=True)


def reliability_bins(correct: Any, confidence: Any, *, n_bins: int = 10,
                     binning: str = "uniform", min_count: int = 0,
                     sample_weight: Any = None) -> pd.DataFrame:
    """The reliability table behind ECE and a reliability diagram.

    Parameters
    ----------
    n_bins, binning : as in :func:`ece` (default 10 uniform bins, the usual diagram).
    min_count : int, default 0
        Hide bins with fewer predictions (display only; ECE is not affected).

    Returns
    -------
    DataFrame
        One row per non-empty bin: ``bin`` (its number, 0..n_bins-1), ``lower`` and
        ``upper`` (uniform: the bin's edges; quantile: the smallest and largest confidence
        in it), ``count``, ``mean_confidence``, ``accuracy`` and ``gap`` =
        mean_confidence − accuracy (positive: overconfident). With ``sample_weight`` a
        ``weight`` column follows ``count`` and means and accuracy are weighted.

    Examples
    --------
    >>> reliability_bins([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2)
       bin  lower  upper  count  mean_confidence  accuracy  gap
    0    0    0.0    0.5      2              0.3       0.5 -0.2
    1    1    0.5    1.0      2              0.7       1.0 -0.3
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    min_count = check_positive_int(min_count, "min_count", 0)
    bins = _bins(Ranking.from_arrays(y, c, w), n_bins, binning)
    frame = _bins_frame(bins, min_count, weighted=w is not None)
    if w is not None:  # the Ranking scaled the weights by a power of two; undo it for display
        top = np.array([w.max()])
        frame["weight"] *= float(top[0] / scale_weights(top)[0])
    return frame


# ---------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationReport:
    """Every calibration metric of one set of predictions, computed from one sort.

    Attributes
    ----------
    n, n_errors : int
    accuracy, auroc, ece, mce, brier : float
    ecarb, ecarb_ceiling : Mapping[float, float]
        Keyed by budget, in the order requested.
    bins : DataFrame
        The reliability table of the ECE bins (see :func:`reliability_bins`).
    n_bins, binning, ties : the options used.
    signature : str
        The settings behind the numbers, for comparing reports: confcal's version, the ECE
        binning and bin count, and ECARB's tie rule
        (``confcal:0.1.0|ece:quantile-5|ecarb-ties:expected``). Reports are comparable when
        their signatures are equal.
    """

    n: int
    n_errors: int
    accuracy: float
    auroc: float
    ece: float
    mce: float
    brier: float
    ecarb: Mapping[float, float]
    ecarb_ceiling: Mapping[float, float]
    bins: pd.DataFrame = field(repr=False, compare=False)
    n_bins: int = 5
    binning: str = "quantile"
    ties: str = "expected"

    @property
    def signature(self) -> str:
        """The settings behind the numbers (class docstring)."""
        return calibration_signature(binning=self.binning, n_bins=self.n_bins, ties=self.ties)

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready); bins as a list of row dicts."""
        return {
            "signature": self.signature,
            "n": self.n, "n_errors": self.n_errors, "accuracy": self.accuracy,
            "auroc": self.auroc, "ece": self.ece, "mce": self.mce, "brier": self.brier,
            "ecarb": dict(self.ecarb), "ecarb_ceiling": dict(self.ecarb_ceiling),
            "bins": self.bins.to_dict(orient="records"),
            "n_bins": self.n_bins, "binning": self.binning, "ties": self.ties,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row: the scalar metrics, then ``ecarb@b`` and ``ecarb_ceiling@b`` per budget."""
        row: dict[str, Any] = {
            "n": self.n, "n_errors": self.n_errors, "accuracy": self.accuracy,
            "auroc": self.auroc, "ece": self.ece, "mce": self.mce, "brier": self.brier,
        }
        row.update({f"ecarb@{b:g}": v for b, v in self.ecarb.items()})
        row.update({f"ecarb_ceiling@{b:g}": v for b, v in self.ecarb_ceiling.items()})
        import pandas as pd

        return pd.DataFrame([row])


def calibration_report(correct: Any, confidence: Any, *,
                       budgets: Sequence[float] = (0.1, 0.2, 0.3, 0.5), n_bins: int = 5,
                       binning: str = "quantile", ties: str = "expected") -> CalibrationReport:
    """AUROC, ECE, MCE, Brier, ECARB and its ceiling at each budget, and the bins.

    One sort of the confidences feeds every order-dependent metric; the result equals
    calling each function on its own. Undefined metrics are NaN with one warning each.

    Examples
    --------
    >>> rep = calibration_report([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2, budgets=[0.25])
    >>> rep.auroc, round(rep.ece, 12), rep.ecarb[0.25], rep.ecarb_ceiling[0.25]
    (1.0, 0.25, 4.0, 4.0)
    """
    y, c, _ = check_calibration_data(correct, confidence)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    ties = check_option(ties, "ties", TIES)
    r = Ranking.from_arrays(y, c)
    bins = _bins(r, n_bins, binning)
    ecarbs, ceilings = {}, {}
    if r.n_neg == 0:  # one warning for all budgets, not one per budget
        nan = _no_errors(r)
        ecarbs = {b: nan for b in budgets}
        ceilings = dict(ecarbs)
    else:
        for b in budgets:
            _, _, ecarbs[b], ceilings[b] = _ecarb_value(r, b, ties, y, c)
    return CalibrationReport(
        n=r.n, n_errors=r.n_neg, accuracy=r.n_pos / r.n, auroc=_auroc(r),
        ece=_ece_from_bins(bins, r.total_weight), mce=_mce_from_bins(bins),
        brier=_brier(y, c, None), ecarb=MappingProxyType(ecarbs),
        ecarb_ceiling=MappingProxyType(ceilings), bins=_bins_frame(bins, 0, weighted=False),
        n_bins=n_bins, binning=binning, ties=ties,
    )
