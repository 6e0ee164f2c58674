"""Routing: which predictions to accept automatically and how much to send to review.

Two operating questions, answered on labelled data and exact under ties:

* :func:`threshold_for_accuracy`: the lowest confidence threshold whose auto-accepted set
  (confidence >= threshold) is accurate enough, optionally with a Clopper-Pearson
  guarantee. A fixed threshold needs *calibrated* confidence to mean the same thing on new
  data (see :mod:`confcal.calibration.calibrators`).
* :func:`budget_for_residual_error`: the smallest review share, least confident first,
  that leaves at most a target share of errors in the output. Ranked review needs only
  ranking, not calibration.

**Ties.** A threshold t accepts every prediction with confidence >= t, so predictions of
equal confidence are always accepted (or reviewed) together: nothing distinguishes them,
and splitting a run would make the answer depend on row order. Every candidate threshold
is therefore a distinct confidence value of the data, and feasibility is evaluated there.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .._counts import share_count
from .._validation import (
    check_calibration_data,
    check_option,
    check_probability,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..metrics._ranking import Ranking

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "LOWER_BOUNDS",
    "BudgetResult",
    "ThresholdResult",
    "budget_for_residual_error",
    "threshold_for_accuracy",
]

LOWER_BOUNDS = ("clopper-pearson",)


@dataclass(frozen=True)
class ThresholdResult:
    """The result of :func:`threshold_for_accuracy`.

    A frozen dataclass, as every confcal result, that also unpacks as a 3-tuple
    (``threshold, coverage, accuracy = result``; ``tuple(result)``). Compare fields, or
    ``tuple(result)``, with a tuple: the result itself equals only another ThresholdResult.

    See Also
    --------
    threshold_for_accuracy : builds it.
    """

    threshold: float
    """Accept predictions with confidence >= threshold (a confidence of the data, or inf)."""
    coverage: float
    """Share of predictions accepted."""
    accuracy: float
    """Accuracy of the accepted predictions (the point estimate, also under a bound)."""

    def __iter__(self) -> Iterator[float]:
        return iter(astuple(self))


@dataclass(frozen=True)
class BudgetResult:
    """The result of :func:`budget_for_residual_error`.

    A frozen dataclass that also unpacks as a 2-tuple (``budget, errors_left = result``;
    see :class:`ThresholdResult`).

    See Also
    --------
    budget_for_residual_error : builds it.
    """

    budget: float
    """Share of predictions reviewed, least confident first (0.0: none needed)."""
    errors_left: int
    """Errors among the predictions not reviewed."""

    def __iter__(self) -> Iterator[float | int]:
        return iter(astuple(self))


def _prepare(correct: ArrayLike, confidence: ArrayLike) -> Ranking:
    y, c, _ = check_calibration_data(correct, confidence)
    return Ranking.from_arrays(y, c)


def _run_starts(r: Ranking) -> np.ndarray:
    """First rank of each run of equal confidence, ascending."""
    c = r.confidence
    return np.flatnonzero(np.r_[True, c[1:] != c[:-1]])


def _as_written(x: float) -> Fraction:
    """The decimal a float was written as: the shortest one that reads back to it.

    A target typed as 0.1 is the float 0.1000000000000000055...; compared in binary, 1 right
    of 10 would miss it. Read as written, 0.1 is 1/10, and 0.29 of 100 is 29 (as in
    :func:`confcal.metrics.review_count`).
    """
    return Fraction(repr(float(x)))


def _at_least(num: np.ndarray, den: np.ndarray, target: float) -> np.ndarray:
    """num/den >= target as written (:func:`_as_written`), decided exactly.

    num/den in float64 is correctly rounded, and the written decimal rounds to the float
    target: a float quotient above (below) the target proves the exact quotient is at least
    (below) the decimal. Only a quotient that rounds to the target itself is compared in
    integers.
    """
    q = num / den
    ok = q > target
    tie = np.flatnonzero(q == target)
    if tie.size:
        t = _as_written(target)
        ok[tie] = [int(k) * t.denominator >= t.numerator * int(m)
                   for k, m in zip(num[tie], den[tie], strict=True)]
    return ok


def _clopper_pearson_lower(k: np.ndarray, m: np.ndarray, level: float) -> np.ndarray:
    """One-sided lower Clopper-Pearson bound: the p with P(X >= k | m, p) = 1 - level.

    That p is the (1 - level) quantile of Beta(k, m - k + 1); for k = 0 it is 0.
    """
    from scipy.stats import beta

    out = np.zeros(k.shape[0])
    pos = k > 0
    out[pos] = beta.ppf(1.0 - level, k[pos], m[pos] - k[pos] + 1)
    return out


def threshold_for_accuracy(correct: ArrayLike, confidence: ArrayLike, *, target: float = 0.98,
                           lower_bound: str | None = None,
                           confidence_level: float | None = None) -> ThresholdResult:
    """The lowest threshold whose auto-accepted predictions reach a target accuracy.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    target : float in (0, 1], default 0.98
        The accuracy the accepted set (confidence >= threshold) must reach.
    lower_bound : {None, "clopper-pearson"}, default None
        None: the accepted set's accuracy k/m itself must reach ``target`` (compared
        exactly with the target as written: 0.1 is 1/10, not the float just above it).
        ``"clopper-pearson"``: its one-sided lower confidence bound at ``confidence_level``
        must, so that the true accuracy of the accepted set's population is at least
        ``target`` with that confidence (for this threshold taken alone; choosing the
        threshold on the same data adds selection, as any data-driven threshold does).
    confidence_level : float in [0.5, 1), optional
        The confidence level of the bound; default 0.95. Only with ``lower_bound``.

    Returns
    -------
    ThresholdResult
        ``(threshold, coverage, accuracy)``: the threshold (one of the confidences), the
        share of predictions it accepts, and their accuracy. Among the thresholds that
        reach the target it is the lowest, so coverage is the largest. Accuracy need not
        rise with the threshold; a higher threshold can miss the target even when this one
        reaches it.

    Warns
    -----
    UndefinedMetricWarning
        When no threshold reaches the target: the result is ``(inf, 0.0, nan)``, a
        threshold that accepts nothing (``confidence >= inf`` is never true, so using it
        routes everything to review, the safe reading), with undefined accuracy.

    Raises
    ------
    ValidationError
        Invalid arrays, a target outside (0, 1], an unknown bound, a confidence level
        outside [0.5, 1), or a confidence level without a bound.

    See Also
    --------
    budget_for_residual_error : the review budget for a target error rate.
    ecarb : what a review by confidence gains.

    Notes
    -----
    Ties: all predictions of equal confidence are accepted together, so the candidate
    thresholds are the distinct confidences (module docstring). The bound is computed
    with ``scipy.stats.beta`` and compared with ``target`` in floating point; the point
    accuracy k/m is compared exactly, in rational arithmetic, with the shortest decimal
    that reads back to ``target`` (0.98 is 49/50, so 49 right of 50 reaches it).

    Examples
    --------
    >>> # confidences 0.6..0.95; accepting >= 0.8 takes 4 predictions, all right (4/4 = 1);
    >>> # >= 0.7 takes 6 with 1 wrong (5/6 = 0.83); >= 0.6 takes 8 with 2 wrong (6/8)
    >>> correct = [0, 1, 1, 0, 1, 1, 1, 1]
    >>> confidence = [0.6, 0.6, 0.7, 0.7, 0.8, 0.9, 0.9, 0.95]
    >>> threshold_for_accuracy(correct, confidence, target=0.8)
    ThresholdResult(threshold=0.7, coverage=0.75, accuracy=0.8333333333333334)
    >>> threshold_for_accuracy(correct, confidence, target=0.9)
    ThresholdResult(threshold=0.8, coverage=0.5, accuracy=1.0)
    >>> # 4 of 4 right: the 95% lower bound is 0.05 ** (1/4) = 0.473 < 0.9: infeasible
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     threshold_for_accuracy(correct, confidence, target=0.9,
    ...                            lower_bound="clopper-pearson")
    ThresholdResult(threshold=inf, coverage=0.0, accuracy=nan)
    >>> print(caught[0].message)
    no threshold reaches the target accuracy 0.9 (clopper-pearson lower bound at level 0.95; the
    best is 0.472871 at threshold 0.8, covering 50% of 8 predictions); returning threshold inf
    (accept nothing)
    """
    r = _prepare(correct, confidence)
    target = check_probability(target, "target", open_low=True, open_high=False)
    level = confidence_level
    if lower_bound is None:
        if level is not None:
            raise ValidationError("confidence_level must be None without a lower_bound (it is "
                                  f"the level of the Clopper-Pearson bound); found {level!r}")
    else:
        check_option(lower_bound, "lower_bound", LOWER_BOUNDS)
        level = 0.95 if level is None else check_probability(level, "confidence_level")
        if level < 0.5:
            raise ValidationError(f"confidence_level must be a number in [0.5, 1); found "
                                  f"{level!r}")

    starts = _run_starts(r)
    accepted = r.n - starts  # threshold = the run's confidence accepts it and all above
    right = r.n_pos - r.pos_before(starts)
    feasible = _at_least(right, accepted, target)
    score = right / accepted
    if lower_bound is not None:
        assert level is not None
        # a lower bound at level >= 0.5 never exceeds k/m: only point-feasible runs can pass
        score = np.zeros(starts.shape[0])
        candidates = np.flatnonzero(feasible)
        score[candidates] = _clopper_pearson_lower(right[candidates], accepted[candidates],
                                                   level)
        feasible = score >= target
    hits = np.flatnonzero(feasible)
    if hits.size == 0:
        if lower_bound is not None:  # for the message: the best bound over every threshold
            assert level is not None
            score = _clopper_pearson_lower(right, accepted, level)
        best = int(np.argmax(score))
        basis = ("accuracy" if lower_bound is None
                 else f"{lower_bound} lower bound at level {level:g}")
        warnings.warn(
            f"no threshold reaches the target accuracy {target:g} ({basis}; the best is "
            f"{score[best]:.6g} at threshold {r.confidence[starts[best]]:g}, covering "
            f"{accepted[best] / r.n:.0%} of {r.n} predictions); returning threshold inf "
            "(accept nothing)", UndefinedMetricWarning, stacklevel=2)
        return ThresholdResult(math.inf, 0.0, math.nan)
    j = int(hits[0])  # runs ascend: the first feasible run is the lowest threshold
    return ThresholdResult(float(r.confidence[starts[j]]), float(accepted[j] / r.n),
                           float(right[j] / accepted[j]))


def budget_for_residual_error(correct: ArrayLike, confidence: ArrayLike, *,
                              target_error: float = 0.01) -> BudgetResult:
    """The smallest review share after which at most ``target_error`` of outputs are wrong.

    Predictions are reviewed least confident first and a reviewed prediction is corrected,
    so the errors left are those among the predictions not reviewed. The result is the
    smallest share reviewed with errors_left <= target_error · n, n counting every
    prediction (the residual error rate of the whole output after review).

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    target_error : float in [0, 1], default 0.01
        The largest share of the n outputs that may remain wrong; 0 asks for every error
        to be reviewed.

    Returns
    -------
    BudgetResult
        ``(budget, errors_left)``: the share reviewed (0.0 when the errors already are at
        most the target) and the errors not reviewed. Always attainable: reviewing
        everything leaves none.

    See Also
    --------
    threshold_for_accuracy : the confidence threshold for a target accuracy.
    review_count : how many predictions a budget reviews.

    Notes
    -----
    Ties: a run of equal confidences is reviewed whole (module docstring), so the budget
    is (predictions with confidence <= some confidence of the data) / n. The errors
    allowed, target_error · n, become a whole count by the rule of
    :func:`confcal.review_count`: the product is exact and a value within a relative 1e-9
    of a whole number counts as that number, else it is rounded down (0.29 of 100 allows 29
    errors, not 28; the float 1/3 of 300 allows 100). For the error rate among the
    *accepted* predictions instead, use :func:`threshold_for_accuracy` with
    ``target = 1 - target_error``.

    Examples
    --------
    >>> # 10 predictions, 3 errors at 0.1, 0.3 and 0.8; target 10%: at most 1 error left.
    >>> # Reviewing 0.1..0.3 (3 predictions) leaves only the error at 0.8.
    >>> correct = [0, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    >>> confidence = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    >>> budget_for_residual_error(correct, confidence, target_error=0.1)
    BudgetResult(budget=0.3, errors_left=1)
    >>> budget_for_residual_error(correct, confidence, target_error=0.0)  # up to 0.8
    BudgetResult(budget=0.8, errors_left=0)
    """
    r = _prepare(correct, confidence)
    target_error = check_probability(target_error, "target_error", open_low=False,
                                     open_high=False)
    # The shared share-to-count rule (as review_count): the float 1/3 is 0.333...33148, and
    # a plain floor of 1/3 of 300 allowed 99 errors where review_count(1/3, 300) is 100.
    allowed = share_count(target_error, r.n)
    cuts = np.r_[_run_starts(r), r.n]  # review ranks [0, cut): whole runs only
    errors_left = r.n_neg - (cuts - r.pos_before(cuts))
    # errors_left never rises as the review grows, and reaches 0 at cut = n
    j = int(np.argmax(errors_left <= allowed))
    return BudgetResult(float(cuts[j] / r.n), int(errors_left[j]))
