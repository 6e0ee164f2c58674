"""confcal.calibration.calibrators: fitted maps, their monotonicity, JSON, transfer and
cross-validation."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.calibration.calibrators import (
    CALIBRATORS,
    CalibrationWarning,
    HistogramBinning,
    IsotonicCalibration,
    PlattScaling,
    TemperatureScaling,
    calibrator_from_json,
    cross_validate_calibrator,
    evaluate_transfer,
)
from confcal.exceptions import ValidationError
from confcal.metrics import auroc, ecarb, ece
from confcal.testing import calibration_data

FITS = {
    "temperature": TemperatureScaling.fit,
    "temperature_eps": functools.partial(TemperatureScaling.fit, eps=1e-3),
    "platt": PlattScaling.fit,
    "isotonic": IsotonicCalibration.fit,
    "histogram_quantile": HistogramBinning.fit,
    "histogram_uniform": functools.partial(HistogramBinning.fit, n_bins=7, binning="uniform"),
}


def quietly(fit, *args, **kwargs):
    """Fit without the CalibrationWarnings that random data triggers (tested on their own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        return fit(*args, **kwargs)


# ---------------------------------------------------------------------------------------
# hand-worked fits
# ---------------------------------------------------------------------------------------
def test_temperature_hand_worked():
    # all at 0.9 (logit log 9), 3 of 4 right: σ(log 9 / T) = 3/4 needs log 9 / T = log 3
    cal = TemperatureScaling.fit([1, 1, 1, 0], [0.9] * 4)
    assert cal.temperature == pytest.approx(2.0, rel=1e-12)
    # with T = 2 the odds are square-rooted: 0.9 (9:1) -> 3:1 = 0.75; 0.1 -> 0.25
    out = cal.predict([0.0, 0.1, 0.5, 0.9, 1.0])
    assert out == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0], abs=1e-12)
    assert out[0] == 0.0 and out[-1] == 1.0  # fixed points, exactly


def test_temperature_leaves_saturated_rows_out_and_says_so():
    base = TemperatureScaling.fit([1, 1, 1, 0], [0.9] * 4)
    # a right answer at 1.0 and a wrong one at 0.0 add log 1 = 0 to the loss for every T:
    # same T, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agree = TemperatureScaling.fit([1, 1, 1, 0, 1, 0], [0.9] * 4 + [1.0, 0.0])
    assert agree.temperature == pytest.approx(base.temperature, rel=1e-12)
    # a wrong answer at 1.0 cannot be fixed by any T: same T, and a warning that counts it
    with pytest.warns(CalibrationWarning, match=r"1 wrong predictions at confidence exactly 1 "
                                                r"and 2 right ones at exactly 0"):
        fit = TemperatureScaling.fit([1, 1, 1, 0, 0, 1, 1], [0.9] * 4 + [1.0, 0.0, 0.0])
    assert fit.temperature == pytest.approx(base.temperature, rel=1e-12)
    assert fit.predict([1.0]).tolist() == [1.0]


def test_temperature_eps_clips_explicitly_and_can_lower_a_one():
    # confidences read as clipped to [0.1, 0.9]: 1.0 behaves as 0.9, so the hand-worked T = 2
    # holds for a mix of 0.9 and 1.0, and 1.0 maps to 0.75
    cal = TemperatureScaling.fit([1, 1, 1, 0], [0.9, 1.0, 0.9, 1.0], eps=0.1)
    assert cal.temperature == pytest.approx(2.0, rel=1e-12)
    assert cal.eps == 0.1
    assert cal.predict([1.0, 0.95, 0.0]) == pytest.approx([0.75, 0.75, 0.25], abs=1e-12)


