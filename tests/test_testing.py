"""Tests of confcal.testing: the references against hand-worked cases and scikit-learn, and
the strategies against what their docstrings promise.

The references are the yardstick for the fast metrics, so they get the toy cases with the
arithmetic written out: a reference that is wrong makes every property test meaningless.
"""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, roc_auc_score

import confcal.testing as ct
from _profiles import examples
from confcal.testing import (
    calibration_data,
    grouped_calibration_data,
    reference_auroc,
    reference_bins,
    reference_brier,
    reference_ecarb,
    reference_ecarb_ceiling,
    reference_ece,
    reference_mce,
    reference_review_count,
    review_budgets,
    weighted_calibration_data,
)

SETTINGS = settings(max_examples=examples(100), deadline=None)


def test_public_names_are_in_all():
    # defined in the package or in one of its private modules (_references, _strategies)
    public = {name for name in vars(ct) if not name.startswith("_") and callable(getattr(ct, name))
              and getattr(getattr(ct, name), "__module__", "").startswith(ct.__name__)}
    assert public == set(ct.__all__)


def test_imports_without_hypothesis():
    # A meta-path finder that refuses hypothesis: confcal.testing must still import, and the
    # references must work; only calling a strategy function needs hypothesis.
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Block())
import confcal.testing as t
assert "hypothesis" not in sys.modules
assert t.reference_auroc([1, 0], [0.9, 0.1]) == 1.0
try:
    t.calibration_data()
except ImportError:
    print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# --------------------------------------------------------------------------------------
# AUROC
# --------------------------------------------------------------------------------------


def test_auroc_toy_cases():
    # Perfect separation: every (correct, wrong) pair is won.
    assert reference_auroc([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]) == 1.0
    # Reversed: every pair lost.
    assert reference_auroc([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]) == 0.0
    # All tied: every pair is worth 1/2.
    assert reference_auroc([1, 0, 1, 0, 0], [0.5] * 5) == 0.5
    # Pairs (correct 0.9, 0.4 vs wrong 0.4, 0.1): 1 + 1 + 1/2 + 1 = 3.5 of 4.
    assert reference_auroc([1, 0, 1, 0], [0.9, 0.1, 0.4, 0.4]) == 0.875
    # One correct row at 0.5 against wrong rows at 0.2, 0.5, 0.7: 1 + 1/2 + 0 = 1.5 of 3.
    assert reference_auroc([1, 0, 0, 0], [0.5, 0.2, 0.5, 0.7]) == 0.5


def test_auroc_weighted_toy():
    # Weights: correct a (0.8, w=2), wrong b (0.6, w=3), wrong c (0.9, w=1).
    # Won pair weight: a>b 2*3 = 6; a<c 0. Total 2*(3+1) = 8 -> 0.75.
    assert reference_auroc([1, 0, 0], [0.8, 0.6, 0.9], sample_weight=[2, 3, 1]) == 0.75
    # A zero weight removes the row: only a vs b remains.
    assert reference_auroc([1, 0, 0], [0.8, 0.6, 0.9], sample_weight=[2, 3, 0]) == 1.0


def test_auroc_one_class_is_nan():
    assert math.isnan(reference_auroc([1, 1, 1], [0.1, 0.5, 0.9]))
    assert math.isnan(reference_auroc([0, 0], [0.1, 0.5]))
    # Both classes present but all negative weight zero: still undefined.
    assert math.isnan(reference_auroc([1, 0], [0.1, 0.5], sample_weight=[1, 0]))


@SETTINGS
@given(calibration_data(min_size=2, max_size=60, ties="heavy", single_class=False))
def test_auroc_matches_sklearn_on_tied_data(data):
    correct, confidence = data
    assert reference_auroc(correct, confidence) == pytest.approx(
        roc_auc_score(correct, confidence), abs=1e-12
    )


