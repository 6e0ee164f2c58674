"""Bootstrap confidence intervals that resample documents, not rows.

The entities of one document share its scan quality, layout and model failure modes, so
they are not independent: resampling rows understates the uncertainty. ``bootstrap_ci``
draws documents with replacement and keeps each document's entities together.

Speed comes from never re-sorting. A resample that draws document d c_d times is the
original data with every entity of d weighted c_d; every metric here is defined so that an
integer weight is exactly the same as that many copies of the row (copies of one row share
its confidence, so they fall in the same tie run). The sort is done once, and each resample
only gathers weights and takes cumulative sums along the fixed order: the intervals are
identical to resampling rows and recomputing, at a fraction of the cost.

The same draws serve paired comparisons: :class:`SystemMetrics` holds one system's sort,
and :func:`paired_resamples` gives every system the same document counts in each resample,
so two systems scored on the same documents are compared on the same resampled documents
(:func:`confcal.report.compare_systems`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import (
    align_pandas,
    check_budget,
    check_calibration_data,
    check_groups,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_seed,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ._estimators import ResidualField, debiased_square_from_bins, signed_sqrt, smooth_ece_value
from ._metrics import (
    BINNINGS,
    ecarb_value,
    ece_from_bins,
    mce_from_bins,
    ranked_auroc,
    ranking_bins,
    weight_unit,
)
from ._ranking import Ranking, dot_no_blas, pack_keys, scale_weights
from ._work import MAX_WORK, check_work

if TYPE_CHECKING:  # pandas loads when an interval table is built, not on import
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["BOOTSTRAP_METRICS", "bootstrap_ci"]

BOOTSTRAP_METRICS = ("auroc", "ece", "mce", "brier", "ecarb", "accuracy", "debiased_ece",
                     "smooth_ece")


def _metric_functions(budget: float, n_bins: int, binning: str, doc_sums: np.ndarray,
                      unit: Fraction | int = 1, ranking: Ranking | None = None
                      ) -> dict[str, Callable[[Ranking, np.ndarray], float]]:
    """metric name -> f(reweighted ranking, per-document draw counts); ``unit`` is the
    weight of one prediction in the ranking's scale (ECARB and the debiased ECE count
    predictions); ``ranking``, the sort every resample reweighs (for the smooth ECE)."""

    def ecarb(r: Ranking, counts: np.ndarray) -> float:
        if r.neg_weight == 0:
            return math.nan
        return ecarb_value(r, budget, "expected", unit=unit)[2]

    def brier(r: Ranking, counts: np.ndarray) -> float:
        # order-free, so per-document sums suffice: O(documents), not O(rows). Pairwise
        # sums (as the array Brier): a running sum drifted ~n ulps on constant data.
        size, sq_error = dot_no_blas(counts, doc_sums[0]), (counts * doc_sums[2]).sum()
        return float(sq_error / size)

    def accuracy(r: Ranking, counts: np.ndarray) -> float:
        return float(dot_no_blas(counts, doc_sums[1]) / dot_no_blas(counts, doc_sums[0]))

    def debiased_ece(r: Ranking, counts: np.ndarray) -> float:
        bins = ranking_bins(r, n_bins, binning)
        return signed_sqrt(debiased_square_from_bins(bins, r.total_weight, unit))

    # the smooth ECE bins the residuals by confidence: those positions are the same in
    # every resample (correct predictions first, then errors, in sorted order)
    field = None
    if ranking is not None:
        pos_gap, neg_gap = 1.0 - ranking.pos_confidence, -ranking.neg_confidence
        field = ResidualField(np.concatenate([ranking.pos_confidence, ranking.neg_confidence]))

    def smooth_ece(r: Ranking, counts: np.ndarray) -> float:
        assert field is not None and r.weights is not None
        residual = np.concatenate([r.weights.pos * pos_gap, r.weights.neg * neg_gap])
        return smooth_ece_value(field.weigh(residual, r.total_weight), None)

    return {
        "debiased_ece": debiased_ece,
        "smooth_ece": smooth_ece,
        "auroc": lambda r, counts: ranked_auroc(r),
        "ece": lambda r, counts: ece_from_bins(ranking_bins(r, n_bins, binning), r.total_weight),
        "mce": lambda r, counts: mce_from_bins(ranking_bins(r, n_bins, binning)),
        "brier": brier,
        "ecarb": ecarb,
        "accuracy": accuracy,
    }


def _check_metrics(metrics: Any) -> tuple[str, ...]:
    if isinstance(metrics, str):
        metrics = (metrics,)
    if not isinstance(metrics, Sequence) or len(metrics) == 0:
        raise ValidationError(
            f"metrics must be a non-empty sequence of names from {BOOTSTRAP_METRICS}; "
            f"found {metrics!r}")
    for i, m in enumerate(metrics):
        check_option(m, f"metrics[{i}]", BOOTSTRAP_METRICS)
    if len(set(metrics)) != len(metrics):
        raise ValidationError(f"metrics must not repeat a name; found {list(metrics)}")
    return tuple(metrics)


def _pairwise_group_sums(codes: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group sums of values, each summed pairwise (np.add.reduceat over a contiguous
    run), not in bincount's running order: 10,000 squared errors of 0.81 in one document
    summed to 8100.000000001738 by bincount, 8100.000000000003 pairwise."""
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    out = np.zeros(n_groups)
    out[sorted_codes[starts]] = np.add.reduceat(values[order], starts)
    return out


