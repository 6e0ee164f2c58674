"""Invariants every calibration metric shares, driven by one registry (tests/_registry.py).

Agreement with the slow reference (unweighted, integer and float weights), bounds, row order,
unit and integer weights, weight scale and monotone transforms; the metric-specific properties
are in tests/test_properties.py.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st

from _registry import (
    CASES,
    MONOTONE,
    ORDER_INVARIANT,
    PROPERTY,
    TIE_MODES,
    TOL,
    WEIGHTED,
    any_data,
    call,
    close,
    fast_weighted,
    for_each_case,
    normal_weights,
    weighted_any,
)
from confcal.testing import calibration_data, weighted_calibration_data


@PROPERTY
@given(small=any_data(max_size=8), large=any_data(max_size=100))
def test_fast_matches_reference(small, large):
    def check(case):
        for correct, confidence in (small, large):
            if len(correct) > case.max_n:
                continue
            got = call(case, correct, confidence)
            want = case.reference(correct, confidence)
            assert type(got) is float  # STYLE 4: scalar metrics return a Python float
            assert close(got, want), (correct.tolist(), confidence.tolist(), got, want)

    for_each_case(CASES, check)


@PROPERTY
@given(data=any_data(max_size=100))
def test_bounds(data):
    correct, confidence = data

    def check(case):
        value = call(case, correct, confidence)
        if not math.isnan(value):
            upper = case.upper(correct)
            assert 0.0 <= value <= upper * (1 + TOL), (value, upper)

    for_each_case(CASES, check)


@PROPERTY
@given(data=calibration_data(max_size=100, ties="heavy"), draw=st.data())
def test_row_order_never_matters(data, draw):
    # Heavy ties are the hard case: rows with equal confidence must be interchangeable.
    correct, confidence = data
    perm = np.array(draw.draw(st.permutations(range(len(correct)))), dtype=np.intp)

    def check(case):
        a = call(case, correct, confidence)
        b = call(case, correct[perm], confidence[perm])
        assert close(b, a), (a, b)

    for_each_case(ORDER_INVARIANT, check)


@PROPERTY
@given(data=any_data(max_size=60), draw=st.data())
def test_pandas_inputs_are_matched_by_label(data, draw):
    # The same Series in two index orders: read by position they would pair the wrong rows;
    # matched by label they give exactly the numpy result.
    import pandas as pd

    correct, confidence = data
    n = len(correct)
    perm = np.array(draw.draw(st.permutations(range(n))), dtype=np.intp)
    labels = [f"e{i}" for i in range(n)]
    y = pd.Series(correct, index=labels)
    c = pd.Series(confidence, index=labels).iloc[perm]
    w = pd.Series(np.arange(1.0, n + 1.0), index=labels).iloc[perm[::-1]]

    def check(case):
        assert close(call(case, y, c), call(case, correct, confidence))
        if case.weighted and not case.undefined(np.asarray(correct, dtype=bool)):
            assert close(case.fast(y, c, sample_weight=w),
                         case.fast(correct, confidence, sample_weight=np.arange(1.0, n + 1.0)))

    for_each_case(CASES, check)


@PROPERTY
@given(data=any_data(max_size=100), transform=st.sampled_from(
    ["half", "half_shift", "square", "sqrt", "ranks", "ranks_from_zero"]))
def test_strictly_increasing_transform_changes_nothing(data, transform):
    correct, confidence = data
    if transform == "half":
        moved = confidence / 2
    elif transform == "half_shift":
        moved = confidence / 2 + 0.25
    elif transform == "ranks_from_zero":  # the smallest confidence lands on 0 exactly
        unique = np.unique(confidence)
        moved = np.searchsorted(unique, confidence) / len(unique)
    elif transform == "square":
        moved = confidence**2
    elif transform == "sqrt":
        moved = np.sqrt(confidence)
    else:  # onto evenly spaced values, through the sorted unique confidences
        unique = np.unique(confidence)
        moved = (np.searchsorted(unique, confidence) + 1) / (len(unique) + 1)
    # Each transform is non-decreasing in floating point; where it keeps every distinct
    # value distinct (and every tie tied) it is strictly increasing on these data.
    assume(len(np.unique(moved)) == len(np.unique(confidence)))

    def check(case):
        assert close(call(case, correct, moved), call(case, correct, confidence))

    for_each_case(MONOTONE, check)


@PROPERTY
@given(data=any_data(max_size=100))
def test_unit_weights_are_no_weights(data):
    correct, confidence = data

    def check(case):
        a = call(case, correct, confidence)
        b = call(case, correct, confidence, sample_weight=np.ones(len(correct)))
        assert close(b, a), (a, b)

    for_each_case(WEIGHTED, check)


@PROPERTY
@given(data=weighted_any())
def test_integer_weights_are_repeated_rows(data):
    correct, confidence, weight = data
    counts = weight.astype(np.intp)
    repeated_correct = np.repeat(correct, counts)
    repeated_confidence = np.repeat(confidence, counts)

    def check(case):
        a = call(case, repeated_correct, repeated_confidence)
        b = fast_weighted(case, correct, confidence, weight,
                          undefined=case.undefined(repeated_correct))
        assert close(b, a), (a, b)

    for_each_case(WEIGHTED, check)


@PROPERTY
@given(data=weighted_any())
def test_weighted_fast_matches_reference(data):
    # Integer weights: the quantile bin edges floor(W_before*M/W) are exact in float too.
    correct, confidence, weight = data

    def check(case):
        want = case.reference(correct, confidence, sample_weight=weight)
        got = fast_weighted(case, correct, confidence, weight, undefined=math.isnan(want))
        assert close(got, want), (got, want)

    for_each_case(WEIGHTED, check)


@PROPERTY
@given(data=st.one_of([weighted_calibration_data(max_size=60, ties=t, weights="float",
                                                 max_weight=3) for t in TIE_MODES]))
@example(data=(np.array([False, False]), np.array([0.0, 0.1]), np.array([1.0, 1e-9])))
def test_float_weights_match_reference(data):
    # Weights of very different sizes: a bin holding little of the total weight must keep its
    # own mean and accuracy (the example: the 0.1 row is alone in quantile bin 1, MCE 0.1).
    # Bin edges floor(W_before*M/W) could legitimately fall differently in float and exact
    # arithmetic; Hypothesis has not produced such a case, and the tolerance stays loose.
    correct, confidence, weight = data
    assume(normal_weights(weight, 1e-100))  # products of weights must stay normal too

    def check(case):
        want = case.reference(correct, confidence, sample_weight=weight)
        got = fast_weighted(case, correct, confidence, weight, undefined=math.isnan(want))
        assert close(got, want, 1e-9), (got, want)

    for_each_case(WEIGHTED, check)


@PROPERTY
@given(data=weighted_any(), exponent=st.integers(-1000, 1000))
@example(data=(np.array([True, False]), np.array([0.5, 0.25]), np.array([1.0, 1.0])),
         exponent=-600)
@example(data=(np.array([True, False]), np.array([0.5, 0.25]), np.array([1.0, 1.0])),
         exponent=600)
def test_weights_are_scale_free(data, exponent):
    # Multiplying every weight by 2**e is exact in float (the scaled weights stay normal
    # numbers) and changes no weighted mean or ratio: the metric must not change either.
    correct, confidence, weight = data
    scaled = weight * 2.0**exponent

    def check(case):
        want = case.reference(correct, confidence, sample_weight=weight)
        got = fast_weighted(case, correct, confidence, scaled, undefined=math.isnan(want))
        assert close(got, want), (got, want)

    for_each_case([c for c in WEIGHTED if c.scale_free], check)