@SETTINGS
@given(weighted_calibration_data(min_size=2, max_size=40, ties="heavy", single_class=False,
                                 weights="float"))
def test_weighted_auroc_matches_sklearn(data):
    correct, confidence, weight = data
    if weight[correct].sum() == 0 or weight[~correct].sum() == 0:
        assert math.isnan(reference_auroc(correct, confidence, weight))
        return
    assert reference_auroc(correct, confidence, weight) == pytest.approx(
        roc_auc_score(correct, confidence, sample_weight=weight), abs=1e-12
    )


# --------------------------------------------------------------------------------------
# Bins, ECE, MCE
# --------------------------------------------------------------------------------------


def test_quantile_bins_follow_rank_rule():
    # n=6, M=3: ranks 0-1 -> bin 0, 2-3 -> bin 1, 4-5 -> bin 2 (floor(r*3/6)).
    conf = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    bins = reference_bins([1] * 6, conf, n_bins=3)
    assert [(b["bin"], b["count"]) for b in bins] == [(0, 2), (1, 2), (2, 2)]


def test_quantile_run_of_ties_goes_to_bin_of_first_element():
    # n=6, M=3, sorted [0.1, 0.2, 0.2, 0.2, 0.5, 0.6]: the 0.2 run starts at rank 1, nominal
    # bin floor(1*3/6) = 0, so ranks 1-3 all join bin 0 (rank 2 and 3 would be bin 1).
    # 0.5 (rank 4) and 0.6 (rank 5) -> bin 2. Bin 1 is empty and dropped.
    bins = reference_bins([1, 0, 1, 0, 1, 1], [0.2, 0.2, 0.1, 0.2, 0.5, 0.6], n_bins=3)
    assert [(b["bin"], b["count"]) for b in bins] == [(0, 4), (2, 2)]
    # Bin 0: confidences 0.1, 0.2, 0.2, 0.2 (mean 0.175), labels of those rows: 1, 1, 0, 0.
    assert bins[0]["accuracy"] == 0.5
    assert bins[0]["mean_confidence"] == pytest.approx(0.175, abs=1e-15)
    # ECE = 4/6 * |0.5 - 0.175| + 2/6 * |1 - 0.55| = 0.216666... + 0.15 = 0.3666...
    assert reference_ece([1, 0, 1, 0, 1, 1], [0.2, 0.2, 0.1, 0.2, 0.5, 0.6], n_bins=3) == (
        pytest.approx(4 / 6 * 0.325 + 2 / 6 * 0.45, abs=1e-15)
    )
    # MCE = max(0.325, 0.45)
    assert reference_mce([1, 0, 1, 0, 1, 1], [0.2, 0.2, 0.1, 0.2, 0.5, 0.6], n_bins=3) == (
        pytest.approx(0.45, abs=1e-15)
    )


def test_quantile_fewer_rows_than_bins():
    # n=2, M=5: rank 0 -> bin 0, rank 1 -> floor(5/2) = 2; bins 1, 3, 4 empty and dropped.
    bins = reference_bins([1, 0], [0.25, 0.75], n_bins=5)
    assert [b["bin"] for b in bins] == [0, 2]
    # ECE = 1/2 * |1 - 0.25| + 1/2 * |0 - 0.75| = 0.75
    assert reference_ece([1, 0], [0.25, 0.75], n_bins=5) == 0.75


def test_quantile_all_equal_is_one_bin():
    # One run: everything in bin 0. acc 2/4, conf 0.75 -> ECE = MCE = 0.25.
    assert reference_ece([1, 0, 1, 0], [0.75] * 4, n_bins=5) == 0.25
    assert reference_mce([1, 0, 1, 0], [0.75] * 4, n_bins=5) == 0.25


