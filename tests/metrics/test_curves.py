"""Risk–coverage and AURC, ROC and precision–recall points: by hand, by brute force over
every order of the ties, and against scikit-learn."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_curve, roc_curve

from _profiles import examples
from _registry import normal_weights
from confcal import (
    UndefinedMetricWarning,
    ValidationError,
    aurc,
    auroc,
    pr_curve_points,
    risk_coverage_curve,
    roc_curve_points,
)
from confcal.testing import calibration_data, weighted_calibration_data

PROPERTY = settings(max_examples=examples(60), deadline=None)


def brute_force_aurc(correct, confidence, *, excess=False) -> Fraction:
    """The mean over every order of the tied rows of (1/n) Σ_k errors_k / k, exactly."""
    n = len(correct)
    total, orders = Fraction(0), 0
    for perm in itertools.permutations(range(n)):
        rank = {i: p for p, i in enumerate(perm)}
        order = sorted(range(n), key=lambda i: (-confidence[i], rank[i]))
        errors, area = 0, Fraction(0)
        for k, i in enumerate(order, start=1):
            errors += not correct[i]
            area += Fraction(errors, k)
        total += area / n
        orders += 1
    value = total / orders
    if excess:
        n_errors = sum(not v for v in correct)
        best = sum((Fraction(max(0, k - (n - n_errors)), k) for k in range(1, n + 1)),
                   Fraction(0)) / n
        value -= best
    return value


# --- risk–coverage and AURC -------------------------------------------------------------
def test_aurc_by_hand():
    # most confident first: right, wrong, right, wrong: (0/1 + 1/2 + 1/3 + 2/4) / 4 = 1/3
    assert aurc([1, 0, 1, 0], [0.9, 0.7, 0.6, 0.2]) == pytest.approx(1 / 3, abs=1e-15)
    # best order right, right, wrong, wrong: (0 + 0 + 1/3 + 2/4) / 4 = 5/24; E = 1/8
    assert aurc([1, 0, 1, 0], [0.9, 0.7, 0.6, 0.2], excess=True) == pytest.approx(
        1 / 8, abs=1e-15)


def test_a_tie_is_the_mean_over_its_orders():
    # (0.6 right, 0.6 wrong) tied: E_2 is 0 or 1, 1/2 on average: (0 + 1/4 + 1/3 + 1/2)/4
    assert aurc([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.2]) == pytest.approx(13 / 48, abs=1e-15)
    # the two orders, one by one: (0 + 0 + 1/3 + 1/2)/4 and (0 + 1/2 + 1/3 + 1/2)/4
    assert (5 / 24 + 1 / 3) / 2 == pytest.approx(13 / 48)


def test_all_tied_is_the_error_rate():
    # E_k = k·e/n in expectation, so every risk is e/n and so is the mean
    assert aurc([1, 0, 0, 1, 1], [0.5] * 5) == pytest.approx(0.4, abs=1e-15)


def test_no_errors_and_no_correct():
    assert aurc([1, 1, 1], [0.2, 0.5, 0.9]) == 0.0
    assert aurc([1, 1, 1], [0.2, 0.5, 0.9], excess=True) == 0.0
    assert aurc([0, 0], [0.2, 0.9]) == 1.0
    assert aurc([0, 0], [0.2, 0.9], excess=True) == 0.0


@pytest.mark.parametrize("seed", range(40))
def test_aurc_matches_brute_force_over_every_tie_order(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    confidence = list(rng.choice([0.0, 0.3, 0.3, 0.6, 0.6, 1.0], size=n))
    correct = list(rng.uniform(size=n) < 0.5)
    for excess in (False, True):
        want = float(brute_force_aurc(correct, confidence, excess=excess))
        assert aurc(correct, confidence, excess=excess) == pytest.approx(want, abs=1e-14)


def test_weights_are_predictions():
    # weights 2, 1 on (0.9 wrong, 0.5 right) are the rows (wrong, wrong, right):
    # (1/1 + 2/2 + 2/3) / 3 = 8/9
    assert aurc([0, 1], [0.9, 0.5], sample_weight=[2, 1]) == pytest.approx(8 / 9, abs=1e-15)
    # a fractional total: W = 1.5 of one wrong row: unit 1 has risk 1, the last half too:
    # (1 + 0.5 * 1) / 1.5 = 1
    assert aurc([0], [0.9], sample_weight=[1.5]) == pytest.approx(1.0, abs=1e-15)
    # a row of weight 2.5 (wrong) then one of 1.5 (right): W = 4, units k = 1..4 hold
    # E = 1, 2, 2.5, 2.5: (1 + 1 + 2.5/3 + 2.5/4) / 4
    want = (1 + 1 + 2.5 / 3 + 2.5 / 4) / 4
    assert aurc([0, 1], [0.9, 0.5], sample_weight=[2.5, 1.5]) == pytest.approx(want, abs=1e-15)


def test_long_tie_runs_use_the_harmonic_sum():
    # 10,000 tied rows between 3 distinct ones: the digamma path against a plain loop over
    # k, with the errors of the tie growing by (its error rate) per prediction covered
    rng = np.random.default_rng(1)
    tie = rng.uniform(size=10_000) < 0.7
    confidence = np.r_[[0.9, 0.8], np.full(10_000, 0.5), [0.1]]
    correct = np.r_[[True, False], tie, [True]]
    rate = np.count_nonzero(~tie) / 10_000
    errors = np.r_[[0.0, 1.0], 1.0 + rate * np.arange(1, 10_001), [1.0 + 10_000 * rate]]
    want = (errors / np.arange(1, 10_004)).mean()
    assert aurc(correct, confidence) == pytest.approx(want, rel=1e-12)


def test_risk_coverage_curve_by_hand():
    curve = risk_coverage_curve([1, 0, 1, 0], [0.9, 0.6, 0.6, 0.2],
                                sample_weight=[1, 2, 1, 1])
    # rows 0.9 (1 right), 0.6 (2 wrong + 1 right), 0.2 (1 wrong); W = 5
    assert curve.threshold.tolist() == [0.9, 0.6, 0.2]
    assert curve.covered.tolist() == [1.0, 4.0, 5.0]
    assert curve.errors.tolist() == [0.0, 2.0, 3.0]
    assert curve.coverage.tolist() == [0.2, 0.8, 1.0]
    assert curve.risk.tolist() == [0.0, 0.5, 0.6]


def test_bad_input_is_refused():
    with pytest.raises(ValidationError, match="confidence must be finite"):
        aurc([1, 0], [0.5, float("nan")])
    with pytest.raises(ValidationError, match="sample_weight must be finite and >= 0"):
        risk_coverage_curve([1, 0], [0.5, 0.4], sample_weight=[1, -1])


@PROPERTY
@given(data=calibration_data(max_size=60, ties="heavy"), draw=st.data())
def test_aurc_row_order_and_bounds(data, draw):
    correct, confidence = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
    a = aurc(correct, confidence)
    assert type(a) is float
    assert aurc(correct[perm], confidence[perm]) == pytest.approx(a, abs=1e-12)
    e = aurc(correct, confidence, excess=True)
    assert -1e-12 <= e <= a + 1e-12 <= 1 + 2e-12
    # the first row of the curve is the error rate among the most confident only
    curve = risk_coverage_curve(correct, confidence)
    assert curve.covered.iloc[-1] == len(correct)
    assert curve.risk.iloc[-1] == pytest.approx(1 - correct.mean(), abs=1e-12)


@PROPERTY
@given(data=weighted_calibration_data(max_size=30, weights="integer", max_weight=4))
def test_aurc_integer_weights_are_repeated_rows(data):
    correct, confidence, weight = data
    counts = weight.astype(np.intp)
    for excess in (False, True):
        repeated = aurc(np.repeat(correct, counts), np.repeat(confidence, counts), excess=excess)
        assert aurc(correct, confidence, excess=excess, sample_weight=weight) == pytest.approx(
            repeated, abs=1e-12)
        unit = aurc(correct, confidence, excess=excess, sample_weight=np.ones(len(correct)))
        assert unit == pytest.approx(aurc(correct, confidence, excess=excess), abs=1e-12)


# --- ROC and PR ---------------------------------------------------------------------------
def test_roc_and_pr_by_hand():
    roc = roc_curve_points([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3])
    # +inf: nothing; 0.9: 1 of 2 right; 0.6: both right and 1 of 2 wrong; 0.3: everything
    assert roc.threshold.tolist() == [math.inf, 0.9, 0.6, 0.3]
    assert roc.tpr.tolist() == [0.0, 0.5, 1.0, 1.0]
    assert roc.fpr.tolist() == [0.0, 0.0, 0.5, 1.0]
    pr = pr_curve_points([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3])
    assert pr.precision.tolist() == pytest.approx([1.0, 1.0, 2 / 3, 0.5])
    assert pr.recall.tolist() == [0.0, 0.5, 1.0, 1.0]


def test_one_class_warns_and_gives_nan():
    with pytest.warns(UndefinedMetricWarning, match="no errors"):
        roc = roc_curve_points([1, 1], [0.2, 0.7])
    assert roc.fpr.isna().all() and roc.tpr.tolist() == [0.0, 0.5, 1.0]
    with pytest.warns(UndefinedMetricWarning, match="no correct predictions"):
        pr = pr_curve_points([0, 0], [0.2, 0.7])
    assert pr.recall.isna().all()


def trapezoid_area(roc) -> float:
    return float(np.trapezoid(roc.tpr, roc.fpr))


@PROPERTY
@given(data=st.one_of(
    weighted_calibration_data(max_size=60, ties="heavy", single_class=False, weights="float"),
    weighted_calibration_data(max_size=60, ties="some", single_class=False, weights="integer")),
    weighted=st.booleans())
def test_roc_and_pr_points_equal_sklearn(data, weighted):
    correct, confidence, weight = data
    w = weight if weighted else None
    if weighted:
        # a subnormal weight (5e-324) keeps too few digits for a class total to survive
        assume(normal_weights(weight))
        assume(weight[correct].sum() > 0 and weight[~correct].sum() > 0)
    fpr, tpr, thresholds = roc_curve(correct, confidence, sample_weight=w,
                                     drop_intermediate=False)
    roc = roc_curve_points(correct, confidence, sample_weight=w)
    np.testing.assert_array_equal(roc.threshold, thresholds)
    np.testing.assert_allclose(roc.fpr, fpr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(roc.tpr, tpr, rtol=0, atol=1e-12)
    assert trapezoid_area(roc) == pytest.approx(auroc(correct, confidence, sample_weight=w),
                                                abs=1e-12)
    precision, recall, thresholds = precision_recall_curve(correct, confidence, sample_weight=w,
                                                           drop_intermediate=False)
    pr = pr_curve_points(correct, confidence, sample_weight=w)
    # scikit-learn lists the thresholds increasing and the +inf point last
    np.testing.assert_array_equal(pr.threshold[1:], thresholds[::-1])
    np.testing.assert_allclose(pr.precision, precision[::-1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(pr.recall, recall[::-1], rtol=0, atol=1e-12)


@PROPERTY
@given(data=calibration_data(max_size=60, ties="heavy", single_class=False), draw=st.data())
def test_curves_never_depend_on_row_order(data, draw):
    correct, confidence = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (roc_curve_points, pr_curve_points, risk_coverage_curve):
            a, b = fn(correct, confidence), fn(correct[perm], confidence[perm])
            np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=1e-12)