def draw_counts(rng: np.random.Generator, n_groups: int) -> np.ndarray:
    """One resample: how many times each of n_groups documents is drawn (G draws with
    replacement, ``rng.integers(0, G, G)``), as float64."""
    draw = rng.integers(0, n_groups, size=n_groups)
    return np.bincount(draw, minlength=n_groups).astype(np.float64)


class _DocumentResampler:
    """One sort, then per-resample weights gathered from per-document draw counts.

    With ``sample_weight`` (scaled once by a power of two, as ``Ranking.from_arrays``
    does), a row of document d weighs ``count_d * w_row`` in a resample: the drawn
    documents carry their rows' weights.
    """

    def __init__(self, correct: np.ndarray, confidence: np.ndarray, codes: np.ndarray,
                 sample_weight: np.ndarray | None = None, n_groups: int | None = None):
        keys = pack_keys(correct, confidence)
        order = np.argsort(keys)  # once; every resample reuses it
        self.ranking = Ranking(keys[order])
        r = self.ranking
        self.doc_pos = codes[order[r.pos_positions]]
        self.doc_neg = codes[order[r.neg_positions]]
        # n_groups: documents drawn, when some hold none of these rows (paired systems)
        self.n_groups = int(codes.max()) + 1 if n_groups is None else n_groups
        self.unit: Fraction | int = 1
        self.w_pos = self.w_neg = None
        w = None
        if sample_weight is not None:
            w = scale_weights(sample_weight)
            self.unit = weight_unit(sample_weight)
            self.w_pos, self.w_neg = w[order[r.pos_positions]], w[order[r.neg_positions]]
        d = confidence - correct
        # per document (rows, or their weights): predictions, correct ones, squared errors
        self.doc_sums = np.vstack([
            np.bincount(codes, weights=w, minlength=self.n_groups),
            np.bincount(codes, weights=correct if w is None else correct * w,
                        minlength=self.n_groups),
            _pairwise_group_sums(codes, d * d if w is None else d * d * w, self.n_groups),
        ]).astype(np.float64)
        # warm the weight-independent caches the kernels share
        _ = (r.mixed_runs, r.neg_before_pos, r.pos_confidence, r.neg_confidence)

    def draw_counts(self, rng: np.random.Generator) -> np.ndarray:
        """How many times each document is drawn (documents drawn with replacement)."""
        return draw_counts(rng, self.n_groups)

    def reweighted(self, counts: np.ndarray) -> Ranking:
        pos, neg = counts[self.doc_pos], counts[self.doc_neg]
        if self.w_pos is not None and self.w_neg is not None:
            pos, neg = pos * self.w_pos, neg * self.w_neg
        return self.ranking.with_weights(pos, neg)


def _distribution(correct: np.ndarray, confidence: np.ndarray, codes: np.ndarray,
                  metrics: tuple[str, ...], *, budget: float, n_bins: int, binning: str,
                  n_resamples: int, seed: int | None, sample_weight: np.ndarray | None = None
                  ) -> tuple[dict[str, float], np.ndarray]:
    """Point estimates and an (n_resamples, n_metrics) array of resampled values."""
    resampler = _DocumentResampler(correct, confidence, codes, sample_weight)
    fns = _metric_functions(budget, n_bins, binning, resampler.doc_sums, resampler.unit,
                            resampler.ranking)
    ones = np.ones(resampler.n_groups)
    unit = resampler.reweighted(ones)
    rng = np.random.default_rng(seed)
    values = np.empty((n_resamples, len(metrics)))
    with warnings.catch_warnings():
        # a resample may hold one class only: that value is NaN and counted, not warned;
        # the caller warns once for an estimate that is undefined on the full data
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        estimates = {m: fns[m](unit, ones) for m in metrics}
        for i in range(n_resamples):
            counts = resampler.draw_counts(rng)
            r = resampler.reweighted(counts)
            values[i] = [fns[m](r, counts) for m in metrics]
    return estimates, values