def test_quantile_weighted_rank_is_weight_before():
    # Sorted 0.1 (w=3), 0.2 (w=1), 0.3 (w=1), 0.4 (w=1); W=6, M=2.
    # W_before: 0, 3, 4, 5 -> bins floor(0*2/6)=0, floor(6/6)=1, floor(8/6)=1, floor(10/6)=1.
    bins = reference_bins([1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4], n_bins=2,
                          sample_weight=[3, 1, 1, 1])
    assert [(b["bin"], b["count"], b["weight"]) for b in bins] == [(0, 1, 3.0), (1, 3, 3.0)]
    # The same as three copies of the 0.1 row.
    assert reference_ece([1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4], n_bins=2,
                         sample_weight=[3, 1, 1, 1]) == reference_ece(
        [1] * 6, [0.1, 0.1, 0.1, 0.2, 0.3, 0.4], n_bins=2)


def test_quantile_zero_weight_rows_after_all_weight_are_in_no_bin():
    # Sorted 0.0 (w=1), 0.1 (w=0): the 0.1 row has W_before = 1 = W, floor(1*1/1) = 1 = M,
    # a bin that does not exist (the last bin, by the top-tail rule); weighing 0, it is in
    # no bin: not counted, and not the bin's upper bound.
    bins = reference_bins([0, 0], [0.0, 0.1], n_bins=1, sample_weight=[1.0, 0.0])
    assert [(b["bin"], b["count"], b["weight"], b["upper"]) for b in bins] == [(0, 1, 1.0, 0.0)]
    # A bin of zero-weight rows only is dropped: 0.5 (w=0) alone in uniform bin 5.
    bins = reference_bins([1, 0, 1], [0.05, 0.5, 0.95], n_bins=10, binning="uniform",
                          sample_weight=[1, 0, 1])
    assert [b["bin"] for b in bins] == [0, 9]
    # And it does not enter the MCE: gaps |1 - 0.05| and |1 - 0.95|.
    assert reference_mce([1, 0, 1], [0.05, 0.5, 0.95], n_bins=10, binning="uniform",
                         sample_weight=[1, 0, 1]) == pytest.approx(0.95, abs=1e-15)


def test_uniform_bins_edges():
    # M=4: 0.0 -> bin 0, 0.25 opens bin 1 (left-closed), 0.5 -> 2, 0.99 -> 3, 1.0 -> last bin.
    bins = reference_bins([1] * 5, [0.0, 0.25, 0.5, 0.99, 1.0], n_bins=4, binning="uniform")
    assert [(b["bin"], b["count"]) for b in bins] == [(0, 1), (1, 1), (2, 1), (3, 2)]


def test_uniform_edges_are_float_i_over_m():
    # The trap: c = 0.8999999999999999 is the float just below the edge 9/10 = 0.9, so it
    # belongs to bin 8, although c * 10 rounds to exactly 9.0 (floor(c*M) would say bin 9).
    c = math.nextafter(0.9, 0.0)
    assert c < 9 / 10 and math.floor(c * 10) == 9
    bins = reference_bins([1, 1], [c, 0.9], n_bins=10, binning="uniform")
    assert [(b["bin"], b["count"]) for b in bins] == [(8, 1), (9, 1)]
    # 0.3 == 3/10 in float: it opens bin 3.
    assert reference_bins([1], [0.3], n_bins=10, binning="uniform")[0]["bin"] == 3


def test_uniform_ece_toy():
    # M=2: bin 0 = {0.25 (right), 0.25 (wrong)} acc 1/2 conf 1/4; bin 1 = {0.75 right}.
    # ECE = 2/3 * 1/4 + 1/3 * 1/4 = 1/4; MCE = 1/4.
    assert reference_ece([1, 0, 1], [0.25, 0.25, 0.75], n_bins=2, binning="uniform") == 0.25
    assert reference_mce([1, 0, 1], [0.25, 0.25, 0.75], n_bins=2, binning="uniform") == 0.25


