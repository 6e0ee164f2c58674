"""calibration_report(extra=...) and compare_runs(extra=...): each extra is the number of
its own public function, and the signature names what produced it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

import confcal
from _profiles import examples
from confcal import (
    ValidationError,
    aurc,
    brier,
    brier_decomposition,
    calibration_report,
    calibration_slope,
    calibration_test,
    compare_runs,
    debiased_ece,
    log_loss,
    smooth_ece,
)
from confcal._signature import combine_signatures
from confcal.metrics import EXTRA_METRICS, CalibrationSlope
from confcal.testing import weighted_calibration_data

PROPERTY = settings(max_examples=examples(30), deadline=None)
NO_TEST = tuple(m for m in EXTRA_METRICS if m != "calibration_p")  # the rest are fast


def test_log_loss_and_brier_terms_by_hand():
    # confidences 0.2, 0.4, 0.6, 0.8 with outcomes 0, 1, 1, 1:
    # log loss = -(log 0.8 + log 0.4 + log 0.6 + log 0.8) / 4 = 1.87337 / 4 = 0.46834
    # one confidence per bin (4 bins): reliability = mean (c - y)^2 = brier, and
    # resolution = mean (y - 0.75)^2 = (0.5625 + 3 * 0.0625) / 4 = 0.1875,
    # uncertainty = 0.75 * 0.25 = 0.1875, so reliability - resolution + uncertainty = brier
    rep = calibration_report([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=4,
                             extra=["log_loss", "brier_reliability", "brier_resolution",
                                    "brier_uncertainty"])
    want = -(math.log(0.8) + math.log(0.4) + math.log(0.6) + math.log(0.8)) / 4
    assert rep.extra["log_loss"] == pytest.approx(want, abs=1e-15)
    assert rep.extra["brier_resolution"] == pytest.approx(0.1875, abs=1e-15)
    assert rep.extra["brier_uncertainty"] == pytest.approx(0.1875, abs=1e-15)
    assert (rep.extra["brier_reliability"] - rep.extra["brier_resolution"]
            + rep.extra["brier_uncertainty"]) == pytest.approx(rep.brier, abs=1e-15)
    assert list(rep.extra) == ["log_loss", "brier_reliability", "brier_resolution",
                               "brier_uncertainty"]  # the order asked


def test_no_extra_by_default_and_the_signature_is_unchanged():
    rep = calibration_report([0, 1, 1], [0.2, 0.5, 0.9])
    assert dict(rep.extra) == {} and "extra" not in rep.signature
    assert rep.signature == f"confcal:{confcal.__version__}|ece:quantile-5|ecarb-ties:expected"
    assert rep.to_dict()["extra"] == {}


@PROPERTY
@given(data=weighted_calibration_data(max_size=60, ties="some", single_class=False,
                                      weights="integer"))
def test_each_extra_is_its_public_function(data):
    correct, confidence, weight = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one-class and constant cases warn in both
        rep = calibration_report(correct, confidence, n_bins=3, sample_weight=weight,
                                 extra=NO_TEST)
        terms = brier_decomposition(correct, confidence, n_bins=3, sample_weight=weight)
        ends = ((confidence == 0) | (confidence == 1)).any()
        fit = (calibration_slope(correct, confidence, sample_weight=weight) if not ends else
               CalibrationSlope(slope=math.nan, intercept=math.nan))
        want = {
            "debiased_ece": debiased_ece(correct, confidence, n_bins=3, sample_weight=weight),
            "smooth_ece": smooth_ece(correct, confidence, sample_weight=weight),
            "log_loss": log_loss(correct, confidence, sample_weight=weight),
            "aurc": aurc(correct, confidence, sample_weight=weight),
            "e_aurc": aurc(correct, confidence, excess=True, sample_weight=weight),
            "brier_reliability": terms.reliability, "brier_resolution": terms.resolution,
            "brier_uncertainty": terms.uncertainty, "calibration_slope": fit.slope,
            "calibration_intercept": fit.intercept,
        }
    assert rep.brier == brier(correct, confidence, sample_weight=weight)
    for name, value in want.items():
        got = rep.extra[name]
        assert got == value or (math.isnan(got) and math.isnan(value)), name


def test_calibration_p_is_the_consistency_test_with_its_settings_in_the_signature():
    rng = np.random.default_rng(3)
    confidence = rng.uniform(0.05, 0.95, 300)
    correct = rng.uniform(size=300) < confidence
    docs = np.repeat(np.arange(30), 10)
    rep = calibration_report(correct, confidence, extra=["calibration_p", "smooth_ece"],
                             n_resamples=99, seed=7, groups=docs)
    test = calibration_test(correct, confidence, groups=docs, n_resamples=99, seed=7)
    assert rep.extra["calibration_p"] == test.p_value
    assert rep.signature.endswith("|extra:calibration_p,smooth_ece|smooth-ece:auto-bandwidth"
                                  "|test:consistency-ece-quantile-5|null:grouped"
                                  "|resamples:99|seed:7")
    other = calibration_report(correct, confidence, extra=["calibration_p", "smooth_ece"],
                               n_resamples=99, seed=8, groups=docs)
    with pytest.raises(ValueError, match="seed"):  # different redraws: not comparable
        combine_signatures([rep.signature, other.signature])
    assert "null:independent" in calibration_report(
        correct, confidence, extra=["calibration_p"], n_resamples=9).signature


def test_extras_never_depend_on_row_order():
    rng = np.random.default_rng(11)
    confidence = np.round(rng.uniform(0.05, 0.95, size=200), 1)  # heavy ties
    correct = rng.uniform(size=200) < confidence
    perm = rng.permutation(200)
    a = calibration_report(correct, confidence, extra=NO_TEST)
    b = calibration_report(correct[perm], confidence[perm], extra=NO_TEST)
    for name in NO_TEST:
        assert a.extra[name] == pytest.approx(b.extra[name], rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize(("extra", "message"), [
    ("smooth_ece", "extra must be a sequence of names"),
    (["smooth"], r"extra\[0\] must be one of"),
    (["aurc", "aurc"], r"extra\[1\] repeats 'aurc'"),
    ([3], r"extra\[0\]"),
])
def test_bad_extra_names_the_argument(extra, message):
    with pytest.raises(ValidationError, match=message):
        calibration_report([0, 1], [0.2, 0.8], extra=extra)


def test_slope_of_a_certain_confidence_is_nan_with_a_warning():
    with pytest.warns(confcal.UndefinedMetricWarning, match="calibration_slope is undefined: a "
                      "confidence of exactly 0 or 1"):
        rep = calibration_report([0, 1, 1], [0.0, 0.5, 0.9],
                                 extra=["calibration_slope", "calibration_intercept"])
    assert math.isnan(rep.extra["calibration_slope"])
    assert math.isnan(rep.extra["calibration_intercept"])


def test_bad_groups_and_resamples_are_errors():
    with pytest.raises(ValidationError, match=r"groups must hold one document id per row \(2\)"):
        calibration_report([0, 1], [0.2, 0.8], extra=["calibration_p"], groups=[1, 2, 3])
    with pytest.raises(ValidationError, match="n_resamples"):
        calibration_report([0, 1], [0.2, 0.8], extra=["calibration_p"], n_resamples=0)


def test_compare_runs_adds_the_extras_per_run():
    from confcal.datasets import load_demo

    entities = load_demo().score(tiers=["clean"]).entities
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = compare_runs(entities, by="model", n_resamples=30,
                            extra=["debiased_ece", "calibration_p", "aurc"])
    assert runs.attrs["extra"] == ["debiased_ece", "calibration_p", "aurc"]
    assert list(runs.columns[-5:]) == ["debiased_ece", "debiased_ece_low", "debiased_ece_high",
                                       "calibration_p", "aurc"]
    for model, group in entities.groupby("model", sort=False):
        has = group["confidence"].notna().to_numpy()
        y = group["correct"].to_numpy(dtype=bool)[has]
        c = group["confidence"].to_numpy(dtype=float)[has]
        docs = group["doc_id"].to_numpy(dtype=object)[has]
        row = runs.set_index("model").loc[model]
        assert row["aurc"] == aurc(y, c)
        assert row["debiased_ece"] == debiased_ece(y, c)
        # the consistency test's redraws are the run's resamples, with a document effect
        assert row["calibration_p"] == calibration_test(y, c, groups=docs,
                                                        n_resamples=30).p_value
        assert row["debiased_ece_low"] <= row["debiased_ece"] <= row["debiased_ece_high"]
    with pytest.raises(ValidationError, match="calibration_p' needs n_resamples >= 1"):
        compare_runs(entities, by="model", extra=["calibration_p"])
    plain = compare_runs(entities, by="model")
    assert isinstance(plain, pd.DataFrame) and "aurc" not in plain.columns