def test_temperature_at_its_bounds_warns():
    # wrong answers more confident than right ones: no positive association, T -> infinity
    with pytest.warns(CalibrationWarning, match=r"beyond temperature 1000.*not positively "):
        cal = TemperatureScaling.fit([0, 0, 1, 1], [0.9, 0.8, 0.3, 0.2])
    assert cal.temperature == 1000.0
    # separated at 0.5 (all right above, all wrong below): T -> 0, a step at 0.5
    with pytest.warns(CalibrationWarning, match=r"beyond temperature 0.001.*separated"):
        cal = TemperatureScaling.fit([0, 0, 1, 1], [0.2, 0.3, 0.8, 0.9])
    assert cal.temperature == pytest.approx(1e-3)


def test_all_saturated_cannot_fit_a_logit_model():
    for cls in (TemperatureScaling, PlattScaling):
        with pytest.raises(ValidationError, match=r"confidence must hold at least one value "
                                                  r"strictly inside \(0, 1\) .*found all 3"):
            cls.fit([1, 0, 1], [1.0, 0.0, 1.0])


def test_platt_hand_worked():
    # logits 0 (1 right, 1 wrong) and log 9 (2 right). N+ = 3, N- = 1: Platt's targets are
    # 4/5 for right and 1/3 for wrong. Two free parameters fit the two mean targets:
    # σ(b) = (4/5 + 1/3)/2 = 17/30 and σ(a log 9 + b) = 4/5, so
    # b = log(17/13) and a = (log 4 - log(17/13)) / log 9.
    cal = PlattScaling.fit([1, 0, 1, 1], [0.5, 0.5, 0.9, 0.9])
    assert cal.intercept == pytest.approx(math.log(17 / 13), abs=1e-6)
    assert cal.slope == pytest.approx((math.log(4) - math.log(17 / 13)) / math.log(9), abs=1e-6)
    assert cal.predict([0.5, 0.9]) == pytest.approx([17 / 30, 0.8], abs=1e-7)


def test_platt_slope_bound_is_a_constant_map():
    with pytest.warns(CalibrationWarning, match=r"slope 0 \(a constant map\)"):
        cal = PlattScaling.fit([0, 0, 1, 1], [0.9, 0.8, 0.3, 0.2])
    assert cal.slope == 0.0
    out = cal.predict([0.0, 0.5, 1.0])
    # the constant is σ(b) with b fitted to the mean target: (3/4 + 3/4 + 1/4 + 1/4)/4 = 1/2
    assert out == pytest.approx([0.5] * 3, abs=1e-7)
    assert np.all(out == out[0])


def test_isotonic_hand_worked():
    # labels 0, 1, 0, 1 at 0.1, 0.2, 0.3, 0.4: PAV pools the violating (1, 0) into 0.5
    cal = IsotonicCalibration.fit([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4])
    assert cal.x == (0.1, 0.2, 0.3, 0.4) and cal.y == (0.0, 0.5, 0.5, 1.0)
    # linear between knots, constant beyond: 0.15 is halfway from 0 to 0.5
    assert cal.predict([0.0, 0.15, 0.25, 0.35, 1.0]) == pytest.approx(
        [0.0, 0.25, 0.5, 0.75, 1.0], abs=1e-15)
    # ties in the input are pooled first: 0.5 twice with 1 right -> one knot at 0.5
    assert IsotonicCalibration.fit([1, 0, 1], [0.5, 0.5, 0.9]).y == (0.5, 1.0)


def test_histogram_hand_worked_and_pooled():
    # 3 equal-mass bins of 2: accuracies 1/2, 2/2, 1/2 would invert; the weighted PAV pools
    # the last two to 3/4, and equal neighbours merge: edges 0.1, 0.3; values 0.5, 0.75
    cal = HistogramBinning.fit([0, 1, 1, 1, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], n_bins=3)
    assert cal.edges == (0.1, 0.3) and cal.values == (0.5, 0.75)
    assert cal.predict([0.0, 0.1, 0.29, 0.3, 1.0]).tolist() == [0.5, 0.5, 0.5, 0.75, 0.75]