def test_ece_extremes():
    # Confidence 1 and always wrong: ECE = MCE = 1; confidence 0 and always wrong: 0.
    assert reference_ece([0, 0], [1.0, 1.0]) == 1.0
    assert reference_mce([0, 0], [1.0, 1.0], binning="uniform") == 1.0
    assert reference_ece([0, 0], [0.0, 0.0], binning="uniform") == 0.0


def test_bins_gap_sign():
    # gap = mean_confidence - accuracy: overconfident bins are positive.
    (b,) = reference_bins([0], [0.75], n_bins=1)
    assert b["gap"] == 0.75


# --------------------------------------------------------------------------------------
# Brier
# --------------------------------------------------------------------------------------


def test_brier_toy():
    # (0.75 - 1)^2 = 0.0625, (0.5 - 0)^2 = 0.25, (0 - 0)^2 = 0: mean 0.3125 / 3.
    assert reference_brier([1, 0, 0], [0.75, 0.5, 0.0]) == pytest.approx(0.3125 / 3, abs=1e-16)
    # Weighted: (3 * 0.0625 + 1 * 0.25) / 4 = 0.109375
    assert reference_brier([1, 0], [0.75, 0.5], sample_weight=[3, 1]) == 0.109375


@SETTINGS
@given(weighted_calibration_data(max_size=60, ties="some", weights="float"))
def test_brier_matches_sklearn(data):
    correct, confidence, weight = data
    # Subnormal weights keep too few digits for sklearn's float sums to be exact.
    assume(((weight == 0) | (weight > 1e-300)).all())
    assert reference_brier(correct, confidence) == pytest.approx(
        brier_score_loss(correct, confidence, labels=[False, True]), abs=1e-12
    )
    assert reference_brier(correct, confidence, weight) == pytest.approx(
        brier_score_loss(correct, confidence, sample_weight=weight, labels=[False, True]),
        abs=1e-12,
    )


# --------------------------------------------------------------------------------------
# ECARB
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, budget, k",
    [
        (100, 0.29, 29),  # float 0.29 * 100 = 28.999999999999996: must still be 29
        (100, 0.3, 30),
        (10, 0.7, 7),  # 0.7 * 10 = 7.000000000000001 in float
        (3, 0.1, 1),  # floor(0.3) = 0 -> at least one row
        (7, 1.0, 7),
        (3, 0.5, 1),  # floor(1.5)
        (1000, 0.001, 1),
        (100, 0.285, 28),  # floor(28.5)
        (5, np.float64(0.6), 3),  # numpy scalars too (repr is 'np.float64(0.6)' in numpy 2)
    ],
)
def test_review_count(n, budget, k):
    assert reference_review_count(budget, n) == k


def test_review_count_forgives_float_noise_only():
    # 0.28999999999999 * 100 is within 1e-9 (relative) of 29: float noise -> 29;
    # 0.2899 * 100 = 28.99 is a real fraction -> floor 28.
    assert reference_review_count(0.28999999999999, 100) == 29
    assert reference_review_count(0.2899, 100) == 28
    assert reference_review_count(2 / 6, 6) == 2


@pytest.mark.parametrize("budget", [0, 0.0, -0.1, 1.5, float("nan"), True, "0.3"])
def test_review_count_rejects_bad_budget(budget):
    with pytest.raises(ValueError, match=r"budget must be a number in \(0, 1\]"):
        reference_review_count(budget, 10)


def paper_example():
    # n=100, E=20: 15 errors among the 30 least confident, 5 among the most confident.
    correct = np.ones(100, dtype=bool)
    correct[:30:2] = False
    correct[95:] = False
    return correct, np.arange(100) / 100


def test_ecarb_paper_example():
    correct, confidence = paper_example()
    assert (~correct).sum() == 20 and (~correct[:30]).sum() == 15
    # 15 / (30/100 * 20) = 2.5, whatever the tie rule (no ties).
    for ties in ("stable", "pessimistic", "optimistic"):
        assert reference_ecarb(correct, confidence, budget=0.3, ties=ties) == 2.5
    # Ceiling: min(30, 20) * 100 / (30 * 20) = 10/3.
    assert reference_ecarb_ceiling(correct, budget=0.3) == pytest.approx(10 / 3, abs=1e-15)


