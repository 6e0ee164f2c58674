"""Rows of zero weight are in no bin: no count, no bound, no mean; the bins of the arrays and
of their sketch stay equal; and the top-tail rule of quantile bins, by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from _profiles import examples
from confcal import CalibrationSketch, UndefinedMetricWarning

EXACT = ["bin", "lower", "upper", "count"]
FLOATS = ["weight", "mean_confidence", "accuracy", "gap"]


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


def assert_same_bins(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert got[EXACT].equals(want[EXACT]), (got, want)
    np.testing.assert_allclose(got[FLOATS].to_numpy(), want[FLOATS].to_numpy(),
                               rtol=1e-12, atol=1e-15)


def test_a_zero_weight_row_at_the_top_sets_no_upper_and_adds_no_count():
    # weights 1, 1, 1, 1, 0; M = 2, total 4: rank r of positive weight has r rows before it,
    # bins floor(2r/4) = 0, 0, 1, 1. The row at 0.9 has W_before = 4 = the total, nominal
    # bin 2, which would fold into bin 1: it is in no bin instead.
    bins = confcal.reliability_bins([0, 1, 1, 1, 0], [0.2, 0.4, 0.6, 0.8, 0.9], n_bins=2,
                                    sample_weight=[1, 1, 1, 1, 0])
    assert bins["upper"].tolist() == [0.4, 0.8]
    assert bins["count"].tolist() == [2, 2]
    assert bins["accuracy"].tolist() == [0.5, 1.0]


def test_a_zero_weight_row_opening_a_bin_sets_no_lower():
    # weights 1, 0, 1 at 0.1, 0.3, 0.5; M = 2, total 2: 0.1 is bin 0; 0.3 has W_before = 1,
    # 2·1/2 = 1 -> bin 1, but weighs 0; 0.5 has W_before = 1 -> bin 1. Bin 1 is {0.5}.
    bins = confcal.reliability_bins([1, 0, 1], [0.1, 0.3, 0.5], n_bins=2,
                                    sample_weight=[1, 0, 1])
    assert bins[["bin", "lower", "upper", "count"]].values.tolist() == [[0, 0.1, 0.1, 1],
                                                                         [1, 0.5, 0.5, 1]]
    # uniform bins: the zero-weight row at 0.3 is in [0, 0.5) but not counted there
    uniform = confcal.reliability_bins([1, 0, 1], [0.1, 0.3, 0.5], n_bins=2,
                                       binning="uniform", sample_weight=[1, 0, 1])
    assert uniform["count"].tolist() == [1, 1]


def test_a_bin_of_nothing_but_zero_weight_rows_does_not_exist():
    # uniform, M = 4: 0.6 (weight 0) alone in [0.5, 0.75) -> no bin 2
    bins = confcal.reliability_bins([1, 0, 1], [0.1, 0.6, 0.9], n_bins=4, binning="uniform",
                                    sample_weight=[2, 0, 1])
    assert bins["bin"].tolist() == [0, 3]
    assert bins["count"].tolist() == [1, 1] and bins["weight"].tolist() == [2.0, 1.0]


def test_the_top_tail_goes_to_the_last_bin():
    # weights 1, 1, 1, 1e-12, M = 4, n = 3 + 1e-12: ranks 0..2 have 4r/n = 0, 1.33, 2.67 ->
    # bins 0, 1, 2; the last has 4·3/(3 + 1e-12) = 3.9999999999987, within 4e-9 of 4, so
    # its nominal bin is 4: min(M - 1, 4) = 3, a bin of that one row
    bins = confcal.reliability_bins([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], n_bins=4,
                                    sample_weight=[1, 1, 1, 1e-12])
    assert bins[["bin", "lower", "upper", "count"]].values.tolist() == [
        [0, 0.1, 0.1, 1], [1, 0.2, 0.2, 1], [2, 0.3, 0.3, 1], [3, 0.4, 0.4, 1]]
    # the near-whole rule at an inner edge: M = 2, weights 1, 1, 1e-12, 1e-12: 0.2 has
    # 2·1/(2 + 2e-12) = 0.999999999998, within 1e-9 of 1 -> bin 1 (a plain floor: bin 0)
    inner = confcal.reliability_bins([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4], n_bins=2,
                                     sample_weight=[1, 1, 1e-12, 1e-12])
    assert inner["count"].tolist() == [1, 3] and inner["lower"].tolist() == [0.1, 0.2]


def test_the_sketch_gives_the_same_bins_with_zero_weights():
    y, c, w = [1, 0, 1, 1, 0, 0], [0.2, 0.4, 0.4, 0.6, 0.8, 0.9], [1, 0, 2, 0, 1, 0]
    sketch = CalibrationSketch.from_arrays(y, c, sample_weight=w)
    # the zero-weight rows are counted apart: 1 correct (0.6), 2 incorrect (0.4, 0.9)
    assert (sketch.n_weightless_correct, sketch.n_weightless_incorrect) == (1, 2)
    assert (sketch.n, sketch.n_errors) == (6, 3)
    assert sketch.values.tolist() == [0.2, 0.4, 0.8]
    for binning in ("quantile", "uniform"):
        got = sketch.report(n_bins=3, binning=binning).bins
        want = confcal.calibration_report(y, c, n_bins=3, binning=binning,
                                          sample_weight=w).bins
        assert_same_bins(got, want)


@st.composite
def with_zeros(draw):
    n = draw(st.integers(1, 60))
    grid = draw(st.sampled_from([3, 10, 10**6]))
    conf = np.array(draw(st.lists(st.integers(0, grid), min_size=n, max_size=n))) / grid
    correct = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    kind = draw(st.sampled_from(["int", "float", "tiny"]))
    if kind == "int":
        weight = st.integers(0, 4).map(float)
    elif kind == "float":
        weight = st.one_of(st.just(0.0), st.floats(0.01, 10))
    else:  # weights spread far apart: near-whole ratios at the edges and the top
        weight = st.sampled_from([0.0, 1e-12, 1.0, 3.0, 1e6])
    w = np.array(draw(st.lists(weight, min_size=n, max_size=n)))
    if not w.sum() > 0:
        w[draw(st.integers(0, n - 1))] = 1.0
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    return correct, conf, w, [0, *cuts, n]


@settings(max_examples=examples(150), deadline=None)
@given(data=with_zeros(), n_bins=st.integers(1, 8),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_zero_weight_rows_change_no_bin_and_the_sketch_agrees(data, n_bins, binning):
    correct, conf, w, bounds = data
    kw = {"n_bins": n_bins, "binning": binning}
    bins = confcal.reliability_bins(correct, conf, sample_weight=w, **kw)
    live = w > 0
    # the bins of the data without its zero-weight rows, row for row
    assert_same_bins(bins, confcal.reliability_bins(correct[live], conf[live],
                                                    sample_weight=w[live], **kw))
    assert int(bins["count"].sum()) == int(live.sum())
    # the sketch of any split, merged, has the same bins and counts every row in n
    parts = [CalibrationSketch.from_arrays(correct[a:b], conf[a:b], sample_weight=w[a:b])
             for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    sketch = CalibrationSketch.merge_all(parts)
    if np.all(w == np.round(w)):  # whole weights add exactly in any order
        assert sketch == CalibrationSketch.from_arrays(correct, conf, sample_weight=w)
    assert CalibrationSketch.from_bytes(sketch.to_bytes()) == sketch
    got = quiet(sketch.report, budgets=(0.3,), **kw)
    want = quiet(confcal.calibration_report, correct, conf, budgets=(0.3,), sample_weight=w,
                 **kw)
    assert (got.n, got.n_errors) == (want.n, want.n_errors) == (
        len(correct), int((~correct).sum()))
    assert_same_bins(got.bins, want.bins)
    assert_same_bins(want.bins, bins)


def test_uniform_bins_with_zero_weights_are_scikit_learns_bins_of_the_other_rows():
    from sklearn import calibration
    rng = np.random.default_rng(7)
    n = 2000
    conf = rng.uniform(0.001, 0.999, size=n)
    correct = rng.uniform(size=n) < conf
    w = np.where(rng.uniform(size=n) < 0.3, 0.0, 1.0)  # 30% of the rows weigh nothing
    live = w > 0
    for n_bins in (5, 10, 17):
        edges = np.arange(n_bins + 1) / n_bins
        assert not np.isin(conf, edges).any()  # sklearn closes bins on the other side
        bins = confcal.reliability_bins(correct, conf, n_bins=n_bins, binning="uniform",
                                        sample_weight=w)
        accuracy, mean_conf = calibration.calibration_curve(
            correct[live], conf[live], n_bins=n_bins, strategy="uniform")
        np.testing.assert_allclose(bins["accuracy"], accuracy, rtol=1e-12)
        np.testing.assert_allclose(bins["mean_confidence"], mean_conf, rtol=1e-12)
        counts = np.histogram(conf[live], bins=edges)[0]
        assert bins["count"].tolist() == counts[counts > 0].tolist()


def test_a_zero_weight_row_does_not_spoil_a_bin_of_one_value():
    # The bin of three rows of 0.4091991363691613 (weight 1 each) has that value as its
    # mean exactly, so no within-bin variance; the float mean (3v)/3 is off by one unit,
    # which squared gave 3.1e-33 while a zero-weight row at 0.05 opened the bin (its
    # confidence is in no bin and does not count).
    v = 0.4091991363691613
    assert (v + v + v) / 3 != v
    with_zero = confcal.brier_decomposition([0, 1, 0, 1], [0.05, v, v, v], n_bins=1,
                                            sample_weight=[0, 1, 1, 1])
    without = confcal.brier_decomposition([1, 0, 1], [v, v, v], n_bins=1,
                                          sample_weight=[1, 1, 1])
    assert with_zero == without
    assert with_zero.within_bin_variance == 0.0 and with_zero.within_bin_covariance == 0.0


@settings(max_examples=examples(150), deadline=None)
@given(data=with_zeros(), n_bins=st.integers(1, 8),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_zero_weight_rows_leave_the_brier_decomposition(data, n_bins, binning):
    # the decomposition of the data without its zero-weight rows, within a few units of
    # the last place (a bin's sums are prefix sums of two classes, and the zeros change
    # how numpy pairs the terms it adds), and no within-bin spread where there is none
    correct, conf, w, _ = data
    live = w > 0
    got = quiet(confcal.brier_decomposition, correct, conf, sample_weight=w,
                n_bins=n_bins, binning=binning)
    want = quiet(confcal.brier_decomposition, correct[live], conf[live],
                 sample_weight=w[live], n_bins=n_bins, binning=binning)
    for name in ("reliability", "resolution", "uncertainty", "within_bin_variance",
                 "within_bin_covariance", "brier"):
        a, b = getattr(got, name), getattr(want, name)
        assert abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-3), (name, a, b)
    if want.within_bin_variance == 0.0:
        assert got.within_bin_variance == 0.0
