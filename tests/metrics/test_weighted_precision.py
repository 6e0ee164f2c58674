"""Weighted sums that keep their digits: exact totals, prefix sums within an ulp, and
weighted metrics that match their integer-weight equivalents as n grows."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from _profiles import examples
from confcal.metrics._ranking import accurate_cumsum, accurate_dot, exact_sum, grouped_sum

weights = st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 1e3), st.floats(0.5, 2.0),
                             st.floats(1e-300, 1e300)), min_size=1, max_size=200)


@settings(max_examples=examples(100), deadline=None)
@given(w=weights)
def test_exact_sum_is_the_sum_of_the_fractions(w):
    arr = np.array(w)
    assert exact_sum(arr) == sum((Fraction(x) for x in w), Fraction(0))


@settings(max_examples=examples(100), deadline=None)
@given(w=weights)
def test_accurate_cumsum_is_within_a_few_ulps_of_every_exact_prefix(w):
    arr = np.array(w)
    got = accurate_cumsum(arr)
    assert got[0] == 0.0 and got.shape == (len(w) + 1,)
    exact = Fraction(0)
    for i, x in enumerate(w):  # any spread of weights: about one rounding per prefix
        exact += Fraction(x)
        assert abs(Fraction(float(got[i + 1])) - exact) <= 2 * math.ulp(float(exact))


wide = st.lists(st.one_of(st.just(0.0), st.floats(1e-300, 1e300),
                          st.floats(5e-324, 1e-300)), min_size=1, max_size=150)


@settings(max_examples=examples(100), deadline=None)
@given(w=wide, groups=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_sums_keep_their_digits_for_weights_across_the_whole_float_range(w, groups, seed):
    arr = np.array(w)
    group = np.random.default_rng(seed).integers(0, groups, size=arr.shape[0])
    got = grouped_sum(group, arr, groups)
    for k in range(groups):
        exact = exact_sum(arr[group == k])
        assert abs(Fraction(float(got[k])) - exact) <= 2 * math.ulp(float(exact))
    prefix = accurate_cumsum(arr)
    exact = Fraction(0)
    for i, x in enumerate(w):
        exact += Fraction(x)
        assert abs(Fraction(float(prefix[i + 1])) - exact) <= 2 * math.ulp(float(exact))


def test_weights_from_1e_300_to_1e300_by_hand():
    # 1e300 + 1e-300 + 1e300: a running float sum is exact here too, but 1e-300 after
    # 1e300 is gone, and the sum of 1e-300 three times must keep its digits as well
    w = np.array([1e-300, 1e-300, 1e-300, 1e300, 1e-300, 1e300])
    prefix = accurate_cumsum(w)
    assert prefix[3] == float(Fraction(1e-300) * 3) and prefix[-1] == 2e300
    assert grouped_sum(np.array([0, 0, 0, 1, 0, 1]), w, 2).tolist() == [
        float(Fraction(1e-300) * 4), 2e300]
    # 0.1 + 0.2 + 0.3 (exact sum rounds to 0.6) next to 1e-300: still 0.6
    w = np.array([0.1, 1e-300, 0.2, 0.3])
    assert accurate_cumsum(w)[-1] == 0.6 and grouped_sum(np.zeros(4, dtype=np.int64), w,
                                                         1)[0] == 0.6
    # the metrics of weights 1e-300..1e300 as of the same weights scaled: AUROC pairs
    # (correct 0.9 w=1e300) beat (incorrect 0.1 w=1e-300) and (incorrect 0.5 w=1e300):
    # (1e300·1e-300 + 1e300·1e300) / (1e300 · (1e300 + 1e-300)) = 1 to the last digit
    y, c = [1, 0, 0], [0.9, 0.1, 0.5]
    assert confcal.auroc(y, c, sample_weight=[1e300, 1e-300, 1e300]) == 1.0


def test_the_hand_sums():
    # 0.1 + 0.2 + 0.3 as floats: 0.6000000000000000055... exactly; the running float sum
    # rounds twice and gives 0.6000000000000001, the exact sum rounds once to 0.6
    w = np.array([0.1, 0.2, 0.3])
    assert float(exact_sum(w)) == 0.6 and np.cumsum(w)[-1] == 0.6000000000000001
    assert accurate_cumsum(w)[-1] == 0.6
    assert abs(accurate_dot(np.ones(3), w) - 0.6) <= math.ulp(0.6)  # pairwise in a block


def test_report_ceiling_equals_ecarb_ceiling_to_the_last_bit():
    # the example that differed in the last digit (5.135079255685734 vs ...733)
    kw = {"sample_weight": [1, 6, 0.451]}
    rep = confcal.calibration_report([0, 1, 0], [0, 0, 0], budgets=[0.1], **kw)
    assert rep.ecarb_ceiling[0.1] == confcal.ecarb_ceiling([0, 1, 0], budget=0.1, **kw)
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        y = rng.uniform(size=n) < 0.6
        c = np.round(rng.uniform(size=n), 1)
        w = rng.uniform(0, 7, size=n)
        if y.all() or not y.any():  # AUROC (in the report) needs both classes
            continue
        for b in (0.1, 0.3, 0.77):
            got = confcal.calibration_report(y, c, budgets=[b], sample_weight=w).ecarb_ceiling[b]
            assert got == confcal.ecarb_ceiling(y, budget=b, sample_weight=w)


def test_weights_of_07_give_what_weights_of_7_give_at_1e6_rows():
    # One weight for every row changes no metric: 0.7 (not exactly 7/10) and 7 (whole, so
    # every sum is exact) must agree. A running float sum drifted 9.3e-12 in AUROC here.
    n = 1_000_000
    rng = np.random.default_rng(0)
    c = rng.beta(5, 2, size=n)
    y = rng.uniform(size=n) < c
    budgets = (0.1, 0.3)
    a = confcal.calibration_report(y, c, sample_weight=np.full(n, 0.7), budgets=budgets)
    b = confcal.calibration_report(y, c, sample_weight=np.full(n, 7.0), budgets=budgets)
    assert abs(a.auroc - b.auroc) <= 1e-13 * b.auroc
    for budget in budgets:
        assert abs(a.ecarb[budget] - b.ecarb[budget]) <= 1e-13 * b.ecarb[budget]
        assert abs(a.ecarb_ceiling[budget] - b.ecarb_ceiling[budget]) <= (
            1e-13 * b.ecarb_ceiling[budget])
    assert abs(a.brier - b.brier) <= 1e-13 * b.brier
    # and whole weights equal the unweighted report (repeated rows) bit for bit
    u = confcal.calibration_report(y, c, budgets=budgets)
    assert b.auroc == u.auroc and dict(b.ecarb) == dict(u.ecarb)


@settings(max_examples=examples(100), deadline=None)
@given(w=weights, seed=st.integers(0, 2**32 - 1))
def test_grouped_sum_is_within_a_few_ulps_of_each_exact_group_sum(w, seed):
    from confcal.metrics._ranking import grouped_sum

    arr = np.array(w)
    group = np.random.default_rng(seed).integers(0, 4, size=arr.shape[0])
    got = grouped_sum(group, arr, 4)
    positive = arr[arr > 0]
    if positive.size and np.ptp(np.frexp(positive)[1]) > 8:
        return  # the np.bincount fallback: one rounding per row
    for g in range(4):
        exact = exact_sum(arr[group == g])
        assert abs(Fraction(float(got[g])) - exact) <= 4 * math.ulp(float(exact))


def test_a_weighted_sketch_of_tied_rows_keeps_its_digits():
    # 2-decimal confidences: ~10,000 rows per cell at 1e6 rows, summed per cell exactly
    n = 1_000_000
    rng = np.random.default_rng(1)
    c = np.round(rng.beta(5, 2, size=n), 2)
    y = rng.uniform(size=n) < c
    budgets = (0.1, 0.3)
    a = confcal.CalibrationSketch.from_arrays(y, c, sample_weight=np.full(n, 0.7))
    b = confcal.CalibrationSketch.from_arrays(y, c)
    ra, rb = a.report(budgets=budgets), b.report(budgets=budgets)
    for name in ("auroc", "ece", "brier"):
        assert abs(getattr(ra, name) - getattr(rb, name)) <= 1e-13 * getattr(rb, name), name
    for budget in budgets:
        assert abs(ra.ecarb[budget] - rb.ecarb[budget]) <= 1e-13 * rb.ecarb[budget]
