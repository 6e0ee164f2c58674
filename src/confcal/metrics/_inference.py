"""Inference on calibration: is a model calibrated, and does one score rank better than another?

The metrics of :mod:`confcal.metrics._metrics` are estimates; the questions people publish
answers to are tests. Two live here:

- :func:`calibration_test` -- consistency resampling (Bröcker & Smith 2007): take the
  confidences as the true probabilities, redraw the outcomes, and see how often a
  calibrated model would show a calibration error as large as the one observed. With
  document ids, the redraws keep the errors of one document together (a document-level
  random effect whose variance is estimated from the data; see the function's Notes).
- :func:`delong_test` -- DeLong, DeLong & Clarke-Pearson (1988) for two AUROCs of the same
  predictions (verbalized confidence against log-probabilities on one extraction), with
  the midrank algorithm of Sun & Xu (2014).

Both sort once and vectorise the rest: 1,000 redraws of 2,000 predictions take a few
hundredths of a second.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import (
    check_calibration_data,
    check_confidence,
    check_consistent_length,
    check_correct,
    check_groups,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_sample_weight,
    check_seed,
    first_bad,
)
from .._version import __version__
from ..exceptions import UndefinedMetricWarning, ValidationError
from ._metrics import BINNINGS, bins_frame, ece_from_bins, mce_from_bins, ranking_bins
from ._ranking import Ranking, pack_keys, scale_weights

if TYPE_CHECKING:  # pandas loads when a table is built, not on import
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["CALIBRATION_STATISTICS", "CalibrationTest", "DeLongTest", "calibration_test",
           "delong_test"]

CALIBRATION_STATISTICS = ("ece", "mce")
"""The statistics :func:`calibration_test` can test with (on the bins of :func:`confcal.ece`)."""

_MAX_GROUP_SD = 5.0  # logit scale: beyond it a document's entities are all right or all wrong
_QUADRATURE_NODES = 96  # Gauss-Hermite: E[expit(a + sd*Z)] to 2e-5 relative for sd <= 5
_BLOCK_CELLS = 1 << 22  # redraws x rows held at once (32 MiB of float64)
_TIE_TOLERANCE = 1e-12  # a redrawn statistic within this relative distance counts as a tie


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class CalibrationTest:
    """The result of :func:`calibration_test`.

    Attributes
    ----------
    statistic : float
        The observed statistic (``statistic_name``: the ECE or MCE of the bins, equal to
        :func:`confcal.ece` / :func:`confcal.mce` with the same options).
    p_value : float
        (1 + #{redrawn statistic >= observed}) / (1 + n_resamples): the Monte Carlo
        p-value of the null "the confidences are the probabilities of being right".
    n_resamples : int
    seed : int or None
    bands : pandas.DataFrame
        One row per non-empty bin: ``bin, lower, upper, count`` (as in
        :func:`confcal.reliability_bins`; ``weight`` follows ``count`` with weights),
        ``mean_confidence``, ``accuracy``, and ``band_low``, ``band_high``: the
        (1-level)/2 and (1+level)/2 quantiles of the bin's accuracy over the redraws. An
        accuracy outside its band is one a calibrated model would rarely show.
    statistic_name : {"ece", "mce"}
    n_bins, binning : the bins (as in :func:`confcal.ece`).
    confidence_level : float
        The level of the bands.
    null : {"independent", "grouped"}
        How outcomes were redrawn: independently, or with a document effect (``groups``).
    group_sd : float or None
        With ``groups``: the estimated standard deviation of the document effect on the
        logit scale (0 when the data show no more agreement within documents than
        independent outcomes would); None without.
    n_groups : int or None
        The number of documents, with ``groups``.

    See Also
    --------
    calibration_test : builds it.
    """

    statistic: float
    p_value: float
    n_resamples: int
    seed: int | None
    bands: pd.DataFrame = field(repr=False, compare=False)
    statistic_name: str = "ece"
    n_bins: int = 5
    binning: str = "quantile"
    confidence_level: float = 0.95
    null: str = "independent"
    group_sd: float | None = None
    n_groups: int | None = None

    @property
    def signature(self) -> str:
        """The settings behind the p-value: version, statistic and bins, null, redraws, seed
        (``confcal:0.1.0|test:consistency-ece-quantile-5|null:grouped|resamples:1000|seed:0``)."""
        return (f"confcal:{__version__}|test:consistency-{self.statistic_name}-"
                f"{self.binning}-{self.n_bins}|null:{self.null}|resamples:{self.n_resamples}"
                f"|seed:{self.seed}")


@dataclass(frozen=True)
class DeLongTest:
    """The result of :func:`delong_test`.

    Attributes
    ----------
    auroc_a, auroc_b : float
        The AUROC of each score (equal to :func:`confcal.auroc`).
    difference : float
        ``auroc_a - auroc_b``.
    standard_error : float
        DeLong's standard error of the difference.
    z : float
        ``difference / standard_error``.
    p_value : float
        Two-sided, from the standard normal: ``erfc(|z| / sqrt(2))``.

    See Also
    --------
    delong_test : builds it.
    """

    auroc_a: float
    auroc_b: float
    difference: float
    standard_error: float
    z: float
    p_value: float


# --------------------------------------------------------------------- shared helpers
def _canonical_order(y: np.ndarray, c: np.ndarray, w: np.ndarray,
                     codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """A row order that depends on the rows' contents only, never on how they came in.

    Rows go by (confidence, weight, label); with documents, documents first, each placed
    by its contents (the bytes of its sorted rows), so two identical documents are
    interchangeable. Redraws are assigned in this order, so permuting the rows changes no
    draw and no result. Returns the order and, with documents, their codes renumbered in
    that order.
    """
    if codes is None:
        return np.lexsort((y, w, c)), None
    by_doc = np.lexsort((y, w, c, codes))
    sorted_codes = codes[by_doc]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    stops = np.r_[starts[1:], by_doc.shape[0]]
    content = np.column_stack([c[by_doc], w[by_doc], y[by_doc].astype(np.float64)])
    keys = [content[a:b].tobytes() for a, b in zip(starts, stops, strict=True)]
    rank = np.empty(int(codes.max()) + 1, dtype=np.int64)
    rank[sorted_codes[starts[sorted(range(len(keys)), key=keys.__getitem__)]]] = np.arange(
        len(keys))
    new_codes = rank[codes]
    return np.lexsort((y, w, c, new_codes)), new_codes


def _row_bins(y: np.ndarray, c: np.ndarray, w: np.ndarray | None, n_bins: int,
              binning: str) -> tuple[Any, np.ndarray, Ranking]:
    """The bins of :func:`confcal.ece` and each row's bin (-1: a bin dropped as weightless)."""
    keys = pack_keys(y, c)
    order = np.argsort(keys, kind="stable")
    r = Ranking(keys[order], order=order)
    if w is not None:
        ws = scale_weights(w[order])
        r = r.with_weights(ws[r.pos_positions], ws[r.neg_positions])
    bins = ranking_bins(r, n_bins, binning)
    in_sorted = np.full(y.shape[0], -1, dtype=np.int64)
    for k, (a, b) in enumerate(zip(bins.start, bins.stop, strict=True)):
        in_sorted[a:b] = k
    row_bin = np.empty_like(in_sorted)
    row_bin[order] = in_sorted
    return bins, row_bin, r


def _check_count_weights(sample_weight: Any, n: int) -> np.ndarray:
    """Frequency weights for a test that redraws outcomes: whole numbers >= 0."""
    w = check_sample_weight(sample_weight, n)
    whole = w == np.floor(w)
    if not whole.all():
        raise ValidationError(
            "sample_weight must be whole numbers (how many predictions a row stands for: "
            f"the test redraws that many outcomes); {first_bad(~whole, w)}")
    if w.max() > 2.0**53:
        raise ValidationError(f"sample_weight must be at most 2**53 (counts are summed "
                              f"exactly); found {float(w.max())!r}")
    return w


# ------------------------------------------------------------- the document effect
def _normal_quadrature() -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights for E[f(Z)], Z standard normal."""
    from numpy.polynomial.hermite_e import hermegauss

    nodes, weights = hermegauss(_QUADRATURE_NODES)
    return nodes, weights / math.sqrt(2.0 * math.pi)


def _offsets(c: np.ndarray, sd: float, nodes: np.ndarray, log_weights: np.ndarray
             ) -> np.ndarray:
    """a(c) with E[expit(a + sd·Z)] = c, Z standard normal: the logit-scale intercept that
    keeps a row calibrated on average over documents once the document effect is added.

    Solved for c <= 1/2 as log E[expit(a + sd·Z)] = log c by Newton's method, which
    converges from below: the left side is concave in a (the Gaussian average of a
    log-concave function is log-concave), so every Newton step lands at or below the
    root. For c > 1/2, a(c) = -a(1 - c) (expit(-x) = 1 - expit(x), symmetric nodes).
    c = 0 and c = 1 give -inf and +inf: such a row is always wrong (right).
    """
    from scipy.special import expit, logit

    weights = np.exp(log_weights)
    out = np.empty_like(c)
    low = np.minimum(c, 1.0 - c)
    sign = np.where(c > 0.5, -1.0, 1.0)
    out[low <= 0] = -np.inf
    todo = np.flatnonzero(low > 0)
    # the probit approximation E[expit(a + sd Z)] ~ expit(a / sqrt(1 + pi sd^2 / 8))
    a = logit(low[todo]) * math.sqrt(1.0 + math.pi * sd * sd / 8.0)
    target = np.log(low[todo])
    for _ in range(100):
        z = a[:, None] + sd * nodes[None, :]
        # Below 1e-200 the mean of the expits could underflow: those rows in logs
        tiny = low[todo] < 1e-200
        p = expit(z)
        mean = p @ weights
        slope = (p * (1.0 - p)) @ weights / np.where(tiny, 1.0, mean)  # d log E / da
        value = np.log(np.where(tiny, 1.0, mean))
        if tiny.any():
            from scipy.special import log_expit, logsumexp

            terms = log_weights[None, :] + log_expit(z[tiny])
            value[tiny] = logsumexp(terms, axis=1)
            share = np.exp(terms - value[tiny][:, None])
            slope[tiny] = (share * expit(-z[tiny])).sum(axis=1)
        step = (target - value) / slope
        a = a + step
        done = np.abs(step) <= 1e-12 * np.maximum(1.0, np.abs(a))
        out[todo[done]] = a[done]
        todo, a, target = todo[~done], a[~done], target[~done]
        if todo.size == 0:
            break
    out[todo] = a  # (never reached in practice: a few steps converge to 1e-12)
    return sign * out


class _DocumentEffect:
    """The moment estimate of the document effect's standard deviation.

    The null model (see :func:`calibration_test`, Notes): given document d's effect
    U_d ~ N(0, 1), row i is right with probability p_i(U) = expit(a_i + s·U_d), a_i chosen
    so that E[p_i(U)] = c_i. The moment: the bin-centred residuals r~ = (y - c) - (mean
    of y - c in the bin) multiplied pairwise within documents,
    T = Σ_d [(Σ_{i in d} w_i r~_i)^2 - Σ_{i in d} w_i r~_i^2], against its expectation
    under the model, E_s[T], computed exactly (up to quadrature) below.

    Every row of weight w is w predictions with its outcome (frequency weights), so the
    sums are weighted and a row's copies count as pairs of one document.
    """

    def __init__(self, y: np.ndarray, c: np.ndarray, w: np.ndarray, codes: np.ndarray,
                 bins: np.ndarray, n_groups: int, n_bins: int) -> None:
        self.c, self.w, self.codes, self.bins = c, w, codes, bins
        self.n_groups, self.n_bins = n_groups, n_bins
        self.nodes, weights = _normal_quadrature()
        self.omega = weights
        self.log_omega = np.log(weights)
        self.unique_c, self.inverse = np.unique(c, return_inverse=True)
        cells = codes * n_bins + bins
        self.cell_order = np.argsort(cells, kind="stable")
        sorted_cells = cells[self.cell_order]
        self.cell_starts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
        self.cell_ids = sorted_cells[self.cell_starts]
        size = n_groups * n_bins
        self.n_db = np.bincount(cells, weights=w, minlength=size).reshape(n_groups, n_bins)
        self.n_b = self.n_db.sum(axis=0)
        self.a_db = self.n_db / self.n_b  # a document's share of each bin
        self.h_mat = self.a_db.T @ self.a_db  # Σ_d a_d a_dᵀ
        # the observed moment
        r = y.astype(np.float64) - c
        mean = np.bincount(bins, weights=w * r, minlength=n_bins) / self.n_b
        centred = r - mean[bins]
        doc_sums = np.bincount(codes, weights=w * centred, minlength=n_groups)
        self.observed = float((doc_sums**2).sum() - (w * centred * centred).sum())
        # without two predictions in one document the moment says nothing about the effect
        self.identified = bool((np.bincount(codes, weights=w, minlength=n_groups) > 1).any())

    def _cell_sums(self, values: np.ndarray) -> np.ndarray:
        """Σ over each (document, bin) cell of the rows of ``values`` (n, K)."""
        out = np.zeros((self.n_groups * self.n_bins, values.shape[1]))
        out[self.cell_ids] = np.add.reduceat(values[self.cell_order], self.cell_starts, axis=0)
        return out.reshape(self.n_groups, self.n_bins, values.shape[1])

    def offsets(self, sd: float) -> np.ndarray:
        """a_i: each row's logit-scale intercept under the model with sd s."""
        return _offsets(self.unique_c, sd, self.nodes, self.log_omega)[self.inverse]

    def expected(self, sd: float) -> float:
        """E_s[T]: the expectation of the observed moment under the model with sd s.

        With q_ik = p_i(u_k) - c_i and η_i = E[p_i(1 - p_i)], for any linear form L = Σ λ_e r_e
        over the predictions e, E[L^2] = Σ_k ω_k Σ_d (Σ_{e in d} λ_e q_ek)^2 + Σ_e λ_e^2 η_e
        (the document effect, then the outcomes' own noise given it). T is a sum of such
        squares: the document sums of r~ minus the rows' r~^2; both reduce to sums over
        (document, bin) cells, so the cost is O(n·K + G·M^2·K).
        """
        from scipy.special import expit

        p = expit(self.offsets(sd)[:, None] + sd * self.nodes[None, :])  # (n, K)
        w, c = self.w, self.c
        q = p - c[:, None]
        eta = (p * (1.0 - p)) @ self.omega  # E[p(1 - p)] per row
        cell_q = self._cell_sums(w[:, None] * q)  # (G, M, K)
        eta_db = np.bincount(self.codes * self.n_bins + self.bins, weights=w * eta,
                             minlength=self.n_groups * self.n_bins).reshape(self.n_groups,
                                                                            self.n_bins)
        eta_b = eta_db.sum(axis=0)
        eta_total = float(eta_b.sum())
        gram = np.einsum("dbk,dck->kbc", cell_q, cell_q)  # Σ_d Q_dB Q_dB' per node
        doc_q = cell_q.sum(axis=1)  # (G, K)
        # documents' sums of centred residuals
        docs = ((doc_q**2).sum(axis=0)
                - 2.0 * np.einsum("dk,db,dbk->k", doc_q, self.a_db, cell_q)
                + np.einsum("kbc,bc->k", gram, self.h_mat))
        docs_noise = (eta_total - 2.0 * float((self.a_db * eta_db).sum())
                      + float((self.a_db**2 * eta_b[None, :]).sum()))
        # the rows' own squares of centred residuals
        rows = (np.einsum("i,ik->k", w, q * q)
                - np.einsum("kbb,b->k", gram, 1.0 / self.n_b))
        rows_noise = eta_total - float((eta_b / self.n_b).sum())
        return float(self.omega @ (docs - rows)) + docs_noise - rows_noise

    def estimate(self) -> float:
        """The s >= 0 (at most _MAX_GROUP_SD) whose expected moment is the observed one."""
        if not self.identified:
            return 0.0
        scale = max(1.0, abs(self.observed))
        gap0 = self.expected(0.0) - self.observed
        if gap0 >= -1e-12 * scale:  # no more agreement within documents than chance
            return 0.0
        gap_max = self.expected(_MAX_GROUP_SD) - self.observed
        if gap_max <= 0:
            return _MAX_GROUP_SD
        from scipy.optimize import brentq

        return float(brentq(lambda s: self.expected(s) - self.observed, 0.0, _MAX_GROUP_SD,
                            xtol=1e-6, rtol=1e-10))


# ------------------------------------------------------------------------ redraws
def _redraw_bin_sums(rng: np.random.Generator, n_resamples: int, bins: np.ndarray,
                     n_bins: int, w: np.ndarray | None, probability: np.ndarray,
                     offsets: np.ndarray | None = None, sd: float = 0.0,
                     codes: np.ndarray | None = None, n_groups: int = 0) -> np.ndarray:
    """Per-bin sums of redrawn outcomes (weighted by the rows' counts), (n_resamples, M).

    Independent: outcome i ~ Bernoulli(probability_i). With a document effect: per
    resample, U_d ~ N(0, 1) for each document, then outcome i ~ Bernoulli(expit(offsets_i
    + sd·U_d)). A row of weight w gives Binomial(w, p) right predictions (w outcomes).
    """
    from scipy.special import expit

    n = bins.shape[0]
    out = np.empty((n_resamples, n_bins))
    block = max(1, min(n_resamples, _BLOCK_CELLS // max(n, 1)))
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        if codes is not None and offsets is not None:
            effect = rng.standard_normal((b, n_groups))
            p = expit(offsets[None, :] + sd * effect[:, codes])
        else:
            p = np.broadcast_to(probability, (b, n))
        cell = bins[None, :] + n_bins * np.arange(b)[:, None]
        if w is None:
            hits = rng.random((b, n)) < p
            sums = np.bincount(cell[hits], minlength=b * n_bins)
        else:
            drawn = rng.binomial(np.broadcast_to(w, (b, n)).astype(np.int64), p)
            sums = np.bincount(cell.ravel(), weights=drawn.ravel().astype(np.float64),
                               minlength=b * n_bins)
        out[start:start + b] = sums.reshape(b, n_bins)
    return out


def calibration_test(correct: ArrayLike, confidence: ArrayLike, *,
                     groups: ArrayLike | None = None, n_bins: int = 5,
                     binning: str = "quantile", statistic: str = "ece",
                     n_resamples: int = 1000, confidence_level: float = 0.95,
                     seed: int | None = 0, sample_weight: ArrayLike | None = None
                     ) -> CalibrationTest:
    """Is the model calibrated? Consistency resampling (Bröcker & Smith 2007).

    The confidences are taken as the true probabilities of being right; outcomes are
    redrawn from them ``n_resamples`` times and the statistic (the ECE or MCE of the bins
    of :func:`confcal.ece`) recomputed each time. The p-value is the share of redraws at
    least as far from calibration as the data, and each bin gets the band of accuracies a
    calibrated model shows there (the consistency bands of a reliability diagram).

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    groups : array-like, shape (n,), optional
        The document of each prediction. Errors of one document go together (a blurred
        page makes every field harder), which independent redraws ignore: they then reject
        a calibrated model far too often. With ``groups`` the redraws share a document
        effect whose size is estimated from the data (Notes).
    n_bins, binning : as in :func:`confcal.ece`.
        The bins depend on the confidences only, which the redraws keep: they are built
        once.
    statistic : {"ece", "mce"}, default "ece"
    n_resamples : int, default 1000
    confidence_level : float in (0, 1), default 0.95
        The level of the consistency bands.
    seed : int or None, default 0
        Seeds ``numpy.random.default_rng``; the same seed and data give the same result,
        whatever the order of the rows.
    sample_weight : array-like of whole numbers >= 0, shape (n,), optional
        Frequency weights: a row of weight w is w predictions, so it gets w redrawn
        outcomes (Binomial(w, p) right ones). A test that redraws outcomes must know how
        many a row stands for, so weights must be whole numbers.

    Returns
    -------
    CalibrationTest
        ``statistic``, ``p_value``, ``bands`` (per bin), and the options.

    See Also
    --------
    ece : the statistic it tests by default.
    reliability_bins : the bins its bands are drawn for.
    debiased_ece : an estimate of the error instead of a test.

    Notes
    -----
    **Independent null.** Outcome i ~ Bernoulli(c_i), independently. Given the
    confidences, the data are then one more draw from the very law of the redraws, so
    the p-value (1 + #{T* >= T}) / (1 + B) is exact: P(p <= α) <= α for every α and any B
    (Monte Carlo test). Redrawn values within a relative 1e-12 of the observed one count
    as ties (>=).

    **Grouped null.** Document d has an effect U_d ~ N(0, 1); given it, its rows are
    right independently with probability p_i = expit(a_i + s·U_d), where a_i solves
    E[expit(a_i + s·Z)] = c_i. So every row stays calibrated on average over documents
    (the null holds marginally) while the rows of a document are right or wrong together,
    as much as s says: the document's "difficulty" on the logit scale. s = 0 is the
    independent null. s is estimated by the method of moments: the residuals y - c,
    centred in each bin (so that miscalibration, which moves a whole bin, is not read as
    agreement within documents), multiplied pairwise within documents, against their
    expectation under the model, computed in closed form over (document, bin) cells
    (Gauss-Hermite quadrature, 64 nodes). s̑ = 0 when the data agree within documents no
    more than chance; at most 5 (documents right or wrong as a whole). The test plugs s̑
    in (a parametric bootstrap), so its size is close to, not exactly, the nominal level:
    on the simulation of docs/metrics.md it holds 0.05 where independent redraws reject a
    calibrated model in most replications.

    Why this model: a document effect on the logit scale is the standard random
    intercept for clustered binary outcomes; the intercept is adjusted so that the
    confidences remain the probabilities (what the null asserts); and one variance
    parameter, fit by moments, needs no iterative likelihood and is exact to compute.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, size=2000)
    >>> calibrated = rng.uniform(size=2000) < conf
    >>> overconfident = rng.uniform(size=2000) < conf - 0.1
    >>> calibration_test(calibrated, conf).p_value > 0.05
    True
    >>> calibration_test(overconfident, conf).p_value   # no redraw reaches the data
    0.000999000999000999
    >>> # a hand-worked bin: 4 predictions at 0.5, 3 right. Redraws: Binomial(4, 1/2);
    >>> # |k - 2| >= |3 - 2| unless k = 2, so P(T* >= T) = 1 - 6/16 = 0.625
    >>> test = calibration_test([1, 1, 1, 0], [0.5] * 4, n_bins=1, n_resamples=20000)
    >>> round(test.statistic, 3), round(test.p_value, 2)
    (0.25, 0.62)
    """
    y, c, _ = check_calibration_data(correct, confidence)
    w = None if sample_weight is None else _check_count_weights(sample_weight, y.shape[0]) + 0.0
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    statistic = check_option(statistic, "statistic", CALIBRATION_STATISTICS)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 1)
    level = check_probability(confidence_level, "confidence_level")
    seed = check_seed(seed)
    codes = None if groups is None else check_groups(groups, y.shape[0])
    c = c + 0.0  # -0.0 is 0.0: the canonical order must not tell them apart

    bins, row_bin, ranking = _row_bins(y, c, w, n_bins, binning)
    observed = (ece_from_bins(bins, ranking.total_weight) if statistic == "ece"
                else mce_from_bins(bins))
    # Rows of no weight redraw nothing; the rest in an order of their contents only.
    keep = row_bin >= 0 if w is None else (row_bin >= 0) & (w > 0)
    wk = None if w is None else w[keep]
    order, doc = _canonical_order(y[keep], c[keep], np.ones(int(keep.sum())) if wk is None
                                  else wk, None if codes is None else codes[keep])
    yy, cc, bb = y[keep][order], c[keep][order], row_bin[keep][order]
    # unit weights redraw exactly as no weights (one Bernoulli outcome per row)
    ww = None if wk is None or bool((wk == 1.0).all()) else wk[order]
    m = len(bins.start)
    weight = np.ones_like(cc) if ww is None else ww
    expected = np.bincount(bb, weights=weight * cc, minlength=m)  # Σ w·c per bin
    bin_weight = np.bincount(bb, weights=weight, minlength=m)

    rng = np.random.default_rng(seed)
    sd: float | None = None
    n_groups: int | None = None
    if doc is None:
        sums = _redraw_bin_sums(rng, n_resamples, bb, m, ww, cc)
    else:
        doc = doc[order]
        n_groups = int(doc.max()) + 1
        effect = _DocumentEffect(yy, cc, weight, doc, bb, n_groups, m)
        sd = effect.estimate()
        offsets = effect.offsets(sd)
        sums = _redraw_bin_sums(rng, n_resamples, bb, m, ww, cc, offsets=offsets, sd=sd,
                                codes=doc, n_groups=n_groups)
    observed_sums = np.bincount(bb, weights=weight * yy, minlength=m)

    def value(s: np.ndarray) -> np.ndarray:  # the statistic, computed alike for data and redraws
        gap = np.abs(s - expected)
        return gap.sum(axis=-1) if statistic == "ece" else (gap / bin_weight).max(axis=-1)

    t_obs = float(value(observed_sums))
    t_star = value(sums)
    exceed = int(np.count_nonzero(t_star >= t_obs * (1.0 - _TIE_TOLERANCE)))
    p_value = (1 + exceed) / (1 + n_resamples)

    alpha = (1.0 - level) / 2.0
    accuracy = sums / bin_weight
    low, high = np.quantile(accuracy, [alpha, 1.0 - alpha], axis=0)
    frame = bins_frame(bins, 0, weighted=w is not None)
    if w is not None:  # the ranking scaled the weights by a power of two; undo it
        top = np.array([w.max()])
        frame["weight"] *= float(top[0] / scale_weights(top)[0])
    frame = frame.drop(columns="gap")
    frame["band_low"] = low
    frame["band_high"] = high
    return CalibrationTest(
        statistic=float(observed), p_value=float(p_value), n_resamples=n_resamples,
        seed=seed, bands=frame, statistic_name=statistic, n_bins=n_bins, binning=binning,
        confidence_level=level, null="independent" if codes is None else "grouped",
        group_sd=sd, n_groups=n_groups)


# ----------------------------------------------------------------------------- DeLong
def _placements(values: np.ndarray, weights: np.ndarray, others: np.ndarray,
                other_weights: np.ndarray) -> np.ndarray:
    """For each value, the weight of ``others`` strictly below it plus half the tied
    weight: the midrank of the value among all rows minus its midrank among its own class
    (Sun & Xu 2014), computed from one sort of ``others``."""
    order = np.argsort(others, kind="stable")
    sorted_others = others[order]
    cumulative = np.r_[0.0, np.cumsum(other_weights[order])]
    below = cumulative[np.searchsorted(sorted_others, values, side="left")]
    not_above = cumulative[np.searchsorted(sorted_others, values, side="right")]
    return 0.5 * (below + not_above)


def delong_test(correct: ArrayLike, confidence_a: ArrayLike, confidence_b: ArrayLike, *,
                sample_weight: ArrayLike | None = None) -> DeLongTest:
    """DeLong's test for two AUROCs of the same predictions.

    Two confidence scores of the same rows (verbalized confidence and log-probabilities
    of one extraction): is the difference of their AUROCs more than chance? The AUROCs
    are correlated, since they rank the same right and wrong predictions; DeLong, DeLong
    & Clarke-Pearson (1988) estimate the covariance from the placement values.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence_a, confidence_b : array-like of float in [0, 1], shape (n,)
        Any scores in [0, 1]; only their order matters.
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w counts as w copies of itself (integer weights
        give exactly the test of the repeated rows).

    Returns
    -------
    DeLongTest
        ``auroc_a``, ``auroc_b``, ``difference`` (a - b), ``standard_error``, ``z``,
        ``p_value`` (two-sided, normal).

    See Also
    --------
    auroc : the two estimates compared.
    compare_systems : paired comparisons of every metric over documents.

    Notes
    -----
    With m correct and n incorrect predictions (weights: their total weights), the
    placement of correct prediction i under score k is V10_i = (weight of the incorrect
    predictions below it + half of those tied) / n, and of incorrect prediction j,
    V01_j = (weight of correct ones above it + half of those tied) / m; each AUROC is the
    (weighted) mean of either. S10 and S01 are the 2 x 2 sample covariances of the
    placements (frequency weights: divided by m - 1 and n - 1), and
    Var(AUC_a - AUC_b) = c'(S10/m + S01/n)c with c = (1, -1). Placements come from
    midranks (Sun & Xu 2014): one sort per class and score, O(n log n).

    A single class makes the AUROCs undefined, and fewer than two predictions of weight
    in a class the variance: ``UndefinedMetricWarning`` and NaN. A zero standard error
    gives z = 0 and p = 1 when the difference is 0 (the scores place every prediction
    alike), and z = ±inf, p = 0 otherwise.

    Examples
    --------
    >>> # correct: a = (0.9, 0.8), b = (0.9, 0.4); incorrect: a = (0.3, 0.5), b = (0.7, 0.2)
    >>> # a: all 4 (correct, incorrect) pairs won -> 1.0; b: 0.9 beats both, 0.4 beats 0.2
    >>> # only -> 3/4. V10a = (1, 1), V10b = (1, 1/2), V01a = (1, 1), V01b = (1/2, 1);
    >>> # differences 0, 1/2 and 1/2, 0: S/m + S/n = 1/8 / 2 + 1/8 / 2 = 1/8, se = 0.3536
    >>> t = delong_test([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.5], [0.9, 0.4, 0.7, 0.2])
    >>> t.auroc_a, t.auroc_b, t.difference, round(t.standard_error, 4), round(t.z, 4)
    (1.0, 0.75, 0.25, 0.3536, 0.7071)
    >>> round(t.p_value, 4)
    0.4795
    """
    y = check_correct(correct)
    a = check_confidence(confidence_a, "confidence_a")
    b = check_confidence(confidence_b, "confidence_b")
    check_consistent_length(correct=y, confidence_a=a, confidence_b=b)
    nan = math.nan
    unit = 1.0  # the weight of one prediction in the scale of w
    if sample_weight is None:
        w = np.ones(y.shape[0])
    else:
        w_user = check_sample_weight(sample_weight, y.shape[0])
        w = scale_weights(w_user)  # a power of two: exact, and clear of under- and overflow
        unit = float(np.ldexp(1.0, 1 - int(np.frexp(w_user.max())[1])))
    pos, neg = y & (w > 0), ~y & (w > 0)
    wp, wn = w[pos], w[neg]
    m, n = float(wp.sum()), float(wn.sum())
    if m == 0 or n == 0:
        label = "incorrect" if m == 0 else "correct"
        warnings.warn(f"delong_test is undefined: every prediction with weight is {label} "
                      "(one class only); returning NaN", UndefinedMetricWarning, stacklevel=2)
        return DeLongTest(nan, nan, nan, nan, nan, nan)
    v10 = np.column_stack([_placements(s[pos], wn, s[neg], wn) / n for s in (a, b)])
    v01 = np.column_stack([(m - _placements(s[neg], wp, s[pos], wp)) / m for s in (a, b)])
    auc = (wp @ v10) / m
    auc_a, auc_b = float(auc[0]), float(auc[1])
    difference = auc_a - auc_b
    # frequency weights: m and n in the user's units for the (m - 1), (n - 1) denominators
    m_rows, n_rows = m / unit, n / unit
    if m_rows <= 1 or n_rows <= 1:
        warnings.warn("delong_test's variance is undefined: it needs more than one correct "
                      f"and one incorrect prediction; found {m_rows:g} and {n_rows:g}; "
                      "returning NaN for the standard error, z and p-value",
                      UndefinedMetricWarning, stacklevel=2)
        return DeLongTest(auc_a, auc_b, difference, nan, nan, nan)
    d10 = v10[:, 0] - v10[:, 1]
    d01 = v01[:, 0] - v01[:, 1]
    mean10, mean01 = float(wp @ d10) / m, float(wn @ d01) / n
    var10 = float(wp @ (d10 - mean10) ** 2) / unit / (m_rows - 1.0)
    var01 = float(wn @ (d01 - mean01) ** 2) / unit / (n_rows - 1.0)
    se = math.sqrt(var10 / m_rows + var01 / n_rows)
    if se == 0:
        z = 0.0 if difference == 0 else math.copysign(math.inf, difference)
    else:
        z = difference / se
    return DeLongTest(auroc_a=auc_a, auroc_b=auc_b, difference=difference,
                      standard_error=se, z=z, p_value=math.erfc(abs(z) / math.sqrt(2.0)))
