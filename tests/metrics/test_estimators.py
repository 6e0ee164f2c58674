"""The debiased and the smooth ECE: hand-worked cases, slow references, properties.

The agreement of the smooth ECE with relplot 1.0.3 is in tests/metrics/test_relplot.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import confcal
from _profiles import examples
from _registry import normal_weights
from confcal import (
    UndefinedMetricWarning,
    ValidationError,
    brier,
    brier_decomposition,
    calibration_slope,
    debiased_ece,
    ece,
    log_loss,
    smooth_ece,
)
from confcal.metrics import SMOOTH_ECE_MIN_BANDWIDTH
from confcal.testing import calibration_data, reference_bins, weighted_calibration_data

PROPERTY = settings(max_examples=examples(60), deadline=None)


# --- debiased ECE ---------------------------------------------------------------------------
def reference_debiased_square(correct, confidence, *, n_bins=5, binning="quantile",
                              sample_weight=None) -> float:
    """D from the bins of confcal.testing's exact reference, term by term."""
    bins = reference_bins(correct, confidence, n_bins=n_bins, binning=binning,
                          sample_weight=sample_weight)
    total = sum(b["weight"] for b in bins)
    d = 0.0
    for b in bins:
        acc, n_b = b["accuracy"], b["weight"]
        if n_b <= 1:
            return math.nan
        d += n_b / total * (b["gap"] ** 2 - acc * (1 - acc) / (n_b - 1))
    return d


def test_debiased_ece_one_bin_by_hand():
    # M=1, 4 predictions at 0.9, 2 correct: (0.5 - 0.9)^2 - 0.5*0.5/3 = 0.16 - 1/12
    d = 0.16 - 1 / 12
    assert debiased_ece([1, 1, 0, 0], [0.9] * 4, n_bins=1) == pytest.approx(math.sqrt(d),
                                                                              abs=1e-15)