# ------------------------------------------------------------- paired resamples
# Shared with confcal.report's compare_systems: several systems scored on the same
# documents, every resample drawing the same documents (the same counts) for all of them.
class SystemMetrics:
    """The calibration metrics of one system as a function of per-document draw counts.

    ``codes`` number the documents shared by every system compared (0..n_groups-1); the
    rows are sorted once and each call reweighs them (:class:`_DocumentResampler`), so
    ``system(counts)`` is the system's metrics on the resample that draws document d
    ``counts[d]`` times. ``metrics`` are names of :data:`BOOTSTRAP_METRICS`; ``"ecarb"``
    stands for one value per budget. :attr:`names` labels the values (``ecarb@0.3``).
    With no rows every value is NaN.
    """

    def __init__(self, correct: np.ndarray, confidence: np.ndarray, codes: np.ndarray,
                 n_groups: int, metrics: Sequence[str], *, budgets: Sequence[float],
                 n_bins: int, binning: str, sample_weight: np.ndarray | None = None):
        self.names = tuple(name for m in metrics
                           for name in ([f"ecarb@{b:g}" for b in budgets] if m == "ecarb"
                                        else [m]))
        self._calls: list[Callable[[Ranking, np.ndarray], float]] = []
        self._resampler: _DocumentResampler | None = None
        if correct.shape[0] == 0:
            return
        resampler = _DocumentResampler(correct, confidence, codes, sample_weight, n_groups)
        self._resampler = resampler
        fns = _metric_functions(budgets[0], n_bins, binning, resampler.doc_sums,
                                resampler.unit, resampler.ranking)
        for m in metrics:
            if m != "ecarb":
                self._calls.append(fns[m])
                continue
            for b in budgets:
                self._calls.append(_metric_functions(b, n_bins, binning, resampler.doc_sums,
                                                     resampler.unit)["ecarb"])

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        if self._resampler is None:
            return np.full(len(self.names), math.nan)
        r = self._resampler.reweighted(counts)
        return np.array([f(r, counts) for f in self._calls], dtype=np.float64)


