"""Merging many sketches: one k-way merge, equal to every fold and tree of pairwise merges
(empty and zero-weight parts included), and equal to the report of the concatenation."""

from __future__ import annotations

import math
import warnings
from functools import reduce

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from _profiles import examples
from confcal import CalibrationSketch, UndefinedMetricWarning, ValidationError
from confcal.report import compare_runs, compare_runs_sketched

BUDGETS = (0.1, 0.3, 0.5)


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


def close(a: float, b: float, rel: float = 0.0) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rel * max(abs(a), abs(b))


@st.composite
def partitioned(draw, weights: str):
    """Rows in parts (some empty); weights None, whole numbers (some parts all zero) or
    floats."""
    n = draw(st.integers(1, 80))
    grid = draw(st.sampled_from([4, 20, 10**6]))  # heavy ties .. nearly distinct
    conf = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n))) / grid
    correct = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
    bounds = [0, *cuts, n]
    w = None
    if weights == "int":
        w = np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=float)
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            if draw(st.booleans()) and draw(st.booleans()):
                w[a:b] = 0.0  # a partition of zero weight
        if not w.sum() > 0:
            w[0] = 1.0
    elif weights == "float":
        w = np.array(draw(st.lists(st.floats(0.01, 10), min_size=n, max_size=n)))
    parts = [CalibrationSketch.from_arrays(correct[a:b], conf[a:b],
                                           sample_weight=None if w is None else w[a:b])
             for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return correct, conf, w, parts


def random_tree(parts, rng):
    tree = list(parts)
    while len(tree) > 1:
        i = int(rng.integers(0, len(tree) - 1))
        size = int(rng.integers(2, min(4, len(tree) - i) + 1))
        tree = tree[:i] + [CalibrationSketch.merge_all(tree[i:i + size])] + tree[i + size:]
    return tree[0]


def check_report(got, want, rel):
    assert (got.n, got.n_errors) == (want.n, want.n_errors)
    exact = rel if rel else 0.0
    assert close(got.auroc, want.auroc, exact)
    for b in BUDGETS:
        assert close(got.ecarb[b], want.ecarb[b], exact)
        assert close(got.ecarb_ceiling[b], want.ecarb_ceiling[b], exact)
    for name in ("accuracy", "ece", "mce", "brier"):
        assert close(getattr(got, name), getattr(want, name), max(rel, 1e-13)), name


@settings(max_examples=examples(100), deadline=None)
@given(data=partitioned("none"), seed=st.integers(0, 2**32 - 1))
def test_any_tree_or_order_is_the_report_of_the_concatenation(data, seed):
    correct, conf, _, parts = data
    rng = np.random.default_rng(seed)
    shuffled = [parts[i] for i in rng.permutation(len(parts))]
    kway = CalibrationSketch.merge_all(shuffled)
    fold = reduce(lambda a, b: a.merge(b), parts)
    assert kway == fold == random_tree(shuffled, rng)  # counts: bit for bit
    assert kway == CalibrationSketch.from_arrays(correct, conf)
    want = quiet(confcal.calibration_report, correct, conf, budgets=BUDGETS)
    check_report(quiet(kway.report, budgets=BUDGETS), want, 0.0)
    fused = quiet(CalibrationSketch.merged_report, shuffled, budgets=BUDGETS)
    assert fused == quiet(kway.report, budgets=BUDGETS)  # bit for bit, same path or not


@settings(max_examples=examples(100), deadline=None)
@given(data=partitioned("int"), seed=st.integers(0, 2**32 - 1))
def test_integer_weights_with_zero_weight_parts_merge_exactly(data, seed):
    correct, conf, w, parts = data
    rng = np.random.default_rng(seed)
    shuffled = [parts[i] for i in rng.permutation(len(parts))]
    kway = CalibrationSketch.merge_all(shuffled)
    assert kway == reduce(lambda a, b: a.merge(b), parts) == random_tree(shuffled, rng)
    assert kway == CalibrationSketch.from_arrays(correct, conf, sample_weight=w)
    want = quiet(confcal.calibration_report, correct, conf, budgets=BUDGETS, sample_weight=w)
    check_report(quiet(kway.report, budgets=BUDGETS), want, 0.0)


@settings(max_examples=examples(100), deadline=None)
@given(data=partitioned("float"), seed=st.integers(0, 2**32 - 1))
def test_float_weights_merge_within_rounding(data, seed):
    correct, conf, w, parts = data
    rng = np.random.default_rng(seed)
    shuffled = [parts[i] for i in rng.permutation(len(parts))]
    got = quiet(random_tree(shuffled, rng).report, budgets=BUDGETS)
    want = quiet(confcal.calibration_report, correct, conf, budgets=BUDGETS, sample_weight=w)
    check_report(got, want, 1e-13)


def test_merge_all_by_hand():
    # cells (value: correct, incorrect): a = {0.2: 1, 0}, {0.5: 0, 1}; b = {0.2: 0, 2};
    # c = {0.5: 1, 0}, {0.9: 1, 0} -> {0.2: 1, 2}, {0.5: 1, 1}, {0.9: 1, 0}
    a = CalibrationSketch.from_arrays([1, 0], [0.2, 0.5])
    b = CalibrationSketch.from_arrays([0, 0], [0.2, 0.2])
    c = CalibrationSketch.from_arrays([1, 1], [0.5, 0.9])
    for order in ([a, b, c], [c, a, b], [b, CalibrationSketch.empty(), c, a]):
        m = CalibrationSketch.merge_all(order)
        assert m.values.tolist() == [0.2, 0.5, 0.9]
        assert m.n_correct.tolist() == [1, 1, 1] and m.n_incorrect.tolist() == [2, 1, 0]
    assert CalibrationSketch.merge_all([a]) is a
    assert CalibrationSketch.merge_all([CalibrationSketch.empty(), a]) is a


def test_merge_all_refuses_what_cannot_merge():
    a = CalibrationSketch.from_arrays([1, 0], [0.2, 0.5])
    w = CalibrationSketch.from_arrays([1, 0], [0.2, 0.5], sample_weight=[1, 2])
    with pytest.raises(ValidationError, match=r"at least one CalibrationSketch; found 0"):
        CalibrationSketch.merge_all([])
    with pytest.raises(ValidationError, match=r"found int at index 1"):
        CalibrationSketch.merge_all([a, 3])
    with pytest.raises(ValidationError, match=r"weighted=False and weighted=True at index 2"):
        CalibrationSketch.merge_all([a, CalibrationSketch.empty(weighted=True), w])
    with pytest.raises(ValidationError, match=r"share a resolution.*at index 1"):
        CalibrationSketch.merge_all([a, CalibrationSketch.empty(resolution=0.01)])


def test_empty_and_zero_weight_chunks_are_sketches():
    empty = CalibrationSketch.from_arrays([], [])
    assert empty == CalibrationSketch.empty() and empty.n == 0
    assert CalibrationSketch.from_arrays([], [], sample_weight=[]).weighted
    zero = CalibrationSketch.from_arrays([1, 0], [0.3, 0.4], sample_weight=[0, 0])
    assert zero.n == 2 and float(zero.w_correct.sum() + zero.w_incorrect.sum()) == 0.0
    assert CalibrationSketch.from_bytes(zero.to_bytes()) == zero
    data = CalibrationSketch.from_arrays([1, 0, 1], [0.1, 0.3, 0.8], sample_weight=[2, 1, 3])
    grown = data.update([1, 0], [0.3, 0.4], sample_weight=[0, 0]).update([], [],
                                                                         sample_weight=[])
    # the rows of zero weight count in n, as in calibration_report, and in no metric
    want = confcal.calibration_report([1, 0, 1, 1, 0], [0.1, 0.3, 0.8, 0.3, 0.4],
                                      sample_weight=[2, 1, 3, 0, 0], budgets=BUDGETS)
    check_report(grown.report(budgets=BUDGETS), want, 0.0)
    # the array checks still run on a zero-weight chunk
    with pytest.raises(ValidationError, match=r"sample_weight must be finite and >= 0"):
        CalibrationSketch.from_arrays([1], [0.5], sample_weight=[-1.0])
    with pytest.raises(ValidationError, match=r"correct must be bool or 0/1"):
        CalibrationSketch.from_arrays([2], [0.5], sample_weight=[0.0])


def test_a_sketch_of_nothing_but_zero_weight_reports_nan_with_a_warning():
    zero = CalibrationSketch.merge_all([
        CalibrationSketch.from_arrays([1, 0], [0.3, 0.4], sample_weight=[0, 0]),
        CalibrationSketch.from_arrays([1], [0.9], sample_weight=[0])])
    with pytest.warns(UndefinedMetricWarning, match=r"all carry zero weight"):
        rep = zero.report(budgets=(0.3,))
    assert rep.n == 3 and rep.n_errors == 1
    assert all(math.isnan(v) for v in (rep.auroc, rep.ece, rep.brier, rep.ecarb[0.3]))
    with pytest.raises(ValidationError, match=r"must not be empty; found 0 rows"):
        CalibrationSketch.empty(weighted=True).report()


def test_streamed_tables_merge_as_a_balanced_tree():
    from confcal.datasets import load_demo

    entities = load_demo().score(tiers=["high"]).entities
    # 37 chunks: a binary counter of summaries, not a running fold
    chunks = [entities.iloc[i:i + 500] for i in range(0, len(entities), 500)]
    sketched = compare_runs_sketched(chunks, by="model", budgets=(0.3,))
    exact = compare_runs(entities, by="model", budgets=(0.3,), n_resamples=0)
    assert sketched["model"].tolist() == exact["model"].tolist()
    assert sketched["auroc"].tolist() == exact["auroc"].tolist()
    assert sketched["ecarb@0.3"].tolist() == exact["ecarb@0.3"].tolist()
    assert sketched["n_documents"].tolist() == exact["n_documents"].tolist()