def test_ecarb_tie_rules_toy():
    # Sorted: 0.5 x3 (rows 0 error, 1 ok, 2 ok), then 0.9 ok. n=4, E=1, b=0.5 -> k=2.
    correct, confidence = [0, 1, 1, 1], [0.5, 0.5, 0.5, 0.9]
    # expected: the error is among the first two of the three tied rows with prob. 2/3;
    # (2/3) / (2/4 * 1) = 4/3.
    assert reference_ecarb(correct, confidence, budget=0.5) == pytest.approx(4 / 3, abs=1e-15)
    # stable: row 0 (the error) comes first -> 1 / (2/4) = 2.
    assert reference_ecarb(correct, confidence, budget=0.5, ties="stable") == 2.0
    # pessimistic: errors last among ties -> 0 caught.
    assert reference_ecarb(correct, confidence, budget=0.5, ties="pessimistic") == 0.0
    # optimistic: errors first -> 2.
    assert reference_ecarb(correct, confidence, budget=0.5, ties="optimistic") == 2.0
    # stable depends on row order: move the error to the end of the run -> 0.
    assert reference_ecarb([1, 1, 0, 1], confidence, budget=0.5, ties="stable") == 0.0


def test_ecarb_expected_two_runs():
    # Sorted: 0.2 x2 (1 error), 0.6 x4 (2 errors); n=6, E=3, b=0.5 -> k=3.
    # The whole first run (1 error) plus 1 of the 4 in the second run (2/4 errors expected):
    # caught = 1.5, ECARB = 1.5 / (3/6 * 3) = 1.
    correct = [0, 1, 0, 0, 1, 1]
    confidence = [0.2, 0.2, 0.6, 0.6, 0.6, 0.6]
    assert reference_ecarb(correct, confidence, budget=0.5) == 1.0
    # b=0.2 -> k=1: half a chance the first row is the error: 0.5 / (1/6 * 3) = 1.
    assert reference_ecarb(correct, confidence, budget=0.2) == 1.0
    # b=0.34 -> k=floor(2.04)=2: 1 / (2/6 * 3) = 1.
    assert reference_ecarb(correct, confidence, budget=0.34) == 1.0
    # Make the low run all errors: 2 errors in 0.2 x2, 1 in the 0.6 run of 4.
    # k=3: 2 + 1/4 = 2.25; 2.25 / (3/6 * 3) = 1.5
    assert reference_ecarb([0, 0, 0, 1, 1, 1], confidence, budget=0.5) == 1.5


def test_weighted_ecarb_reference_hand_worked():
    # weights 2, 1, 1 on the tied run at 0.5 (row 0 the error), 1 on 0.9: W = 5, E = 2.
    correct, confidence, weight = [0, 1, 1, 1], [0.5, 0.5, 0.5, 0.9], [2, 1, 1, 1]
    # b = 0.5: K = floor(2.5) = 2 units of the run's 4, expected 2 * 2/4 = 1 error weight:
    # 1 / (2/5 * 2) = 1.25, the brute force over the 5 repeated rows
    assert reference_ecarb(correct, confidence, budget=0.5, sample_weight=weight) == 1.25
    rows = np.repeat(np.arange(4), weight)
    assert reference_ecarb(np.array(correct)[rows], np.array(confidence)[rows],
                           budget=0.5) == 1.25
    # stable and optimistic take the weight-2 error first (2 caught): 2 / 0.8 = 2.5;
    # pessimistic takes the two correct units first: 0
    for ties, want in (("stable", 2.5), ("optimistic", 2.5), ("pessimistic", 0.0)):
        assert reference_ecarb(correct, confidence, budget=0.5, ties=ties,
                               sample_weight=weight) == want, ties
    # real weights: W = 2.5, K = max(1, floor(0.75)) = 1 unit; the error of weight 0.5 at
    # 0.1 and 0.5 of the correct row at 0.2 -> 0.5 / (1/2.5 * 0.5) = 2.5
    assert reference_ecarb([0, 1, 1], [0.1, 0.2, 0.3], budget=0.3,
                           sample_weight=[0.5, 1.0, 1.0]) == 2.5
    # ceiling: min(K, E) * W / (K * E) = 0.5 * 2.5 / (1 * 0.5) = 2.5
    assert reference_ecarb_ceiling([0, 1, 1], budget=0.3, sample_weight=[0.5, 1.0, 1.0]) == 2.5
    # errors of zero weight: E = 0, undefined
    assert math.isnan(reference_ecarb([0, 1], [0.1, 0.2], sample_weight=[0, 1]))


