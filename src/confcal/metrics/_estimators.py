"""Calibration-error estimators beyond the binned ECE.

The binned ECE of :mod:`confcal.metrics._metrics` is biased upwards: sampling noise only
ever adds gap, so a calibrated model scores well above zero on a few thousand predictions
and an interval around that estimate never reaches the truth. Two estimators answer that:

- :func:`debiased_ece`, the debiased estimator of the squared L2 calibration error on the
  ECE's own equal-mass bins (Kumar, Liang & Ma, 2019), and
- :func:`smooth_ece`, the smooth ECE with its automatic bandwidth (Błasiok & Nakkiran, 2023),
  a kernel estimate that needs no bins at all.

Both take frequency weights and are vectorised in them, so a bootstrap can call them once
per resample. Beside them, the measures a calibration study reports next to ECE: Murphy's
decomposition of the Brier score (:func:`brier_decomposition`), the calibration slope and
intercept (:func:`calibration_slope`) and the log loss (:func:`log_loss`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import (
    check_calibration_data,
    check_n_bins,
    check_option,
    first_bad,
    is_real,
)
from ..exceptions import ValidationError
from ._metrics import BINNINGS, Bins, brier_value, ranking_bins, undefined_metric
from ._ranking import Ranking, scale_weights

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "SMOOTH_ECE_MIN_BANDWIDTH",
    "BrierDecomposition",
    "CalibrationSlope",
    "brier_decomposition",
    "calibration_slope",
    "debiased_ece",
    "log_loss",
    "smooth_ece",
]


# ---------------------------------------------------------------------------------------
# debiased ECE
# ---------------------------------------------------------------------------------------
def units_of(weight: np.ndarray, unit: Fraction | int) -> np.ndarray:
    """Weights in a Ranking's scale back in the user's units (``unit``: one prediction).

    ``unit`` is the power of two :func:`~confcal.metrics._metrics.weight_unit` returns, so
    the division is an exact change of exponent (``np.ldexp``), even where ``1/unit``
    overflows a float (subnormal weights).
    """
    u = Fraction(unit)
    return np.ldexp(weight, u.denominator.bit_length() - u.numerator.bit_length())


def debiased_square_from_bins(bins: Bins, total_weight: float,
                              unit: Fraction | int = 1) -> float:
    """Σ_b p_b [(ȳ_b − c̄_b)² − ȳ_b(1 − ȳ_b)/(n_b − 1)], or NaN when some n_b <= 1.

    ``bins`` hold weights in a Ranking's scale; ``unit`` is the weight of one prediction in
    that scale, so that n_b counts predictions (frequency weights). The caller warns.
    """
    n_b = units_of(bins.weight, unit)
    if bool((n_b <= 1).any()):
        return math.nan
    weight, correct = bins.weight, bins.correct
    gap = correct - bins.confidence
    # p_b (ȳ − c̄)² = gap²/(W_b W); p_b ȳ(1 − ȳ) = correct (W_b − correct)/(W_b W)
    plug_in = gap * gap / weight
    variance = correct * (weight - correct) / weight / (n_b - 1.0)
    return float((plug_in - variance).sum() / total_weight)


def signed_sqrt(x: float) -> float:
    """sign(x)·√|x|: the square root that keeps a negative estimate visible."""
    return math.copysign(math.sqrt(abs(x)), x) if not math.isnan(x) else math.nan


def debiased_ece(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 5,
                 binning: str = "quantile", sample_weight: ArrayLike | None = None) -> float:
    """Debiased L2 calibration error on the bins of :func:`~confcal.metrics.ece`.

    The estimator of Kumar, Liang & Ma (2019) of the squared L2 calibration error of the
    binned confidence, reported as its signed square root:

    D = Σ_b p_b [(ȳ_b − c̄_b)² − ȳ_b (1 − ȳ_b) / (n_b − 1)],  result = sign(D)·√|D|,

    with, per bin b, p_b = n_b/N its share of the predictions, ȳ_b its accuracy, c̄_b its
    mean confidence and n_b its number of predictions.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    n_bins, binning : as in :func:`~confcal.metrics.ece`
        The very same bins (default: the paper's 5 equal-mass bins; ties never split).
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w counts as w predictions, so n_b and N are sums
        of weights (see Notes).

    Returns
    -------
    float in [-1, 1]
        On the scale of an L2 calibration error. Negative when the debiased square is
        negative (see Notes). NaN with an :class:`~confcal.UndefinedMetricWarning` when a
        bin holds at most one prediction (n_b <= 1).

    Notes
    -----
    The plug-in (ȳ_b − c̄_b)² overestimates the squared gap of a bin by the variance of its
    accuracy, ȳ_b(1 − ȳ_b)/n_b in expectation for Bernoulli outcomes; subtracting the
    unbiased estimate of that variance, ȳ_b(1 − ȳ_b)/(n_b − 1), removes the bias of each
    bin's term. The estimate D of the squared error can therefore be negative, which is
    what a calibrated model gives about half the time. It is never clipped to zero: the
    result is sign(D)·√|D|, so a negative value says "no miscalibration detectable at this
    sample size" and keeps its size, and a bootstrap interval around it can reach zero.
    Square the result (keeping its sign) to get D.

    The power is 2: the estimator debiases the squared gap, so the result is an L2 error
    (√Σ p_b gap_b²), not the L1 error that :func:`~confcal.metrics.ece` reports; on the
    same bins the L2 error is at least the L1 one (Jensen's inequality).

    With ``sample_weight``, n_b is the bin's total weight, so integer weights give exactly
    the estimate of the repeated rows and unit weights that of no weights. Unlike
    :func:`~confcal.metrics.ece`, the result is **not** invariant to scaling every weight:
    n_b − 1 counts predictions. A bin of n_b <= 1 has no unbiased variance estimate, so
    the estimate is undefined rather than silently dropping that bin.

    References
    ----------
    A. Kumar, P. Liang and T. Ma, "Verified Uncertainty Calibration", NeurIPS 2019, §5.

    See Also
    --------
    ece : the L1 plug-in estimate on the same bins.
    smooth_ece : a calibration error without bins.
    reliability_bins : the bins themselves.

    Examples
    --------
    >>> # one bin (M=1) of 4 predictions at 0.9, 2 correct: ȳ = 0.5, c̄ = 0.9
    >>> # D = (0.5 - 0.9)^2 - 0.5 * 0.5 / 3 = 0.16 - 0.083333 = 0.076667; √D = 0.276887
    >>> round(debiased_ece([1, 1, 0, 0], [0.9, 0.9, 0.9, 0.9], n_bins=1), 6)
    0.276887
    >>> # M=2: bin 0 (0.2, 0.4; 1 correct): 0.2^2 - 0.25/1 = -0.21; bin 1 (0.6, 0.8; both
    >>> # correct): 0.3^2 - 0 = 0.09; D = 0.5 * -0.21 + 0.5 * 0.09 = -0.06; -√0.06 = -0.244949
    >>> round(debiased_ece([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2), 6)
    -0.244949
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    r = Ranking.from_arrays(y, c, w)
    bins = ranking_bins(r, n_bins, binning)
    unit: Fraction | int = 1
    if w is not None:
        _, exponent = np.frexp(w.max())
        unit = Fraction(2) ** (1 - int(exponent))  # the scale Ranking.from_arrays applied
    value = debiased_square_from_bins(bins, r.total_weight, unit)
    if math.isnan(value):
        small = units_of(bins.weight, unit)
        i = int(np.flatnonzero(small <= 1)[0])
        return undefined_metric(
            "debiased_ece", f"bin {int(bins.index[i])} holds {small[i]:g} prediction(s); the "
            "variance correction needs more than one per bin (use fewer bins)")
    return signed_sqrt(value)


# ---------------------------------------------------------------------------------------
# smooth ECE
# ---------------------------------------------------------------------------------------
# The residual field is kept on M + 1 equally spaced nodes of [0, 1] with at least
# _NODES_PER_BANDWIDTH nodes per bandwidth: linear binning then moves the estimate by a
# relative ~(h/σ)²/10 ≈ 1e-5 and the trapezoid rule over |g|, whose kinks are where g
# changes sign, by less than that (docs/metrics.md gives the measured agreement).
_NODES_PER_BANDWIDTH = 128
_GRID_MIN = 1 << 12
_GRID_MAX = 1 << 20
SMOOTH_ECE_MIN_BANDWIDTH: float = _NODES_PER_BANDWIDTH / _GRID_MAX
"""The smallest bandwidth :func:`smooth_ece` uses, 2**-13 (about 1.2e-4)."""


def _grid_for(bandwidth: float) -> int:
    """The node count M (a power of two) that gives ``bandwidth`` enough nodes."""
    need = _NODES_PER_BANDWIDTH / bandwidth
    return int(min(_GRID_MAX, max(_GRID_MIN, 1 << max(0, math.ceil(math.log2(need))))))


class ResidualField:
    """The residuals y − c of a set of predictions, ready to be smoothed at any bandwidth.

    The smoothing kernel is the Gaussian of width σ reflected at 0 and 1, which is the heat
    kernel of [0, 1] with reflecting ends. Its cosine expansion
    K_σ(t, f) = 1 + 2 Σ_{k>=1} exp(−(πkσ)²/2) cos(πkt) cos(πkf) makes every bandwidth a
    multiplication of the same cosine coefficients: the residuals are binned once per grid
    (linear binning onto M + 1 nodes, which keeps each residual's mass and position), one
    FFT gives their coefficients, and each bandwidth costs one more FFT of size 2M.

    Construction is from confidences only; :meth:`weigh` takes the residual weights
    w_i·(y_i − c_i) and their total Σ w_i, so a bootstrap reuses the bin positions.
    """

    def __init__(self, confidence: np.ndarray):
        self.confidence = confidence
        self._positions: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._exponents: dict[int, np.ndarray] = {}
        self._coefficients: dict[int, np.ndarray] = {}
        self._residual: np.ndarray | None = None
        self._total = 1.0

    def weigh(self, residual: np.ndarray, total: float) -> ResidualField:
        """Set the weighted residuals w_i (y_i − c_i) and the total weight Σ w_i."""
        self._residual, self._total = residual, float(total)
        self._coefficients = {}
        return self

    def _nodes(self, grid: int) -> tuple[np.ndarray, np.ndarray]:
        cached = self._positions.get(grid)
        if cached is None:
            x = self.confidence * grid
            left = np.minimum(x.astype(np.int64), grid - 1)  # 1.0 sits on the last node
            cached = (left, x - left)
            self._positions[grid] = cached
        return cached

    def _cosine_coefficients(self, grid: int) -> np.ndarray:
        coef = self._coefficients.get(grid)
        if coef is None:
            assert self._residual is not None
            left, frac = self._nodes(grid)
            r = self._residual
            mass = np.bincount(left, weights=r - r * frac, minlength=grid + 1)
            mass += np.bincount(left + 1, weights=r * frac, minlength=grid + 1)
            padded = np.zeros(2 * grid)
            padded[:grid + 1] = mass
            # a_k = Σ_j m_j cos(πkj/M), k = 0..M: the real part of a zero-padded FFT
            coef = np.fft.rfft(padded).real
            self._coefficients[grid] = coef
        return coef

    def value(self, bandwidth: float, grid: int) -> float:
        """smECE_σ = ∫_0^1 |Σ_i w_i (y_i − c_i) K_σ(t, c_i)| dt / Σ_i w_i on M = grid nodes."""
        a = self._cosine_coefficients(grid)
        exponent = self._exponents.get(grid)
        if exponent is None:  # −(πk)²/2, k = 0..M: the damping is exp(σ²·exponent)
            exponent = -0.5 * (np.pi * np.arange(grid + 1, dtype=np.float64)) ** 2
            self._exponents[grid] = exponent
        damped = a * np.exp(bandwidth * bandwidth * exponent)
        damped[1:] *= 2.0
        padded = np.zeros(2 * grid)
        padded[:grid + 1] = damped
        g = np.abs(np.fft.rfft(padded).real)  # g(j/M), j = 0..M
        integral = (g.sum() - 0.5 * (g[0] + g[-1])) / grid  # trapezoid rule
        return float(integral / self._total)

    def fixed_point(self) -> float:
        """smECE at the bandwidth σ* where smECE_σ* = σ* (searched in [2**-13, 1]).

        smECE_σ is non-increasing in σ (the reflected heat kernel is a semigroup of
        averaging operators), so smECE_σ − σ has one root. It is bracketed on a grid fine
        enough for its lower end and found by the Illinois variant of regula falsi to a
        relative 1e-15.
        """
        assert self._residual is not None
        mean_abs = float(np.abs(self._residual).sum()) / self._total
        if mean_abs == 0.0:
            return 0.0  # every residual is zero: calibrated at every bandwidth
        # smECE_σ <= mean |residual| at every σ, so σ* lies below it.
        grid = _grid_for(max(mean_abs, SMOOTH_ECE_MIN_BANDWIDTH))
        while True:
            lo = _NODES_PER_BANDWIDTH / grid
            f_lo = self.value(lo, grid) - lo
            if f_lo > 0 or grid >= _GRID_MAX:
                break
            grid = min(_GRID_MAX, grid * 4)  # σ* is below this grid's reach: refine
        if f_lo <= 0:  # σ* < 2**-13: report the estimate at the smallest bandwidth
            return self.value(lo, grid)
        hi = 1.0
        f_hi = self.value(hi, grid) - hi
        if f_hi >= 0:  # only when every residual is ±1 with one sign: smECE = 1
            return self.value(hi, grid)
        side = 0
        x = hi
        for _ in range(200):
            x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
            if not lo < x < hi:
                x = 0.5 * (lo + hi)
            f_x = self.value(x, grid) - x
            if f_x == 0.0:
                break
            if f_x > 0:
                lo, f_lo = x, f_x
                if side == 1:
                    f_hi *= 0.5
                side = 1
            else:
                hi, f_hi = x, f_x
                if side == -1:
                    f_lo *= 0.5
                side = -1
            if hi - lo <= 4e-16 * hi:
                break
        return self.value(x, grid)


def check_bandwidth(bandwidth: Any) -> float | None:
    """None (automatic) or a real number within [SMOOTH_ECE_MIN_BANDWIDTH, 1]."""
    if bandwidth is None:
        return None
    if not is_real(bandwidth) or not (
            SMOOTH_ECE_MIN_BANDWIDTH <= float(bandwidth) <= 1.0):
        raise ValidationError(
            f"bandwidth must be None (automatic) or a number within "
            f"[{SMOOTH_ECE_MIN_BANDWIDTH:.6g}, 1]; found {bandwidth!r}")
    return float(bandwidth)


def smooth_ece_value(field: ResidualField, bandwidth: float | None) -> float:
    """The smooth ECE of a weighed field, at ``bandwidth`` or the automatic one."""
    if bandwidth is None:
        return field.fixed_point()
    return field.value(bandwidth, _grid_for(bandwidth))


def smooth_ece(correct: ArrayLike, confidence: ArrayLike, *,
               sample_weight: ArrayLike | None = None,
               bandwidth: float | None = None) -> float:
    """Smooth ECE: the calibration error of kernel-smoothed residuals, without bins.

    The smooth ECE of Błasiok & Nakkiran (2023). The residuals y − c are smoothed along
    the confidence axis with a Gaussian kernel of width σ reflected at 0 and 1, and

    smECE_σ = ∫_0^1 |Σ_i w_i (y_i − c_i) K_σ(t, c_i)| dt / Σ_i w_i.

    By default σ is the automatic bandwidth σ*, the one where smECE_σ* = σ*, and the
    result is smECE_σ* (which is then σ* itself).

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w counts as w copies of itself. The estimate is
        a weighted mean, so scaling every weight changes nothing.
    bandwidth : float in [2**-13, 1], optional
        A fixed σ instead of the automatic one.

    Returns
    -------
    float in [0, 1]

    Notes
    -----
    K_σ(t, f) is the density at t of f + σZ (Z standard normal) folded back into [0, 1] at
    both ends, so it integrates to one over [0, 1] and no residual mass leaks past the
    ends, and smECE_σ is non-increasing in σ. That makes σ* unique. Small σ follows
    the noise of individual outcomes, large σ averages real miscalibration away; the
    fixed point balances the two, and the paper shows that the result is then a consistent
    calibration measure (polynomially related to the distance from the predictions to the
    nearest perfectly calibrated ones).

    Computation: linear binning of the weighted residuals onto at least 4,097 nodes of
    [0, 1] (at least 128 per σ), the kernel applied exactly in its cosine expansion by two
    FFTs, the integral by the trapezoid rule on the nodes. σ* is found by regula falsi
    (Illinois) to a relative 1e-15; it is searched down to σ = 2**-13, and when the
    fixed point lies lower (predictions within 1e-4 of their outcomes) the estimate at
    2**-13 is returned. Cost: O(n) to bin, O(M log M) per bandwidth tried.

    relplot 1.0.3's ``smECE`` computes the same quantity with a different discretisation
    (a kernel truncated at ±0.5 on 1,001 nodes, a 200-point sum, 10 bisection steps for
    σ*); docs/metrics.md states the agreement measured against it.

    References
    ----------
    J. Błasiok and P. Nakkiran, "Smooth ECE: Principled Reliability Diagrams via Kernel
    Smoothing", ICLR 2024 (arXiv:2309.12236, 2023).

    See Also
    --------
    debiased_ece : a binned estimate with its sampling bias removed.
    ece : the binned plug-in estimate.

    Examples
    --------
    >>> # one confidence value: the smoothed residual is Σr·K(t, 0.5) and K integrates to
    >>> # one, so smECE = |mean residual| = |0.75 - 0.5| = 0.25 at every bandwidth
    >>> round(smooth_ece([1, 1, 1, 0], [0.5, 0.5, 0.5, 0.5]), 10)
    0.25
    >>> # residuals of one sign never cancel: smECE = mean(y - c) = (0.4 + 0.2) / 2 = 0.3
    >>> round(smooth_ece([1, 1], [0.6, 0.8], bandwidth=0.05), 10)
    0.3
    >>> # weights 3 and 1 are the rows repeated: (3 * 0.4 + 0.2) / 4 = 0.35
    >>> round(smooth_ece([1, 1], [0.6, 0.8], sample_weight=[3, 1]), 10)
    0.35
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    sigma = check_bandwidth(bandwidth)
    residual = y - c
    if w is None:
        total = float(c.shape[0])
    else:
        _, exponent = np.frexp(w.max())
        w = np.ldexp(w, 1 - int(exponent))  # exact rescaling: no subnormal products
        residual = residual * w
        total = float(w.sum())
    return smooth_ece_value(ResidualField(c).weigh(residual, total), sigma)


# ---------------------------------------------------------------------------------------
# Brier decomposition
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BrierDecomposition:
    """Murphy's partition of the Brier score on calibration bins, made exact.

    ``brier == reliability - resolution + uncertainty + within_bin_variance -
    within_bin_covariance`` (to rounding); the last two terms are zero when every bin holds
    a single confidence value, which leaves Murphy's three.

    Attributes
    ----------
    reliability : float
        Σ_b p_b (c̄_b − ȳ_b)²: the squared miscalibration of the bins (lower is better).
    resolution : float
        Σ_b p_b (ȳ_b − ȳ)²: how far the bins' accuracies move from the overall accuracy
        ȳ (higher is better).
    uncertainty : float
        ȳ(1 − ȳ): the Brier score of always predicting the overall accuracy.
    within_bin_variance : float
        Σ_b Σ_{i∈b} w_i (c_i − c̄_b)² / W: the spread of the confidences inside the bins.
    within_bin_covariance : float
        2 Σ_b Σ_{i∈b} w_i (c_i − c̄_b)(y_i − ȳ_b) / W: how much that spread follows the
        outcomes inside the bins.
    brier : float
        The Brier score, as :func:`~confcal.metrics.brier` computes it.
    n_bins, binning : the bins used (those of :func:`~confcal.metrics.ece`).

    See Also
    --------
    brier_decomposition : builds it.
    """

    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    brier: float
    n_bins: int = 5
    binning: str = "quantile"

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready)."""
        return asdict(self)


def _weighted_extremes(confidence: np.ndarray, weight: np.ndarray, label: np.ndarray,
                       n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest confidence of each bin's rows of positive weight (every
    kept bin has one); ``label`` is each row's bin."""
    positive = weight > 0
    low = np.full(n_bins, np.inf)
    high = np.full(n_bins, -np.inf)
    np.minimum.at(low, label[positive], confidence[positive])
    np.maximum.at(high, label[positive], confidence[positive])
    return low, high


def brier_decomposition(correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 5,
                        binning: str = "quantile",
                        sample_weight: ArrayLike | None = None) -> BrierDecomposition:
    """Reliability, resolution and uncertainty of the Brier score, with the terms that make
    the identity exact.

    Murphy (1973): on bins b of predictions, with p_b the bin's share, c̄_b its mean
    confidence, ȳ_b its accuracy and ȳ the overall accuracy,

    Brier = REL − RES + UNC + WBV − WBC,

    REL = Σ p_b (c̄_b − ȳ_b)², RES = Σ p_b (ȳ_b − ȳ)², UNC = ȳ(1 − ȳ), and the within-bin
    variance and covariance of Stephenson, Coelho & Jolliffe (2008), WBV and WBC, which
    vanish when each bin holds one confidence value.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    n_bins, binning : as in :func:`~confcal.metrics.ece`
        The same bins (default: 5 equal-mass bins; ties never split).
    sample_weight : array-like of float >= 0, shape (n,), optional
        Every sum and mean is weighted; scaling every weight changes nothing.

    Returns
    -------
    BrierDecomposition

    Notes
    -----
    The identity is algebra: in bin b, c_i − y_i = (c_i − c̄_b) − (y_i − ȳ_b) + (c̄_b − ȳ_b);
    squaring and summing, the cross terms with the constant vanish, Σ_{i∈b}(y_i − ȳ_b)² =
    n_b ȳ_b(1 − ȳ_b), and Σ_b p_b ȳ_b(1 − ȳ_b) = UNC − RES. Each term is summed directly
    (deviations from the bin means, not differences of raw sums), so the identity holds to
    a few ulps.

    References
    ----------
    A. H. Murphy, "A New Vector Partition of the Probability Score", Journal of Applied
    Meteorology 12 (1973); D. B. Stephenson, C. A. S. Coelho and I. T. Jolliffe, "Two Extra
    Components in the Brier Score Decomposition", Weather and Forecasting 23 (2008).

    See Also
    --------
    brier : the score decomposed.
    ece : the L1 counterpart of the reliability term, on the same bins.
    reliability_bins : the bins.

    Examples
    --------
    >>> # M=2: bin 0 holds 0.2 twice (1 correct), bin 1 holds 0.8 twice (both correct);
    >>> # ȳ = 0.75. REL = (0.2-0.5)^2/2 + (0.8-1)^2/2 = 0.065; RES = (0.25^2 + 0.25^2)/2
    >>> # = 0.0625; UNC = 0.75 * 0.25 = 0.1875; one value per bin: no within-bin terms
    >>> d = brier_decomposition([0, 1, 1, 1], [0.2, 0.2, 0.8, 0.8], n_bins=2)
    >>> round(d.reliability, 12), round(d.resolution, 12), round(d.uncertainty, 12)
    (0.065, 0.0625, 0.1875)
    >>> # REL - RES + UNC = 0.19 = brier: (0.04 + 0.64 + 0.04 + 0.04) / 4
    >>> round(d.reliability - d.resolution + d.uncertainty, 12), round(d.brier, 12)
    (0.19, 0.19)
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    r = Ranking.from_arrays(y, c, w)
    bins = ranking_bins(r, n_bins, binning)
    total = r.total_weight
    share = bins.weight / total
    # rows in sorted order with the means of their bin (rows of dropped, weightless bins
    # carry no weight and are left out)
    rows = np.concatenate([np.arange(a, b) for a, b in zip(bins.start, bins.stop, strict=True)])
    label = np.repeat(np.arange(bins.index.size), bins.stop - bins.start)
    if r.weights is None:
        weight = np.ones(rows.size)
        first, last = r.confidence[bins.start], r.confidence[bins.stop - 1]
    else:
        sorted_weight = np.empty(r.n)
        sorted_weight[r.pos_positions] = r.weights.pos
        sorted_weight[r.neg_positions] = r.weights.neg
        weight = sorted_weight[rows]
        first, last = _weighted_extremes(r.confidence[rows], weight, label, bins.index.size)
    # a bin of one confidence value has that value as its mean, exactly (a float mean of
    # three 0.3889s need not be 0.3889, which would leave a within-bin variance of 1e-33);
    # a row of weight 0 is in no bin, so its confidence does not count
    mean_conf = np.where(first == last, first, bins.confidence / bins.weight)
    accuracy = bins.correct / bins.weight
    overall = r.pos_weight / total
    dc = r.confidence[rows] - mean_conf[label]
    dy = r.is_pos[rows] - accuracy[label]
    return BrierDecomposition(
        reliability=float((share * (mean_conf - accuracy) ** 2).sum()),
        resolution=float((share * (accuracy - overall) ** 2).sum()),
        uncertainty=float(overall * (1.0 - overall)),
        within_bin_variance=float((weight * dc * dc).sum() / total),
        within_bin_covariance=float(2.0 * (weight * dc * dy).sum() / total),
        brier=brier_value(y, c, w), n_bins=n_bins, binning=binning)


# ---------------------------------------------------------------------------------------
# calibration slope and intercept
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationSlope:
    """Slope and intercept of the logistic recalibration of the confidences.

    P(correct) = 1 / (1 + exp(−(intercept + slope·logit(confidence)))) fitted by maximum
    likelihood. A calibrated model has slope 1 and intercept 0; slope < 1 means the
    confidences are too extreme (overconfident at the top), slope > 1 too timid.

    Attributes
    ----------
    slope, intercept : float
        NaN when the maximum-likelihood fit does not exist (see
        :func:`calibration_slope`).

    See Also
    --------
    calibration_slope : builds it.
    """

    slope: float
    intercept: float

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready)."""
        return asdict(self)


def _logistic_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) maximising Σ w [y log p + (1 − y) log(1 − p)], p = σ(a + b x).

    Newton's method with step halving on the standardised logits (logit(5e-324) is −744:
    the raw design can be ill-conditioned), from the constant fit (logit(ȳ), 0); the
    log-likelihood is strictly concave when the data are not separated, so it converges
    quadratically.
    """
    w = w / w.sum()
    centre = float(np.dot(w, x))
    spread = math.sqrt(float(np.dot(w, (x - centre) ** 2)))
    u = (x - centre) / spread

    def loss(theta: np.ndarray) -> float:
        z = theta[0] + theta[1] * u
        # −log σ(z) = log(1 + e^−z), −log(1 − σ(z)) = log(1 + e^z), without overflow
        return float(np.dot(w, np.where(y, np.logaddexp(0.0, -z), np.logaddexp(0.0, z))))

    mean_y = float(np.dot(w, y))
    theta = np.array([math.log(mean_y / (1.0 - mean_y)), 0.0])
    current = loss(theta)
    for _ in range(200):
        z = theta[0] + theta[1] * u
        p = 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z) without overflow
        residual = w * (p - y)
        grad = np.array([residual.sum(), np.dot(residual, u)])
        h = w * p * (1.0 - p)
        huu = np.dot(h, u)
        hessian = np.array([[h.sum(), huu], [huu, np.dot(h, u * u)]])
        step = np.linalg.lstsq(hessian, grad, rcond=None)[0]
        # Converged when the full Newton step is below the last digits; near the optimum
        # the loss cannot tell a better point from rounding, so a step that does not raise
        # it by more than that is taken whole (halving it would stall short of the top).
        done = bool(np.all(np.abs(step) <= 1e-14 * (1.0 + np.abs(theta))))
        scale = 1.0
        while True:
            candidate = theta - scale * step
            value = loss(candidate)
            if value <= current + 4e-16 * current or scale < 1e-10:
                break
            scale *= 0.5
        theta, current = candidate, value
        if done:
            break
    slope = float(theta[1]) / spread
    return float(theta[0]) - slope * centre, slope


def calibration_slope(correct: ArrayLike, confidence: ArrayLike, *,
                      sample_weight: ArrayLike | None = None) -> CalibrationSlope:
    """Calibration slope and intercept: the logistic regression of correct on logit(confidence).

    Cox (1958): fit P(correct) = σ(a + b·logit(c)) by unpenalised maximum likelihood. The
    slope b says whether the confidences spread as much as the outcomes do (1: yes; below 1:
    too extreme; above 1: too timid); the intercept a, whether they are too high or too low
    overall (0 when calibrated).

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float strictly within (0, 1), shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional
        Weights of the log-likelihood terms (frequency weights; scaling them changes
        nothing).

    Returns
    -------
    CalibrationSlope
        ``slope`` and ``intercept``; both NaN with an :class:`~confcal.UndefinedMetricWarning`
        when the fit does not exist (see Notes).

    Raises
    ------
    ValidationError
        When a confidence is exactly 0 or 1: its logit is infinite, and no finite fit can
        place it. Nothing is clipped: move such confidences off the ends explicitly (and
        say so) if they must enter the fit.

    Notes
    -----
    The maximum-likelihood fit does not exist, and the result is NaN, when (counting only
    rows of positive weight) all predictions are correct or all wrong; when every
    confidence is the same (the slope is not identified); and when the confidence
    separates the outcomes (every correct prediction at least as confident as every error,
    or the reverse: the likelihood keeps growing as the slope goes to infinity). Otherwise
    the log-likelihood is strictly concave and Newton's method finds its maximum to a
    relative 1e-14; it agrees with
    ``sklearn.linear_model.LogisticRegression(penalty=None)`` on the logits.

    References
    ----------
    D. R. Cox, "Two Further Applications of a Model for Binary Regression", Biometrika 45
    (1958).

    See Also
    --------
    brier_decomposition : reliability and resolution on bins.
    debiased_ece, smooth_ece : calibration errors.
    confcal.calibration.calibrators.PlattScaling : the recalibration this fit describes.

    Examples
    --------
    >>> # two confidence values, each right 1 time in 2: the accuracy does not follow the
    >>> # confidence at all, so the slope is 0 and the intercept logit(1/2) = 0
    >>> fit = calibration_slope([1, 0, 1, 0], [0.25, 0.25, 0.75, 0.75])
    >>> round(fit.slope, 12) + 0.0, round(fit.intercept, 12) + 0.0
    (0.0, 0.0)
    >>> # at 0.25 right 1 time in 4, at 0.75 3 times in 4: with two values the fit passes
    >>> # through both accuracies, which equal the confidences: slope 1, intercept 0
    >>> fit = calibration_slope([1, 0, 0, 0, 1, 1, 1, 0], [0.25] * 4 + [0.75] * 4)
    >>> round(fit.slope, 12), round(fit.intercept, 12) + 0.0
    (1.0, 0.0)
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    ends = (c == 0.0) | (c == 1.0)
    if ends.any():
        raise ValidationError(
            "confidence must be strictly within (0, 1) for calibration_slope (logit(0) and "
            f"logit(1) are infinite); {first_bad(ends, c)}")
    weight = np.ones(c.shape[0]) if w is None else scale_weights(w)
    live = weight > 0
    y, x, weight = y[live], np.log(c[live]) - np.log1p(-c[live]), weight[live]
    nan = CalibrationSlope(math.nan, math.nan)
    if y.all() or not y.any():
        label = "correct" if y.all() else "incorrect"
        undefined_metric("calibration_slope", f"every prediction is {label} (one class only)")
        return nan
    if x.min() == x.max():
        undefined_metric("calibration_slope", "every confidence is the same, so no slope can "
                         "be fitted")
        return nan
    pos, neg = x[y], x[~y]
    if neg.max() <= pos.min() or pos.max() <= neg.min():
        undefined_metric("calibration_slope", "the confidence separates the correct "
                         "predictions from the errors, so the fitted slope is infinite")
        return nan
    intercept, slope = _logistic_fit(x, y.astype(np.float64), weight)
    return CalibrationSlope(slope=slope, intercept=intercept)


# ---------------------------------------------------------------------------------------
# log loss
# ---------------------------------------------------------------------------------------
def log_loss(correct: ArrayLike, confidence: ArrayLike, *,
             sample_weight: ArrayLike | None = None) -> float:
    """Log loss: the mean of −log(probability given to the outcome), in nats.

    −(1/N) Σ [y log c + (1 − y) log(1 − c)]: the confidence is the probability given to
    "correct", 1 − confidence to "wrong". Lower is better; a constant 0.5 scores log 2.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional
        A weighted mean; scaling every weight changes nothing.

    Returns
    -------
    float in [0, inf]
        ``inf`` when a prediction with positive weight has confidence exactly 1 and is
        wrong, or exactly 0 and is right (see Notes).

    Notes
    -----
    Equals ``sklearn.metrics.log_loss(correct, confidence)`` wherever the confidence given
    to the outcome is positive. scikit-learn clips confidences to [ε, 1 − ε] (ε the float's
    machine epsilon), so a certain and wrong prediction costs it 36.04 nats; confcal
    clips nothing and returns ``inf``, the loss that prediction actually has: a model that
    says 1.0 and is wrong has infinite log loss, and hiding that behind a clip would make
    the score depend on ε. A confidence of 1 that is right (or 0 that is wrong) costs
    exactly 0. 1 − c is taken as ``log1p(−c)``, accurate for small c.

    See Also
    --------
    brier : the bounded proper score.
    brier_decomposition : where the Brier score's loss comes from.

    Examples
    --------
    >>> # -(log 0.8 + log(1 - 0.4)) / 2 = -(-0.22314 - 0.51083) / 2 = 0.36698
    >>> round(log_loss([1, 0], [0.8, 0.4]), 5)
    0.36698
    >>> log_loss([1, 0], [0.8, 1.0])
    inf
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    with np.errstate(divide="ignore"):
        loss = -np.where(y, np.log(c), np.log1p(-c))
    if w is None:
        return float(loss.mean())
    w = scale_weights(w)
    live = w > 0  # a weightless row adds nothing, even an infinite loss
    return float(np.dot(w[live], loss[live]) / w.sum())
