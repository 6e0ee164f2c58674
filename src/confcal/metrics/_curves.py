"""Curves over every confidence threshold: risk–coverage (and AURC), ROC and precision–recall.

Each is read from the one sort of :mod:`confcal.metrics._ranking`, as runs of equal
confidence taken from the most confident down: a threshold accepts the whole run, so the
points at the thresholds never depend on row order. Between two thresholds (inside a run
of ties) the risk–coverage curve and AURC take the expectation over every order of the
tied predictions.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .._counts import whole_floor_array
from .._validation import check_calibration_data
from ._estimators import units_of
from ._metrics import undefined_metric, weight_unit
from ._ranking import Ranking

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["aurc", "pr_curve_points", "risk_coverage_curve", "roc_curve_points"]


def confidence_runs(r: Ranking) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(confidence, weight, correct weight) of each run of equal confidence, most confident
    first; weights in the Ranking's scale (counts without weights). A run of zero-weight
    rows holds no prediction and is left out (as scikit-learn's curves leave it out)."""
    c = r.confidence
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    if r.weights is None:
        bounds = np.r_[starts, r.n]
        weight = np.diff(bounds).astype(np.float64)
        correct = np.diff(r.pos_before(bounds)).astype(np.float64)
    else:
        w = np.empty(r.n)
        w[r.pos_positions] = r.weights.pos
        w[r.neg_positions] = r.weights.neg
        # summed per run, not as differences of prefix sums (no cancellation)
        weight = np.add.reduceat(w, starts)
        correct = np.add.reduceat(np.where(r.is_pos, w, 0.0), starts)
        keep = weight > 0
        starts, weight, correct = starts[keep], weight[keep], correct[keep]
    return c[starts][::-1], weight[::-1], correct[::-1]