@pytest.mark.parametrize("budget", [0.01, 0.2, 0.3, 0.5, 0.99, 1.0])
def test_ecarb_all_equal_is_one(budget):
    # All tied: the k reviewed rows are a uniform sample, catching k*E/n errors on average.
    assert reference_ecarb([0, 1, 1, 0, 1, 1, 1, 0], [0.4] * 8, budget=budget) == 1.0


def test_ecarb_full_budget_is_one():
    # k = n catches all E errors: E / (1 * E) = 1, for every tie rule.
    for ties in ("expected", "stable", "pessimistic", "optimistic"):
        assert reference_ecarb([0, 1, 0, 1], [0.1, 0.2, 0.2, 0.3], budget=1.0, ties=ties) == 1.0


def test_ecarb_no_errors_is_nan():
    assert math.isnan(reference_ecarb([1, 1, 1], [0.1, 0.2, 0.3]))
    assert math.isnan(reference_ecarb([1, 1, 1], [0.1, 0.2, 0.3], ties="pessimistic"))
    assert math.isnan(reference_ecarb_ceiling([1, 1, 1]))


def test_ecarb_all_errors():
    # E = n: whatever is reviewed is an error: k / (k/n * n) = 1; ceiling min(k,n)*n/(k*n) = 1.
    assert reference_ecarb([0, 0, 0], [0.1, 0.5, 0.9], budget=0.3) == 1.0
    assert reference_ecarb_ceiling([0, 0, 0], budget=0.3) == 1.0


def test_ecarb_ceiling_toy():
    # n=10, E=2, b=0.5: k=5 >= E, min(5, 2) * 10 / (5 * 2) = 2 (= 1/b: all errors caught).
    assert reference_ecarb_ceiling([0, 0] + [1] * 8, budget=0.5) == 2.0
    # n=10, E=8, b=0.5: k=5 < E, min(5, 8) * 10 / (5 * 8) = 1.25 (= n/E: every review a hit).
    assert reference_ecarb_ceiling([0] * 8 + [1] * 2, budget=0.5) == 1.25
    # b=0.29, n=100, E=10: k=29, 10 * 100 / (29 * 10) = 100/29.
    assert reference_ecarb_ceiling([0] * 10 + [1] * 90, budget=0.29) == pytest.approx(100 / 29)


def test_ecarb_expected_refuses_large_n():
    with pytest.raises(ValueError, match=r"n must be <= 8; found n=9"):
        reference_ecarb([0, 1] * 4 + [1], [0.5] * 9)
    # The deterministic tie rules have no such limit.
    assert reference_ecarb([0, 1] * 4 + [1], [0.5] * 9, ties="pessimistic") == 0.0


