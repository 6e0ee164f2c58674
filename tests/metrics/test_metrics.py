"""Hand-worked cases for confcal.metrics: every rule with its arithmetic in a comment."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import confcal
from confcal import (
    UndefinedMetricWarning,
    ValidationError,
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


def paper_example() -> tuple[list[int], list[float]]:
    # ConfBench's ECARB example: n=100, E=20; 15 errors among the 30 least confident.
    confidence = [i / 100 for i in range(100)]
    correct = [0] * 15 + [1] * 15 + [0] * 5 + [1] * 65
    return correct, confidence


# --- ECARB --------------------------------------------------------------------------------
def test_ecarb_paper_worked_example():
    correct, confidence = paper_example()
    # k = 0.3 * 100 = 30; 15 / ((30/100) * 20) = 15 / 6 = 2.5
    assert ecarb(correct, confidence, budget=0.3) == 2.5
    # ceiling: min(k, E) * n / (k * E) = 20 * 100 / (30 * 20) = 3.333...
    assert ecarb_ceiling(correct, budget=0.3) == pytest.approx(10 / 3, abs=1e-15)
    # the paper's closed form min(1/b, n/E) = min(3.33, 5) agrees when b*n is whole
    assert ecarb_ceiling(correct, budget=0.3) == pytest.approx(min(1 / 0.3, 100 / 20))


def test_ecarb_budget_rounding_is_robust_to_float_error():
    # 0.29 * 100 == 28.999999999999996 in floating point; a person reviews 29 items.
    assert 0.29 * 100 < 29
    assert review_count(0.29, 100) == 29
    # k = max(1, floor(b*n)): a tiny budget still reviews one item; b=1 reviews all.
    assert review_count(0.001, 10) == 1
    assert review_count(1.0, 7) == 7
    assert review_count(0.5, 7) == 3  # floor(3.5)
    correct = [0] * 29 + [1] * 71
    confidence = [i / 100 for i in range(100)]
    # the 29 lowest are exactly the 29 errors: 29 / ((29/100) * 29) = 100/29
    assert ecarb(correct, confidence, budget=0.29) == pytest.approx(100 / 29, abs=1e-15)


def test_ecarb_all_tied_is_exactly_one_at_any_budget():
    rng = np.random.default_rng(0)
    correct = rng.uniform(size=97) < 0.7
    for budget in (0.01, 0.1, 0.29, 0.3, 0.33, 0.5, 0.77, 1.0):
        for value in (0.0, 0.5, 1.0):
            assert ecarb(correct, np.full(97, value), budget=budget) == 1.0


def test_ecarb_tie_rules_on_a_split_run():
    # confidences: 0.1 (error), then a run of four 0.5s holding 2 errors, then 0.9 (correct)
    correct = [0, 1, 0, 1, 0, 1]
    confidence = [0.1, 0.5, 0.5, 0.5, 0.5, 0.9]
    # n=6, E=3, budget 0.5 -> k=3: the 0.1 error plus 2 of the 4 tied predictions.
    # expected: 1 + 2 * 2/4 = 2 errors -> 2 / ((3/6) * 3) = 4/3
    assert ecarb(correct, confidence, budget=0.5) == pytest.approx(4 / 3, abs=1e-15)
    # pessimistic: tied errors last -> 2 correct taken -> 1 error -> 1 / 1.5 = 2/3
    assert ecarb(correct, confidence, budget=0.5, ties="pessimistic") == pytest.approx(2 / 3)
    # optimistic: tied errors first -> 1 + 2 = 3 errors -> 3 / 1.5 = 2
    assert ecarb(correct, confidence, budget=0.5, ties="optimistic") == 2.0
    # stable: rows 1, 2 of the run in original order are (correct, error) -> 2 errors
    assert ecarb(correct, confidence, budget=0.5, ties="stable") == pytest.approx(4 / 3)
    # stable depends on row order (that is its purpose); expected does not
    # run rows in original order (error, error, correct, correct): 1 + 2 = 3 -> 3 / 1.5 = 2
    flipped_c = [0, 0, 0, 1, 1, 1]
    assert ecarb(flipped_c, confidence, budget=0.5, ties="stable") == 2.0
    assert ecarb(flipped_c, confidence, budget=0.5) == pytest.approx(4 / 3, abs=1e-15)


def test_ecarb_no_errors_warns_and_is_nan():
    with pytest.warns(UndefinedMetricWarning, match=r"ecarb is undefined: there are no errors"):
        assert math.isnan(ecarb([1, 1, 1], [0.2, 0.5, 0.9]))
    with pytest.warns(UndefinedMetricWarning, match="ecarb_ceiling is undefined"):
        assert math.isnan(ecarb_ceiling([1, 1]))


def test_ecarb_bounds_on_perfect_and_worst_ranking():
    correct = [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    confidence = np.linspace(0.05, 0.95, 10)
    # errors least confident: k=3 catches both: 2 / (3/10 * 2) = 10/3 == ceiling
    assert ecarb(correct, confidence, budget=0.3) == pytest.approx(10 / 3)
    assert ecarb(correct, confidence, budget=0.3) == ecarb_ceiling(correct, budget=0.3)
    # errors most confident: the 3 lowest are all correct -> 0
    assert ecarb(correct[::-1], confidence, budget=0.3) == 0.0


def test_ecarb_curve_columns_and_values():
    correct, confidence = paper_example()
    curve = ecarb_curve(correct, confidence, budgets=[0.1, 0.3, 1.0])
    assert list(curve.columns) == ["budget", "k", "errors_caught", "ecarb", "ceiling"]
    # b=0.1: k=10, 10 errors: 10 / (0.1 * 20) = 5; b=1: everything, 20 / 20 = 1
    assert curve["k"].tolist() == [10, 30, 100]
    assert curve["errors_caught"].tolist() == [10.0, 15.0, 20.0]
    assert curve["ecarb"].tolist() == [5.0, 2.5, 1.0]
    default = ecarb_curve(correct, confidence)
    assert default["budget"].tolist() == [i / 20 for i in range(1, 21)]
    assert default["ecarb"].iloc[-1] == 1.0  # reviewing everything is never amplified


# --- ECARB with sample_weight (frequency weights) ----------------------------------------
def test_weighted_ecarb_hand_worked_and_equal_to_repeated_rows():
    correct = [0, 1, 0, 1]
    confidence = [0.1, 0.2, 0.3, 0.4]
    weight = [3, 1, 1, 5]
    # W = 10, E = 3 + 1 = 4; b = 0.2: K = 2 units, both from the weight-3 error at 0.1:
    # 2 / (2/10 * 4) = 2.5
    assert ecarb(correct, confidence, budget=0.2, sample_weight=weight) == 2.5
    # b = 0.5: K = 5: the error (3), the 0.2 row (1), the 0.3 error (1): 4 / (5/10 * 4) = 2
    assert ecarb(correct, confidence, budget=0.5, sample_weight=weight) == 2.0
    # ceiling: min(K, E) * W / (K * E) = 2 * 10 / (2 * 4) = 2.5 at b = 0.2
    assert ecarb_ceiling(correct, budget=0.2, sample_weight=weight) == 2.5
    rows = np.repeat(np.arange(4), weight)
    y, c = np.asarray(correct)[rows], np.asarray(confidence)[rows]
    for b in (0.1, 0.2, 0.29, 0.3, 0.5, 1.0):
        for ties in ("expected", "stable", "pessimistic", "optimistic"):
            assert ecarb(correct, confidence, budget=b, ties=ties, sample_weight=weight) == \
                ecarb(y, c, budget=b, ties=ties), (b, ties)
        assert ecarb_ceiling(correct, budget=b, sample_weight=weight) == \
            ecarb_ceiling(y, budget=b)


def test_weighted_ecarb_cuts_inside_a_row_and_a_tied_run():
    # a run of two at 0.5: an error of weight 1.5 and a correct row of weight 0.5, then a
    # correct row of weight 2 at 0.9. W = 4, E = 1.5; b = 0.5: K = 2 units, all of the run:
    # 1.5 / (2/4 * 1.5) = 2
    correct, confidence, weight = [0, 1, 1], [0.5, 0.5, 0.9], [1.5, 0.5, 2.0]
    assert ecarb(correct, confidence, budget=0.5, sample_weight=weight) == 2.0
    # b = 0.25: K = 1 unit of the run's 2: expected 1.5 * 1/2 = 0.75 -> 0.75 / (1/4 * 1.5) = 2
    assert ecarb(correct, confidence, budget=0.25, sample_weight=weight) == 2.0
    # pessimistic: the 0.5 correct first, then 0.5 of the error -> 0.5 / 0.375 = 4/3
    assert ecarb(correct, confidence, budget=0.25, ties="pessimistic",
                 sample_weight=weight) == pytest.approx(4 / 3, abs=1e-15)
    # optimistic and stable (the error is the first row): 1 unit of the error -> 1 / 0.375
    for ties in ("optimistic", "stable"):
        assert ecarb(correct, confidence, budget=0.25, ties=ties,
                     sample_weight=weight) == pytest.approx(8 / 3, abs=1e-15)


def test_weighted_ecarb_unit_weights_are_no_weights_exactly():
    rng = np.random.default_rng(3)
    confidence = np.round(rng.uniform(size=500), 1)  # heavy ties
    correct = rng.uniform(size=500) < confidence
    ones = np.ones(500)
    for b in (0.01, 0.1, 0.29, 0.3, 0.77, 1.0):
        for ties in ("expected", "stable", "pessimistic", "optimistic"):
            assert ecarb(correct, confidence, budget=b, ties=ties, sample_weight=ones) == \
                ecarb(correct, confidence, budget=b, ties=ties)
    pd.testing.assert_frame_equal(ecarb_curve(correct, confidence, sample_weight=ones),
                                  ecarb_curve(correct, confidence))


def test_weighted_ecarb_small_total_and_weightless_errors():
    # weights summing to 1: K = min(W, max(1, 0)) = W, everything is reviewed -> 1.0
    assert ecarb([0, 1, 1], [0.1, 0.5, 0.9], sample_weight=[0.2, 0.3, 0.5]) == 1.0
    with pytest.warns(UndefinedMetricWarning, match=r"errors .* carry no weight \(E = 0\)"):
        assert math.isnan(ecarb([0, 1, 1], [0.1, 0.5, 0.9], sample_weight=[0, 1, 1]))
    with pytest.warns(UndefinedMetricWarning, match="carry no weight"):
        assert math.isnan(ecarb_ceiling([0, 1, 1], sample_weight=[0, 1, 1]))


def test_weighted_ecarb_curve_and_report_agree_with_the_scalar_functions():
    correct, confidence, weight = [0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], [3, 1, 1, 5]
    curve = ecarb_curve(correct, confidence, budgets=[0.2, 0.5], sample_weight=weight)
    # K and the error weight caught, as worked out above
    assert curve["k"].tolist() == [2, 5]
    assert curve["errors_caught"].tolist() == [2.0, 4.0]
    assert curve["ecarb"].tolist() == [2.5, 2.0]
    rep = calibration_report(correct, confidence, budgets=(0.2, 0.5), n_bins=2,
                             sample_weight=weight)
    assert dict(rep.ecarb) == {0.2: 2.5, 0.5: 2.0}
    assert rep.ecarb_ceiling[0.2] == 2.5
    assert (rep.n, rep.n_errors) == (4, 2)  # rows; the metrics are weighted
    assert rep.accuracy == 6 / 10
    assert rep.auroc == auroc(correct, confidence, sample_weight=weight)
    assert rep.ece == ece(correct, confidence, n_bins=2, sample_weight=weight)
    assert rep.brier == brier(correct, confidence, sample_weight=weight)
    pd.testing.assert_frame_equal(
        rep.bins, reliability_bins(correct, confidence, n_bins=2, binning="quantile",
                                   sample_weight=weight))


# --- AUROC -------------------------------------------------------------------------------
def test_auroc_hand_worked_with_ties():
    # correct: 0.9, 0.6; incorrect: 0.6, 0.3 -> pairs: (0.9>0.6) 1, (0.9>0.3) 1,
    # (0.6=0.6) 1/2, (0.6>0.3) 1 -> 3.5 / 4 = 0.875
    assert auroc([1, 1, 0, 0], [0.9, 0.6, 0.6, 0.3]) == 0.875
    assert auroc([1, 0], [0.2, 0.8]) == 0.0
    assert auroc([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5]) == 0.5


def test_auroc_weighted_hand_worked():
    # weights: correct 0.9 (w=2), correct 0.2 (w=1), incorrect 0.5 (w=3)
    # pairs: (0.9 vs 0.5) win, weight 2*3 = 6; (0.2 vs 0.5) loss, weight 1*3 = 3
    # -> 6 / 9 = 2/3
    value = auroc([1, 1, 0], [0.9, 0.2, 0.5], sample_weight=[2, 1, 3])
    assert value == pytest.approx(2 / 3, abs=1e-15)


def test_auroc_one_class_warns_and_is_nan():
    with pytest.warns(UndefinedMetricWarning, match=r"all 3 predictions are correct"):
        assert math.isnan(auroc([1, 1, 1], [0.1, 0.2, 0.3]))
    with pytest.warns(UndefinedMetricWarning, match=r"all 2 predictions are incorrect"):
        assert math.isnan(auroc([0, 0], [0.1, 0.2]))


def test_auroc_matches_sklearn_on_heavy_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    confidence = np.round(rng.uniform(size=5000), 1)
    correct = rng.uniform(size=5000) < confidence
    assert auroc(correct, confidence) == pytest.approx(
        roc_auc_score(correct, confidence), abs=1e-12)


def test_negative_zero_is_zero():
    # -0.0 has the sign bit set; it must tie with 0.0, not sort below it.
    assert auroc([1, 0], [0.0, -0.0]) == 0.5
    assert ecarb([0, 1], [0.0, -0.0], budget=0.5) == 1.0


# --- ECE / MCE / bins --------------------------------------------------------------------
def test_ece_quantile_hand_worked():
    # n=4, M=2: ranks 0,1 -> bin 0: conf (0.2+0.4)/2 = 0.3, acc 1/2 -> gap 0.2
    #           ranks 2,3 -> bin 1: conf 0.7, acc 1 -> gap 0.3
    # ECE = 0.5*0.2 + 0.5*0.3 = 0.25; MCE = 0.3
    assert ece([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2) == pytest.approx(0.25, abs=1e-15)
    assert mce([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2) == pytest.approx(0.3, abs=1e-15)


def test_ece_quantile_never_splits_a_tie_run():
    # n=5, M=5: nominal bins one rank each, but ranks 1..3 share 0.5 -> they all join the
    # bin of rank 1, bins 2 and 3 are empty and dropped:
    # bin 0: {0.1, correct}: |1 - 0.1| = 0.9
    # bin 1: {0.5 x3, 1 correct}: |1/3 - 0.5| = 1/6, weight 3/5
    # bin 4: {0.9, incorrect}: |0 - 0.9| = 0.9
    # ECE = 0.9/5 + (3/5)(1/6) + 0.9/5 = 0.18 + 0.1 + 0.18 = 0.46
    correct = [1, 1, 0, 0, 0]
    confidence = [0.1, 0.5, 0.5, 0.5, 0.9]
    assert ece(correct, confidence) == pytest.approx(0.46, abs=1e-15)
    table = reliability_bins(correct, confidence, n_bins=5, binning="quantile")
    assert table["bin"].tolist() == [0, 1, 4]
    assert table["count"].tolist() == [1, 3, 1]
    assert table["lower"].tolist() == [0.1, 0.5, 0.9]
    assert table["upper"].tolist() == [0.1, 0.5, 0.9]


def test_ece_quantile_run_goes_to_bin_of_its_first_element():
    # n=4, M=2: nominal boundary at rank 2; ranks 1..3 tie at 0.6, so the run starts in
    # bin 0 and takes everything: one bin {0.2, 0.6, 0.6, 0.6}, acc 2/4, conf 2.0/4 = 0.5
    # -> ECE = |0.5 - 0.5| = 0
    assert ece([1, 0, 1, 0], [0.2, 0.6, 0.6, 0.6], n_bins=2) == 0.0
    table = reliability_bins([1, 0, 1, 0], [0.2, 0.6, 0.6, 0.6], n_bins=2, binning="quantile")
    assert table["bin"].tolist() == [0]


def test_ece_uniform_edges_are_half_open_and_last_closed():
    # M=10: 0.3 is in bin 3 ([0.3, 0.4)), not bin 2, despite 0.3*10 float noise;
    # 1.0 goes to the last bin [0.9, 1.0].
    table = reliability_bins([1, 1, 1], [0.3, 0.7, 1.0], n_bins=10, binning="uniform")
    assert table["bin"].tolist() == [3, 7, 9]
    assert table["lower"].tolist() == [0.3, 0.7, 0.9]
    assert table["upper"].tolist() == pytest.approx([0.4, 0.8, 1.0])
    # just below an edge stays below
    below = np.nextafter(0.3, 0)
    assert reliability_bins([1], [below], n_bins=10, binning="uniform")["bin"].tolist() == [2]


def test_ece_uniform_hand_worked():
    # M=2: [0, 0.5): {0.1 wrong, 0.3 right} conf 0.2, acc 0.5 -> |0.3| * 2/5
    #      [0.5, 1]: {0.6 right, 0.8 right, 1.0 wrong} conf 0.8, acc 2/3 -> |0.1333| * 3/5
    # ECE = 0.12 + 0.08 = 0.2
    value = ece([0, 1, 1, 1, 0], [0.1, 0.3, 0.6, 0.8, 1.0], n_bins=2, binning="uniform")
    assert value == pytest.approx(0.2, abs=1e-15)


def test_reliability_bins_columns_min_count_and_gap_sign():
    correct = [0, 0, 0, 1, 1]
    confidence = [0.95, 0.92, 0.9, 0.15, 0.5]
    table = reliability_bins(correct, confidence, n_bins=2, binning="uniform")
    assert list(table.columns) == ["bin", "lower", "upper", "count", "mean_confidence",
                                   "accuracy", "gap"]
    # bin 1 holds 0.5, 0.9, 0.92, 0.95 (1 of 4 right): overconfident -> positive gap
    row = table.set_index("bin").loc[1]
    assert row["count"] == 4
    assert row["gap"] == pytest.approx((0.5 + 0.9 + 0.92 + 0.95) / 4 - 0.25)
    assert reliability_bins(correct, confidence, n_bins=2, binning="uniform",
                            min_count=2)["bin"].tolist() == [1]


def test_reliability_bins_default_to_the_bins_of_ece():
    # STYLE: one binning by default: 5 equal-mass bins in ece, reliability_bins and the
    # report, so the default table is the one behind the default ECE
    rng = np.random.default_rng(7)
    confidence = np.round(rng.uniform(size=200), 2)
    correct = rng.uniform(size=200) < confidence
    table = reliability_bins(correct, confidence)
    pd.testing.assert_frame_equal(table, reliability_bins(correct, confidence, n_bins=5,
                                                          binning="quantile"))
    pd.testing.assert_frame_equal(table, calibration_report(correct, confidence).bins)
    # ECE = sum over bins of count/n * |gap|
    assert ece(correct, confidence) == pytest.approx(
        float((table["count"] / 200 * table["gap"].abs()).sum()), abs=1e-12)


def test_reliability_bins_with_weights_has_weight_column():
    table = reliability_bins([1, 0], [0.2, 0.8], n_bins=2, sample_weight=[3, 1])
    assert list(table.columns)[4] == "weight"
    assert table["weight"].tolist() == [3.0, 1.0]


# --- Brier --------------------------------------------------------------------------------
def test_brier_hand_worked_and_sklearn():
    from sklearn.metrics import brier_score_loss

    # (0.9-1)^2 + (0.2-0)^2 + (0.5-1)^2 = 0.01 + 0.04 + 0.25 = 0.30 -> / 3 = 0.1
    assert brier([1, 0, 1], [0.9, 0.2, 0.5]) == pytest.approx(0.1, abs=1e-15)
    # weighted: (2*0.01 + 1*0.04 + 1*0.25) / 4 = 0.31 / 4
    assert brier([1, 0, 1], [0.9, 0.2, 0.5], sample_weight=[2, 1, 1]) == pytest.approx(0.0775)
    rng = np.random.default_rng(1)
    c = rng.uniform(size=1000)
    y = rng.uniform(size=1000) < c
    assert brier(y, c) == pytest.approx(brier_score_loss(y, c), abs=1e-15)


# --- report ------------------------------------------------------------------------------
def test_calibration_report_equals_the_individual_functions():
    rng = np.random.default_rng(5)
    confidence = np.round(rng.beta(4, 2, size=3000), 2)
    correct = rng.uniform(size=3000) < confidence
    rep = calibration_report(correct, confidence, budgets=(0.1, 0.29, 0.5))
    assert rep.n == 3000
    assert rep.n_errors == int((~correct).sum())
    assert rep.accuracy == correct.mean()
    assert rep.auroc == auroc(correct, confidence)
    assert rep.ece == ece(correct, confidence)
    assert rep.mce == mce(correct, confidence)
    assert rep.brier == brier(correct, confidence)
    for b in (0.1, 0.29, 0.5):
        assert rep.ecarb[b] == ecarb(correct, confidence, budget=b)
        assert rep.ecarb_ceiling[b] == ecarb_ceiling(correct, budget=b)
    pd.testing.assert_frame_equal(
        rep.bins, reliability_bins(correct, confidence, n_bins=5, binning="quantile"))
    frame = rep.to_frame()
    assert frame.shape == (1, 7 + 6)
    assert frame["ecarb@0.29"].iloc[0] == rep.ecarb[0.29]
    d = rep.to_dict()
    assert d["ecarb"] == {0.1: rep.ecarb[0.1], 0.29: rep.ecarb[0.29], 0.5: rep.ecarb[0.5]}
    assert len(d["bins"]) == len(rep.bins)


def test_calibration_report_is_frozen():
    rep = calibration_report([0, 1, 1], [0.1, 0.5, 0.9])
    with pytest.raises(AttributeError):
        rep.auroc = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        rep.ecarb[0.3] = 0.0  # type: ignore[index]


def test_calibration_report_single_class_warns_once_per_metric():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rep = calibration_report([1, 1, 1, 1], [0.2, 0.4, 0.6, 0.8])
    messages = sorted(str(w.message).split(" is undefined")[0] for w in record)
    assert messages == ["auroc", "ecarb"]
    assert math.isnan(rep.auroc) and all(math.isnan(v) for v in rep.ecarb.values())
    assert rep.ece == pytest.approx(0.5, abs=1e-15)  # acc 1 vs mean confidence 0.5


# --- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": [0.1, float("nan"), 0.3]},
         r"confidence must be finite and within \[0, 1\]; found 1 value breaking it, "
         r"first at index 1 \(nan\)"),
        ({"confidence": [0.1, 0.2, 1.5]}, r"first at index 2 \(1\.5\)"),
        ({"confidence": [-0.1, 0.2, float("inf")]},
         r"found 2 values breaking it, first at index 0 \(-0\.1\)"),
        ({"correct": [1, 2, 0]}, r"correct must be bool or 0/1; .* first at index 1 \(2\)"),
        ({"correct": [1, 0]}, r"correct, confidence must have the same length; "
                              r"correct has 2 and confidence has 3"),
        ({"correct": [], "confidence": []}, r"correct must not be empty"),
        ({"confidence": [True, False, True]}, r"swapped positions"),
        ({"confidence": "0.5"}, r"confidence must be an array-like of numbers"),
        ({"correct": [[1, 0, 1]]}, r"correct must be a 1-D array-like; found shape \(1, 3\)"),
        ({"confidence": ["a", "b", "c"]}, r"confidence must be numbers within \[0, 1\]"),
    ],
)
def test_bad_arrays_raise_named_errors(kwargs, message):
    args = {"correct": [1, 0, 1], "confidence": [0.1, 0.2, 0.3], **kwargs}
    for fn in (auroc, ece, mce, brier, ecarb, calibration_report, reliability_bins,
               ecarb_curve, confcal.bootstrap_ci):
        with pytest.raises(ValidationError, match=message):
            fn(args["correct"], args["confidence"])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ecarb([0, 1], [0.1, 0.2], budget=0.0),
         r"budget must be a number in \(0, 1\]; found 0\.0"),
        (lambda: ecarb([0, 1], [0.1, 0.2], budget=1.5), r"budget must be a number in \(0, 1\]"),
        (lambda: ecarb([0, 1], [0.1, 0.2], budget=True), r"budget must be a number"),
        (lambda: ecarb([0, 1], [0.1, 0.2], ties="random"),
         r"ties must be one of 'expected', 'stable', 'pessimistic', 'optimistic'; found 'random'"),
        (lambda: ece([0, 1], [0.1, 0.2], n_bins=0), r"n_bins must be an integer >= 1; found 0"),
        (lambda: ece([0, 1], [0.1, 0.2], n_bins=2.5), r"n_bins must be an integer >= 1"),
        (lambda: ece([0, 1], [0.1, 0.2], binning="equal"),
         r"binning must be one of 'quantile', 'uniform'; found 'equal'"),
        (lambda: ecarb_ceiling([0, 1], budget=-1), r"budget must be a number in \(0, 1\]"),
        (lambda: calibration_report([0, 1], [0.1, 0.2], budgets=[]), r"budgets must not be empty"),
        (lambda: calibration_report([0, 1], [0.1, 0.2], budgets=[0.3, 0.3]),
         r"budgets must not repeat"),
        (lambda: calibration_report([0, 1], [0.1, 0.2], budgets=[0.3, 2]),
         r"budgets\[1\] must be a number in \(0, 1\]; found 2"),
        (lambda: auroc([0, 1], [0.1, 0.2], sample_weight=[1, -1]),
         r"sample_weight must be finite and >= 0; found 1 value breaking it, first at index 1"),
        (lambda: auroc([0, 1], [0.1, 0.2], sample_weight=[1, 1, 1]),
         r"sample_weight must have one weight per prediction \(2\); found 3"),
        (lambda: auroc([0, 1], [0.1, 0.2], sample_weight=[0, 0]), r"positive total"),
        (lambda: reliability_bins([0, 1], [0.1, 0.2], min_count=-1),
         r"min_count must be an integer >= 0"),
    ],
)
def test_bad_options_raise_named_errors(call, message):
    with pytest.raises(ValidationError, match=message):
        call()


def test_validation_errors_are_value_errors():
    with pytest.raises(ValueError):
        auroc([0, 1], [0.5, 2.0])


def test_accepts_lists_numpy_and_pandas_alike():
    correct = [1, 0, 1, 1, 0]
    confidence = [0.9, 0.4, 0.7, 0.6, 0.5]
    expected = calibration_report(correct, confidence).to_dict()
    for conv in (np.asarray, pd.Series, lambda v: pd.Series(v, index=[5, 3, 9, 1, 0])):
        got = calibration_report(conv(correct), conv(confidence)).to_dict()
        assert got == expected
    bool_correct = np.asarray(correct, dtype=bool)
    assert auroc(bool_correct, confidence) == auroc(correct, confidence)
    assert auroc(np.asarray(correct, dtype=float), confidence) == auroc(correct, confidence)


# ---------------------------------------------------------------------------------------
# the three numeric rules, worked by hand
# ---------------------------------------------------------------------------------------
def test_weights_of_0_7_give_the_unweighted_quantile_bins():
    # M = 5, n = 5: rank r is in bin floor(5r/5) = r, one row per bin; gaps |acc - conf|:
    # 0.1 + 0.2 + 0.3 + |1 - 0.4| + 0.5 = 1.7, ECE = 1.7 / 5 = 0.34. With weights 0.7
    # (1.4 once scaled), 1.4 + 1.4 + 1.4 = 4.199999999999999 put rank 3 in bin 2 (0.22).
    y, c = [0, 0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4, 0.5]
    for w in (None, [0.7] * 5, [7.0] * 5, [1 / 3] * 5, [1e-3] * 5):
        assert confcal.ece(y, c, sample_weight=w) == pytest.approx(0.34, abs=1e-15), w
        bins = confcal.reliability_bins(y, c, n_bins=5, binning="quantile", sample_weight=w)
        assert bins["bin"].tolist() == [0, 1, 2, 3, 4] and bins["count"].tolist() == [1] * 5
    # MCE: the largest gap, |1 - 0.4| = 0.6 in bin 3
    assert confcal.mce(y, c, sample_weight=[0.7] * 5) == pytest.approx(0.6, abs=1e-15)


def test_a_bin_edge_within_1e9_counts_as_whole():
    # weights 1, 1, 1 - 1e-12, 1, M = 2: W = 4 - 1e-12; rank 2 has W_before = 2 and
    # 2·2 / (4 - 1e-12) = 1.00000000000025: bin 1 either way. Rank 2 with W_before = 2 -
    # 1e-12 (weights 1, 1 - 1e-12, 1, 1): 2(2 - 1e-12)/(4 - 1e-12) = 0.99999999999975, within
    # 1e-9 of 1: bin 1, like unit weights (a plain floor said bin 0).
    y, c = [1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]
    got = confcal.reliability_bins(y, c, n_bins=2, binning="quantile",
                                   sample_weight=[1, 1 - 1e-12, 1, 1])
    assert got["count"].tolist() == [2, 2]
    # 1e-6 short is a real difference: 2(2 - 1e-6)/(4 - 1e-6) = 0.99999975 -> bin 0 holds 3
    got = confcal.reliability_bins(y, c, n_bins=2, binning="quantile",
                                   sample_weight=[1, 1 - 1e-6, 1, 1])
    assert got["count"].tolist() == [3, 1]


def test_review_count_of_a_third():
    # the float 1/3 is 0.33333333333333331483; times 300 = 99.999999999999994 -> 100
    assert confcal.review_count(1 / 3, 300) == 100
    assert confcal.review_count(0.2899, 100) == 28  # 28.99: a real fraction, floored


def test_brier_keeps_the_last_digits_on_constant_data():
    # half right, all at 0.9: ((0.9 - 1)² + (0.9 - 0)²) / 2 = (0.01 + 0.81) / 2 = 0.41;
    # Σc² - 2Σc·y + n_correct lost 12 digits here (0.4099999999999176)
    y, c = [1] * 5000 + [0] * 5000, [0.9] * 10000
    assert abs(confcal.brier(y, c) - 0.41) <= 1e-15
    assert abs(confcal.brier(y, c, sample_weight=[0.7] * 10000) - 0.41) <= 1e-15
    assert abs(confcal.calibration_report(y, c).brier - 0.41) <= 1e-15


@pytest.mark.parametrize("ties", ["expected", "stable", "pessimistic", "optimistic"])
def test_weighted_ecarb_reviewing_everything_catches_every_error(ties):
    # W = 0.5 + 9.09e-46, so K = min(W, max(1, floor(0.3 W))) = W: everything is reviewed and
    # ECARB = E / ((W / W) E) = 1. The float prefix sums say 0.5 for both rows, which once
    # ended the review before the error row (0.0).
    got = ecarb([True, False], [0.0, 0.0], sample_weight=[0.5, 9.09e-46], budget=0.3, ties=ties)
    assert got == 1.0