def test_histogram_uniform_drops_empty_bins():
    # 4 uniform bins; [0.25, 0.5) is empty. Bins [0, .25): 0/1 right, [.5, .75): 1/2,
    # [.75, 1]: 2/2. Values below 0.5 (the empty bin's range) go to the bin below.
    cal = HistogramBinning.fit([0, 0, 1, 1, 1], [0.1, 0.6, 0.7, 0.8, 1.0], n_bins=4,
                               binning="uniform")
    assert cal.edges == (0.0, 0.5, 0.75) and cal.values == (0.0, 0.5, 1.0)
    assert cal.predict([0.3, 0.5, 0.74, 0.75]).tolist() == [0.0, 0.5, 0.5, 1.0]


@pytest.mark.parametrize("build, match", [
    (lambda: TemperatureScaling(0.0), r"temperature must be a finite number > 0; found 0.0"),
    (lambda: TemperatureScaling(math.inf), r"temperature must be a finite number > 0"),
    (lambda: TemperatureScaling(1.0, eps=0.5), r"eps must be None or a number in \(0, 0.5\)"),
    (lambda: PlattScaling(-1.0, 0.0), r"slope must be a finite number >= 0; found -1.0"),
    (lambda: IsotonicCalibration((0.1, 0.1), (0.2, 0.3)),
     r"x must be strictly increasing; found 0.1 after 0.1 at index 1"),
    (lambda: IsotonicCalibration((0.1, 0.2), (0.3, 0.2)),
     r"y must be non-decreasing; found 0.2 after 0.3 at index 1"),
    (lambda: IsotonicCalibration((0.1,), (0.3, 0.2)),
     r"x, y must have the same length; x has 1 and y has 2"),
    (lambda: HistogramBinning((0.0, 0.5), (0.2, 1.5)),
     r"values must be within \[0, 1\]; found 1 value breaking it, first at index 1 \(1.5\)"),
    (lambda: HistogramBinning((), ()), r"edges must be a non-empty 1-D sequence"),
    (lambda: TemperatureScaling.fit([1, 0], [0.5, 1.5]),
     r"confidence must be finite and within \[0, 1\]; found 1 value breaking it, first at "
     r"index 1 \(1.5\)"),
    (lambda: PlattScaling.fit([1, 2], [0.5, 0.5]), r"correct must be bool or 0/1"),
    (lambda: IsotonicCalibration.fit([1, 0], [0.5]), r"correct, confidence must have the same "
                                                     r"length; correct has 2 and confidence has 1"),
    (lambda: HistogramBinning.fit([1], [0.5], binning="width"), r"binning must be one of"),
    (lambda: TemperatureScaling(2.0).predict([0.5, float("nan")]),
     r"confidence must be finite and within \[0, 1\]"),
])
def test_invalid_parameters_and_inputs(build, match):
    with pytest.raises(ValidationError, match=match):
        build()


# ---------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------
def test_json_round_trip_of_fitted_calibrators_is_exact():
    rng = np.random.default_rng(3)
    c = rng.uniform(size=300)
    y = rng.uniform(size=300) < c ** 2
    grid = np.linspace(0, 1, 1001)
    for name, fit in FITS.items():
        cal = quietly(fit, y, c)
        text = cal.to_json()
        back = type(cal).from_json(text)
        assert back == cal, name
        assert calibrator_from_json(text) == cal, name
        assert np.array_equal(back.predict(grid), cal.predict(grid)), name
        assert json.loads(text)["type"] == type(cal).__name__


_REALS = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=examples(100), deadline=None)
@given(t=st.floats(1e-300, 1e300), eps=st.one_of(st.none(), st.floats(1e-300, 0.49)),
       slope=st.floats(0, 1e6), intercept=_REALS,
       knots=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=12))
def test_json_round_trip_is_exact_for_any_parameters(t, eps, slope, intercept, knots):
    x = sorted({k for k, _ in knots})
    y = sorted(v for _, v in knots)[: len(x)]
    for cal in (TemperatureScaling(t, eps=eps), PlattScaling(slope, intercept, eps=eps),
                IsotonicCalibration(x, y), HistogramBinning(x, y)):
        back = calibrator_from_json(cal.to_json())
        assert back == cal
        # bit for bit, so that -0.0 and 0.0 (equal under ==) are told apart too
        for f in dataclasses.fields(cal):
            mine, theirs = getattr(cal, f.name), getattr(back, f.name)
            if mine is not None:
                assert np.array(mine, dtype=float).tobytes() == np.array(
                    theirs, dtype=float).tobytes(), f.name