# ---------------------------------------------------------------------------------------
# risk–coverage and AURC
# ---------------------------------------------------------------------------------------
def _units(w: np.ndarray | None, weight: np.ndarray, errors: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Run weights and error weights in predictions (the user's weight units)."""
    if w is None:
        return weight, errors
    unit: Fraction = weight_unit(w)
    return units_of(weight, unit), units_of(errors, unit)


_DIRECT = 32  # runs covering at most this many whole units are summed term by term


def unit_risk_sum(weight: np.ndarray, errors: np.ndarray) -> float:
    """Σ_k E(k)/k over the units k = 1, 2, ..., ⌊W⌋, plus (W − ⌊W⌋)·E(W)/W.

    Runs (most confident first) of ``weight`` predictions, ``errors`` of them wrong, are
    covered in turn; inside a run the expected number of errors grows linearly with the
    share of the run covered (the mean over every order of its predictions), so after
    covering k predictions E(k) = F + ρ·(k − C), F and C the errors and weight before the
    run, ρ its error rate. A run of m whole units contributes ρ·m + (F − ρC)·Σ 1/k: summed
    term by term for short runs, by the digamma function for long ones.
    """
    end = np.cumsum(weight)
    start = end - weight
    before = np.cumsum(errors) - errors
    total = float(end[-1]) if end.size else 0.0
    keep = weight > 0
    start, end, before = start[keep], end[keep], before[keep]
    rho = errors[keep] / weight[keep]
    # whole units k with start < k <= end (a near-whole sum of float weights is whole)
    k_lo = whole_floor_array(start) + 1
    k_hi = whole_floor_array(end)
    count = np.maximum(k_hi - k_lo + 1, 0)
    offset = before - rho * start  # E(k) = offset + rho * k inside the run
    parts = [float((rho * count).sum())]
    short = (count > 0) & (count <= _DIRECT)
    if short.any():
        m = count[short]
        first = np.repeat(k_lo[short], m)
        steps = np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)
        parts.append(float((np.repeat(offset[short], m) / (first + steps)).sum()))
    long = count > _DIRECT
    if long.any():
        from scipy.special import digamma

        harmonic = digamma(k_hi[long] + 1.0) - digamma(k_lo[long].astype(np.float64))
        parts.append(float((offset[long] * harmonic).sum()))
    whole = int(whole_floor_array(np.array([total]))[0])
    if total > whole:  # the last, partial unit
        parts.append((total - whole) * float(errors.sum()) / total)
    return math.fsum(parts)


def risk_coverage_curve(correct: ArrayLike, confidence: ArrayLike, *,
                        sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """Selective risk against coverage: the error rate among the predictions accepted.

    Accept every prediction whose confidence is at least a threshold; the coverage is the
    share accepted and the risk the share of errors among them (Geifman & El-Yaniv, 2017).

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w counts as w predictions.

    Returns
    -------
    DataFrame
        One row per distinct confidence (of rows with positive weight), from the most
        confident down: ``threshold``,
        ``covered`` (predictions with confidence >= threshold; their weight with
        ``sample_weight``), ``errors`` (the errors among them), ``coverage`` =
        covered / n and ``risk`` = errors / covered.

    Notes
    -----
    Each threshold accepts a whole run of tied confidences, so the rows never depend on
    row order. Between two rows the curve is the expectation over every order of the
    tied predictions: covering a share s of a run of m predictions holding e errors adds
    s·e errors in expectation, so at coverage (covered + s·m)/n the risk is
    (errors + s·e)/(covered + s·m). :func:`aurc` integrates exactly that.

    References
    ----------
    Y. Geifman and R. El-Yaniv, "Selective Classification for Deep Neural Networks",
    NeurIPS 2017.

    See Also
    --------
    aurc : the area under this curve, and its excess over the best ranking.
    ecarb : the same ranking read from the other end (the least confident reviewed).

    Examples
    --------
    >>> # 0.9 accepted alone: 0 errors of 1; with the two at 0.6: 1 error of 3; all: 2 of 4
    >>> risk_coverage_curve([1, 0, 1, 0], [0.9, 0.6, 0.6, 0.2])
       threshold  covered  errors  coverage      risk
    0        0.9      1.0     0.0      0.25  0.000000
    1        0.6      3.0     1.0      0.75  0.333333
    2        0.2      4.0     2.0      1.00  0.500000
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    r = Ranking.from_arrays(y, c, w)
    threshold, weight, right = confidence_runs(r)
    weight, errors = _units(w, weight, weight - right)
    covered, caught = np.cumsum(weight), np.cumsum(errors)
    import pandas as pd

    return pd.DataFrame({"threshold": threshold, "covered": covered, "errors": caught,
                         "coverage": covered / covered[-1], "risk": caught / covered})


def aurc(correct: ArrayLike, confidence: ArrayLike, *, excess: bool = False,
         sample_weight: ArrayLike | None = None) -> float:
    """Area under the risk–coverage curve (AURC), or its excess over the best ranking.

    AURC = (1/n) Σ_{k=1..n} E_k / k, where E_k is the number of errors among the k most
    confident predictions: the mean selective risk over the n coverages k/n. Lower is
    better; a ranking carries information when AURC is below the error rate.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    excess : bool, default False
        Return E-AURC = AURC − AURC*, where AURC* is the AURC of the best ranking of the
        same outcomes (every correct prediction more confident than every error): what the
        ranking loses, with the error rate's own share taken out.
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights (see Notes).

    Returns
    -------
    float in [0, 1]

    Notes
    -----
    *Ties* are resolved as the expectation over every order of the tied predictions:
    inside a run of m tied predictions holding e errors, E_k grows by e/m per prediction
    covered. So the result never depends on row order.

    *Weights* are frequency weights, as in :func:`ecarb`: a row of weight w is w
    predictions, n becomes the total weight W, and the sum runs over the whole units
    k = 1, ..., ⌊W⌋, with E_k taken along the sorted rows (a row is covered in part when k
    falls inside it), plus a last term (W − ⌊W⌋)·E_W/W when W is not whole. Integer
    weights thus give exactly the AURC of the repeated rows, and unit weights that of no
    weights. Like ECARB, and unlike ECE, AURC is **not** invariant to scaling every weight:
    k counts predictions.

    References
    ----------
    Y. Geifman and R. El-Yaniv, "Selective Classification for Deep Neural Networks",
    NeurIPS 2017; Y. Geifman, G. Uziel and R. El-Yaniv, "Bias-Reduced Uncertainty
    Estimation for Deep Neural Classifiers", ICLR 2019 (E-AURC).

    See Also
    --------
    risk_coverage_curve : the curve itself.
    auroc : the ranking's quality, without the coverage weighting.

    Examples
    --------
    >>> # most confident first: right, wrong, right, wrong; risks 0/1, 1/2, 1/3, 2/4
    >>> # AURC = (0 + 1/2 + 1/3 + 1/2) / 4 = 1/3
    >>> round(aurc([1, 0, 1, 0], [0.9, 0.7, 0.6, 0.2]), 12)
    0.333333333333
    >>> # the best order (right, right, wrong, wrong): (0 + 0 + 1/3 + 1/2) / 4 = 5/24,
    >>> # so E-AURC = 1/3 - 5/24 = 1/8
    >>> round(aurc([1, 0, 1, 0], [0.9, 0.7, 0.6, 0.2], excess=True), 12)
    0.125
    >>> # a tie at 0.6 (one right, one wrong): E_2 = 1/2 in expectation, E_3 = 1
    >>> # (0 + 1/4 + 1/3 + 2/4) / 4 = 13/48
    >>> round(aurc([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.2]), 12)
    0.270833333333
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    r = Ranking.from_arrays(y, c, w)
    _, weight, right = confidence_runs(r)
    weight, errors = _units(w, weight, weight - right)
    total = float(weight.sum())
    value = unit_risk_sum(weight, errors) / total
    if excess:
        e_total = float(errors.sum())
        best = unit_risk_sum(np.array([total - e_total, e_total]), np.array([0.0, e_total]))
        value -= best / total
    return float(value)


# ---------------------------------------------------------------------------------------
# ROC and precision–recall
# ---------------------------------------------------------------------------------------
def _cumulative(correct: ArrayLike, confidence: ArrayLike, sample_weight: ArrayLike | None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """thresholds (with +inf first), true and false positives accepted at each."""
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    threshold, weight, right = confidence_runs(Ranking.from_arrays(y, c, w))
    tps = np.r_[0.0, np.cumsum(right)]
    fps = np.r_[0.0, np.cumsum(weight - right)]
    return np.r_[np.inf, threshold], tps, fps


def roc_curve_points(correct: ArrayLike, confidence: ArrayLike, *,
                     sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """The ROC curve of confidence as a detector of correct predictions, at every threshold.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
        1 (the positive class) where the extraction is right.
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional

    Returns
    -------
    DataFrame
        ``threshold, fpr, tpr``: one row per distinct confidence (of rows with positive
        weight) from the highest down,
        after a first row at threshold +inf (nothing accepted: 0, 0). fpr is the share of
        the errors and tpr of the correct predictions with confidence >= threshold.
        One class only: the undefined rate is NaN, with an :class:`UndefinedMetricWarning`.

    Notes
    -----
    The points of ``sklearn.metrics.roc_curve(correct, confidence,
    drop_intermediate=False)``, from the one sort the other metrics share; the trapezoid
    area under them is :func:`auroc`.

    See Also
    --------
    auroc : the area under this curve.
    pr_curve_points : precision and recall at the same thresholds.

    Examples
    --------
    >>> roc_curve_points([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3])
       threshold  fpr  tpr
    0        inf  0.0  0.0
    1        0.9  0.0  0.5
    2        0.6  0.5  1.0
    3        0.3  1.0  1.0
    """
    threshold, tps, fps = _cumulative(correct, confidence, sample_weight)
    if fps[-1] == 0 or tps[-1] == 0:
        missing = "errors" if fps[-1] == 0 else "correct predictions"
        undefined_metric("roc_curve_points", f"there are no {missing} (one class only), "
                         f"so the {'fpr' if fps[-1] == 0 else 'tpr'} is NaN")
    with np.errstate(invalid="ignore", divide="ignore"):
        fpr, tpr = fps / fps[-1], tps / tps[-1]
    import pandas as pd

    return pd.DataFrame({"threshold": threshold, "fpr": fpr, "tpr": tpr})


def pr_curve_points(correct: ArrayLike, confidence: ArrayLike, *,
                    sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """Precision and recall of accepting the predictions above each confidence threshold.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
        1 (the positive class) where the extraction is right.
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional

    Returns
    -------
    DataFrame
        ``threshold, precision, recall``, in the rows of :func:`roc_curve_points`: a first
        row at +inf (nothing accepted: precision 1, recall 0, by convention), then one row
        per distinct confidence from the highest down. precision is the accuracy of the
        predictions with confidence >= threshold, recall the share of the correct
        predictions they hold. No correct prediction: recall is NaN, with an
        :class:`UndefinedMetricWarning`.

    Notes
    -----
    The points of ``sklearn.metrics.precision_recall_curve(correct, confidence,
    drop_intermediate=False)``, which lists them in the opposite order (thresholds
    increasing, the +inf row last and without a threshold). Rows of zero weight add no
    threshold, as there.

    See Also
    --------
    roc_curve_points : true and false positive rates at the same thresholds.
    risk_coverage_curve : 1 − precision against the share accepted.

    Examples
    --------
    >>> pr_curve_points([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3])
       threshold  precision  recall
    0        inf   1.000000     0.0
    1        0.9   1.000000     0.5
    2        0.6   0.666667     1.0
    3        0.3   0.500000     1.0
    """
    threshold, tps, fps = _cumulative(correct, confidence, sample_weight)
    if tps[-1] == 0:
        undefined_metric("pr_curve_points", "there are no correct predictions, so the "
                         "recall is NaN")
    accepted = tps + fps  # zero only in the +inf row: nothing accepted, precision 1
    precision = np.divide(tps, accepted, out=np.ones_like(tps), where=accepted != 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = tps / tps[-1]
    import pandas as pd

    return pd.DataFrame({"threshold": threshold, "precision": precision, "recall": recall})
