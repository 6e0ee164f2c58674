"""confcal.calibration.routing: thresholds for a target accuracy and review budgets, exact under
ties."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import binom

from _profiles import examples
from confcal.calibration.routing import (
    BudgetResult,
    ThresholdResult,
    budget_for_residual_error,
    threshold_for_accuracy,
)
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.testing import calibration_data

# ---------------------------------------------------------------------------------------
# threshold_for_accuracy: hand-worked
# ---------------------------------------------------------------------------------------
CORRECT = [0, 1, 1, 0, 1, 1, 1, 1]
CONFIDENCE = [0.6, 0.6, 0.7, 0.7, 0.8, 0.9, 0.9, 0.95]


def test_threshold_hand_worked():
    # threshold 0.6 accepts 8 with 6 right (0.75), 0.7 accepts 6 with 5 right (0.833),
    # 0.8 accepts 4, all right
    assert tuple(threshold_for_accuracy(CORRECT, CONFIDENCE, target=0.75)) == (0.6, 1.0, 0.75)
    assert tuple(threshold_for_accuracy(CORRECT, CONFIDENCE, target=0.8)) == (0.7, 0.75, 5 / 6)
    result = threshold_for_accuracy(CORRECT, CONFIDENCE, target=1.0)
    assert isinstance(result, ThresholdResult) and tuple(result) == (0.8, 0.5, 1.0)
    threshold, coverage, accuracy = result  # unpacks as a 3-tuple of Python floats
    assert all(type(v) is float for v in (threshold, coverage, accuracy))


def test_results_are_frozen_dataclasses_that_unpack():
    import dataclasses

    result = threshold_for_accuracy(CORRECT, CONFIDENCE, target=0.8)
    budget = budget_for_residual_error(CORRECT, CONFIDENCE, target_error=0.2)
    for r in (result, budget):
        assert dataclasses.is_dataclass(r)
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.budget = 0.5  # type: ignore[misc,union-attr]
    assert tuple(result) == dataclasses.astuple(result) == (0.7, 0.75, 5 / 6)
    review, left = budget
    assert (review, left) == (budget.budget, budget.errors_left)


def test_threshold_accepts_whole_runs_of_equal_confidence():
    # three predictions tie at 0.9 (2 right) above one right at 0.5. No threshold can take
    # "the two right ones at 0.9": >= 0.9 takes all three (2/3 = 0.667), >= 0.5 takes all
    # four (3/4 = 0.75). For target 0.7 the answer is therefore 0.5, not 0.9.
    correct, confidence = [1, 0, 1, 1], [0.9, 0.9, 0.9, 0.5]
    assert tuple(threshold_for_accuracy(correct, confidence, target=0.7)) == (0.5, 1.0, 0.75)
    # row order is irrelevant
    assert tuple(threshold_for_accuracy(correct[::-1], confidence[::-1], target=0.7)) == (
        0.5, 1.0, 0.75)


def test_threshold_is_the_lowest_even_when_accuracy_is_not_monotone():
    # accepted accuracy by threshold: 0.9 -> 1/1, 0.8 -> 1/2, 0.7 -> 2/3, 0.6 -> 3/4.
    # Target 0.75: 0.6 (3/4) is the lowest that reaches it although 0.7 and 0.8 do not.
    correct, confidence = [1, 1, 0, 1], [0.6, 0.7, 0.8, 0.9]
    assert tuple(threshold_for_accuracy(correct, confidence, target=0.75)) == (0.6, 1.0, 0.75)


def test_accuracy_is_compared_exactly_with_the_written_target():
    # 49 of 50 right: 49/50 = 0.98 exactly, the target as written
    correct = [1] * 49 + [0]
    assert tuple(threshold_for_accuracy(correct, [0.9] * 50, target=0.98)) == (0.9, 1.0, 0.98)
    # 1 of 10 right against target 0.1: the float 0.1 is 0.1000000000000000055..., above
    # 1/10, but the target reads as written (1/10), so 1/10 reaches it
    correct = [1] + [0] * 9
    assert tuple(threshold_for_accuracy(correct, [0.5] * 10, target=0.1)) == (0.5, 1.0, 0.1)
    # 1 of 3 right: 1/3 >= 0.3333333333333333 (as written) holds...
    assert threshold_for_accuracy([1, 0, 0], [0.5] * 3, target=1 / 3).threshold == 0.5
    # ...and 1/3 >= 0.33333333333333337 (the next float) does not, although the float
    # quotient 1/3 is within one ulp of it
    with pytest.warns(UndefinedMetricWarning):
        threshold_for_accuracy([1, 0, 0], [0.5] * 3, target=float(np.nextafter(1 / 3, 1)))


def test_infeasible_target_returns_accept_nothing_with_a_warning():
    # even the top run (0.9) holds an error: 1/2; everything: 2/4
    correct, confidence = [1, 0, 1, 0], [0.5, 0.5, 0.9, 0.9]
    with pytest.warns(UndefinedMetricWarning,
                      match=r"no threshold reaches the target accuracy 0.9 \(accuracy; the best "
                            r"is 0.5 at threshold 0.5, covering 100% of 4 predictions\); "
                            r"returning threshold inf \(accept nothing\)"):
        threshold, coverage, accuracy = threshold_for_accuracy(correct, confidence, target=0.9)
    assert threshold == math.inf and coverage == 0.0 and math.isnan(accuracy)
    # the infinite threshold is safe to apply: nothing passes
    assert not np.any(np.asarray(confidence) >= threshold)


def test_clopper_pearson_hand_worked():
    # 100 right of 100 at 0.9: the one-sided lower bound is (1 - level)^(1/100)
    # level 0.95: 0.05^(0.01) = 0.97049; level 0.99: 0.01^(0.01) = 0.95499
    correct, confidence = [1] * 100, [0.9] * 100
    assert 0.05 ** 0.01 == pytest.approx(0.970487, abs=1e-6)
    result = threshold_for_accuracy(correct, confidence, target=0.97,
                                    lower_bound="clopper-pearson")
    assert tuple(result) == (0.9, 1.0, 1.0)  # accuracy stays the point estimate
    with pytest.warns(UndefinedMetricWarning, match=r"clopper-pearson lower bound at level "
                                                    r"0.99; the best is 0.954993"):
        threshold_for_accuracy(correct, confidence, target=0.97, lower_bound="clopper-pearson",
                               confidence_level=0.99)


def test_clopper_pearson_trades_coverage_for_the_guarantee():
    # 20 right at 0.9, then 80 at 0.5 of which 76 right (96/100 overall).
    # Point estimate, target 0.95: threshold 0.5 (96/100 >= 0.95).
    # 95% lower bounds: 96/100 -> 0.9108 (the 5% quantile of Beta(96, 5));
    # 20/20 -> 0.05^(1/20) = 0.8609. Target 0.95: neither reaches it. Target 0.91: 96/100
    # does, so the lowest threshold 0.5 is kept. Target 0.92: neither.
    correct = [1] * 20 + [1] * 76 + [0] * 4
    confidence = [0.9] * 20 + [0.5] * 80
    assert tuple(threshold_for_accuracy(correct, confidence, target=0.95)) == (0.5, 1.0, 0.96)
    with pytest.warns(UndefinedMetricWarning, match=r"the best is 0.910804 at threshold 0.5"):
        threshold_for_accuracy(correct, confidence, target=0.95, lower_bound="clopper-pearson")
    assert tuple(threshold_for_accuracy(correct, confidence, target=0.91,
                                        lower_bound="clopper-pearson")) == (0.5, 1.0, 0.96)
    # the message reports the best bound over all thresholds, feasible or not
    with pytest.warns(UndefinedMetricWarning, match=r"the best is 0.910804 at threshold 0.5"):
        threshold_for_accuracy(correct, confidence, target=0.92, lower_bound="clopper-pearson")
    # target 0.97: only 20/20 is point-feasible (96/100 is not), and its bound 0.8609 fails;
    # the message still reports the best bound of any threshold: 96/100's 0.9108
    with pytest.warns(UndefinedMetricWarning, match=r"the best is 0.910804 at threshold 0.5"):
        threshold_for_accuracy(correct, confidence, target=0.97, lower_bound="clopper-pearson")
    # and at 0.86 the top run alone (0.8609) would do, but 0.5 is lower and also feasible
    assert threshold_for_accuracy(correct, confidence, target=0.86,
                                  lower_bound="clopper-pearson").threshold == 0.5


@pytest.mark.parametrize("kwargs, match", [
    ({"target": 0.0}, r"target must be a number in \(0, 1\]; found 0.0"),
    ({"target": 1.5}, r"target must be a number in \(0, 1\]; found 1.5"),
    ({"target": "high"}, r"target must be a number in \(0, 1\]; found 'high'"),
    ({"lower_bound": "wilson"}, r"lower_bound must be one of 'clopper-pearson'; found 'wilson'"),
    ({"confidence_level": 0.9},
     r"confidence_level must be None without a lower_bound .*; found 0.9"),
    ({"lower_bound": "clopper-pearson", "confidence_level": 0.3},
     r"confidence_level must be a number in \[0.5, 1\); found 0.3"),
    ({"lower_bound": "clopper-pearson", "confidence_level": 1.0},
     r"confidence_level must be a number in \(0, 1\)"),
])
def test_threshold_option_errors(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        threshold_for_accuracy(CORRECT, CONFIDENCE, **kwargs)


@pytest.mark.parametrize("correct, confidence, match", [
    ([1, 0], [0.5], r"correct, confidence must have the same length; correct has 2 and "
                    r"confidence has 1"),
    ([1, 0], [0.5, float("nan")], r"confidence must be finite and within \[0, 1\]; found 1 "
                                  r"value breaking it, first at index 1 \(nan\)"),
    ([1, 3], [0.5, 0.5], r"correct must be bool or 0/1; found 1 value breaking it, first at "
                         r"index 1 \(3\)"),
    ([], [], r"correct must not be empty"),
])
def test_routing_rejects_bad_arrays(correct, confidence, match):
    with pytest.raises(ValidationError, match=match):
        threshold_for_accuracy(correct, confidence)
    with pytest.raises(ValidationError, match=match):
        budget_for_residual_error(correct, confidence)


# ---------------------------------------------------------------------------------------
# threshold_for_accuracy: feasible and minimal, against a brute-force scan
# ---------------------------------------------------------------------------------------
def _cp_lower_reference(k: int, m: int, level: float) -> float:
    """The p where P(X >= k | m, p) = 1 - level, by root-finding on the binomial tail
    (an independent route to the bound the code takes from the beta quantile)."""
    if k == 0:
        return 0.0
    return brentq(lambda p: binom.sf(k - 1, m, p) - (1 - level), 0.0, 1.0, xtol=1e-14)


def _scan(correct, confidence, target, level=None):
    """Every threshold worth trying (each distinct confidence, and one above them all):
    (threshold, accepted, right, feasible) in ascending order."""
    rows = []
    for t in sorted(set(confidence.tolist())):
        accepted = confidence >= t
        m, k = int(accepted.sum()), int((accepted & correct).sum())
        if level is None:
            feasible: bool | None = Fraction(k, m) >= Fraction(repr(target))
        else:
            lb = _cp_lower_reference(k, m, level)
            # the two routes to the bound agree to ~1e-12; closer to the target than that,
            # either answer is right
            feasible = None if abs(lb - target) < 1e-9 else lb >= target
        rows.append((t, m, k, feasible))
    return rows


@settings(max_examples=examples(100), deadline=None)
@given(data=calibration_data(min_size=1, max_size=60, ties="heavy"),
       target=st.one_of(st.sampled_from([0.5, 0.75, 0.8, 0.9, 0.95, 1.0]),
                        st.floats(0.01, 1.0)),
       level=st.one_of(st.none(), st.sampled_from([0.5, 0.8, 0.95])))
def test_threshold_is_feasible_and_minimal(data, target, level):
    correct, confidence = data
    bound = None if level is None else "clopper-pearson"
    scan = _scan(correct, confidence, target, level)
    if not any(f or f is None for *_, f in scan):
        with pytest.warns(UndefinedMetricWarning):
            result = threshold_for_accuracy(correct, confidence, target=target,
                                            lower_bound=bound, confidence_level=level)
        assert result.threshold == math.inf and result.coverage == 0.0
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # only in the "either" band
        result = threshold_for_accuracy(correct, confidence, target=target, lower_bound=bound,
                                        confidence_level=level)
    if result.threshold == math.inf:  # allowed only if every candidate was borderline
        assert all(f is not True for *_, f in scan)
        return
    row = next(r for r in scan if r[0] == result.threshold)
    t, m, k, feasible = row
    assert feasible is not False  # feasible
    assert all(f is not True for tt, _, _, f in scan if tt < t)  # minimal: none lower
    assert result.coverage == m / len(correct) and result.accuracy == k / m


# ---------------------------------------------------------------------------------------
# budget_for_residual_error
# ---------------------------------------------------------------------------------------
def test_budget_hand_worked():
    # 10 predictions, errors at 0.1, 0.3, 0.8
    correct = [0, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    confidence = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    # target 30%: 3 errors of 10 already are at most 3 -> review nothing
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.3)) == (0.0, 3)
    # 20%: at most 2 left -> review 0.1 only (1 of 10)
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.2)) == (0.1, 2)
    # 10%: at most 1 -> review up to 0.3 (3 of 10)
    result = budget_for_residual_error(correct, confidence, target_error=0.1)
    assert isinstance(result, BudgetResult) and tuple(result) == (0.3, 1)
    assert type(result.budget) is float and type(result.errors_left) is int
    # 0: every error reviewed -> up to 0.8 (8 of 10)
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.0)) == (0.8, 0)


def test_budget_reviews_whole_runs():
    # the 4 least confident tie at 0.2 and hold the only error: reviewing "1 of them" would
    # depend on row order, so the run is reviewed whole: budget 4/5
    correct, confidence = [1, 1, 0, 1, 1], [0.2, 0.2, 0.2, 0.2, 0.9]
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.0)) == (0.8, 0)
    # all tied: review everything or nothing
    assert tuple(budget_for_residual_error([0, 1], [0.5, 0.5], target_error=0.0)) == (1.0, 0)


def test_budget_target_reads_as_written():
    # 0.29 * 100 is 28.999999999999996 in floats (and the float 0.29 is just below 0.29);
    # as written, 29 errors of 100 is 0.29: allowed, as review_count(0.29, 100) reviews 29
    correct = [0] * 29 + [1] * 71
    confidence = [0.9] * 29 + [0.1] * 71  # the errors are the most confident run
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.29)) == (0.0, 29)
    # 30 errors, all in the most confident run: only a full review leaves at most 29
    correct, confidence = [0] * 30 + [1] * 70, [0.9] * 30 + [0.1] * 70
    assert tuple(budget_for_residual_error(correct, confidence, target_error=0.29)) == (1.0, 0)


@pytest.mark.parametrize("target_error, match", [
    (-0.1, r"target_error must be a number in \[0, 1\]; found -0.1"),
    (1.5, r"target_error must be a number in \[0, 1\]; found 1.5"),
    (None, r"target_error must be a number in \[0, 1\]; found None"),
])
def test_budget_option_errors(target_error, match):
    with pytest.raises(ValidationError, match=match):
        budget_for_residual_error(CORRECT, CONFIDENCE, target_error=target_error)


@settings(max_examples=examples(100), deadline=None)
@given(data=calibration_data(min_size=1, max_size=60, ties="heavy"),
       target_error=st.one_of(st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.29]), st.floats(0, 1)))
def test_budget_is_feasible_and_minimal(data, target_error):
    correct, confidence = data
    n = len(correct)
    # brute force: every whole-run review (nothing, or everything up to each confidence)
    options = [(0, int((~correct).sum()))]
    for t in sorted(set(confidence.tolist())):
        reviewed = confidence <= t
        options.append((int(reviewed.sum()), int((~correct & ~reviewed).sum())))
    # errors allowed: target·n exactly, a value within a relative 1e-9 of a whole number
    # counting as it (review_count's rule), else floored
    exact = Fraction(target_error) * n
    near = abs(exact - round(exact)) <= Fraction(1, 10**9) * max(Fraction(1), exact)
    allowed = round(exact) if near else math.floor(exact)
    ok = [(k, e) for k, e in options if e <= allowed]
    k, e = min(ok)
    assert tuple(budget_for_residual_error(correct, confidence, target_error=target_error)) == (
        k / n, e)


def test_budget_allowance_uses_the_review_count_rule():
    # 300 predictions, 100 errors, all in the most confident run. Target 1/3: the float 1/3
    # times 300 is 99.999999999999994, within 1e-9 of 100 -> 100 errors allowed (as
    # review_count(1/3, 300) == 100), so nothing needs review. A plain floor allowed 99.
    correct = [0] * 100 + [1] * 200
    confidence = [0.9] * 100 + [0.1] * 200
    assert tuple(budget_for_residual_error(correct, confidence, target_error=1 / 3)) == (0.0, 100)
