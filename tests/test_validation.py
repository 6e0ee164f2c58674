"""The boundary helpers of confcal/_validation.py: missing values, finite reals, seeds."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from confcal._validation import (
    check_budget,
    check_budgets,
    check_probability,
    check_seed,
    is_missing,
    is_real,
    shown,
)
from confcal.exceptions import ValidationError


# ------------------------------------------------------------------------- is_missing
@pytest.mark.parametrize("value", [
    None, float("nan"), np.float32("nan"), np.float64("nan"), Decimal("NaN"), pd.NA, pd.NaT,
    np.datetime64("NaT"), np.timedelta64("NaT"), "", "   ", "\t\n", [], (),
])
def test_is_missing_values(value):
    assert is_missing(value)


@pytest.mark.parametrize("value", [
    0, 0.0, -0.0, False, "0", " a ", [None], (0,), {}, Decimal("0"), np.int64(0),
    np.datetime64("2024-01-02"), pd.Timestamp("2024-01-02"), float("inf"),
])
def test_is_missing_non_missing_values(value):
    # zero, False and a list holding a missing value are all values
    assert not is_missing(value)


@pytest.mark.parametrize("value, expected", [
    (None, True), (float("nan"), True), (pd.NA, True), (pd.NaT, True),
    ("", False), ("  ", False), ([], False), ((), False), (0, False),
])
def test_is_missing_without_blank_is_the_rule_of_pandas_isna(value, expected):
    # the group-key rule: groupby(dropna=False) puts "" in a group of its own
    assert is_missing(value, blank=False) is expected
    assert isinstance(value, (list, tuple)) or bool(pd.isna(value)) is expected


# ---------------------------------------------------------------------------- is_real
@pytest.mark.parametrize("value", [
    0, -3, 2.5, -0.0, 1e308, np.int8(1), np.uint64(2**63), np.float16(0.5), np.float64(-1),
    2**1023,  # an int still within the float range
])
def test_is_real_accepts_finite_numbers_numpy_scalars_included(value):
    assert is_real(value)


@pytest.mark.parametrize("value", [
    True, False, np.bool_(True), float("nan"), float("inf"), -math.inf, np.float64("nan"),
    np.float32("inf"), 10**400, "1", b"1", None, [1], Decimal("1"), complex(1, 0),
    np.array(1.0),  # a 0-d array is an array, not a scalar
])
def test_is_real_refuses_bools_non_finite_and_non_numbers(value):
    assert not is_real(value)


def test_callers_of_is_real_raise_not_overflow():
    # 10**400 used to reach float() and raise OverflowError
    with pytest.raises(ValidationError, match=r"budget must be a number in \(0, 1\]"):
        check_budget(10**400)
    # a non-finite scalar is still read as one budget, and named as such
    with pytest.raises(ValidationError, match=r"budgets\[0\] must be a number in \(0, 1\]; "
                                              r"found nan"):
        check_budgets(float("nan"))
    with pytest.raises(ValidationError, match=r"level must be a number in \(0, 1\); found inf"):
        check_probability(float("inf"), "level")
    assert check_budgets(np.float32(0.5)) == (0.5,)


def test_a_400_digit_confidence_is_an_error_naming_its_index():
    from confcal import calibration_report, ece

    for call in (lambda: ece([1, 0], [10**400, 0.5]),
                 lambda: calibration_report([1, 0, 1], [0.1, 0.2, -(10**400)])):
        with pytest.raises(ValidationError, match=r"confidence must be finite and within "
                                                  r"\[0, 1\]; found an integer beyond the "
                                                  r"float range at index \d \(-?1000") as info:
            call()
        assert info.value.index in (0, 2)
    assert len(str(info.value)) < 200  # the number is shown by its two ends


def test_shown_keeps_short_reprs_and_elides_long_ones():
    assert shown("abc") == "'abc'"
    assert shown(10**400) == "1" + "0" * 24 + "..." + "0" * 25 + " (401 characters)"
    assert shown(10**5000) == "an integer too long to write"  # int repr refuses 4,301+ digits


# ------------------------------------------------------------------------- check_seed
@pytest.mark.parametrize("seed, expected", [
    (None, None), (0, 0), (7, 7), (np.int64(7), 7), (np.uint8(3), 3), (2**70, 2**70),
])
def test_check_seed_accepts_none_and_non_negative_ints(seed, expected):
    out = check_seed(seed)
    assert out == expected and (out is None or type(out) is int)


@pytest.mark.parametrize("seed, match", [
    (1.5, r"seed must be an int or None; found 1\.5"),
    (True, r"seed must be an int or None; found True"),
    (np.bool_(False), r"seed must be an int or None; found np\.False_|found False"),
    ("3", r"seed must be an int or None; found '3'"),
    # numpy's default_rng refuses these with a bare ValueError after the work has started
    (-1, r"seed must be an int >= 0 or None; found -1"),
])
def test_check_seed_refuses(seed, match):
    with pytest.raises(ValidationError, match=match):
        check_seed(seed)


def test_check_seed_required_and_bounded():
    assert check_seed(2**31 - 1, optional=False, limit=2**31) == 2**31 - 1
    for bad in (None, -1, 2**31, 1.0):
        with pytest.raises(ValidationError,
                           match=r"seed must be an integer in \[0, 2\*\*31\); found"):
            check_seed(bad, optional=False, limit=2**31)
    with pytest.raises(ValidationError, match=r"rng must be an integer in \[0, 10\); found 10"):
        check_seed(10, "rng", optional=False, limit=10)
    with pytest.raises(ValidationError, match=r"seed must be an int; found None"):
        check_seed(None, optional=False)


# ------------------------------------------------------------ pandas inputs, by label
def test_two_series_in_different_orders_are_matched_by_label():
    import pandas as pd

    from confcal.metrics import auroc, bootstrap_ci, ecarb_ceiling

    rng = np.random.default_rng(0)
    n = 200
    conf = rng.uniform(size=n)
    correct = rng.uniform(size=n) < conf  # confidence that means something: AUROC > 0.5
    labels = [f"doc-{i}" for i in range(n)]
    y, c = pd.Series(correct, index=labels), pd.Series(conf, index=labels)
    shuffled = c.sample(frac=1.0, random_state=1)
    want = auroc(correct, conf)
    assert auroc(y, shuffled) == want
    # read by position, the shuffled Series would give another number
    assert auroc(correct, shuffled.to_numpy()) != want
    w = pd.Series(rng.uniform(0.5, 2.0, size=n), index=labels)
    assert ecarb_ceiling(y, sample_weight=w.iloc[::-1]) == ecarb_ceiling(correct,
                                                                         sample_weight=w.to_numpy())
    groups = pd.Series(np.repeat(np.arange(40), 5), index=labels)
    a = bootstrap_ci(y, shuffled, groups=groups.iloc[::-1], n_resamples=20, seed=3)
    b = bootstrap_ci(correct, conf, groups=groups.to_numpy(), n_resamples=20, seed=3)
    pd.testing.assert_frame_equal(a, b)


def test_series_with_different_labels_are_an_error():
    import pandas as pd

    from confcal.metrics import brier

    y = pd.Series([1, 0, 1], index=["a", "b", "c"])
    with pytest.raises(ValidationError,
                       match=r"^correct and confidence must have the same index labels when "
                             r"both are pandas objects \(they are matched by label\); found 1 "
                             r"label of confidence not in correct, first 'x'$"):
        brier(y, pd.Series([0.1, 0.2, 0.3], index=["a", "b", "x"]))
    with pytest.raises(ValidationError, match=r"found labels repeated in confidence, first 'a'"):
        brier(y, pd.Series([0.1, 0.2, 0.3], index=["a", "a", "b"]))
    with pytest.raises(ValidationError, match=r"1 label of correct not in confidence, first 'c'"):
        brier(y, pd.Series([0.1, 0.2], index=["a", "b"]))
    # numpy or a list beside a Series: read by position, as always
    assert brier(y, [0.9, 0.1, 0.9]) == brier([1, 0, 1], [0.9, 0.1, 0.9])
