"""Invariants every calibration metric shares, driven by one registry."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from confcal import UndefinedMetricWarning

# name -> (function of (correct, confidence, **kw), takes sample_weight, order-only metric)
REGISTRY = {
    "auroc": (confcal.auroc, True, True),
    "ece_quantile": (lambda y, c, **kw: confcal.ece(y, c, binning="quantile", **kw), True, False),
    "ece_uniform": (lambda y, c, **kw: confcal.ece(y, c, binning="uniform", n_bins=10, **kw),
                    True, False),
    "mce": (confcal.mce, True, False),
    "brier": (confcal.brier, True, False),
    "ecarb_0.3": (lambda y, c, **kw: confcal.ecarb(y, c, budget=0.3, **kw), True, True),
    "ecarb_0.29": (lambda y, c, **kw: confcal.ecarb(y, c, budget=0.29, **kw), True, True),
}

BOUNDS = {"auroc": (0, 1), "ece_quantile": (0, 1), "ece_uniform": (0, 1), "mce": (0, 1),
          "brier": (0, 1)}


@st.composite
def tied_data(draw, min_size=2, max_size=80):
    n = draw(st.integers(min_size, max_size))
    decimals = draw(st.sampled_from([1, 2, 6]))
    confidence = np.round(np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))),
                          decimals)
    correct = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    # both classes present so every metric is defined
    correct[0], correct[-1] = True, False
    return correct, confidence


def call(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


@pytest.mark.parametrize("name", REGISTRY)
@settings(max_examples=60, deadline=None)
@given(data=tied_data(), seed=st.integers(0, 2**32 - 1))
def test_row_order_never_changes_the_result(name, data, seed):
    fn, _, _ = REGISTRY[name]
    correct, confidence = data
    perm = np.random.default_rng(seed).permutation(correct.shape[0])
    assert call(fn, correct[perm], confidence[perm]) == pytest.approx(
        call(fn, correct, confidence), abs=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, w, _) in REGISTRY.items() if w])
@settings(max_examples=60, deadline=None)
@given(data=tied_data())
def test_unit_weights_equal_no_weights(name, data):
    fn, _, _ = REGISTRY[name]
    correct, confidence = data
    ones = np.ones(correct.shape[0])
    assert fn(correct, confidence, sample_weight=ones) == pytest.approx(
        fn(correct, confidence), abs=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, w, _) in REGISTRY.items() if w])
@settings(max_examples=60, deadline=None)
@given(data=tied_data(max_size=30), weights=st.lists(st.integers(0, 4), min_size=30, max_size=30))
def test_integer_weights_equal_repeated_rows(name, data, weights):
    fn, _, _ = REGISTRY[name]
    correct, confidence = data
    w = np.array(weights[: correct.shape[0]])
    w[0] = w[-1] = 1  # keep both classes
    repeated = np.repeat(np.arange(correct.shape[0]), w)
    assert fn(correct, confidence, sample_weight=w) == pytest.approx(
        fn(correct[repeated], confidence[repeated]), abs=1e-12)


@pytest.mark.parametrize("name", [n for n, (_, _, order) in REGISTRY.items() if order])
@settings(max_examples=60, deadline=None)
@given(data=tied_data())
def test_ranking_metrics_ignore_strictly_increasing_transforms(name, data):
    fn, _, _ = REGISTRY[name]
    correct, confidence = data
    # c -> c/2 + 0.25 keeps order and ties for values of at most 6 decimals (the
    # generator's); the argsort check below proves it for each example
    transformed = confidence / 2 + 0.25
    assert np.array_equal(np.argsort(confidence, kind="stable"),
                          np.argsort(transformed, kind="stable"))
    assert fn(correct, transformed) == pytest.approx(fn(correct, confidence), abs=1e-12)
    ranks = np.unique(confidence, return_inverse=True)[1] / (len(np.unique(confidence)))
    assert fn(correct, ranks) == pytest.approx(fn(correct, confidence), abs=1e-12)


@pytest.mark.parametrize("name", BOUNDS)
@settings(max_examples=80, deadline=None)
@given(data=tied_data(min_size=1))
def test_bounds(name, data):
    fn, _, _ = REGISTRY[name]
    lo, hi = BOUNDS[name]
    value = call(fn, *data)
    assert math.isnan(value) or lo <= value <= hi


@settings(max_examples=100, deadline=None)
@given(data=tied_data(), budget=st.floats(0.01, 1.0))
def test_ecarb_between_zero_and_ceiling(data, budget):
    correct, confidence = data
    for ties in confcal.metrics.TIES:
        value = confcal.ecarb(correct, confidence, budget=budget, ties=ties)
        assert 0.0 <= value <= confcal.ecarb_ceiling(correct, budget=budget) + 1e-12
    # reviewing in an order at least as good as random: pessimistic <= expected <= optimistic
    pes, exp, opt = (confcal.ecarb(correct, confidence, budget=budget, ties=t)
                     for t in ("pessimistic", "expected", "optimistic"))
    assert pes <= exp + 1e-12 and exp <= opt + 1e-12
