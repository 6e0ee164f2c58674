"""The debiased and the smooth ECE: hand-worked cases, slow references, properties.

The agreement of the smooth ECE with relplot 1.0.3 is in tests/metrics/test_relplot.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from confcal import UndefinedMetricWarning, ValidationError, debiased_ece, ece, smooth_ece
from confcal.metrics import SMOOTH_ECE_MIN_BANDWIDTH
from confcal.testing import calibration_data, reference_bins, weighted_calibration_data

PROPERTY = settings(max_examples=60, deadline=None)


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
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


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


@PROPERTY
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


def test_the_estimators_are_in_the_package_facade():
    assert confcal.smooth_ece is confcal.metrics.smooth_ece
    assert confcal.debiased_ece is confcal.metrics.debiased_ece