@pytest.mark.parametrize("text, match", [
    ("not json", r"text must be valid JSON"),
    ('{"format": "confcal.calibrator", "version": 1, "type": "Magic", "params": {}}',
     r"calibrator JSON type must be one of"),
    ('{"format": "confcal.calibrator", "version": 2, "type": "PlattScaling", "params": {}}',
     r"must have format 'confcal.calibrator' and version 1; found 'confcal.calibrator' and 2"),
    ('{"format": "confcal.calibrator", "version": 1, "type": "PlattScaling", '
     '"params": {"slope": 1.0}}', r"PlattScaling JSON params must be exactly"),
    ('{"format": "confcal.calibrator", "version": 1, "type": "IsotonicCalibration", '
     '"params": {"x": [0.1, 0.2], "y": [0.9, 0.1]}}', r"y must be non-decreasing"),
    ('[1, 2]', r"text must be a JSON object; found a JSON list"),
    ('{"format": "confcal.calibrator"}', r"calibrator JSON must be an object with the keys"),
])
def test_from_json_rejects_bad_documents(text, match):
    with pytest.raises(ValidationError, match=match):
        calibrator_from_json(text)


def test_from_json_of_another_type_is_refused():
    with pytest.raises(ValidationError, match=r"type must be 'TemperatureScaling'; found "
                                              r"'PlattScaling'"):
        TemperatureScaling.from_json(PlattScaling(1.0, 0.0).to_json())


# ---------------------------------------------------------------------------------------
# properties: monotone maps, what they do to ranking metrics, and calibration gains
# ---------------------------------------------------------------------------------------
GRID = np.r_[0.0, np.nextafter(0.0, 1.0), np.linspace(0, 1, 2001), np.nextafter(1.0, 0.0), 1.0]


@pytest.mark.parametrize("name", FITS)
@settings(max_examples=examples(60), deadline=None)
@given(data=calibration_data(min_size=1, max_size=60, ties="some"))
def test_calibrators_are_monotone_maps_into_the_unit_interval(name, data):
    correct, confidence = data
    try:
        cal = quietly(FITS[name], correct, confidence)
    except ValidationError as exc:  # a logit model without eps needs an interior value
        assert "strictly inside (0, 1)" in str(exc)
        assert np.all((confidence == 0) | (confidence == 1))
        return
    probe = np.sort(np.r_[GRID, confidence])
    out = cal.predict(probe)
    assert np.all(np.diff(out) >= 0), name
    assert np.all((out >= 0) & (out <= 1))


def _tie_adjusted_auroc(y: np.ndarray, c: np.ndarray, g: np.ndarray) -> Fraction:
    """AUROC of g(c) from AUROC of c: a non-decreasing map can only tie pairs it did not
    tie before; a tied pair scores 1/2 instead of 1 (if it was ranked right) or 0."""
    pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
    score = Fraction(0)
    for i in pos:
        for j in neg:
            before = 1 if c[i] > c[j] else Fraction(1, 2) if c[i] == c[j] else 0
            newly_tied = g[i] == g[j] and c[i] != c[j]
            score += Fraction(1, 2) if newly_tied else before
    return score / (len(pos) * len(neg))


@pytest.mark.parametrize("name", FITS)
@settings(max_examples=examples(60), deadline=None)
@given(data=calibration_data(min_size=2, max_size=30, single_class=False))
def test_only_ties_created_by_the_map_change_auroc(name, data):
    correct, confidence = data
    try:
        cal = quietly(FITS[name], correct, confidence)
    except ValidationError:
        assume(False)
    g = cal.predict(confidence)
    order = np.argsort(confidence, kind="stable")
    assert np.all(np.diff(g[order]) >= 0)  # no pair is reversed
    assert auroc(correct, g) == pytest.approx(
        float(_tie_adjusted_auroc(correct, confidence, g)), abs=1e-12)


