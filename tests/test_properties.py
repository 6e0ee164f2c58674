"""Hypothesis properties of the fast metrics in confcal.metrics and confcal.metrics.bootstrap.

The yardstick is confcal.testing: slow references written from docs/metrics.md "Calibration
semantics" alone (pairwise AUROC, loop ECE/MCE, exact Brier, ECARB by brute force over every
order of the tied rows). The invariants shared by every metric (agreement with the reference,
bounds, row order, unit and integer weights, monotone transforms) run over the registry of
tests/_registry.py in tests/test_common.py; the metric-specific properties are here.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, roc_auc_score

from _profiles import examples
from _registry import (
    PROPERTY,
    TIE_MODES,
    TOL,
    _ecarb_case,
    any_data,
    call,
    close,
    normal_weights,
    single_class,
    weighted_any,
)
from confcal.exceptions import UndefinedMetricWarning
from confcal.metrics import (
    auroc,
    brier,
    calibration_report,
    ecarb,
    ecarb_ceiling,
    ecarb_curve,
    ece,
    mce,
    reliability_bins,
    review_count,
)
from confcal.metrics.bootstrap import bootstrap_ci
from confcal.testing import (
    calibration_data,
    grouped_calibration_data,
    reference_bins,
    reference_ecarb,
    reference_ecarb_ceiling,
    reference_ece,
    reference_mce,
    reference_review_count,
    review_budgets,
    weighted_calibration_data,
)

SLOW_PROPERTY = settings(max_examples=examples(30), deadline=None)


def k_is_clear_cut(n: int, budget: float) -> bool:
    """b·n is a whole number or clearly not one.

    The reference reads b from its decimal repr, so 0.9999999999999999 · 2 = 1.9999999999999998
    reviews 1. Budgets that land within a hair of a whole number are where a "robust" rounding
    of b·n can differ from that rule; test_review_count_from_the_decimal_budget pins them down,
    and the other properties step around them so that one disagreement does not mask others.
    """
    exact = Fraction(repr(float(budget))) * n
    nearest = round(exact)
    return exact == nearest or abs(exact - nearest) > Fraction(1, 10**6)


# --------------------------------------------------------------------------------------
# AUROC and Brier against scikit-learn
# --------------------------------------------------------------------------------------


@PROPERTY
@given(calibration_data(min_size=2, max_size=200, ties="heavy", single_class=False))
def test_auroc_equals_sklearn_on_tied_data(data):
    correct, confidence = data
    assert close(auroc(correct, confidence), roc_auc_score(correct, confidence))


@PROPERTY
@given(weighted_calibration_data(min_size=2, max_size=200, ties="heavy", single_class=False,
                                 weights="float"))
@example(data=(np.array([True, False]), np.array([0.5, 0.25]), np.array([1e-200, 1e-200])))
def test_weighted_auroc_equals_sklearn(data):
    correct, confidence, weight = data
    assume(normal_weights(weight))
    assume(weight[correct].sum() > 0 and weight[~correct].sum() > 0)
    want = roc_auc_score(correct, confidence, sample_weight=weight)
    assert close(auroc(correct, confidence, sample_weight=weight), want)


@PROPERTY
@given(weighted_calibration_data(max_size=200, weights="float"))
def test_brier_equals_sklearn(data):
    correct, confidence, weight = data
    assume(normal_weights(weight))
    labels = [False, True]  # sklearn needs both labels named when a draw is single-class
    assert close(brier(correct, confidence), brier_score_loss(correct, confidence, labels=labels))
    assert close(
        brier(correct, confidence, sample_weight=weight),
        brier_score_loss(correct, confidence, sample_weight=weight, labels=labels),
    )


# --------------------------------------------------------------------------------------
# Binning
# --------------------------------------------------------------------------------------


@st.composite
def at_uniform_edges(draw, max_size: int = 60):
    """Confidences on the float bin edges i/M and the floats just either side of them."""
    n_bins = draw(st.integers(1, 20))
    points = set()
    for i in range(n_bins + 1):
        edge = i / n_bins
        points |= {edge, math.nextafter(edge, 0.0), math.nextafter(edge, 1.0)}
    pool = sorted(p for p in points if 0.0 <= p <= 1.0)
    confidence = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=max_size))
    correct = draw(st.lists(st.booleans(), min_size=len(confidence), max_size=len(confidence)))
    return np.array(correct, dtype=bool), np.array(confidence), n_bins


@PROPERTY
@given(at_uniform_edges())
@example((np.array([True, False]), np.array([math.nextafter(0.9, 0.0), 0.9]), 10))
def test_uniform_bins_at_float_edges(data):
    # 0.8999999999999999 * 10 == 9.0 in float, but it lies below the edge 9/10: bin 8.
    correct, confidence, n_bins = data
    for fn, ref in ((ece, reference_ece), (mce, reference_mce)):
        got = fn(correct, confidence, n_bins=n_bins, binning="uniform")
        want = ref(correct, confidence, n_bins=n_bins, binning="uniform")
        assert close(got, want), (fn.__name__, got, want)
    _check_reliability_bins(correct, confidence, n_bins, "uniform")


@PROPERTY
@given(data=any_data(max_size=100), n_bins=st.integers(1, 25),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_ece_mce_any_n_bins(data, n_bins, binning):
    correct, confidence = data
    for fn, ref in ((ece, reference_ece), (mce, reference_mce)):
        got = fn(correct, confidence, n_bins=n_bins, binning=binning)
        want = ref(correct, confidence, n_bins=n_bins, binning=binning)
        assert close(got, want), (fn.__name__, got, want)
    assert mce(correct, confidence, n_bins=n_bins, binning=binning) >= ece(
        correct, confidence, n_bins=n_bins, binning=binning) - TOL


RELIABILITY_COLUMNS = ["bin", "lower", "upper", "count", "mean_confidence", "accuracy", "gap"]


def _check_reliability_bins(correct, confidence, n_bins, binning, sample_weight=None):
    frame = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning,
                             sample_weight=sample_weight)
    if sample_weight is None:
        assert list(frame.columns) == RELIABILITY_COLUMNS
    else:
        assert set(RELIABILITY_COLUMNS) <= set(frame.columns)
    want = reference_bins(correct, confidence, n_bins=n_bins, binning=binning,
                          sample_weight=sample_weight)
    assert len(frame) == len(want), (frame, want)
    for (_, row), ref in zip(frame.iterrows(), want, strict=True):
        if binning == "uniform":
            assert row["bin"] == ref["bin"]
            assert row["lower"] == ref["bin"] / n_bins
            assert row["upper"] == (ref["bin"] + 1) / n_bins
        else:  # the confidences of the rows of positive weight
            assert (row["lower"], row["upper"]) == (ref["lower"], ref["upper"]), (row, ref)
        assert row["count"] == ref["count"], (row, ref)
        if "weight" in frame.columns:
            assert close(row["weight"], ref["weight"]), (row, ref)
        assert close(row["mean_confidence"], ref["mean_confidence"]), (row, ref)
        assert close(row["accuracy"], ref["accuracy"]), (row, ref)
        assert close(row["gap"], ref["gap"]), (row, ref)  # mean_confidence - accuracy
        assert row["lower"] <= row["mean_confidence"] + TOL
        assert row["mean_confidence"] <= row["upper"] + TOL
    return frame


@PROPERTY
@given(data=weighted_any(max_size=40), n_bins=st.integers(1, 12),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_weighted_reliability_bins_match_reference(data, n_bins, binning):
    # Zero weights included: such rows count in `count` but not in `weight`, and a bin
    # holding only zero-weight rows has no accuracy and is not shown.
    correct, confidence, weight = data
    _check_reliability_bins(correct, confidence, n_bins, binning, sample_weight=weight)


@PROPERTY
@given(data=any_data(max_size=100), n_bins=st.integers(1, 25),
       binning=st.sampled_from(["quantile", "uniform"]), min_count=st.integers(0, 6))
def test_reliability_bins_match_reference(data, n_bins, binning, min_count):
    correct, confidence = data
    frame = _check_reliability_bins(correct, confidence, n_bins, binning)
    # The bins carry the ECE: sum of count/n * |gap|.
    total = float((frame["count"] / len(correct) * frame["gap"].abs()).sum())
    assert close(total, ece(correct, confidence, n_bins=n_bins, binning=binning), 1e-9)
    # min_count hides sparse bins from the table and changes nothing else.
    sparse = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning,
                              min_count=min_count)
    kept = frame[frame["count"] >= min_count].reset_index(drop=True)
    pd.testing.assert_frame_equal(sparse.reset_index(drop=True), kept)


# --------------------------------------------------------------------------------------
# ECARB
# --------------------------------------------------------------------------------------


@PROPERTY
@given(data=any_data(max_size=8), budget=review_budgets())
def test_ecarb_expected_equals_brute_force_over_tie_orders(data, budget):
    correct, confidence = data
    assume(k_is_clear_cut(len(correct), budget))
    want = reference_ecarb(correct, confidence, budget=budget, ties="expected")
    case = _ecarb_case("expected", budget, 8)
    got = call(case, correct, confidence)
    assert close(got, want), (correct.tolist(), confidence.tolist(), budget, got, want)


@PROPERTY
@given(data=st.one_of([weighted_calibration_data(max_size=4, ties=t, weights="integer",
                                                 max_weight=2) for t in TIE_MODES]),
       budget=review_budgets(), ties=st.sampled_from(["expected", "stable", "pessimistic",
                                                      "optimistic"]))
def test_weighted_ecarb_is_the_brute_force_ecarb_of_the_repeated_rows(data, budget, ties):
    # Integer weights are copies of rows (np.repeat keeps a row's copies together, so
    # "stable" reads them in place): the weighted fast metric and the weighted reference
    # must both equal the reference that enumerates every order of the repeated rows.
    correct, confidence, weight = data
    rows = np.repeat(np.arange(len(correct)), weight.astype(np.intp))
    assume(k_is_clear_cut(len(rows), budget))
    want = reference_ecarb(correct[rows], confidence[rows], budget=budget, ties=ties)
    ref = reference_ecarb(correct, confidence, budget=budget, ties=ties, sample_weight=weight)
    assert close(ref, want), (ref, want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = ecarb(correct, confidence, budget=budget, ties=ties, sample_weight=weight)
        ceiling = ecarb_ceiling(correct, budget=budget, sample_weight=weight)
    assert close(got, want), (got, want)
    assert close(ceiling, reference_ecarb_ceiling(correct[rows], budget=budget))


@PROPERTY
@given(data=st.one_of([weighted_calibration_data(max_size=60, ties=t, weights="float",
                                                 max_weight=3) for t in TIE_MODES]),
       budget=review_budgets(), ties=st.sampled_from(["expected", "stable", "pessimistic",
                                                      "optimistic"]))
def test_weighted_ecarb_with_real_weights_matches_reference(data, budget, ties):
    correct, confidence, weight = data
    assume(normal_weights(weight, 1e-100))
    # K = floor(b*W) is a step function of W, and the fast total is a float sum: skip
    # totals within float rounding of a step
    exact = Fraction(budget) * sum((Fraction(w) for w in weight.tolist()), Fraction(0))
    assume(abs(exact - round(exact)) > Fraction(1, 10**6) or exact == round(exact))
    want = reference_ecarb(correct, confidence, budget=budget, ties=ties, sample_weight=weight)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = ecarb(correct, confidence, budget=budget, ties=ties, sample_weight=weight)
        ceiling = ecarb_ceiling(correct, budget=budget, sample_weight=weight)
    assert close(got, want, 1e-9 * max(1.0, abs(want))), (got, want)
    assert close(ceiling, reference_ecarb_ceiling(correct, budget=budget,
                                                  sample_weight=weight), 1e-9 * max(1.0, ceiling))


@PROPERTY
@given(data=any_data(max_size=150), budget=review_budgets(),
       ties=st.sampled_from(["stable", "pessimistic", "optimistic"]))
def test_ecarb_deterministic_tie_rules_match_reference(data, budget, ties):
    correct, confidence = data
    assume(k_is_clear_cut(len(correct), budget))
    want = reference_ecarb(correct, confidence, budget=budget, ties=ties)
    got = call(_ecarb_case(ties, budget, 150), correct, confidence)
    assert close(got, want), (correct.tolist(), confidence.tolist(), budget, ties, got, want)


@PROPERTY
@given(data=any_data(max_size=150), budget=review_budgets())
def test_ecarb_expected_between_pessimistic_and_optimistic(data, budget):
    correct, confidence = data
    assume(not correct.all())
    lo = ecarb(correct, confidence, budget=budget, ties="pessimistic")
    mid = ecarb(correct, confidence, budget=budget, ties="expected")
    hi = ecarb(correct, confidence, budget=budget, ties="optimistic")
    ceiling = ecarb_ceiling(correct, budget=budget)
    assert 0.0 <= lo <= mid + TOL and mid <= hi + TOL and hi <= ceiling * (1 + TOL)
    stable = ecarb(correct, confidence, budget=budget, ties="stable")
    assert 0.0 <= stable <= ceiling * (1 + TOL)
    if len(np.unique(confidence)) == len(confidence):  # no ties: every rule agrees
        assert close(mid, ecarb(correct, confidence, budget=budget, ties="stable"))
        assert close(lo, hi)


@PROPERTY
@given(data=calibration_data(max_size=200, ties="all"), budget=review_budgets())
def test_ecarb_all_equal_confidence_is_exactly_one(data, budget):
    correct, confidence = data
    assume(not correct.all())
    assert ecarb(correct, confidence, budget=budget) == 1.0


@PROPERTY
@given(correct=st.lists(st.booleans(), min_size=1, max_size=300).map(np.array),
       budget=review_budgets())
@example(correct=np.array([False] * 20 + [True] * 80), budget=0.3)
@example(correct=np.array([False] * 10 + [True] * 90), budget=0.29)
def test_ecarb_ceiling_matches_reference(correct, budget):
    assume(k_is_clear_cut(len(correct), budget))
    want = reference_ecarb_ceiling(correct, budget=budget)
    if math.isnan(want):
        with pytest.warns(UndefinedMetricWarning):
            got = ecarb_ceiling(correct, budget=budget)
    else:
        got = ecarb_ceiling(correct, budget=budget)
        assert got >= 1.0 - TOL
    assert type(got) is float
    assert close(got, want), (len(correct), int((~correct).sum()), budget, got, want)


@PROPERTY
@given(data=any_data(max_size=100, single_class=False, min_size=2),
       budgets=st.lists(review_budgets(), min_size=1, max_size=5, unique=True),
       ties=st.sampled_from(["expected", "stable", "pessimistic", "optimistic"]))
def test_ecarb_curve_rows_match_the_scalar_functions(data, budgets, ties):
    correct, confidence = data
    n, n_errors = len(correct), int((~correct).sum())
    assume(all(k_is_clear_cut(n, b) for b in budgets))
    frame = ecarb_curve(correct, confidence, budgets=budgets, ties=ties)
    assert list(frame.columns) == ["budget", "k", "errors_caught", "ecarb", "ceiling"]
    assert frame["budget"].tolist() == budgets
    for row, b in zip(frame.itertuples(index=False), budgets, strict=True):
        assert row.k == reference_review_count(b, n), (n, b, row.k)
        assert close(row.ecarb, ecarb(correct, confidence, budget=b, ties=ties))
        assert close(row.ceiling, ecarb_ceiling(correct, budget=b))
        assert close(row.errors_caught / ((row.k / n) * n_errors), row.ecarb, 1e-9)


@PROPERTY
@given(budget=review_budgets(), n=st.integers(1, 10**6))
@example(budget=0.29, n=100)
def test_review_count_matches_reference(budget, n):
    assume(k_is_clear_cut(n, budget))
    k = review_count(budget, n)
    assert type(k) is int and k == reference_review_count(budget, n), (budget, n, k)


@pytest.mark.parametrize(
    "n, budget, k",
    [
        (100, 0.29, 29),  # 0.29 * 100 == 28.999999999999996 in float
        (10, 0.7, 7),  # 0.7 * 10 == 7.000000000000001
        (1000, 0.001, 1),
        (100, 0.285, 28),
        (3, 0.1, 1),  # at least one row is reviewed
        (100, 0.28999999999999, 29),  # within 1e-9 of whole: float noise, not intent
        (100, 0.2899, 28),  # a budget deliberately below 29 of 100
        (2, 0.9999999999999999, 2),  # 1.9999999999999998 is 2 up to float noise
        (6, 2 / 6, 2),  # budgets computed as k/n review k
        (3, 1 / 3, 1),
    ],
)
def test_review_count_from_the_decimal_budget(n, budget, k):
    # k from review_count and from the curve's k column, against the reference rule
    # k = min(n, max(1, floor(b*n))), b*n within a relative 1e-9 of a whole number taken
    # as that number.
    assert reference_review_count(budget, n) == k
    assert review_count(budget, n) == k
    correct = np.zeros(n, dtype=bool)
    frame = ecarb_curve(correct, np.linspace(0, 1, n), budgets=[budget])
    assert int(frame["k"].iloc[0]) == k


def test_paper_worked_example():
    # n=100, E=20, b=0.3: 15 errors among the 30 least confident -> 15 / (0.3 * 20) = 2.5;
    # ceiling min(30, 20) * 100 / (30 * 20) = 3.33.
    correct = np.ones(100, dtype=bool)
    correct[:30:2] = False
    correct[95:] = False
    confidence = np.arange(100) / 100
    assert ecarb(correct, confidence, budget=0.3) == pytest.approx(2.5, abs=TOL)
    assert ecarb_ceiling(correct, budget=0.3) == pytest.approx(10 / 3, abs=TOL)


# --------------------------------------------------------------------------------------
# calibration_report
# --------------------------------------------------------------------------------------


@PROPERTY
@given(data=any_data(max_size=100),
       budgets=st.lists(review_budgets(), min_size=1, max_size=4, unique=True),
       n_bins=st.integers(1, 12), binning=st.sampled_from(["quantile", "uniform"]))
def test_calibration_report_fields_equal_the_functions(data, budgets, n_bins, binning):
    correct, confidence = data
    undefined = single_class(correct)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = calibration_report(correct, confidence, budgets=budgets, n_bins=n_bins,
                                    binning=binning)
    warned = any(issubclass(w.category, UndefinedMetricWarning) for w in caught)
    assert warned == undefined  # one class: AUROC (and maybe ECARB) undefined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        assert report.n == len(correct)
        assert report.n_errors == int((~correct).sum())
        assert close(report.accuracy, float(correct.mean()))
        assert close(report.auroc, auroc(correct, confidence))
        assert close(report.ece, ece(correct, confidence, n_bins=n_bins, binning=binning))
        assert close(report.mce, mce(correct, confidence, n_bins=n_bins, binning=binning))
        assert close(report.brier, brier(correct, confidence))
        assert list(report.ecarb) == budgets and list(report.ecarb_ceiling) == budgets
        for b in budgets:
            assert close(report.ecarb[b], ecarb(correct, confidence, budget=b))
            assert close(report.ecarb_ceiling[b], ecarb_ceiling(correct, budget=b))
        bins = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning)
    pd.testing.assert_frame_equal(
        report.bins.reset_index(drop=True), bins.reset_index(drop=True),
        check_dtype=False, rtol=0, atol=TOL,
    )
    as_dict = report.to_dict()
    for name in ("n", "n_errors", "accuracy", "auroc", "ece", "mce", "brier"):
        assert close(float(as_dict[name]), float(getattr(report, name)))
    assert isinstance(report.to_frame(), pd.DataFrame)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.ece = 0.0  # type: ignore[misc]


# --------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------

BOOT_METRICS = ("auroc", "ece", "brier", "ecarb")


def _quiet_bootstrap(*args, **kwargs) -> pd.DataFrame:
    # Resamples may be single-class; how the bootstrap reports that is not the property here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return bootstrap_ci(*args, **kwargs)


@SLOW_PROPERTY
@given(data=grouped_calibration_data(min_size=4, max_size=80, single_class=False, max_groups=12),
       seed=st.integers(0, 2**32 - 1))
def test_bootstrap_is_reproducible_and_estimates_the_metrics(data, seed):
    correct, confidence, groups = data
    kwargs = {"groups": groups, "metrics": BOOT_METRICS, "budget": 0.3, "n_resamples": 60,
              "seed": seed}
    first = _quiet_bootstrap(correct, confidence, **kwargs)
    again = _quiet_bootstrap(correct, confidence, **kwargs)
    pd.testing.assert_frame_equal(first, again)
    # ECARB's row names its budget
    assert first["metric"].tolist() == ["auroc", "ece", "brier", "ecarb@0.3"]
    estimates = dict(zip(first["metric"], first["estimate"], strict=True))
    assert close(estimates["auroc"], auroc(correct, confidence))
    assert close(estimates["ece"], ece(correct, confidence))
    assert close(estimates["brier"], brier(correct, confidence))
    assert close(estimates["ecarb@0.3"], ecarb(correct, confidence, budget=0.3))
    for row in first.itertuples(index=False):
        assert row.low <= row.high, row


@SLOW_PROPERTY
@given(data=grouped_calibration_data(min_size=4, max_size=80, single_class=False, max_groups=12),
       seed=st.integers(0, 2**32 - 1))
@example(data=(np.array([0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1], dtype=bool),
               np.array([0.3, 0.3, 0.7, 0.2, 0.4, 0.1, 0.3, 0.5, 0.7, 0.5, 0.4]),
               np.arange(11)), seed=0)
def test_bootstrap_interval_contains_the_estimate(data, seed):
    # The promise: "the interval contains the estimate". A plain percentile
    # interval does not guarantee it for a biased statistic such as ECE (resampled ECEs sit
    # above the full-data ECE); the example is such a case at the default 1000 resamples.
    correct, confidence, groups = data
    frame = _quiet_bootstrap(correct, confidence, groups=groups, metrics=BOOT_METRICS,
                             budget=0.3, n_resamples=1000, seed=seed)
    for row in frame.itertuples(index=False):
        assert row.low - TOL <= row.estimate <= row.high + TOL, row


@SLOW_PROPERTY
@given(block=calibration_data(min_size=2, max_size=20, single_class=False),
       n_docs=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_bootstrap_resamples_whole_documents(block, n_docs, seed):
    # n_docs identical documents: any resample of documents holds n_docs copies of the same
    # rows, so every resampled metric equals the estimate and the interval has zero width.
    # (A row bootstrap would not: it would mix the rows.) Budget 0.5 over an even block keeps
    # b*n whole, so ECARB is also invariant to the copies.
    correct, confidence = block
    if len(correct) % 2:
        correct, confidence = correct[:-1], confidence[:-1]
        assume(not single_class(correct))
    m = len(correct)
    all_correct = np.tile(correct, n_docs)
    all_confidence = np.tile(confidence, n_docs)
    groups = np.repeat(np.arange(n_docs), m)
    frame = bootstrap_ci(all_correct, all_confidence, groups=groups, metrics=BOOT_METRICS,
                         budget=0.5, n_resamples=40, seed=seed)
    for row in frame.itertuples(index=False):
        assert close(row.low, row.estimate, 1e-9) and close(row.high, row.estimate, 1e-9), row


@SLOW_PROPERTY
@given(data=calibration_data(min_size=4, max_size=60, single_class=False),
       seed=st.integers(0, 2**32 - 1))
def test_bootstrap_one_row_per_document_is_a_row_bootstrap(data, seed):
    correct, confidence = data
    kwargs = {"metrics": BOOT_METRICS, "n_resamples": 40, "seed": seed}
    rows = _quiet_bootstrap(correct, confidence, **kwargs)
    docs = _quiet_bootstrap(correct, confidence, groups=np.arange(len(correct)), **kwargs)
    pd.testing.assert_frame_equal(rows, docs, check_exact=False, rtol=0, atol=TOL)


# --------------------------------------------------------------------------------------
# Invalid input: raise, naming the argument, the count and the first offending index
# --------------------------------------------------------------------------------------

PUBLIC = {
    "auroc": lambda y, c: auroc(y, c),
    "ece": lambda y, c: ece(y, c),
    "ece_uniform": lambda y, c: ece(y, c, binning="uniform"),
    "mce": lambda y, c: mce(y, c),
    "brier": lambda y, c: brier(y, c),
    "ecarb": lambda y, c: ecarb(y, c),
    "ecarb_curve": lambda y, c: ecarb_curve(y, c),
    "reliability_bins": lambda y, c: reliability_bins(y, c),
    "calibration_report": lambda y, c: calibration_report(y, c),
    "bootstrap_ci": lambda y, c: bootstrap_ci(y, c, n_resamples=5),
}


@pytest.mark.parametrize("name", PUBLIC)
@settings(max_examples=examples(30), deadline=None)
@given(data=calibration_data(min_size=2, max_size=30, single_class=False), draw=st.data())
def test_bad_confidence_is_reported_with_count_and_first_index(name, data, draw):
    correct, confidence = data
    n = len(correct)
    bad = sorted(draw.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    value = draw.draw(st.sampled_from(
        [math.nan, math.inf, -math.inf, -1e-300, math.nextafter(1.0, 2.0), 1.5, -0.5]))
    confidence = confidence.copy()
    confidence[bad] = value
    noun = "value" if len(bad) == 1 else "values"
    with pytest.raises(ValueError, match=rf"confidence.*\b{len(bad)} {noun}\b.*index {bad[0]}\b"):
        PUBLIC[name](correct, confidence)


@pytest.mark.parametrize("name", PUBLIC)
@settings(max_examples=examples(30), deadline=None)
@given(data=calibration_data(min_size=2, max_size=30, single_class=False), draw=st.data())
def test_bad_labels_are_reported_with_count_and_first_index(name, data, draw):
    correct, confidence = data
    n = len(correct)
    bad = sorted(draw.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    value = draw.draw(st.sampled_from([2.0, -1.0, 0.5, math.nan]))
    labels = correct.astype(float)
    labels[bad] = value
    noun = "value" if len(bad) == 1 else "values"
    with pytest.raises(ValueError, match=rf"correct.*\b{len(bad)} {noun}\b.*index {bad[0]}\b"):
        PUBLIC[name](labels, confidence)


@pytest.mark.parametrize("name", PUBLIC)
def test_length_mismatch_and_empty_input_raise(name):
    with pytest.raises(ValueError, match=r"same length.*3.*2|same length.*2.*3"):
        PUBLIC[name]([1, 0, 1], [0.5, 0.2])
    with pytest.raises(ValueError, match=r"must not be empty"):
        PUBLIC[name]([], [])


# --------------------------------------------------------------------------------------
# Scale invariance of the weighted metrics under any positive factor (not only 2**e)
# --------------------------------------------------------------------------------------

SCALES = st.one_of(st.sampled_from([0.7, 1 / 3, 1e-3, 1e3, 0.1, 3.0]), st.floats(1e-6, 1e6))
BIN_KEYS = ["bin", "lower", "upper", "count"]  # bin membership: promised exactly
AGGREGATE_KEYS = ["weight", "mean_confidence", "accuracy", "gap"]


def _rel_close(got: float, want: float, scale: float = 1.0) -> bool:
    # float aggregates: relative 1e-12, with an absolute floor for values that cancel to ~0
    return abs(got - want) <= 1e-12 * max(abs(want), 1e-3 * scale)


def _assert_same_bins(got: pd.DataFrame, want: pd.DataFrame, weight_scale: float = 1.0):
    assert len(got) == len(want), (got, want)
    for key in BIN_KEYS:
        assert got[key].tolist() == want[key].tolist(), (key, got, want)
    for key in AGGREGATE_KEYS:
        if key in want.columns:
            s = weight_scale if key == "weight" else 1.0
            for g, w in zip(got[key], want[key], strict=True):
                assert _rel_close(g, w * s, s), (key, got, want)


@PROPERTY
@given(data=st.one_of(weighted_any(), st.one_of(
           [weighted_calibration_data(max_size=60, ties=t, weights="float", max_weight=3)
            for t in TIE_MODES])),
       scale=SCALES, n_bins=st.integers(1, 12), binning=st.sampled_from(["quantile", "uniform"]))
@example(data=(np.array([False, False, False, True, False]), np.array([.1, .2, .3, .4, .5]),
               np.ones(5)), scale=0.7, n_bins=5, binning="quantile")  # the example
def test_weighted_bins_and_metrics_ignore_any_positive_scale(data, scale, n_bins, binning):
    correct, confidence, weight = data
    scaled = weight * scale
    # keep the scaled weights normal numbers, and zero where (and only where) they were
    assume(normal_weights(weight, 1e-290) and normal_weights(scaled, 1e-290))
    assume(np.array_equal(weight > 0, scaled > 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        want = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning,
                                sample_weight=weight)
        got = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning,
                               sample_weight=scaled)
        _assert_same_bins(got, want, weight_scale=scale)
        for fn in (ece, mce):
            a = fn(correct, confidence, n_bins=n_bins, binning=binning, sample_weight=weight)
            b = fn(correct, confidence, n_bins=n_bins, binning=binning, sample_weight=scaled)
            assert _rel_close(b, a), (fn.__name__, a, b)
        for fn in (brier, auroc):
            a, b = fn(correct, confidence, sample_weight=weight), fn(
                correct, confidence, sample_weight=scaled)
            assert (math.isnan(a) and math.isnan(b)) or _rel_close(b, a), (fn.__name__, a, b)


@PROPERTY
@given(data=any_data(max_size=80), n_bins=st.integers(1, 12),
       binning=st.sampled_from(["quantile", "uniform"]), value=st.sampled_from(
           [1.0, 0.7, 1 / 3, 7.0, 1e-3, 1e3]))
def test_equal_weights_give_the_unweighted_bins(data, n_bins, binning, value):
    # Equal weights of any size are no weights: same bins exactly, aggregates to 1e-12; unit
    # weights take the very same comparisons as no weights.
    correct, confidence = data
    plain = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning)
    weighted = reliability_bins(correct, confidence, n_bins=n_bins, binning=binning,
                                sample_weight=np.full(len(correct), value))
    plain = plain.assign(weight=plain["count"].astype(float))
    _assert_same_bins(weighted, plain, weight_scale=value)
    assert _rel_close(ece(correct, confidence, n_bins=n_bins, binning=binning,
                          sample_weight=np.full(len(correct), value)),
                      ece(correct, confidence, n_bins=n_bins, binning=binning))


@PROPERTY
@given(data=weighted_any(max_size=40), n_bins=st.integers(1, 12))
def test_integer_weighted_bins_are_repeated_rows_bin_for_bin(data, n_bins):
    correct, confidence, weight = data
    rows = np.repeat(np.arange(len(correct)), weight.astype(np.intp))
    assume(rows.size > 0)
    got = reliability_bins(correct, confidence, n_bins=n_bins, binning="quantile",
                           sample_weight=weight)
    got = got[got["weight"] > 0].reset_index(drop=True)
    want = reliability_bins(correct[rows], confidence[rows], n_bins=n_bins,
                            binning="quantile")
    assert got["bin"].tolist() == want["bin"].tolist()
    assert got["weight"].tolist() == want["count"].astype(float).tolist()
    for key in ("mean_confidence", "accuracy", "gap"):
        assert all(_rel_close(g, w) for g, w in zip(got[key], want[key], strict=True)), key


@PROPERTY
@given(data=weighted_any(max_size=40), scale=SCALES)
def test_weighted_sketch_ignores_any_positive_scale(data, scale):
    from confcal.metrics.sketch import CalibrationSketch

    correct, confidence, weight = data
    scaled = weight * scale
    assume(normal_weights(scaled, 1e-290) and np.array_equal(weight > 0, scaled > 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = CalibrationSketch.from_arrays(correct, confidence, sample_weight=weight).report()
        b = CalibrationSketch.from_arrays(correct, confidence, sample_weight=scaled).report()
    _assert_same_bins(b.bins, a.bins, weight_scale=scale)
    for key in ("ece", "mce", "brier", "auroc", "accuracy"):
        x, y = getattr(a, key), getattr(b, key)
        assert (math.isnan(x) and math.isnan(y)) or _rel_close(y, x), (key, x, y)
