"""calibration_test and delong_test: hand-worked cases, exact references, simulations."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit
from sklearn.metrics import roc_auc_score

import confcal
from _profiles import examples
from _registry import normal_weights
from confcal import UndefinedMetricWarning, ValidationError, calibration_test, delong_test
from confcal.metrics._inference import (
    _DocumentEffect,
    _normal_quadrature,
    _offsets,
    _row_bins,
)
from confcal.testing import (
    calibration_data,
    grouped_calibration_data,
    reference_delong,
    weighted_calibration_data,
)

PROPERTY = settings(max_examples=examples(60), deadline=None)
# each example fits a document effect
SLOW_PROPERTY = settings(max_examples=examples(25), deadline=None)


# ------------------------------------------------------------------- calibration_test
def exact_p_value(correct, confidence, n_bins, binning="quantile"):
    """P(ECE* >= ECE) by enumerating every outcome vector (n <= 12), in Fractions."""
    correct = np.asarray(correct, dtype=bool)
    confidence = np.asarray(confidence, dtype=np.float64)
    observed = confcal.ece(correct, confidence, n_bins=n_bins, binning=binning)
    total = Fraction(0)
    for outcome in itertools.product([False, True], repeat=len(correct)):
        y = np.array(outcome)
        prob = Fraction(1)
        for yi, ci in zip(outcome, confidence, strict=True):
            prob *= Fraction(ci) if yi else 1 - Fraction(ci)
        if prob and confcal.ece(y, confidence, n_bins=n_bins, binning=binning) >= (
                observed * (1 - 1e-12)):
            total += prob
    return float(total)


def test_one_bin_by_hand():
    # 4 predictions at 0.5, 3 right: ECE = |3/4 - 1/2| = 0.25. Redraws K ~ Binomial(4, 1/2);
    # |K - 2| >= 1 unless K = 2 (6 of 16 outcomes): P(T* >= T) = 10/16 = 0.625
    test = calibration_test([1, 1, 1, 0], [0.5] * 4, n_bins=1, n_resamples=40_000, seed=3)
    assert test.statistic == pytest.approx(0.25, abs=1e-15)
    se = math.sqrt(0.625 * 0.375 / 40_000)
    assert abs(test.p_value - 0.625) < 4 * se
    # the band of the bin's accuracy: the 2.5% and 97.5% quantiles of K/4 are 0 and 1
    assert test.bands[["band_low", "band_high"]].values.tolist() == [[0.0, 1.0]]


@pytest.mark.parametrize("n_bins, binning", [(1, "quantile"), (2, "quantile"),
                                             (3, "uniform")])
def test_p_value_matches_enumeration_of_every_outcome(n_bins, binning):
    correct = [1, 0, 1, 1, 0, 1, 1, 0, 1, 1]
    confidence = [0.1, 0.3, 0.35, 0.5, 0.5, 0.62, 0.7, 0.8, 0.9, 0.97]
    exact = exact_p_value(correct, confidence, n_bins, binning)
    b = 20_000
    test = calibration_test(correct, confidence, n_bins=n_bins, binning=binning,
                            n_resamples=b, seed=1)
    # (1 + hits) / (1 + B) is within Monte Carlo error of the exact tail probability
    assert abs(test.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / b) + 2 / b


def test_statistic_equals_ece_and_mce_and_bins_equal_reliability_bins():
    rng = np.random.default_rng(4)
    conf = np.round(rng.uniform(size=300), 2)
    correct = rng.uniform(size=300) < conf
    w = rng.integers(0, 4, size=300).astype(float)
    for binning, n_bins in (("quantile", 5), ("uniform", 10)):
        for weight in (None, w):
            for statistic, metric in (("ece", confcal.ece), ("mce", confcal.mce)):
                test = calibration_test(correct, conf, n_bins=n_bins, binning=binning,
                                        statistic=statistic, n_resamples=50,
                                        sample_weight=weight)
                assert test.statistic == metric(correct, conf, n_bins=n_bins,
                                                binning=binning, sample_weight=weight)
            bins = confcal.reliability_bins(correct, conf, n_bins=n_bins, binning=binning,
                                            sample_weight=weight).drop(columns="gap")
            shown = test.bands[bins.columns]
            assert shown.equals(bins)
            assert list(test.bands.columns[-2:]) == ["band_low", "band_high"]


def test_bands_are_the_quantiles_of_a_binomial_accuracy():
    # one bin of 400 predictions at 0.7: redrawn accuracy ~ Binomial(400, 0.7) / 400
    test = calibration_test(np.ones(400), np.full(400, 0.7), n_bins=1, n_resamples=20_000)
    low, high = stats.binom.ppf([0.025, 0.975], 400, 0.7) / 400
    assert test.bands["band_low"].iloc[0] == pytest.approx(low, abs=0.0051)
    assert test.bands["band_high"].iloc[0] == pytest.approx(high, abs=0.0051)


def test_independent_null_holds_its_size_on_calibrated_data():
    # 400 replications of n = 2,000 calibrated predictions; B = 199 (the Monte Carlo test
    # is exact for any B: P(p < 0.05) = P(at most 8 of 199 redraws reach T) = 9/200)
    rng = np.random.default_rng(2024)
    rejected = 0
    for r in range(400):
        conf = rng.uniform(0.3, 1.0, size=2000)
        correct = rng.uniform(size=2000) < conf
        rejected += calibration_test(correct, conf, n_resamples=199, seed=r).p_value < 0.05
    assert 0.02 <= rejected / 400 <= 0.08


def test_independent_null_rejects_overconfidence_of_five_points():
    # the model says p + 0.05 where the truth is p, n = 2,000
    rng = np.random.default_rng(99)
    rejected = 0
    for r in range(100):
        truth = rng.uniform(0.3, 0.9, size=2000)
        correct = rng.uniform(size=2000) < truth
        rejected += calibration_test(correct, truth + 0.05, n_resamples=199,
                                     seed=r).p_value < 0.05
    assert rejected >= 90


def test_same_seed_same_result_other_seed_other_draws():
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=500)
    correct = rng.uniform(size=500) < conf - 0.05
    a = calibration_test(correct, conf, n_resamples=300, seed=5)
    b = calibration_test(correct, conf, n_resamples=300, seed=5)
    c = calibration_test(correct, conf, n_resamples=300, seed=6)
    assert a == b and a.bands.equals(b.bands)
    assert not c.bands.equals(a.bands)


# ---------------------------------------------------------------- the grouped null
def offsets(c, sd):
    nodes, weights = _normal_quadrature()
    return _offsets(np.asarray(c, dtype=np.float64), sd, nodes, np.log(weights))


def test_offsets_keep_each_row_calibrated_on_average():
    from scipy import integrate

    # 96 Gauss-Hermite nodes: exact to rounding up to sd 1, 2e-5 (relative) at the largest, 5
    for sd, tolerance in ((0.3, 1e-12), (1.0, 1e-12), (2.5, 1e-9), (5.0, 3e-5)):
        for c in (1e-250, 1e-6, 0.03, 0.4, 0.5, 0.77, 0.999):
            a = offsets([c], sd)[0]
            mean = integrate.quad(lambda u, a=a, sd=sd: expit(a + sd * u) * stats.norm.pdf(u),
                                  -40, 40, epsabs=0, epsrel=1e-12, limit=400)[0]
            assert mean == pytest.approx(c, rel=tolerance), (sd, c)
    assert offsets([0.0, 1.0, 0.5], 1.0).tolist() == [-np.inf, np.inf, 0.0]
    # symmetric: a(1 - c) = -a(c)
    np.testing.assert_allclose(offsets([0.2, 0.8], 1.7), [-offsets([0.8], 1.7)[0],
                                                          offsets([0.8], 1.7)[0]])


def centred_moment(y, conf, codes, row_bin):
    """T of each row of y (R, n), written out: bin-centred residuals, pairs within documents."""
    r = y - conf[None, :]
    bins = np.unique(row_bin)
    for b in bins:
        members = row_bin == b
        r[:, members] -= r[:, members].mean(axis=1, keepdims=True)
    sums = np.stack([r[:, codes == d].sum(axis=1) for d in np.unique(codes)], axis=1)
    return (sums ** 2).sum(axis=1) - (r ** 2).sum(axis=1)


@pytest.mark.parametrize("weighted", [False, True])
def test_expected_moment_matches_simulation_from_the_model(weighted):
    # E_s[T] in closed form against the mean of T over data drawn from the model; with
    # weights, a row of weight w is w predictions, each drawn on its own
    rng = np.random.default_rng(1)
    codes = np.repeat(np.arange(10), 6)
    n = codes.size
    conf = np.round(rng.uniform(0.2, 0.95, size=n), 2)
    w = rng.integers(1, 3, size=n).astype(float) if weighted else np.ones(n)
    bins, row_bin, _ = _row_bins(np.ones(n, dtype=bool), conf, w, 3, "quantile")
    rows = np.repeat(np.arange(n), w.astype(int))
    for sd in (0.0, 1.0):
        model = _DocumentEffect(np.ones(n, dtype=bool), conf, w, codes, row_bin, 10,
                                len(bins.start))
        a = model.offsets(sd)
        effect = rng.standard_normal((20_000, 10))[:, codes[rows]]
        y = (rng.uniform(size=effect.shape) < expit(a[rows] + sd * effect)).astype(float)
        moments = centred_moment(y, conf[rows], codes[rows], row_bin[rows])
        se = moments.std() / math.sqrt(moments.size)
        assert abs(model.expected(sd) - moments.mean()) < 4 * se, sd
        # and the observed moment of one draw is the same formula
        assert _DocumentEffect(y[0] == 1, conf[rows], np.ones(rows.size), codes[rows],
                               row_bin[rows], 10, len(bins.start)).observed == pytest.approx(
            moments[0], abs=1e-9)


def simulate_documents(rng, n_docs=60, size=30, sd=1.0):
    """Calibrated on average, with a document effect of this sd on the logit scale."""
    codes = np.repeat(np.arange(n_docs), size)
    conf = rng.beta(5, 2, size=codes.size)
    p = expit(offsets(conf, sd) + sd * rng.standard_normal(n_docs)[codes])
    return rng.uniform(size=codes.size) < p, conf, codes


def test_document_effect_is_recovered():
    rng = np.random.default_rng(8)
    # (the size of the grouped null is measured in benchmarks/bench_inference.py: 400
    # replications take a minute)
    correct, conf, codes = simulate_documents(rng, n_docs=300, sd=1.0)
    test = calibration_test(correct, conf, groups=codes, n_resamples=20)
    assert test.null == "grouped" and test.n_groups == 300
    assert test.group_sd == pytest.approx(1.0, abs=0.15)
    # independent outcomes in documents: little or no effect found
    correct = rng.uniform(size=conf.size) < conf
    assert calibration_test(correct, conf, groups=codes, n_resamples=20).group_sd < 0.2


def test_one_prediction_per_document_is_the_independent_null():
    rng = np.random.default_rng(3)
    conf = rng.uniform(size=200)
    correct = rng.uniform(size=200) < conf
    test = calibration_test(correct, conf, groups=np.arange(200), n_resamples=50)
    assert test.group_sd == 0.0


# ----------------------------------------------------------------- properties
def _same(a, b):
    assert a.statistic == pytest.approx(b.statistic, abs=1e-12)
    assert a.p_value == b.p_value
    assert (a.group_sd is None) == (b.group_sd is None)
    if a.group_sd is not None:
        assert a.group_sd == pytest.approx(b.group_sd, abs=1e-5)
    np.testing.assert_allclose(a.bands.to_numpy(dtype=float), b.bands.to_numpy(dtype=float),
                               atol=1e-12)


@SLOW_PROPERTY
@given(data=grouped_calibration_data(min_size=2, max_size=60, ties="heavy", max_groups=6),
       draw=st.data())
def test_row_order_and_document_names_never_matter(data, draw):
    correct, conf, groups = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
    names = np.array([f"doc-{7 * g + 3}" for g in groups], dtype=object)
    for g in (None, groups):
        a = calibration_test(correct, conf, groups=g, n_bins=3, n_resamples=40, seed=2)
        b = calibration_test(correct[perm], conf[perm], groups=None if g is None else g[perm],
                             n_bins=3, n_resamples=40, seed=2)
        _same(a, b)
    c = calibration_test(correct[perm], conf[perm], groups=names[perm], n_bins=3,
                         n_resamples=40, seed=2)
    _same(calibration_test(correct, conf, groups=groups, n_bins=3, n_resamples=40, seed=2), c)


@SLOW_PROPERTY
@given(data=weighted_calibration_data(max_size=40, ties="heavy", max_weight=3))
def test_integer_weights_are_repeated_rows(data):
    # the statistic, the bins and the document effect are those of the repeated rows; the
    # redraws are Binomial(w, p) instead of w Bernoulli draws: equal in law, not per seed
    correct, conf, w = data
    rows = np.repeat(np.arange(len(w)), w.astype(int))
    docs = np.arange(len(w)) // 3
    a = calibration_test(correct, conf, groups=docs, sample_weight=w, n_resamples=20)
    b = calibration_test(correct[rows], conf[rows], groups=docs[rows], n_resamples=20)
    assert a.statistic == pytest.approx(b.statistic, abs=1e-12)
    assert a.group_sd == pytest.approx(b.group_sd, abs=1e-5)
    # (lower and upper are the confidences in a bin, zero-weight rows included, as in
    # reliability_bins: a repeated row of weight 0 is gone)
    columns = ["bin", "mean_confidence", "accuracy"]
    np.testing.assert_allclose(a.bands[columns].to_numpy(float), b.bands[columns].to_numpy(float),
                               atol=1e-12)
    np.testing.assert_array_equal(a.bands["weight"], b.bands["count"])


def test_integer_weights_redraw_like_repeated_rows_in_law():
    rng = np.random.default_rng(0)
    conf = np.round(rng.uniform(0.4, 1.0, size=60), 1)
    correct = rng.uniform(size=60) < conf - 0.08
    w = rng.integers(1, 5, size=60).astype(float)
    rows = np.repeat(np.arange(60), w.astype(int))
    b = 20_000
    a = calibration_test(correct, conf, sample_weight=w, n_resamples=b, n_bins=3)
    r = calibration_test(correct[rows], conf[rows], n_resamples=b, n_bins=3, seed=1)
    assert abs(a.p_value - r.p_value) < 5 * math.sqrt(2 * a.p_value * (1 - a.p_value) / b)
    np.testing.assert_allclose(a.bands[["band_low", "band_high"]],
                               r.bands[["band_low", "band_high"]], atol=0.02)


@PROPERTY
@given(data=calibration_data(max_size=50, ties="heavy"))
def test_unit_weights_are_no_weights(data):
    correct, conf = data
    a = calibration_test(correct, conf, n_resamples=30, sample_weight=np.ones(len(conf)))
    b = calibration_test(correct, conf, n_resamples=30)
    assert a.p_value == b.p_value
    np.testing.assert_array_equal(a.bands["band_low"], b.bands["band_low"])


@pytest.mark.parametrize("kwargs, message", [
    ({"sample_weight": [1, 0.5, 2]}, r"sample_weight must be whole numbers .* first at index 1"),
    ({"statistic": "brier"}, r"statistic must be one of 'ece', 'mce'; found 'brier'"),
    ({"n_resamples": 0}, r"n_resamples must be an integer >= 1; found 0"),
    ({"groups": [1, 2]}, r"groups must have one id per prediction \(3\); found 2"),
    ({"confidence_level": 1.0}, r"confidence_level must be a number in \(0, 1\); found 1.0"),
    ({"seed": -1}, r"seed must be an int >= 0 or None; found -1"),
])
def test_calibration_test_rejects_bad_input(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        calibration_test([1, 0, 1], [0.9, 0.2, 0.6], **kwargs)


# ------------------------------------------------------------------------- DeLong
def test_delong_by_hand():
    # see the docstring: V10 differences (0, 1/2), V01 differences (1/2, 0); each sample
    # variance (1/4 - 1/8 ... ) = 1/8; Var = 1/8 / 2 + 1/8 / 2 = 1/8
    t = delong_test([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.5], [0.9, 0.4, 0.7, 0.2])
    assert (t.auroc_a, t.auroc_b, t.difference) == (1.0, 0.75, 0.25)
    assert t.standard_error == pytest.approx(math.sqrt(1 / 8), abs=1e-15)
    assert t.z == pytest.approx(0.25 / math.sqrt(1 / 8))
    assert t.p_value == pytest.approx(2 * stats.norm.sf(t.z), rel=1e-12)


def test_delong_ties_count_half():
    # a = all tied: AUROC 1/2 and every placement 1/2; b separates: AUROC 1, placements 1
    t = delong_test([1, 1, 0, 0, 0], [0.5] * 5, [0.9, 0.8, 0.1, 0.2, 0.3])
    assert (t.auroc_a, t.auroc_b, t.difference) == (0.5, 1.0, -0.5)
    # placement differences are constant (-1/2): zero variance, an infinite z, p = 0
    assert t.standard_error == 0.0 and t.z == -math.inf and t.p_value == 0.0


def test_identical_scores_have_no_difference():
    t = delong_test([1, 0, 1, 0, 1], [0.9, 0.3, 0.5, 0.5, 0.2], [0.9, 0.3, 0.5, 0.5, 0.2])
    assert (t.difference, t.standard_error, t.z, t.p_value) == (0.0, 0.0, 0.0, 1.0)


@PROPERTY
@given(data=calibration_data(min_size=2, max_size=40, ties="heavy", single_class=False),
       other=st.data())
def test_delong_matches_the_structural_components(data, other):
    correct, a = data
    b = np.array(other.draw(st.lists(st.sampled_from([i / 10 for i in range(11)]),
                                     min_size=len(a), max_size=len(a))))
    with warnings.catch_warnings():  # one prediction in a class: no variance, NaN, warned
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        t = delong_test(correct, a, b)
    want = reference_delong(correct, a, b)
    got = (t.auroc_a, t.auroc_b, t.difference, t.standard_error)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)
    assert t.auroc_a == pytest.approx(confcal.auroc(correct, a), abs=1e-12)
    assert t.auroc_b == pytest.approx(roc_auc_score(correct, b), abs=1e-12)


@PROPERTY
@given(data=weighted_calibration_data(min_size=2, max_size=30, ties="heavy",
                                      single_class=False, weights="float"),
       other=st.data())
def test_delong_weighted_matches_the_reference(data, other):
    correct, a, w = data
    b = np.array(other.draw(st.lists(st.floats(0, 1), min_size=len(a), max_size=len(a))))
    # both classes weigh something, and neither weighs 1 to float rounding (1 + 1e-289 is
    # 1.0 in floats: no variance there, a tiny one in the exact reference)
    for total in (w[correct].sum(), w[~correct].sum()):
        assume(total > 0 and abs(total - 1.0) > 1e-9)
    assume(normal_weights(w))  # a subnormal weight keeps too few digits to compare (5e-324)
    with warnings.catch_warnings():  # a class of weight <= 1 has no variance: NaN, warned
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        t = delong_test(correct, a, b, sample_weight=w)
    want = reference_delong(correct, a, b, w)
    np.testing.assert_allclose((t.auroc_a, t.auroc_b, t.difference, t.standard_error), want,
                               rtol=1e-9, atol=1e-12, equal_nan=True)


@PROPERTY
@given(data=weighted_calibration_data(min_size=2, max_size=30, ties="heavy",
                                      single_class=False, max_weight=4), draw=st.data())
def test_delong_frequency_weights_are_repeated_rows_and_order_free(data, draw):
    correct, a, w = data
    b = np.round(1 - a ** 2, 1)
    rows = np.repeat(np.arange(len(w)), w.astype(int))
    if correct[rows].all() or not correct[rows].any() or min(
            correct[rows].sum(), (~correct[rows]).sum()) < 2:
        return
    weighted = delong_test(correct, a, b, sample_weight=w)
    repeated = delong_test(correct[rows], a[rows], b[rows])
    np.testing.assert_allclose(
        [weighted.difference, weighted.standard_error, weighted.z],
        [repeated.difference, repeated.standard_error, repeated.z], rtol=1e-10, atol=1e-12)
    perm = np.array(draw.draw(st.permutations(range(len(w)))), dtype=np.intp)
    shuffled = delong_test(correct[perm], a[perm], b[perm], sample_weight=w[perm])
    np.testing.assert_allclose([shuffled.difference, shuffled.standard_error],
                               [weighted.difference, weighted.standard_error],
                               rtol=1e-12, atol=1e-14)


def test_unit_weights_and_scaled_weights_change_nothing():
    rng = np.random.default_rng(5)
    correct = rng.uniform(size=80) < 0.6
    a, b = np.round(rng.uniform(size=80), 1), np.round(rng.uniform(size=80), 1)
    plain = delong_test(correct, a, b)
    assert delong_test(correct, a, b, sample_weight=np.ones(80)) == plain


def test_delong_holds_its_size_for_two_equally_good_scores():
    # two noisy scores of the same 200 rows, equally informative: reject in about 5%
    rng = np.random.default_rng(11)
    rejected = 0
    for _ in range(400):
        correct = rng.uniform(size=200) < 0.7
        signal = correct + rng.normal(0, 0.3, size=200)  # shared: the scores correlate
        a = expit(signal + rng.normal(0, 1, size=200))
        b = expit(signal + rng.normal(0, 1, size=200))
        rejected += delong_test(correct, a, b).p_value < 0.05
    assert 0.02 <= rejected / 400 <= 0.08


def test_delong_undefined_cases_warn():
    with pytest.warns(UndefinedMetricWarning, match="one class only"):
        t = delong_test([1, 1, 1], [0.2, 0.5, 0.9], [0.1, 0.2, 0.3])
    assert all(math.isnan(v) for v in (t.auroc_a, t.difference, t.p_value))
    with pytest.warns(UndefinedMetricWarning, match="variance is undefined"):
        t = delong_test([1, 0, 0], [0.9, 0.2, 0.5], [0.4, 0.2, 0.5])
    assert t.difference == 0.5 and math.isnan(t.standard_error)


def test_delong_rejects_bad_input():
    with pytest.raises(ValidationError, match="confidence_b must be finite and within"):
        delong_test([1, 0], [0.5, 0.4], [0.5, 1.5])
    with pytest.raises(ValidationError, match="correct, confidence_a, confidence_b must have "
                                              "the same length"):
        delong_test([1, 0], [0.5, 0.4], [0.5])
