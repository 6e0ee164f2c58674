"""CalibrationSketch: exact under any split and merge order; bounded when snapped."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from confcal import CalibrationSketch, UndefinedMetricWarning, ValidationError
from confcal.testing import calibration_data, weighted_calibration_data

BUDGETS = (0.1, 0.29, 0.5)


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


def same(a: float, b: float, tol: float = 0.0) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def split_and_merge(correct, confidence, cuts, order, **kw):
    bounds = sorted({0, len(correct), *[c % (len(correct) + 1) for c in cuts]})
    parts = [CalibrationSketch.from_arrays(correct[a:b], confidence[a:b], **kw)
             for a, b in zip(bounds, bounds[1:]) if b > a]
    rng = np.random.default_rng(order)
    rng.shuffle(parts)
    merged = CalibrationSketch.empty(resolution=kw.get("resolution"))
    for p in parts:  # left fold in a random order ...
        merged = merged.merge(p)
    tree = parts  # ... and a random tree
    while len(tree) > 1:
        i = int(rng.integers(0, len(tree) - 1))
        tree = tree[:i] + [tree[i + 1].merge(tree[i])] + tree[i + 2:]
    assert tree[0] == merged
    return merged


@settings(max_examples=150, deadline=None)
@given(data=calibration_data(max_size=120, ties="heavy"),
       cuts=st.lists(st.integers(0, 200), max_size=4), order=st.integers(0, 2**32 - 1),
       binning=st.sampled_from(["quantile", "uniform"]), n_bins=st.integers(1, 12))
def test_split_merge_report_equals_array_report(data, cuts, order, binning, n_bins):
    correct, confidence = data
    sketch = split_and_merge(correct, confidence, cuts, order)
    got = quiet(sketch.report, budgets=BUDGETS, n_bins=n_bins, binning=binning)
    want = quiet(confcal.calibration_report, correct, confidence, budgets=BUDGETS,
                 n_bins=n_bins, binning=binning)
    # counts are integers: AUROC and ECARB are bit-for-bit equal
    assert same(got.auroc, want.auroc)
    for b in BUDGETS:
        assert same(got.ecarb[b], want.ecarb[b])
        assert same(got.ecarb_ceiling[b], want.ecarb_ceiling[b])
    # sums of confidences in another order: equal to rounding
    for name in ("ece", "mce", "brier", "accuracy"):
        assert same(getattr(got, name), getattr(want, name), 1e-12), name
    assert (got.n, got.n_errors) == (want.n, want.n_errors)
    assert got.bins[["bin", "count"]].equals(want.bins[["bin", "count"]])


@settings(max_examples=100, deadline=None)
@given(data=weighted_calibration_data(max_size=60, ties="heavy", single_class=False),
       cuts=st.lists(st.integers(0, 100), max_size=3), order=st.integers(0, 2**32 - 1))
def test_weighted_sketch_equals_weighted_metrics(data, cuts, order):
    correct, confidence, weight = data
    bounds = sorted({0, len(correct), *[c % (len(correct) + 1) for c in cuts]})
    parts = [CalibrationSketch.from_arrays(correct[a:b], confidence[a:b],
                                           sample_weight=weight[a:b])
             for a, b in zip(bounds, bounds[1:]) if b > a and weight[a:b].sum() > 0]
    np.random.default_rng(order).shuffle(parts)
    sketch = parts[0]
    for p in parts[1:]:
        sketch = sketch.merge(p)
    rep = quiet(sketch.report, budgets=(0.3,))
    kw = {"sample_weight": weight}
    assert same(rep.auroc, quiet(confcal.auroc, correct, confidence, **kw), 1e-12)
    assert same(rep.ece, confcal.ece(correct, confidence, **kw), 1e-12)
    assert same(rep.mce, confcal.mce(correct, confidence, **kw), 1e-12)
    assert same(rep.brier, confcal.brier(correct, confidence, **kw), 1e-12)
    if np.all(weight == np.round(weight)):  # whole weights are copies of rows
        rows = np.repeat(np.arange(len(correct)), weight.astype(int))
        assert same(rep.ecarb[0.3], quiet(confcal.ecarb, correct[rows], confidence[rows]),
                    1e-12)


@settings(max_examples=100, deadline=None)
@given(data=calibration_data(max_size=80))
def test_bytes_round_trip_is_exact(data):
    correct, confidence = data
    for kw in ({}, {"resolution": 0.001}, {"sample_weight": np.linspace(0.5, 2, len(correct))}):
        sketch = CalibrationSketch.from_arrays(correct, confidence, **kw)
        blob = sketch.to_bytes()
        again = CalibrationSketch.from_bytes(blob)
        assert again == sketch
        assert again.to_bytes() == blob


@settings(max_examples=150, deadline=None)
@given(data=calibration_data(min_size=2, max_size=200, ties="some", single_class=False),
       resolution=st.sampled_from([0.1, 0.05, 0.01, 0.001]),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_snapped_sketch_stays_within_its_error_bounds(data, resolution, binning):
    correct, confidence = data
    sketch = CalibrationSketch.from_arrays(correct, confidence, resolution=resolution)
    got = quiet(sketch.report, budgets=BUDGETS, binning=binning)
    raw = quiet(confcal.calibration_report, correct, confidence, budgets=BUDGETS,
                binning=binning)
    bound = quiet(sketch.error_bounds, budgets=BUDGETS, binning=binning).set_index("metric")[
        "bound"]
    eps = 1e-12
    assert abs(got.brier - raw.brier) <= bound["brier"] + eps
    assert abs(got.auroc - raw.auroc) <= bound["auroc"] + eps
    assert abs(got.ece - raw.ece) <= bound["ece"] + eps
    for b in BUDGETS:
        if not math.isnan(raw.ecarb[b]):
            assert abs(got.ecarb[b] - raw.ecarb[b]) <= bound[f"ecarb@{b:g}"] + eps


def test_snapping_hand_worked():
    # resolution 0.1: 0.34 -> 0.3, 0.36 -> 0.4, 0.31 -> 0.3; the correct 0.34 and the
    # incorrect 0.31 now share the cell 0.3: 1 of the 2*1 (correct, incorrect) pairs.
    sketch = CalibrationSketch.from_arrays([1, 1, 0], [0.34, 0.36, 0.31], resolution=0.1)
    assert sketch.values.tolist() == [0.3, 0.4]
    assert sketch.n_correct.tolist() == [1, 1] and sketch.n_incorrect.tolist() == [1, 0]
    assert sketch.tied_pair_share == 0.5
    # raw AUROC 1.0; snapped (0.3 tie: 1/2, 0.4 > 0.3: 1) -> 0.75; bound 1/2 * 1/2 = 0.25
    assert confcal.auroc([1, 1, 0], [0.34, 0.36, 0.31]) == 1.0
    assert sketch.report().auroc == 0.75
    bounds = sketch.error_bounds().set_index("metric")["bound"]
    assert bounds["auroc"] == 0.25
    assert bounds["brier"] == 0.1


def test_exact_sketch_has_zero_bounds_and_memory_is_distinct_values():
    rng = np.random.default_rng(0)
    confidence = rng.choice([0.9, 0.95, 0.99], size=10_000)
    correct = rng.uniform(size=10_000) < confidence
    sketch = CalibrationSketch.from_arrays(correct, confidence)
    assert sketch.values.tolist() == [0.9, 0.95, 0.99]
    assert len(sketch.to_bytes()) == 32 + 3 * 3 * 8  # header + 3 cells x 3 columns
    assert (sketch.error_bounds()["bound"] == 0).all()


def test_update_equals_merge_and_sketches_are_immutable():
    a = CalibrationSketch.from_arrays([1, 0], [0.9, 0.2])
    b = a.update([1, 1], [0.9, 0.5])
    assert b == a.merge(CalibrationSketch.from_arrays([1, 1], [0.9, 0.5]))
    assert a.n == 2 and b.n == 4
    with pytest.raises(AttributeError):
        a.resolution = 0.1  # type: ignore[misc]


def test_weighted_sketch_with_fractional_weights_has_no_ecarb():
    sketch = CalibrationSketch.from_arrays([1, 0, 1], [0.2, 0.5, 0.9], sample_weight=[0.5, 1, 2])
    with pytest.warns(UndefinedMetricWarning, match="whole-number weights"):
        rep = sketch.report(budgets=(0.3,))
    assert math.isnan(rep.ecarb[0.3])
    assert rep.auroc == confcal.auroc([1, 0, 1], [0.2, 0.5, 0.9], sample_weight=[0.5, 1, 2])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: CalibrationSketch.from_arrays([1, 0], [0.5, 1.5]),
         r"confidence must be finite and within \[0, 1\]; found 1 value breaking it, "
         r"first at index 1 \(1\.5\)"),
        (lambda: CalibrationSketch.from_arrays([1, 2], [0.5, 0.5]), r"correct must be bool or 0/1"),
        (lambda: CalibrationSketch.from_arrays([1, 0], [0.5, 0.5]).update([1], [0.2, 0.3]),
         r"same length"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5], resolution=0.3),
         r"resolution must divide 1"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5], resolution=0),
         r"resolution must be None or a number in \(0, 1\]"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5]).merge(
            CalibrationSketch.from_arrays([1], [0.5], resolution=0.01)),
         r"sketches must share a resolution"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5]).report(ties="stable"),
         r"ties must be one of 'expected', 'pessimistic', 'optimistic'; found 'stable'"),
        (lambda: CalibrationSketch.empty().report(), r"the sketch must not be empty"),
        (lambda: CalibrationSketch.from_bytes(b"nope"), r"data must hold a sketch header"),
        (lambda: CalibrationSketch.from_bytes(b"XXXX" + bytes(32)), r"must start with b'CCSK'"),
        (lambda: CalibrationSketch.from_bytes(
            CalibrationSketch.from_arrays([1], [0.5]).to_bytes()[:-1]), r"data must be 56 bytes for 1 cells; found 55"),
    ],
)
def test_bad_input_raises_named_errors(call, message):
    with pytest.raises(ValidationError, match=message):
        call()