def paired_resamples(functions: Sequence[Callable[[np.ndarray], np.ndarray]], n_groups: int,
                     *, n_resamples: int, seed: int | None
                     ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Estimates and resampled values of several functions of the same document draws.

    Each function maps per-document draw counts (length ``n_groups``) to a vector of
    metrics; every resample draws the counts once (:func:`draw_counts`, the draws of
    :func:`bootstrap_ci` for the same seed) and gives them to every function, so the
    systems they stand for are compared on the very same documents. Returns, per
    function, its values at unit counts (the estimates) and an (n_resamples, k) array.
    Values undefined in a resample (one class) are NaN, without a warning.
    """
    ones = np.ones(n_groups)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        estimates = [np.asarray(f(ones), dtype=np.float64) for f in functions]
        values = [np.empty((n_resamples, e.shape[0])) for e in estimates]
        for i in range(n_resamples):
            counts = draw_counts(rng, n_groups)
            for f, out in zip(functions, values, strict=True):
                out[i] = f(counts)
    return estimates, values


def bootstrap_ci(correct: ArrayLike, confidence: ArrayLike, *, groups: ArrayLike | None = None,
                 metrics: Sequence[str] = ("auroc", "ece", "brier", "ecarb"),
                 budget: float = 0.3, n_bins: int = 5, binning: str = "quantile",
                 n_resamples: int = 1000, confidence_level: float = 0.95,
                 seed: int | None = 0, sample_weight: ArrayLike | None = None,
                 max_work: float = MAX_WORK) -> pd.DataFrame:
    """Percentile bootstrap intervals for calibration metrics, resampling documents.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    groups : array-like, shape (n,), optional
        The document id of each prediction (any hashable values). Whole documents are drawn
        with replacement. Default: every prediction is its own group (a row bootstrap).
    metrics : sequence of str
        Any of ``"auroc", "ece", "mce", "brier", "ecarb", "accuracy", "debiased_ece",
        "smooth_ece"`` (:func:`confcal.debiased_ece` on the ECE's bins, as its signed
        square root; :func:`confcal.smooth_ece` with its automatic bandwidth, chosen anew
        in every resample).
    budget : float, default 0.3
        ECARB's review budget (ties="expected").
    n_bins, binning : ECE/MCE bins, as in :func:`confcal.ece`.
    n_resamples : int, default 1000
    confidence_level : float in (0, 1), default 0.95
    seed : int or None, default 0
        Seeds ``numpy.random.default_rng``; the same seed gives the same intervals.
    sample_weight : array-like of float >= 0, shape (n,), optional
        Row weights, with the meaning they have in each metric (:func:`confcal.ecarb`:
        frequency weights). Documents are drawn as without weights, and every row of a
        drawn document keeps its weight: a document drawn c times weighs c·w per row.
    max_work : float, default MAX_WORK (2e10, about four minutes)
        The most work to take on (:data:`confcal.report.MAX_WORK` gives the formula: rows
        times resamples, plus each resample's bins and ECARB budget); a request beyond it
        (``n_resamples=10**9``) is a ValidationError before anything is computed.

    Returns
    -------
    DataFrame
        Columns ``metric, estimate, low, high, n_valid, widened`` (ECARB's row is named
        with its budget, ``ecarb@0.3``, as in every table): the metric on the full
        data; the (1-level)/2 and (1+level)/2 percentiles of its bootstrap distribution;
        the number of resamples where it was defined (a resample can hold one class only;
        such resamples are left out of that metric's percentiles, never counted as 0 or 1);
        and whether the interval was widened to contain the estimate (see Notes).

    See Also
    --------
    compare_systems : paired resamples for a difference between systems.
    calibration_test : a test of calibration instead of an interval.
    debiased_ece : an ECE whose interval can reach zero.

    Notes
    -----
    A resample is the original data with every prediction of document d weighted by the
    number of times d was drawn. Each metric treats an integer weight exactly as that many
    copies of the row, so the result is identical to copying rows and recomputing, while the
    data is sorted once. Cost per resample: a few passes over the n predictions.

    The interval always contains the estimate. Percentile intervals of a statistic that is
    biased in resamples can miss it: ECE and MCE only gain from sampling noise, so on small
    data every resample's ECE may exceed the estimate. Such an interval is widened to the
    estimate (never narrowed) and ``widened`` is True, so the case is visible, not hidden.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> conf = rng.uniform(size=400)
    >>> correct = rng.uniform(size=400) < conf
    >>> docs = np.repeat(np.arange(40), 10)
    >>> ci = bootstrap_ci(correct, conf, groups=docs, n_resamples=200, seed=7)
    >>> list(ci.columns)
    ['metric', 'estimate', 'low', 'high', 'n_valid', 'widened']
    >>> bool(((ci.low <= ci.estimate) & (ci.estimate <= ci.high)).all())
    True
    """
    correct, confidence, sample_weight, groups = align_pandas(
        correct=correct, confidence=confidence, sample_weight=sample_weight, groups=groups)
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    codes = check_groups(groups, y.shape[0])
    metrics = _check_metrics(metrics)
    budget = check_budget(budget)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 1)
    level = check_probability(confidence_level, "confidence_level")
    seed = check_seed(seed)
    check_work(y.shape[0], 1, n_resamples=n_resamples, n_bins=n_bins,
               n_budgets=int("ecarb" in metrics), max_work=max_work)

    estimates, values = _distribution(y, c, codes, metrics, budget=budget, n_bins=n_bins,
                                      binning=binning, n_resamples=n_resamples, seed=seed,
                                      sample_weight=w)
    for m, est in estimates.items():
        if math.isnan(est):
            warnings.warn(f"{m} is undefined on the full data; its interval is NaN",
                          UndefinedMetricWarning, stacklevel=2)
    alpha = (1.0 - level) / 2.0
    rows = []
    for j, m in enumerate(metrics):
        col = values[:, j]
        valid = col[~np.isnan(col)]
        est = float(estimates[m])
        widened = False
        if valid.size == 0 or math.isnan(est):
            low = high = math.nan
        else:
            low, high = (float(v) for v in np.quantile(valid, [alpha, 1.0 - alpha]))
            # A statistic biased in resamples (ECE, MCE: sampling noise only adds gap) can
            # put the whole percentile interval on one side of the estimate. The interval
            # is then widened to reach it -- never narrowed -- and the row says so.
            widened = not (low <= est <= high)
            low, high = min(low, est), max(high, est)
        # ECARB's row names its budget, as every table does (ecarb@0.3)
        name = f"ecarb@{budget:g}" if m == "ecarb" else m
        rows.append((name, est, low, high, int(valid.size), widened))
    import pandas as pd

    return pd.DataFrame(rows, columns=["metric", "estimate", "low", "high", "n_valid",
                                       "widened"])