def test_a_negative_estimate_keeps_its_sign():
    # bin 0: 0.2^2 - 0.25/1 = -0.21; bin 1: 0.3^2 - 0 = 0.09; D = (-0.21 + 0.09)/2 = -0.06
    value = debiased_ece([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2)
    assert value == pytest.approx(-math.sqrt(0.06), abs=1e-15)


def test_pure_bins_have_no_variance_to_remove():
    # every bin is all correct or all wrong: ȳ(1 - ȳ) = 0, so D is the plug-in Σ p_b gap²
    # bins: (0.1, 0.2 wrong): gap 0.15; (0.7, 0.9 right): gap 0.2 -> D = (0.0225 + 0.04)/2
    value = debiased_ece([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.9], n_bins=2)
    assert value == pytest.approx(math.sqrt(0.03125), abs=1e-15)


def test_debiased_ece_uses_the_bins_of_ece():
    # 0.5 x 3 tie across the nominal edge: the run stays in bin 0 (ranks 0-3), bin 1 = 0.9, 0.95
    correct = [0, 1, 1, 0, 1, 1]
    confidence = [0.1, 0.5, 0.5, 0.5, 0.9, 0.95]
    # bin 0: n=4, ȳ=0.5, c̄=0.4: 0.01 - 0.25/3; bin 1: n=2, ȳ=1, c̄=0.925: 0.075^2
    d = 4 / 6 * (0.01 - 0.25 / 3) + 2 / 6 * 0.075**2
    assert debiased_ece(correct, confidence, n_bins=2) == pytest.approx(
        math.copysign(math.sqrt(abs(d)), d), abs=1e-15)
    assert reference_debiased_square(correct, confidence, n_bins=2) == pytest.approx(d)


def test_a_bin_of_one_prediction_is_undefined():
    # a run of 5 ties fills bin 0; the last prediction is alone in its bin: no variance
    with pytest.warns(UndefinedMetricWarning, match="bin 4 holds 1 prediction"):
        value = debiased_ece([1, 0, 1, 1, 0, 1], [0.5] * 5 + [0.9], n_bins=5)
    assert math.isnan(value)
    # a weight of 2 on that row is two predictions: defined
    # bin 0: n=5, ȳ=0.6, c̄=0.5: 0.01 - 0.24/4 = -0.05; bin 4: n=2, ȳ=1: 0.1^2 = 0.01
    value = debiased_ece([1, 0, 1, 1, 0, 1], [0.5] * 5 + [0.9], n_bins=5,
                         sample_weight=[1, 1, 1, 1, 1, 2])
    d = 5 / 7 * -0.05 + 2 / 7 * 0.01
    assert value == pytest.approx(-math.sqrt(-d), abs=1e-15)


def test_debiased_ece_rejects_bad_input():
    with pytest.raises(ValidationError, match="binning must be one of"):
        debiased_ece([0, 1], [0.2, 0.8], binning="equal")
    with pytest.raises(ValidationError, match=r"n_bins must be an integer >= 1; found 0"):
        debiased_ece([0, 1], [0.2, 0.8], n_bins=0)
    with pytest.raises(ValidationError, match="confidence must be finite"):
        debiased_ece([0, 1], [0.2, 1.8])


@PROPERTY
@given(data=calibration_data(min_size=2, max_size=80, ties="some"),
       n_bins=st.sampled_from([1, 2, 5]), binning=st.sampled_from(["quantile", "uniform"]))
def test_debiased_ece_matches_the_reference_bins(data, n_bins, binning):
    correct, confidence = data
    want = reference_debiased_square(correct, confidence, n_bins=n_bins, binning=binning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = debiased_ece(correct, confidence, n_bins=n_bins, binning=binning)
    assert type(got) is float
    if math.isnan(want):
        assert math.isnan(got)
        return
    assert math.copysign(got * got, got) == pytest.approx(want, abs=1e-12)


@PROPERTY
@given(data=weighted_calibration_data(min_size=2, max_size=40, weights="integer",
                                      max_weight=4))
def test_debiased_ece_integer_weights_are_repeated_rows(data):
    correct, confidence, weight = data
    counts = weight.astype(np.intp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = debiased_ece(np.repeat(correct, counts), np.repeat(confidence, counts))
        b = debiased_ece(correct, confidence, sample_weight=weight)
        c = debiased_ece(correct, confidence)
        d = debiased_ece(correct, confidence, sample_weight=np.ones(len(correct)))
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)
    assert (math.isnan(c) and math.isnan(d)) or c == pytest.approx(d, abs=1e-12)


def test_debiased_ece_is_near_zero_for_a_calibrated_model_where_ece_is_not():
    # 20 seeded draws of 2,000 calibrated predictions: the binned ECE sits at its sampling
    # floor (~0.015), the debiased L2 error averages near 0 (both signs)
    rng = np.random.default_rng(5)
    ece_values, debiased = [], []
    for _ in range(20):
        conf = rng.uniform(0.3, 1.0, 2000)
        correct = rng.uniform(size=2000) < conf
        ece_values.append(ece(correct, conf))
        debiased.append(debiased_ece(correct, conf))
    assert min(ece_values) > 0.005
    squares = np.copysign(np.square(debiased), debiased)
    assert abs(squares.mean()) < 1e-4 < np.mean(ece_values) ** 2
    assert (squares < 0).any() and (squares > 0).any()


# --- smooth ECE -----------------------------------------------------------------------------
def brute_force_smooth_ece(correct, confidence, bandwidth, sample_weight=None,
                           points=100_001) -> float:
    """smECE_σ from its definition: the reflected Gaussian as a sum of images, summed
    directly over the rows and integrated by the trapezoid rule on a fine grid."""
    y = np.asarray(correct, dtype=float)
    c = np.asarray(confidence, dtype=float)
    w = np.ones_like(c) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    t = np.linspace(0.0, 1.0, points)
    g = np.zeros_like(t)
    norm = 1.0 / (bandwidth * math.sqrt(2 * math.pi))
    for yi, ci, wi in zip(y, c, w, strict=True):
        kernel = np.zeros_like(t)
        for m in range(-3, 4):  # images at 2m ± c: the reflections at 0 and 1
            for centre in (2 * m + ci, 2 * m - ci):
                kernel += norm * np.exp(-0.5 * ((t - centre) / bandwidth) ** 2)
        g += wi * (yi - ci) * kernel
    return float(np.trapezoid(np.abs(g), t) / w.sum())


def test_smooth_ece_of_one_confidence_value_is_the_gap():
    # Σr·K(t, 0.5) with K integrating to one: |0.75 - 0.5| at every bandwidth
    for sigma in (None, 0.01, 0.1, 1.0):
        assert smooth_ece([1, 1, 1, 0], [0.5] * 4, bandwidth=sigma) == pytest.approx(
            0.25, abs=1e-12)


def test_residuals_of_one_sign_never_cancel():
    # all below the diagonal: smECE = mean(c - y) at any bandwidth, even near the ends
    # (the reflection keeps all the mass in [0, 1]): (0.05 + 0.3 + 0.99) / 3
    conf, correct = [0.05, 0.3, 0.99], [0, 0, 0]
    for sigma in (0.001, 0.05, 0.5):
        assert smooth_ece(correct, conf, bandwidth=sigma) == pytest.approx(1.34 / 3, abs=1e-12)


def test_perfect_predictions_score_zero():
    assert smooth_ece([1, 0, 1], [1.0, 0.0, 1.0]) == 0.0


def test_every_residual_one_with_one_sign_is_one():
    # confidence 0 for correct predictions: residual +1 everywhere, smECE_σ = 1 for every σ,
    # so the fixed point is σ = 1
    assert smooth_ece([1, 1], [0.0, 0.0]) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("sigma", [0.02, 0.07, 0.3])
def test_smooth_ece_matches_the_definition(sigma):
    rng = np.random.default_rng(int(sigma * 100))
    conf = np.round(rng.uniform(size=25), 2)
    conf[:2] = [0.0, 1.0]  # the ends, where the reflection matters
    correct = rng.uniform(size=25) < conf**2
    weight = rng.integers(1, 4, size=25).astype(float)
    for w in (None, weight):
        want = brute_force_smooth_ece(correct, conf, sigma, w)
        got = smooth_ece(correct, conf, bandwidth=sigma, sample_weight=w)
        assert got == pytest.approx(want, rel=2e-6), (got, want)


def test_automatic_bandwidth_is_the_fixed_point():
    rng = np.random.default_rng(3)
    conf = rng.uniform(size=40)
    correct = rng.uniform(size=40) < conf
    value = smooth_ece(correct, conf)
    # the value is σ* and, by the definition's own reckoning, smECE at σ* is σ*
    assert brute_force_smooth_ece(correct, conf, value) == pytest.approx(value, rel=2e-6)
    # below σ* the estimate exceeds σ, above it falls short
    assert smooth_ece(correct, conf, bandwidth=0.9 * value) > 0.9 * value
    assert smooth_ece(correct, conf, bandwidth=1.1 * value) < 1.1 * value


def test_smooth_ece_is_non_increasing_in_the_bandwidth():
    rng = np.random.default_rng(11)
    conf = rng.uniform(size=300)
    correct = rng.uniform(size=300) < np.sqrt(conf)
    values = [smooth_ece(correct, conf, bandwidth=s) for s in np.geomspace(0.002, 1.0, 25)]
    assert all(b <= a * (1 + 1e-9) for a, b in zip(values, values[1:], strict=False))


def test_bandwidth_is_validated():
    for bad in (0.0, -0.1, 1.5, float("nan"), True, "0.1", 1e-5):
        with pytest.raises(ValidationError, match=r"bandwidth must be None \(automatic\) or "
                                                   r"a number within \[0.00012207, 1\]"):
            smooth_ece([0, 1], [0.2, 0.8], bandwidth=bad)
    assert SMOOTH_ECE_MIN_BANDWIDTH == 2.0**-13


def test_smooth_ece_on_near_perfect_predictions():
    # residuals of 1e-5: σ* would be 1e-5, below the smallest bandwidth searched; the
    # estimate there is still the mean residual (one sign), exactly
    assert smooth_ece([1, 1, 1], [0.99999] * 3) == pytest.approx(1e-5, rel=1e-9)


@PROPERTY
@given(data=calibration_data(max_size=80, ties="heavy"), draw=st.data())
def test_smooth_ece_row_order_never_matters(data, draw):
    correct, confidence = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
    a = smooth_ece(correct, confidence)
    assert smooth_ece(correct[perm], confidence[perm]) == pytest.approx(a, abs=1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(data=weighted_calibration_data(max_size=40, weights="integer", max_weight=4),
       exponent=st.integers(-300, 300))
def test_smooth_ece_weights(data, exponent):
    correct, confidence, weight = data
    counts = weight.astype(np.intp)
    repeated = smooth_ece(np.repeat(correct, counts), np.repeat(confidence, counts))
    assert smooth_ece(correct, confidence, sample_weight=weight) == pytest.approx(
        repeated, abs=1e-12)
    # frequency weights, but a weighted mean: every scale gives the same estimate
    assert smooth_ece(correct, confidence, sample_weight=weight * 2.0**exponent) == (
        pytest.approx(repeated, abs=1e-12))
    unit = smooth_ece(correct, confidence, sample_weight=np.ones(len(correct)))
    assert unit == pytest.approx(smooth_ece(correct, confidence), abs=1e-12)


@PROPERTY
@given(data=calibration_data(max_size=100, ties="some"))
def test_smooth_ece_bounds(data):
    correct, confidence = data
    value = smooth_ece(correct, confidence)
    assert type(value) is float
    # never more than the mean absolute residual (the kernel averages residuals)
    assert 0.0 <= value <= np.abs(correct - confidence).mean() + 1e-12


# --- Brier decomposition ------------------------------------------------------------------
def test_brier_decomposition_by_hand():
    # bins (M=2): {0.1 wrong, 0.3 right}, {0.6 right, 0.8 right}; ȳ = 3/4
    d = brier_decomposition([0, 1, 1, 1], [0.1, 0.3, 0.6, 0.8], n_bins=2)
    # REL = (0.2 - 0.5)^2/2 + (0.7 - 1)^2/2 = 0.09; RES = (0.25^2 + 0.25^2)/2 = 0.0625
    # UNC = 3/16; WBV = (0.01 + 0.01 + 0.01 + 0.01)/4 = 0.01
    # WBC = 2 * ((-0.1)(-0.5) + (0.1)(0.5) + 0 + 0)/4 = 0.05
    assert d.reliability == pytest.approx(0.09, abs=1e-15)
    assert d.resolution == pytest.approx(0.0625, abs=1e-15)
    assert d.uncertainty == pytest.approx(0.1875, abs=1e-15)
    assert d.within_bin_variance == pytest.approx(0.01, abs=1e-15)
    assert d.within_bin_covariance == pytest.approx(0.05, abs=1e-15)
    # 0.09 - 0.0625 + 0.1875 + 0.01 - 0.05 = 0.175 = (0.01 + 0.49 + 0.16 + 0.04) / 4
    assert d.brier == pytest.approx(0.175, abs=1e-15)
    assert d.to_dict()["n_bins"] == 2


@PROPERTY
@given(data=weighted_calibration_data(max_size=60, ties="some", weights="float"),
       n_bins=st.sampled_from([1, 3, 5, 10]), binning=st.sampled_from(["quantile", "uniform"]))
def test_brier_decomposition_identity_is_exact(data, n_bins, binning):
    correct, confidence, weight = data
    for w in (None, weight):
        d = brier_decomposition(correct, confidence, n_bins=n_bins, binning=binning,
                                sample_weight=w)
        total = (d.reliability - d.resolution + d.uncertainty + d.within_bin_variance
                 - d.within_bin_covariance)
        assert total == pytest.approx(d.brier, abs=1e-12)
        assert d.brier == brier(correct, confidence, sample_weight=w)
        assert min(d.reliability, d.resolution, d.uncertainty, d.within_bin_variance) >= 0


@PROPERTY
@given(values=st.lists(st.floats(0, 1), min_size=1, max_size=5, unique=True),
       data=st.data())
def test_murphy_three_terms_when_each_bin_holds_one_value(values, data):
    # as many quantile bins as rows of one value each (every value repeated equally), or
    # one uniform bin per value: each bin holds a single confidence value
    repeat = data.draw(st.integers(1, 4))
    confidence = np.repeat(np.sort(values), repeat)
    correct = np.array(data.draw(st.lists(st.booleans(), min_size=confidence.size,
                                          max_size=confidence.size)))
    d = brier_decomposition(correct, confidence, n_bins=len(values))
    assert d.within_bin_variance == 0.0 and d.within_bin_covariance == 0.0
    assert d.reliability - d.resolution + d.uncertainty == pytest.approx(
        brier(correct, confidence), abs=1e-12)


@PROPERTY
@given(data=weighted_calibration_data(max_size=40, ties="heavy", weights="integer",
                                      max_weight=4), draw=st.data())
def test_brier_decomposition_order_and_weights(data, draw):
    correct, confidence, weight = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
    counts = weight.astype(np.intp)
    base = brier_decomposition(correct, confidence).to_dict()
    moved = brier_decomposition(correct[perm], confidence[perm]).to_dict()
    unit = brier_decomposition(correct, confidence,
                               sample_weight=np.ones(len(correct))).to_dict()
    weighted = brier_decomposition(correct, confidence, sample_weight=weight).to_dict()
    repeated = brier_decomposition(np.repeat(correct, counts),
                                   np.repeat(confidence, counts)).to_dict()
    for a, b in ((base, moved), (base, unit), (weighted, repeated)):
        assert b == pytest.approx(a, abs=1e-12)


# --- calibration slope ------------------------------------------------------------------
def sklearn_slope(correct, confidence, sample_weight=None):
    from sklearn.linear_model import LogisticRegression

    x = np.log(confidence / (1 - confidence)).reshape(-1, 1)
    # unpenalised: penalty=None, spelled C=inf since scikit-learn 1.8
    fit = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(
        x, correct, sample_weight=sample_weight)
    return float(fit.coef_[0, 0]), float(fit.intercept_[0])


@pytest.mark.parametrize("seed", range(8))
def test_calibration_slope_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 3000))
    confidence = rng.uniform(0.02, 0.98, size=n)
    logit = np.log(confidence / (1 - confidence))
    true_slope, true_intercept = rng.uniform(0.3, 2.0), rng.uniform(-1, 1)
    correct = rng.uniform(size=n) < 1 / (1 + np.exp(-(true_intercept + true_slope * logit)))
    weight = rng.integers(1, 5, size=n).astype(float) if seed % 2 else None
    fit = calibration_slope(correct, confidence, sample_weight=weight)
    slope, intercept = sklearn_slope(correct, confidence, weight)
    assert fit.slope == pytest.approx(slope, abs=1e-6)
    assert fit.intercept == pytest.approx(intercept, abs=1e-6)
    # the score equations hold at the fit: Σ w (p - y) [1, x] = 0
    w = np.ones(n) if weight is None else weight
    p = 1 / (1 + np.exp(-(fit.intercept + fit.slope * logit)))
    assert abs(np.dot(w, p - correct)) / w.sum() < 1e-12
    assert abs(np.dot(w, (p - correct) * logit)) / w.sum() < 1e-12


def test_a_calibrated_model_has_slope_one_and_intercept_zero():
    rng = np.random.default_rng(0)
    confidence = rng.uniform(0.05, 0.95, size=200_000)
    fit = calibration_slope(rng.uniform(size=confidence.size) < confidence, confidence)
    assert fit.slope == pytest.approx(1.0, abs=0.02)
    assert fit.intercept == pytest.approx(0.0, abs=0.02)


def test_calibration_slope_undefined_cases():
    with pytest.raises(ValidationError, match=r"strictly within \(0, 1\) for calibration_slope"
                                              r".*first at index 1 \(1.0\)"):
        calibration_slope([1, 0, 1], [0.5, 1.0, 0.2])
    cases = {
        "one class only": ([1, 1, 1], [0.2, 0.5, 0.9]),
        "every confidence is the same": ([1, 0, 1], [0.4, 0.4, 0.4]),
        "separates": ([0, 0, 1, 1], [0.1, 0.3, 0.3, 0.8]),  # a tie at the edge: quasi
    }
    for message, (y, c) in cases.items():
        with pytest.warns(UndefinedMetricWarning, match=message):
            fit = calibration_slope(y, c)
        assert math.isnan(fit.slope) and math.isnan(fit.intercept)
    # the reverse separation too (errors the more confident)
    with pytest.warns(UndefinedMetricWarning, match="separates"):
        calibration_slope([1, 1, 0], [0.1, 0.2, 0.9])
    # a zero weight takes the overlapping row out: separated
    with pytest.warns(UndefinedMetricWarning, match="separates"):
        calibration_slope([0, 1, 0, 1], [0.2, 0.3, 0.6, 0.8], sample_weight=[1, 1, 0, 1])


@PROPERTY
@given(data=weighted_calibration_data(min_size=4, max_size=40, ties="some",
                                      single_class=False, weights="integer", max_weight=3),
       draw=st.data())
def test_calibration_slope_properties(data, draw):
    correct, confidence, weight = data
    inside = (confidence > 0) & (confidence < 1)
    correct, confidence, weight = correct[inside], confidence[inside], weight[inside]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        if correct.size == 0 or weight.sum() == 0:
            return
        fit = calibration_slope(correct, confidence)
        counts = weight.astype(np.intp)
        perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
        moved = calibration_slope(correct[perm], confidence[perm])
        weighted = calibration_slope(correct, confidence, sample_weight=weight)
        repeated = calibration_slope(np.repeat(correct, counts), np.repeat(confidence, counts))
    for a, b in ((fit, moved), (weighted, repeated)):
        if math.isnan(a.slope):
            assert math.isnan(b.slope)
        else:
            assert b.slope == pytest.approx(a.slope, rel=1e-8, abs=1e-8)
            assert b.intercept == pytest.approx(a.intercept, rel=1e-8, abs=1e-8)


# --- log loss ---------------------------------------------------------------------------
def test_log_loss_by_hand_and_at_the_ends():
    # -(log 0.8 + log 0.6) / 2
    assert log_loss([1, 0], [0.8, 0.4]) == pytest.approx(-(math.log(0.8) + math.log(0.6)) / 2,
                                                         abs=1e-15)
    # certain and right costs nothing; certain and wrong costs infinity (not clipped)
    assert log_loss([1, 0], [1.0, 0.0]) == 0.0
    assert log_loss([1, 0], [0.0, 0.5]) == math.inf
    # ... unless that row has no weight
    assert log_loss([1, 0], [0.0, 0.5], sample_weight=[0, 1]) == pytest.approx(math.log(2))


@PROPERTY
@given(data=weighted_calibration_data(max_size=60, ties="some", weights="float"))
def test_log_loss_equals_sklearn(data):
    from sklearn.metrics import log_loss as sk_log_loss

    correct, confidence, weight = data
    # subnormal weights: scikit-learn's weighted mean underflows (5e-324 on one row of
    # loss log 2 gives it 1.0); confcal rescales the weights first
    assume(normal_weights(weight))
    given_to_outcome = np.where(correct, confidence, 1 - confidence)
    for w in (None, weight):
        ours = log_loss(correct, confidence, sample_weight=w)
        live = np.ones(len(correct), bool) if w is None else w > 0
        if (given_to_outcome[live] == 0).any():
            assert ours == math.inf
            continue
        theirs = sk_log_loss(correct, confidence, sample_weight=w, labels=[False, True])
        # sklearn clips at machine epsilon; away from the ends the two are one formula
        if (np.minimum(confidence, 1 - confidence)[live] > 1e-15).all() or theirs == ours:
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


def test_the_estimators_are_in_the_package_facade():
    for name in ("smooth_ece", "debiased_ece", "brier_decomposition", "calibration_slope",
                 "log_loss", "BrierDecomposition", "CalibrationSlope"):
        assert getattr(confcal, name) is getattr(confcal.metrics, name)


def test_debiased_interval_covers_a_calibrated_model():
    # The calibrated scenario of benchmarks/sim_calibrated_coverage.py, smaller: 60
    # documents of 25-35 entities, confidence ~ Beta(5, 2) = the true probability, so every
    # population calibration error is 0. The binned ECE's interval never reaches 0; the
    # debiased one covers it in at least 85% of replications (the benchmark: 200 x 1000).
    from confcal import bootstrap_ci

    rng = np.random.default_rng(2026)
    covered = {"ece": 0, "debiased_ece": 0}
    replications = 20
    for r in range(replications):
        sizes = rng.integers(25, 36, size=60)
        docs = np.repeat(np.arange(60), sizes)
        confidence = rng.beta(5, 2, size=docs.size)
        correct = rng.uniform(size=docs.size) < confidence
        ci = bootstrap_ci(correct, confidence, groups=docs, metrics=tuple(covered),
                          n_resamples=150, seed=r).set_index("metric")
        for m in covered:
            covered[m] += bool(ci.loc[m, "low"] <= 0.0 <= ci.loc[m, "high"])
    assert covered["ece"] == 0
    assert covered["debiased_ece"] >= 0.85 * replications