def _expected_closed_form(correct, confidence, budget):
    """Independent derivation: the run straddling the cut contributes errors * taken / size."""
    correct = np.asarray(correct, dtype=bool)
    confidence = np.asarray(confidence, dtype=float)
    n = len(correct)
    k = reference_review_count(budget, n)
    errors_total = int((~correct).sum())
    if errors_total == 0:
        return math.nan
    caught = Fraction(0)
    taken = 0
    for value in sorted(set(confidence.tolist())):
        run = confidence == value
        size = int(run.sum())
        errors = int((~correct[run]).sum())
        take = min(size, k - taken)
        if take <= 0:
            break
        caught += Fraction(errors * take, size)
        taken += take
    return float(caught * n / (k * errors_total))


@SETTINGS
@given(calibration_data(max_size=8, ties="heavy"), review_budgets())
def test_ecarb_expected_brute_force_matches_closed_form(data, budget):
    correct, confidence = data
    expected = _expected_closed_form(correct, confidence, budget)
    got = reference_ecarb(correct, confidence, budget=budget)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


@SETTINGS
@given(calibration_data(max_size=8, ties="heavy"), review_budgets())
def test_ecarb_expected_between_pessimistic_and_optimistic(data, budget):
    correct, confidence = data
    if correct.all():
        return
    lo = reference_ecarb(correct, confidence, budget=budget, ties="pessimistic")
    mid = reference_ecarb(correct, confidence, budget=budget, ties="expected")
    hi = reference_ecarb(correct, confidence, budget=budget, ties="optimistic")
    assert lo <= mid <= hi <= reference_ecarb_ceiling(correct, budget=budget)


# --------------------------------------------------------------------------------------
# References: shared behaviour
# --------------------------------------------------------------------------------------

REFERENCES = {
    "auroc": lambda y, c: reference_auroc(y, c),
    "ece": lambda y, c: reference_ece(y, c),
    "ece_uniform": lambda y, c: reference_ece(y, c, binning="uniform", n_bins=10),
    "mce": lambda y, c: reference_mce(y, c, n_bins=3),
    "brier": lambda y, c: reference_brier(y, c),
    "ecarb": lambda y, c: reference_ecarb(y, c, budget=0.5),
}


@pytest.mark.parametrize("name", REFERENCES)
def test_references_accept_array_likes(name):
    fn = REFERENCES[name]
    y, c = [1, 0, 1, 0, 1], [0.9, 0.2, 0.2, 0.6, 0.4]
    want = fn(y, c)
    assert fn(np.array(y, dtype=bool), np.array(c)) == want
    assert fn(pd.Series(y), pd.Series(c)) == want
    assert fn([True, False, True, False, True], tuple(c)) == want


