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
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .._counts import share_count
from .._validation import (
    align_pandas,
    check_budget,
    check_budgets,
    check_calibration_data,
    check_correct,
    check_n_bins,
    check_option,
    check_positive_int,
    check_sample_weight,
)
from ..exceptions import UndefinedMetricWarning
from ._ranking import (
    Ranking,
    accurate_dot,
    dot_no_blas,
    exact_sum,
    scale_weights,
    squared_error_sum,
)

if TYPE_CHECKING:
    # pandas is imported inside the functions that build a DataFrame: the scalar metrics
    # cost numpy only (lazy submodules; tests/test_api.py checks it).
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = [
    "BINNINGS",
    "DEFAULT_BUDGETS",
    "TIES",
    "auroc",
    "brier",
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
DEFAULT_BUDGETS: tuple[float, ...] = (0.1, 0.3)
"""The review budgets every function that takes ``budgets`` uses by default.

0.3 is the budget of ConfBench's worked example (review the least confident 30%) and
``ecarb``'s own default; 0.1 is the tight budget of a review team that checks one
prediction in ten, where a ranking's head matters most. Two budgets show how ECARB moves
with the budget while keeping the runs table narrow; every function that takes budgets,
the command line and the report share them. Pass ``budgets=`` for others, and
:func:`ecarb_curve` for the whole trade-off.
"""
_DEFAULT_CURVE_BUDGETS = tuple(i / 20 for i in range(1, 21))  # 0.05, 0.1, ..., 1.0


# ---------------------------------------------------------------------------------------
# boundary helpers
# ---------------------------------------------------------------------------------------
def undefined_metric(metric: str, reason: str) -> float:
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

    See Also
    --------
    ecarb : the review's gain over a random one.

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
def ranked_auroc(r: Ranking) -> float:
    n_pos, n_neg = r.n_pos, r.n_neg
    if n_pos == 0 or n_neg == 0:
        label = "correct" if n_neg == 0 else "incorrect"
        return undefined_metric("auroc", f"all {r.n} predictions are {label} (one class only)")
    start, split, end = r.mixed_runs
    w = r.weights
    if w is None:
        # Mann-Whitney on ranks: the j-th correct prediction (0-based) at rank P[j] has
        # P[j] - j errors below it, tied errors included (they sort first in a run).
        # Subtracting half of (errors x correct) in each mixed run gives ties half credit.
        below2 = 2 * (int(r.pos_positions.sum()) - n_pos * (n_pos - 1) // 2)
        ties = int(dot_no_blas(split - start, end - split)) if start.size else 0
        return (below2 - ties) / (2 * n_pos * n_neg)
    if not (r.pos_weight > 0 and r.neg_weight > 0):
        label = "incorrect" if r.pos_weight == 0 else "correct"
        return undefined_metric("auroc", f"every prediction with positive weight is {label}")
    # prefix sums within an ulp (accurate_cumsum) and blocked dot products: the error does
    # not grow with n (a running sum lost 9e-12 relative at 1e6 rows of weight 0.7)
    below = accurate_dot(w.pos, w.cum_neg[r.neg_before_pos])
    if start.size:
        pb_start, pb_split, pb_end = (r.pos_before(start), r.pos_before(split), r.pos_before(end))
        neg_in_run = w.cum_neg[split - pb_split] - w.cum_neg[start - pb_start]
        pos_in_run = w.cum_pos[pb_end] - w.cum_pos[pb_split]
        below -= 0.5 * accurate_dot(neg_in_run, pos_in_run)
    return below / (r.pos_weight * r.neg_weight)


@dataclass(frozen=True)
class Bins:
    index: np.ndarray  # nominal bin number, 0..n_bins-1
    start: np.ndarray  # first rank (rows of zero weight included)
    stop: np.ndarray  # one past the last rank
    count: np.ndarray  # predictions of positive weight in the bin (all, unweighted)
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
        # decided exactly on the ratio, with near-whole values counting as whole: with five
        # weights of 0.7 (1.4 after scale_weights), a float comparison would put rank 3 in
        # bin 2, as 1.4 + 1.4 + 1.4 = 4.199999999999999 and 5 * 4.199999999999999 < 3 * 7.0.
        # Unit weights take the very same comparisons as no weights.
        p = r.first_rank_in_bin(i, n_bins)
        # a run of equal confidences is never split: it stays in the bin of its first rank
        bounds.append(r.next_run_start(p) if p < n else n)
    bounds.append(n)
    return bounds, None


def ranking_bins(r: Ranking, n_bins: int, binning: str) -> Bins:
    bounds, edges = _bin_bounds(r, n_bins, binning)
    start = np.asarray(bounds[:-1], dtype=np.int64)
    stop = np.asarray(bounds[1:], dtype=np.int64)
    if r.weights is None:
        weight = (stop - start).astype(np.float64)
        correct = (r.pos_before(stop) - r.pos_before(start)).astype(np.float64)
    else:
        # Summed per slice, not as differences of prefix sums: a bin of weight 1e-9 after
        # a prefix of 1.0 would lose 8 digits to cancellation (found by Hypothesis).
        sums = np.array([r.weight_sums(int(a), int(b)) for a, b in zip(start, stop, strict=True)])
        correct = sums[:, 0]
        weight = sums[:, 0] + sums[:, 1]
    keep = (stop > start) & (weight > 0)  # empty (or weightless) bins are dropped
    idx = np.flatnonzero(keep)
    conf = np.array([r.confidence_sum(int(start[i]), int(stop[i])) for i in idx])
    # A row of weight 0 is in no statistic of its bin: not in the count, not a bound.
    count, first, last = (stop - start)[idx], start[idx], stop[idx] - 1
    if r.weights is not None:
        count, first, last = _live_rows(r, start[idx], stop[idx])
    if edges is None:  # quantile bins: the smallest and largest confidence inside
        lower, upper = r.confidence[first], r.confidence[last]
    else:
        lower, upper = edges[idx], edges[idx + 1]
    return Bins(index=idx, start=start[idx], stop=stop[idx], count=count,
                 weight=weight[idx], correct=correct[idx], confidence=conf.reshape(-1),
                 lower=np.asarray(lower, dtype=np.float64),
                 upper=np.asarray(upper, dtype=np.float64))


def _live_rows(r: Ranking, start: np.ndarray, stop: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bin [start, stop) of positive weight: the number of rows of positive weight and
    the first and last rank of one. Slices and short searches, no n-sized temporary (the
    bootstrap asks for bins once per resample, with many zero weights)."""
    w = r.weights
    assert w is not None
    a, b = r.pos_before(start), r.pos_before(stop)
    count = np.array([np.count_nonzero(w.pos[i:j]) + np.count_nonzero(w.neg[s - i:t - j])
                      for s, t, i, j in zip(start, stop, a, b, strict=True)], dtype=np.int64)
    first = np.array([_live_rank(r, int(s), int(t), 1) for s, t in zip(start, stop, strict=True)],
                     dtype=np.int64)
    last = np.array([_live_rank(r, int(s), int(t), -1) for s, t in zip(start, stop, strict=True)],
                    dtype=np.int64)
    return count, first, last


def _live_rank(r: Ranking, start: int, stop: int, step: int) -> int:
    """The first (step 1) or last (step -1) rank in [start, stop) whose row has a positive
    weight; the bin has one. Looks at windows of ranks that double in size from its end."""
    size = 16
    lo, hi = start, stop
    while lo < hi:
        a, b = (lo, min(hi, lo + size)) if step == 1 else (max(lo, hi - size), hi)
        hits = np.flatnonzero(rank_weights(r, a, b) > 0)
        if hits.size:
            return a + int(hits[0] if step == 1 else hits[-1])
        lo, hi = (b, hi) if step == 1 else (lo, a)
        size *= 2
    raise AssertionError("a bin of positive weight holds a row of positive weight")


def rank_weights(r: Ranking, start: int, stop: int) -> np.ndarray:
    """The weights of ranks [start, stop), in rank order (a weighted Ranking)."""
    w = r.weights
    assert w is not None
    a, b = int(r.pos_before(start)), int(r.pos_before(stop))
    out = np.empty(stop - start)
    is_pos = r.is_pos[start:stop]
    out[is_pos] = w.pos[a:b]
    out[~is_pos] = w.neg[start - a:stop - b]
    return out


def ece_from_bins(bins: Bins, total_weight: float) -> float:
    # sum_B |B|/N * |acc(B) - conf(B)| == sum_B |correct_B - confidence_sum_B| / N
    return float(bins.gap.sum() / total_weight)


def mce_from_bins(bins: Bins) -> float:
    return float((bins.gap / bins.weight).max())


def brier_value(y: np.ndarray, c: np.ndarray, w: np.ndarray | None) -> float:
    # Σ(c - y)² directly, not Σc² - 2Σ_{correct}c + n_correct: that cancels terms of size
    # n and gave 0.4099999999999176 for 0.41 on constant data (see squared_error_sum).
    if w is None:
        return squared_error_sum(y, c) / c.shape[0]
    w = scale_weights(w)  # keeps subnormal weights (5e-324) out of the sums
    return squared_error_sum(y, c, w) / float(w.sum())  # contiguous: pairwise, ~1e-16


def weight_unit(sample_weight: np.ndarray) -> Fraction:
    """The weight one prediction carries inside a Ranking built from ``sample_weight``.

    :func:`~confcal.metrics._ranking.scale_weights` multiplies the weights by the power of
    two that brings their maximum into [1, 2); ECARB counts reviewed predictions in the
    user's units (a weight of 1 is one prediction), so it divides by that factor, exactly
    (a Fraction: for subnormal weights the factor exceeds the largest float).
    """
    _, exponent = np.frexp(sample_weight.max())
    return Fraction(2) ** (1 - int(exponent))


def review_weight(budget: float, total: Fraction) -> Fraction:
    """K, the weight a budget reviews out of a total weight W: ``min(W, max(1, ⌊b·W⌋))``.

    The floor is :func:`confcal._counts.share_count` (the rule of :func:`review_count`), so
    for a whole W it is ``review_count(budget, W)``: integer weights review what the
    repeated rows would. A total below one prediction is reviewed whole.
    """
    return min(total, Fraction(max(1, share_count(budget, total))))


def _stable_caught(y: np.ndarray, c: np.ndarray, w: np.ndarray | None, value: float,
                   taken: Fraction) -> Fraction:
    """Errors among the first ``taken`` units of the run at confidence ``value``, its rows
    in their original order; a row of weight w is w units (the last one may be cut)."""
    rows = np.flatnonzero(c == value)
    if w is None:
        return Fraction(int(np.count_nonzero(~y[rows[:int(taken)]])))
    caught, left = Fraction(0), taken
    for i in rows:  # only the run at the cut-off, in row order
        if left <= 0:
            break
        part = min(left, Fraction(float(w[i])))
        if not y[i]:
            caught += part
        left -= part
    return caught


def _ecarb_caught(r: Ranking, k: Fraction | int, ties: str, y: np.ndarray | None = None,
                  c: np.ndarray | None = None, w: np.ndarray | None = None) -> Fraction:
    """Errors among the k lowest-confidence units of weight (exact for ties='expected').

    With weights, k and the result are in the Ranking's weight scale, and a row of weight
    w is w units: the run at the cut-off is cut inside a row when k falls there. ``w`` is
    the per-row weight in that scale (only for ties="stable").
    """
    if r.weights is None:
        q = int(k)
        a, b = r.run_start(q - 1), r.run_end(q - 1)  # the run holding the k-th unit
        pa, pb = int(r.pos_before(a)), int(r.pos_before(b))
        before = Fraction(a - pa)
        taken, errors = Fraction(q - a), Fraction((b - pb) - (a - pa))
        size = Fraction(b - a)
    else:
        wt = r.weights
        q = r.first_rank_with_weight_before(k)
        a, b = r.run_start(q - 1), r.run_end(q - 1)
        pa, pb = int(r.pos_before(a)), int(r.pos_before(b))
        # exact rationals of the float prefix sums: no rounding of their sums or differences
        before = Fraction(float(wt.cum_neg[a - pa]))
        errors = Fraction(float(wt.cum_neg[b - pb])) - before
        pos_before = Fraction(float(wt.cum_pos[pa]))
        size = errors + Fraction(float(wt.cum_pos[pb])) - pos_before
        # the weight search compares rounded sums; keep the cut inside the run it found
        taken = min(size, max(Fraction(0), Fraction(k) - before - pos_before))
    if taken == size or errors == 0 or errors == size:
        return before + (errors if taken == size else (0 if errors == 0 else taken))
    if ties == "expected":
        # The mean over every order of the run's units: taking `taken` of `size` at random
        # catches errors * taken / size on average (hypergeometric; exact, order-free).
        return before + errors * taken / size
    if ties == "pessimistic":  # errors reviewed last
        return before + max(Fraction(0), taken - (size - errors))
    if ties == "optimistic":  # errors reviewed first
        return before + min(taken, errors)
    # "stable": the run is reviewed in the rows' original order
    assert y is not None and c is not None
    return before + _stable_caught(y, c, w, float(r.confidence[a]), taken)


def no_errors_value(r: Ranking) -> float:
    if r.weights is not None and r.n_neg:
        return undefined_metric("ecarb", f"the {r.n_neg} errors among the {r.n} predictions carry "
                                   "no weight (E = 0)")
    return undefined_metric("ecarb", f"there are no errors among the {r.n} predictions (E = 0)")


def ecarb_value(r: Ranking, budget: float, ties: str,
                 y: np.ndarray | None = None, c: np.ndarray | None = None,
                 w: np.ndarray | None = None, unit: Fraction | int = 1
                 ) -> tuple[Fraction, Fraction, float, float]:
    """(k, errors caught, ecarb, ceiling) for one budget; the caller handles E = 0.

    ``unit`` is the weight of one prediction in the Ranking's scale (:func:`weight_unit`;
    1 without weights or for unscaled ones); k and the errors caught come back in
    predictions (the user's weight units). ``w``: per-row weights in the Ranking's scale,
    for ties="stable" only.
    """
    if r.weights is None:
        n, e_total = Fraction(r.n), Fraction(r.n_neg)
        k = Fraction(review_count(budget, r.n))
        caught = _ecarb_caught(r, k, ties, y, c)
    else:
        scale = Fraction(unit)  # a power of two: dividing by it is exact
        wt = r.weights
        # the exact totals, as ecarb_ceiling takes them: the same ceiling to the last bit
        n, e_total = (wt.exact_pos + wt.exact_neg) / scale, wt.exact_neg / scale
        k = review_weight(budget, n)
        if k >= n:
            # Everything is reviewed, so every error is caught, whatever the order. Said
            # directly: the float prefix sums can lose a weight far below the total's last
            # digit (0.5 + 1e-45 sums to 0.5), which would end the review one row early.
            caught = e_total
        else:
            caught = _ecarb_caught(r, k * scale, ties, y, c, w) / scale
    # ECARB = caught / ((k/n) * E), in exact rational arithmetic rounded once, so that
    # e.g. all-tied confidences give exactly 1.0.
    value = float(caught * n / (k * e_total))
    ceiling = float(min(k, e_total) * n / (k * e_total))
    return k, caught, value, ceiling


def scaled_rows(w: np.ndarray | None) -> tuple[np.ndarray | None, Fraction | int]:
    """Per-row weights in the scale of ``Ranking.from_arrays`` and the unit of one row."""
    if w is None:
        return None, 1
    return scale_weights(w), weight_unit(w)


# ---------------------------------------------------------------------------------------
# public metrics
# ---------------------------------------------------------------------------------------
def auroc(correct: ArrayLike, confidence: ArrayLike, *,
          sample_weight: ArrayLike | None = None) -> float:
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

    See Also
    --------
    ece : does a confidence of 0.8 mean right 80% of the time?
    ecarb : what a review of the least confident predictions gains.
    delong_test : is the AUROC of one score different from another's?
    calibration_report : every metric from one sort.

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
    return ranked_auroc(Ranking.from_arrays(y, c, w))


def ece(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 5, binning: str = "quantile",
        sample_weight: ArrayLike | None = None) -> float:
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
        the bin of its first element; empty bins are dropped. A run whose nominal bin is
        M (its r within that 1e-9 of n: the top tail) goes to the last bin, M - 1: the bin
        of a run is min(M - 1, floor(r·M/n)). With weights, r is the total
        weight ranked before the prediction and n the total weight; the rule reads r/n
        exactly, so scaling every weight by the same factor leaves every bin unchanged
        (to the last bit for powers of two; for other factors unless r·M/n lies within
        ~n·1e-16 of the 1e-9 switch) and unit weights are no weights. Rows of zero weight
        are in no bin (they cannot move the others: r is the same without them).
        ``"uniform"``: M equal-width bins [i/M, (i+1)/M), the last one closed at 1.0.
    sample_weight : array-like, optional

    Returns
    -------
    float in [0, 1]

    See Also
    --------
    mce : the largest bin gap instead of the weighted mean.
    debiased_ece : the same bins with the sampling bias removed.
    smooth_ece : a calibration error without bins.
    reliability_bins : the bins behind the number.
    calibration_test : is the gap more than chance?

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
    return ece_from_bins(ranking_bins(r, n_bins, binning), r.total_weight)


def mce(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 5, binning: str = "quantile",
        sample_weight: ArrayLike | None = None) -> float:
    """Maximum calibration error: the largest |accuracy(B) − mean confidence(B)| over bins.

    Bins as in :func:`ece`. Empty bins are dropped, so a sparse bin can dominate: read it
    with the bin counts from :func:`reliability_bins`.

    See Also
    --------
    ece : the weighted mean gap of the same bins.
    reliability_bins : the bins behind the number.

    Examples
    --------
    >>> # same bins as the ece example: gaps 0.2 and 0.3 -> 0.3
    >>> round(mce([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2), 12)
    0.3
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    return mce_from_bins(ranking_bins(Ranking.from_arrays(y, c, w), n_bins, binning))


def brier(correct: ArrayLike, confidence: ArrayLike, *,
          sample_weight: ArrayLike | None = None) -> float:
    """Brier score: the mean of (confidence − correct)², in [0, 1]; lower is better.

    Equals ``sklearn.metrics.brier_score_loss(correct, confidence)``.

    See Also
    --------
    brier_decomposition : reliability, resolution and uncertainty.
    log_loss : the unbounded proper score.
    calibration_report : every metric from one sort.

    Examples
    --------
    >>> # (0.9-1)^2 + (0.2-0)^2 + (0.5-1)^2 = 0.01 + 0.04 + 0.25 = 0.30; / 3 = 0.1
    >>> round(brier([1, 0, 1], [0.9, 0.2, 0.5]), 12)
    0.1
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    return brier_value(y, c, w)


def ecarb(correct: ArrayLike, confidence: ArrayLike, *, budget: float = 0.3,
          ties: str = "expected", sample_weight: ArrayLike | None = None) -> float:
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
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w counts as w copies of itself (see Notes).

    Returns
    -------
    float
        NaN with an :class:`UndefinedMetricWarning` when there are no errors (E = 0; with
        weights, when the errors carry no weight).

    See Also
    --------
    ecarb_ceiling : the best ECARB any ranking reaches at the budget.
    ecarb_curve : ECARB over a grid of budgets.
    review_count : how many predictions a budget reviews.
    risk_coverage_curve : the same ranking read from the confident end.

    Notes
    -----
    With ``sample_weight``, n is the total weight W, E the weight of the errors, and the
    review takes the least confident rows until their weight reaches
    K = min(W, max(1, floor(b·W))), floored by the rule of :func:`review_count`; the row at
    the cut-off is reviewed in part (a row of weight 3 is three predictions, of which the
    review may take one). The errors caught are counted by weight, and ``ties="expected"``
    is the exact expectation over every order of the units of weight in the tied run (a
    share s of the run's weight reviewed catches s of its error weight). So integer weights
    give exactly the ECARB of the repeated rows, unit weights that of no weights, and
    zero-weight rows change nothing. Unlike AUROC, ECE and Brier, ECARB is **not**
    invariant to scaling every weight: K is a whole number of predictions, so weights must
    count predictions (weights summing to 1 review everything and give 1.0), as repeating
    every row changes K's rounding too.

    Examples
    --------
    >>> # The paper's example: n=100, E=20, b=0.3 -> k=30; 15 errors among the 30 least
    >>> # confident: 15 / (30/100 * 20) = 15 / 6 = 2.5
    >>> conf = [i / 100 for i in range(100)]
    >>> correct = [0] * 15 + [1] * 15 + [0] * 5 + [1] * 65
    >>> ecarb(correct, conf, budget=0.3)
    2.5
    >>> # weights 3, 1, 1, 5: W=10, E=3 + 1 = 4, b=0.2 -> K=2 of the weight-3 error at 0.1:
    >>> # 2 / (2/10 * 4) = 2.5, as for the rows repeated [0, 0, 0, 1, 0, 1, 1, 1, 1, 1]
    >>> ecarb([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], budget=0.2, sample_weight=[3, 1, 1, 5])
    2.5
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    budget = check_budget(budget)
    ties = check_option(ties, "ties", TIES)
    r = Ranking.from_arrays(y, c, w)
    if r.neg_weight == 0:
        return no_errors_value(r)
    w_rows, unit = scaled_rows(w)
    return ecarb_value(r, budget, ties, y, c, w_rows, unit)[2]


def ecarb_ceiling(correct: ArrayLike, *, budget: float = 0.3,
                  sample_weight: ArrayLike | None = None) -> float:
    """The best ECARB possible at this budget: min(k, E)·n / (k·E).

    Reached when every error is less confident than every correct prediction. It equals the
    paper's min(1/b, n/E) when b·n is whole. With ``sample_weight``, n, E and k are weights
    as in :func:`ecarb`.

    See Also
    --------
    ecarb : the ECARB of the given ranking.
    review_count : how many predictions a budget reviews.

    Examples
    --------
    >>> # n=100, E=20, k=30: min(30, 20) * 100 / (30 * 20) = 2000 / 600 = 3.333...
    >>> round(ecarb_ceiling([0] * 20 + [1] * 80, budget=0.3), 4)
    3.3333
    """
    correct, sample_weight = align_pandas(correct=correct, sample_weight=sample_weight)
    y = check_correct(correct)
    budget = check_budget(budget)
    n_rows = int(y.shape[0])
    if sample_weight is None:
        n = Fraction(n_rows)
        e_total = Fraction(n_rows - int(np.count_nonzero(y)))
    else:
        w = check_sample_weight(sample_weight, n_rows)
        e_total = exact_sum(w[~y])
        n = e_total + exact_sum(w[y])  # exact: no rounding of the totals
    if e_total == 0:
        return undefined_metric("ecarb_ceiling",
                          f"there are no errors among the {n_rows} predictions (E = 0)"
                          if sample_weight is None or y.all() else
                          f"the errors among the {n_rows} predictions carry no weight (E = 0)")
    k = review_weight(budget, n)
    return float(min(k, e_total) * n / (k * e_total))


def ecarb_curve(correct: ArrayLike, confidence: ArrayLike, *,
                budgets: Sequence[float] | None = None, ties: str = "expected",
                sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """ECARB at several budgets from one sort.

    Parameters
    ----------
    budgets : sequence of float in (0, 1], optional
        Default: 0.05, 0.10, ..., 1.00.
    ties, sample_weight : as in :func:`ecarb`.

    Returns
    -------
    DataFrame
        Columns ``budget, k, errors_caught, ecarb, ceiling``. ``k`` is the number of
        predictions reviewed (with ``sample_weight``, the weight K reviewed);
        ``errors_caught`` is the expected count under ``ties="expected"`` (the error weight
        with ``sample_weight``) and may be fractional.

    See Also
    --------
    ecarb : one budget.
    confcal.report.plots.ecarb_vs_budget : the curve drawn.

    Examples
    --------
    >>> curve = ecarb_curve([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], budgets=[0.25, 0.5, 1.0])
    >>> curve[["budget", "k", "errors_caught", "ecarb"]].values.tolist()
    [[0.25, 1.0, 1.0, 2.0], [0.5, 2.0, 1.0, 1.0], [1.0, 4.0, 2.0, 1.0]]
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    budgets = check_budgets(_DEFAULT_CURVE_BUDGETS if budgets is None else budgets)
    ties = check_option(ties, "ties", TIES)
    r = Ranking.from_arrays(y, c, w)
    w_rows, unit = scaled_rows(w)
    if r.neg_weight == 0:
        no_errors_value(r)
        total = Fraction(r.total_weight) / unit
        rows = [(b, review_weight(b, total), 0.0, math.nan, math.nan) for b in budgets]
    else:
        rows = [(b, k, float(caught), value, ceiling)
                for b in budgets
                for k, caught, value, ceiling in [ecarb_value(r, b, ties, y, c, w_rows, unit)]]
    # k is a whole number of predictions unless the total weight is below one
    table = [(b, int(k) if k.denominator == 1 else float(k), *rest) for b, k, *rest in rows]
    import pandas as pd

    return pd.DataFrame(table, columns=["budget", "k", "errors_caught", "ecarb", "ceiling"])


def bins_frame(bins: Bins, min_count: int, weighted: bool) -> pd.DataFrame:
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


def reliability_bins(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 5,
                     binning: str = "quantile", min_count: int = 0,
                     sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """The reliability table behind ECE and a reliability diagram.

    Parameters
    ----------
    n_bins, binning : as in :func:`ece`, with the same defaults (the paper's 5 equal-mass
        bins), so the default table is the one behind the default :func:`ece` and
        :attr:`CalibrationReport.bins`. For the usual diagram's 10 uniform bins pass
        ``n_bins=10, binning="uniform"`` (as :func:`confcal.report.plots.reliability_diagram`
        does). Before this release the default was 10 uniform bins.
    min_count : int, default 0
        Hide bins with fewer predictions (display only; ECE is not affected).

    Returns
    -------
    DataFrame
        One row per non-empty bin: ``bin`` (its number, 0..n_bins-1), ``lower`` and
        ``upper`` (uniform: the bin's edges; quantile: the smallest and largest confidence
        in it), ``count``, ``mean_confidence``, ``accuracy`` and ``gap`` =
        mean_confidence − accuracy (positive: overconfident). With ``sample_weight`` a
        ``weight`` column follows ``count`` and means and accuracy are weighted; ``count``
        is then the number of rows of positive weight. A row of weight 0 is in no bin: it
        adds to no count, sets no ``lower`` or ``upper``, and a bin of nothing but such
        rows is not in the table.

    See Also
    --------
    ece : the weighted mean gap of these bins.
    confcal.report.plots.reliability_diagram : the bins drawn.
    calibration_test : consistency bands for each bin.

    Examples
    --------
    >>> # quantile (the default): ranks 0, 1 and ranks 2, 3; lower/upper are the confidences
    >>> reliability_bins([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2)
       bin  lower  upper  count  mean_confidence  accuracy  gap
    0    0    0.2    0.4      2              0.3       0.5 -0.2
    1    1    0.6    0.8      2              0.7       1.0 -0.3
    >>> # uniform: [0, 0.5) and [0.5, 1.0]; lower/upper are the edges
    >>> reliability_bins([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2, binning="uniform")
       bin  lower  upper  count  mean_confidence  accuracy  gap
    0    0    0.0    0.5      2              0.3       0.5 -0.2
    1    1    0.5    1.0      2              0.7       1.0 -0.3
    >>> # the row at 0.9 weighs 0: bins of weight 2 each (ranks 0, 1 and 2, 3), upper 0.8
    >>> reliability_bins([0, 1, 1, 1, 0], [0.2, 0.4, 0.6, 0.8, 0.9], n_bins=2,
    ...                  sample_weight=[1, 1, 1, 1, 0])[["bin", "upper", "count", "weight"]]
       bin  upper  count  weight
    0    0    0.4      2     2.0
    1    1    0.8      2     2.0
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    min_count = check_positive_int(min_count, "min_count", 0)
    bins = ranking_bins(Ranking.from_arrays(y, c, w), n_bins, binning)
    frame = bins_frame(bins, min_count, weighted=w is not None)
    if w is not None:
        unscale_weights(frame, w)
    return frame


def unscale_weights(frame: pd.DataFrame, w: np.ndarray) -> None:
    """The Ranking scaled the weights by a power of two; undo it in the bins' display."""
    top = np.array([w.max()])
    frame["weight"] *= float(top[0] / scale_weights(top)[0])