@pytest.mark.parametrize("name", ["temperature", "platt"])
@settings(max_examples=examples(50), deadline=None)
@given(data=calibration_data(min_size=2, max_size=80, single_class=False),
       budget=st.sampled_from([0.1, 0.3, 0.5]))
def test_strictly_increasing_calibration_keeps_auroc_and_ecarb(name, data, budget):
    correct, confidence = data
    try:
        cal = quietly(FITS[name], correct, confidence)
    except ValidationError:
        assume(False)
    g = cal.predict(confidence)
    # strictly increasing on these values: distinct confidences stay distinct (a slope-0
    # Platt fit, or two values rounding to one float near 0 or 1, are not; they are
    # covered by the tie-adjusted property above)
    assume(np.unique(g).size == np.unique(confidence).size)
    assert auroc(correct, g) == auroc(correct, confidence)
    assert ecarb(correct, g, budget=budget) == ecarb(correct, confidence, budget=budget)


def _rocch_auc(y: np.ndarray, c: np.ndarray) -> Fraction:
    """Area under the ROC convex hull, in exact arithmetic (reference for isotonic)."""
    p, n = int(y.sum()), int((~y).sum())
    points = [(Fraction(0), Fraction(0))]
    for t in sorted(set(c.tolist()), reverse=True):
        above = c >= t
        points.append((Fraction(int((above & ~y).sum()), n), Fraction(int((above & y).sum()), p)))
    hull: list[tuple[Fraction, Fraction]] = []
    for q in points:  # upper hull, points sorted by false-positive rate
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (q[1] - y1) - (y2 - y1) * (q[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(q)
    return sum(((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in itertools.pairwise(hull)),
               Fraction(0))


@settings(max_examples=examples(100), deadline=None)
@given(data=calibration_data(min_size=2, max_size=40, single_class=False, ties="heavy"))
def test_isotonic_auroc_on_its_fitting_data_is_the_roc_convex_hull(data):
    # Pooling adjacent violators is the ROC convex hull (Fawcett & Niculescu-Mizil, 2007):
    # ties appear exactly where the ROC curve dips below its hull, so the fitted map's
    # AUROC on the data it saw is the hull's area, never below the original AUROC.
    correct, confidence = data
    g = IsotonicCalibration.fit(correct, confidence).predict(confidence)
    hull = float(_rocch_auc(correct, confidence))
    assert auroc(correct, g) == pytest.approx(hull, abs=1e-12)
    assert auroc(correct, g) >= auroc(correct, confidence) - 1e-12


@pytest.mark.parametrize("name", FITS)
@settings(max_examples=examples(10), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.floats(0.15, 0.35))
def test_ece_drops_on_held_out_overconfident_data(name, seed, shift):
    # accuracy = confidence - shift: the model is overconfident by `shift` everywhere
    rng = np.random.default_rng(seed)

    def sample(n):
        c = rng.uniform(0.6, 1.0, size=n)
        return rng.uniform(size=n) < c - shift, c

    y_fit, c_fit = sample(3000)
    y_test, c_test = sample(3000)
    cal = quietly(FITS[name], y_fit, c_fit)
    before = ece(y_test, c_test, n_bins=10)
    after = ece(y_test, cal.predict(c_test), n_bins=10)
    assert before > shift - 0.05
    assert after < before / 2


# ---------------------------------------------------------------------------------------
# evaluate_transfer
# ---------------------------------------------------------------------------------------
def _tiers() -> pd.DataFrame:
    return pd.DataFrame({
        "doc_id": ["a"] * 4 + ["b"] * 5 + ["c"],
        "correct": [1, 1, 1, 0] + [1, 1, 1, 0, 0] + [1],
        "confidence": [0.9] * 9 + [np.nan],
        "tier": ["clean"] * 4 + ["noisy"] * 5 + ["clean"],
    })


def test_evaluate_transfer_hand_worked():
    out = evaluate_transfer(_tiers(), by="tier")
    assert list(out.columns) == ["fit_group", "eval_group", "n_fit", "n_eval", "ece_before",
                                 "ece_after", "brier_before", "brier_after"]
    assert out.attrs["n_without_confidence"] == 1  # the NaN row: left out, counted
    clean_to_noisy = out.iloc[0]
    assert (clean_to_noisy.fit_group, clean_to_noisy.eval_group) == ("clean", "noisy")
    # fitted on clean: 3/4 right at 0.9, T = 2, so 0.9 -> 0.75. On noisy (3/5 right):
    # ECE |0.6 - 0.9| = 0.3 -> |0.6 - 0.75| = 0.15;
    # Brier (3 * 0.1² + 2 * 0.9²) / 5 = 1.65 / 5 = 0.33 -> (3 * 0.25² + 2 * 0.75²) / 5 = 0.2625
    assert clean_to_noisy.ece_before == pytest.approx(0.3)
    assert clean_to_noisy.ece_after == pytest.approx(0.15)
    assert clean_to_noisy.brier_before == pytest.approx(0.33)
    assert clean_to_noisy.brier_after == pytest.approx(0.2625)
    # fitted on noisy: σ(log 9 / T) = 0.6, so 0.9 -> 0.6; on clean (3/4 right): |0.75 - 0.6|
    noisy_to_clean = out.iloc[1]
    assert noisy_to_clean.ece_after == pytest.approx(0.15)
    assert (noisy_to_clean.n_fit, noisy_to_clean.n_eval) == (5, 4)


def test_evaluate_transfer_accepts_names_classes_and_callables():
    table = _tiers()
    by_name = evaluate_transfer(table, calibrator="isotonic")
    by_class = evaluate_transfer(table, calibrator=IsotonicCalibration)
    by_callable = evaluate_transfer(table, calibrator=IsotonicCalibration.fit)
    pd.testing.assert_frame_equal(by_name, by_class)
    pd.testing.assert_frame_equal(by_name, by_callable)
    hist = evaluate_transfer(table, calibrator=functools.partial(HistogramBinning.fit, n_bins=2))
    assert hist.shape[0] == 2
    assert set(CALIBRATORS) == {"temperature", "platt", "isotonic", "histogram"}


@pytest.mark.parametrize("table, kwargs, match", [
    (_tiers().drop(columns="tier"), {}, r"entities must have the columns 'correct', "
                                        r"'confidence' and 'tier'; found \['tier'\] missing"),
    (_tiers().assign(tier="one"), {}, r"entities\['tier'\] must hold at least 2 groups"),
    (_tiers().assign(tier=[None] + ["x"] * 9), {}, r"entities\['tier'\] must not contain "
                                                   r"missing ids"),
    (_tiers().assign(confidence=[1.2] + [0.5] * 9), {},
     r"entities\['confidence'\] must be within \[0, 1\] or missing \(NaN\); found 1 value "
     r"breaking it, first at index 0 \(1.2\)"),
    (_tiers().assign(correct=[2] + [1] * 9), {}, r"entities\['correct'\] must be bool or 0/1"),
    (_tiers(), {"calibrator": "beta"}, r"calibrator must be one of 'temperature', 'platt'"),
    (_tiers(), {"calibrator": 3}, r"calibrator must be one of .* found 3"),
    (_tiers().assign(confidence=[0.0, 1.0, 1.0, 0.0] + [0.9] * 5 + [np.nan]), {},
     r"fitting on tier 'clean': confidence must hold at least one value strictly inside"),
    ([1, 2], {}, r"entities must be a pandas DataFrame"),
])
@pytest.mark.filterwarnings("ignore::confcal.calibration.calibrators.CalibrationWarning")
def test_evaluate_transfer_errors(table, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        evaluate_transfer(table, **kwargs)


# ---------------------------------------------------------------------------------------
# cross_validate_calibrator
# ---------------------------------------------------------------------------------------
class _Recorder:
    """A calibrator factory that remembers what each fit saw and each predict was asked."""

    def __init__(self):
        self.fitted: list[set[float]] = []
        self.predicted: list[float] = []

    def __call__(self, correct, confidence):
        seen = set(confidence.tolist())
        self.fitted.append(seen)
        recorder = self

        class Fitted:
            def predict(self, c):
                # every document has its own confidences: overlap would mean a leak
                assert not seen & set(np.asarray(c).tolist())
                recorder.predicted.extend(np.asarray(c).tolist())
                return np.asarray(c)

        return Fitted()


@settings(max_examples=examples(30), deadline=None)
@given(n_docs=st.integers(3, 25), folds=st.integers(2, 6), seed=st.integers(0, 1000),
       sizes=st.lists(st.integers(1, 5), min_size=25, max_size=25))
def test_cross_validation_never_fits_and_scores_the_same_document(n_docs, folds, seed, sizes):
    assume(folds <= n_docs)
    doc = np.repeat(np.arange(n_docs), sizes[:n_docs])
    # row i of document d has confidence (d + 1)/100 + i/10000: documents never share one
    within = np.concatenate([np.arange(s) for s in sizes[:n_docs]])
    table = pd.DataFrame({"doc_id": doc, "confidence": (doc + 1) / 100 + within / 10000,
                          "correct": (doc + within) % 2 == 0})
    recorder = _Recorder()
    out = cross_validate_calibrator(table, folds=folds, calibrator=recorder, seed=seed)
    assert len(recorder.fitted) == folds
    # every row is predicted exactly once, by a calibrator that never saw its document
    assert sorted(recorder.predicted) == sorted(table["confidence"].tolist())
    per_fold = out.iloc[:-1]
    assert per_fold["n_groups"].sum() == n_docs
    assert per_fold["n_groups"].max() - per_fold["n_groups"].min() <= 1  # dealt evenly
    assert (per_fold["n_fit"] + per_fold["n_eval"] == len(table)).all()
    # an identity "calibrator" changes nothing
    assert out.iloc[-1]["ece_after"] == pytest.approx(out.iloc[-1]["ece_before"], abs=1e-12)


def test_cross_validation_result_and_reproducibility():
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.5, 1.0, size=600)
    table = pd.DataFrame({"confidence": conf, "correct": rng.uniform(size=600) < conf - 0.2,
                          "doc_id": [f"inv-{i // 12}" for i in range(600)]})
    table.loc[[3, 40], "confidence"] = np.nan
    out = cross_validate_calibrator(table, folds=5, calibrator="platt", seed=11)
    assert out["fold"].tolist() == [0, 1, 2, 3, 4, "pooled"]
    assert out.attrs["n_without_confidence"] == 2
    pooled = out.iloc[-1]
    assert pooled["n_eval"] == 598 and pooled["n_groups"] == 50 and math.isnan(pooled["n_fit"])
    assert pooled["ece_after"] < pooled["ece_before"] / 2
    again = cross_validate_calibrator(table, folds=5, calibrator="platt", seed=11)
    pd.testing.assert_frame_equal(out, again)


@pytest.mark.parametrize("kwargs, match", [
    ({"folds": 1}, r"folds must be an integer >= 2; found 1"),
    ({"folds": 4}, r"folds must be at most the number of doc_id values with a confidence "
                   r"\(2\); found 4"),
    ({"seed": "x"}, r"seed must be an int or None; found 'x'"),
    ({"by": "invoice"}, r"entities must have the columns .* found \['invoice'\] missing"),
])
def test_cross_validation_errors(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        cross_validate_calibrator(_tiers(), **kwargs)


def test_docs_examples_run():
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    assert len(blocks) == 5  # calibrators, JSON, transfer, and both routing functions
    for block in blocks:
        exec(compile(block, str(doc), "exec"), {})  # noqa: S102 - the docs' own examples