@pytest.mark.parametrize("name", REFERENCES)
def test_references_reject_bad_input(name):
    fn = REFERENCES[name]
    with pytest.raises(ValueError, match=r"confidence must be finite and within \[0, 1\]; "
                                         r"found nan at index 1"):
        fn([1, 0], [0.5, float("nan")])
    with pytest.raises(ValueError, match=r"confidence must be finite and within \[0, 1\]; "
                                         r"found 1.5 at index 0"):
        fn([1, 0], [1.5, 0.2])
    with pytest.raises(ValueError, match=r"correct must be bool or 0/1; found 2 at index 1"):
        fn([1, 2], [0.5, 0.2])
    with pytest.raises(ValueError, match=r"must have the same length; found 2 and 3"):
        fn([1, 0], [0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match=r"correct must be a non-empty 1-D array-like"):
        fn([], [])


def test_references_reject_bad_options():
    with pytest.raises(ValueError, match=r"n_bins must be an integer >= 1; found 0"):
        reference_ece([1], [0.5], n_bins=0)
    with pytest.raises(ValueError, match=r"binning must be one of 'quantile', 'uniform'; "
                                         r"found 'equal'"):
        reference_mce([1], [0.5], binning="equal")
    with pytest.raises(ValueError, match=r"ties must be one of .*found 'random'"):
        reference_ecarb([0], [0.5], ties="random")
    with pytest.raises(ValueError, match=r"sample_weight must be finite and >= 0; found -1"):
        reference_brier([1, 0], [0.5, 0.5], sample_weight=[1, -1])
    with pytest.raises(ValueError, match=r"sample_weight must have a positive total"):
        reference_auroc([1, 0], [0.5, 0.5], sample_weight=[0, 0])


@SETTINGS
@given(calibration_data(max_size=8, ties="heavy"), st.randoms(use_true_random=False))
def test_references_are_order_independent(data, rnd):
    correct, confidence = data
    perm = list(range(len(correct)))
    rnd.shuffle(perm)
    for fn in REFERENCES.values():
        a, b = fn(correct, confidence), fn(correct[perm], confidence[perm])
        assert (math.isnan(a) and math.isnan(b)) or a == b


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------


def _valid(correct, confidence):
    assert isinstance(correct, np.ndarray) and correct.dtype == bool and correct.ndim == 1
    assert isinstance(confidence, np.ndarray) and confidence.dtype == np.float64
    assert len(correct) == len(confidence) >= 1
    assert np.all((confidence >= 0) & (confidence <= 1))
    assert not np.any(np.signbit(confidence))  # no -0.0


@SETTINGS
@given(calibration_data(min_size=3, max_size=50, ties="none"))
def test_strategy_no_ties(data):
    _valid(*data)
    assert 3 <= len(data[0]) <= 50
    assert len(np.unique(data[1])) == len(data[1])


@SETTINGS
@given(calibration_data(max_size=50, ties="heavy"))
def test_strategy_heavy_ties_are_rounded(data):
    _valid(*data)
    confidence = data[1]
    assert np.all(np.round(confidence, 2) == confidence)


@SETTINGS
@given(calibration_data(max_size=50, ties="all"))
def test_strategy_all_tied(data):
    _valid(*data)
    assert len(np.unique(data[1])) == 1


@SETTINGS
@given(calibration_data(max_size=50, single_class=True))
def test_strategy_single_class(data):
    _valid(*data)
    assert len(np.unique(data[0])) == 1


@SETTINGS
@given(calibration_data(min_size=1, max_size=50, single_class=False))
def test_strategy_both_classes(data):
    _valid(*data)
    assert data[0].any() and not data[0].all()


@SETTINGS
@given(weighted_calibration_data(max_size=30, weights="integer", max_weight=3))
def test_strategy_integer_weights(data):
    correct, confidence, weight = data
    _valid(correct, confidence)
    assert weight.dtype == np.float64 and len(weight) == len(correct)
    assert np.all(weight == np.round(weight)) and np.all((weight >= 0) & (weight <= 3))
    assert weight.sum() > 0


@SETTINGS
@given(grouped_calibration_data(max_size=30, max_groups=4))
def test_strategy_groups(data):
    correct, confidence, groups = data
    _valid(correct, confidence)
    assert groups.dtype == np.int64 and len(groups) == len(correct)
    assert set(groups.tolist()) <= set(range(4))


def test_strategies_reach_extremes_and_single_class():
    # The cases the docstrings promise are actually generated, not merely allowed.
    seen = {"zero": False, "one": False, "single": False, "tie": False}

    @settings(max_examples=examples(300), deadline=None)
    @given(calibration_data(max_size=20))
    def look(data):
        correct, confidence = data
        seen["zero"] |= bool((confidence == 0.0).any())
        seen["one"] |= bool((confidence == 1.0).any())
        seen["single"] |= len(correct) > 1 and len(np.unique(correct)) == 1
        seen["tie"] |= len(np.unique(confidence)) < len(confidence)

    look()
    assert all(seen.values()), seen


def test_strategy_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"ties must be one of"):
        calibration_data(ties="lots")
    with pytest.raises(ValueError, match=r"1 <= min_size <= max_size"):
        calibration_data(min_size=0)
    with pytest.raises(ValueError, match=r"single_class=False needs max_size >= 2"):
        calibration_data(max_size=1, single_class=False)
