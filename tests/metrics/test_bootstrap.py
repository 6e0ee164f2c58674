"""Document-level bootstrap: reproducible, resamples documents, equals explicit resampling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import confcal
from confcal import UndefinedMetricWarning, ValidationError, bootstrap_ci
from confcal.metrics.bootstrap import _distribution, _DocumentResampler

METRICS = ("auroc", "ece", "mce", "brier", "ecarb", "accuracy")


def data(n=600, n_docs=60, seed=0, decimals=None):
    rng = np.random.default_rng(seed)
    confidence = rng.beta(4, 2, size=n)
    if decimals is not None:
        confidence = np.round(confidence, decimals)
    correct = rng.uniform(size=n) < confidence
    docs = rng.integers(0, n_docs, size=n)
    return correct, confidence, docs


def explicit_resample_values(correct, confidence, docs, n_resamples, seed, budget=0.3):
    """Copy the rows of each drawn document and recompute with the public functions."""
    resampler = _DocumentResampler(correct, confidence,
                                   confcal._validation.check_groups(docs, len(docs)))
    codes = confcal._validation.check_groups(docs, len(docs))
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        counts = resampler.draw_counts(rng).astype(int)
        rows = np.repeat(np.arange(len(codes)), counts[codes])
        y, c = correct[rows], confidence[rows]
        rep = confcal.calibration_report(y, c, budgets=(budget,))
        out.append([rep.auroc, rep.ece, rep.mce, rep.brier, rep.ecarb[budget], rep.accuracy])
    return np.array(out)


@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_reweighting_equals_copying_rows_of_drawn_documents(decimals):
    # The fast path reweights a fixed sort; copying rows and recomputing must agree to
    # rounding for every resample, ties included.
    correct, confidence, docs = data(decimals=decimals)
    codes = confcal._validation.check_groups(docs, len(docs))
    _, fast = _distribution(correct, confidence, codes, METRICS, budget=0.3, n_bins=5,
                            binning="quantile", n_resamples=25, seed=11)
    slow = explicit_resample_values(correct, confidence, docs, 25, seed=11)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def explicit_weighted_values(correct, confidence, docs, weight, n_resamples, seed, budget=0.3):
    """Copy the rows of each drawn document with their weights and recompute."""
    codes = confcal._validation.check_groups(docs, len(docs))
    resampler = _DocumentResampler(correct, confidence, codes)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        counts = resampler.draw_counts(rng).astype(int)
        rows = np.repeat(np.arange(len(codes)), counts[codes])
        rep = confcal.calibration_report(correct[rows], confidence[rows], budgets=(budget,),
                                         sample_weight=weight[rows])
        out.append([rep.auroc, rep.ece, rep.mce, rep.brier, rep.ecarb[budget], rep.accuracy])
    return np.array(out)


@pytest.mark.parametrize("decimals", [None, 1])
def test_weighted_resamples_carry_their_rows_weights(decimals):
    # A document drawn c times weighs c * w per row: the same as copying its rows, each
    # with its weight, and recomputing the weighted metrics.
    correct, confidence, docs = data(n=300, n_docs=30, decimals=decimals)
    weight = np.random.default_rng(1).uniform(0.5, 3.0, size=300)
    codes = confcal._validation.check_groups(docs, len(docs))
    _, fast = _distribution(correct, confidence, codes, METRICS, budget=0.3, n_bins=5,
                            binning="quantile", n_resamples=15, seed=5, sample_weight=weight)
    slow = explicit_weighted_values(correct, confidence, docs, weight, 15, seed=5)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


def test_integer_weights_bootstrap_as_the_repeated_rows():
    # every row keeps at least one copy, so the documents (and the draws) are the same
    correct, confidence, docs = data(n=200, n_docs=25, decimals=2)
    weight = np.random.default_rng(2).integers(1, 4, size=200).astype(float)
    rows = np.repeat(np.arange(200), weight.astype(int))
    a = bootstrap_ci(correct, confidence, groups=docs, metrics=METRICS, n_resamples=40,
                     seed=3, sample_weight=weight)
    b = bootstrap_ci(correct[rows], confidence[rows], groups=docs[rows], metrics=METRICS,
                     n_resamples=40, seed=3)
    assert a["metric"].tolist() == b["metric"].tolist()
    for column in ("estimate", "low", "high"):
        np.testing.assert_allclose(a[column], b[column], rtol=0, atol=1e-12)
    assert a["n_valid"].tolist() == b["n_valid"].tolist()


def test_unit_weights_bootstrap_as_no_weights_exactly():
    correct, confidence, docs = data(decimals=2)
    plain = bootstrap_ci(correct, confidence, groups=docs, metrics=METRICS, n_resamples=30)
    ones = bootstrap_ci(correct, confidence, groups=docs, metrics=METRICS, n_resamples=30,
                        sample_weight=np.ones(len(correct)))
    pd.testing.assert_frame_equal(plain, ones)


def test_weighted_estimates_equal_the_weighted_metric_functions():
    correct, confidence, docs = data(decimals=2)
    weight = np.random.default_rng(3).uniform(0, 2, size=len(correct))
    ci = bootstrap_ci(correct, confidence, groups=docs, metrics=METRICS, n_resamples=5,
                      sample_weight=weight)
    est = dict(zip(ci.metric, ci.estimate, strict=True))
    kw = {"sample_weight": weight}
    for name in ("auroc", "ece", "mce", "brier", "ecarb"):
        row = "ecarb@0.3" if name == "ecarb" else name
        assert est[row] == pytest.approx(getattr(confcal, name)(correct, confidence, **kw),
                                         abs=1e-12), name
    assert est["accuracy"] == pytest.approx(weight[correct].sum() / weight.sum(), abs=1e-15)


def test_estimates_equal_the_metric_functions():
    correct, confidence, docs = data(decimals=2)
    ci = bootstrap_ci(correct, confidence, groups=docs, metrics=METRICS, n_resamples=20)
    est = dict(zip(ci.metric, ci.estimate, strict=True))
    assert est["auroc"] == pytest.approx(confcal.auroc(correct, confidence), abs=1e-12)
    assert est["ece"] == pytest.approx(confcal.ece(correct, confidence), abs=1e-12)
    assert est["mce"] == pytest.approx(confcal.mce(correct, confidence), abs=1e-12)
    assert est["brier"] == pytest.approx(confcal.brier(correct, confidence), abs=1e-12)
    # the row names its budget (the default, 0.3)
    assert est["ecarb@0.3"] == pytest.approx(confcal.ecarb(correct, confidence), abs=1e-12)
    assert est["accuracy"] == pytest.approx(correct.mean(), abs=1e-15)


def test_reproducible_for_a_seed_and_different_across_seeds():
    correct, confidence, docs = data()
    a = bootstrap_ci(correct, confidence, groups=docs, n_resamples=50, seed=3)
    b = bootstrap_ci(correct, confidence, groups=docs, n_resamples=50, seed=3)
    c = bootstrap_ci(correct, confidence, groups=docs, n_resamples=50, seed=4)
    assert a.equals(b)
    assert not a[["low", "high"]].equals(c[["low", "high"]])


def test_one_entity_per_document_is_a_row_bootstrap():
    correct, confidence, _ = data(n=300)
    rows = bootstrap_ci(correct, confidence, n_resamples=100, seed=9)
    docs = bootstrap_ci(correct, confidence, groups=np.arange(300) * 7 + 1, n_resamples=100,
                        seed=9)
    named = bootstrap_ci(correct, confidence, groups=[f"doc-{i}" for i in range(300)],
                         n_resamples=100, seed=9)
    assert rows.equals(docs)
    assert rows.equals(named)


def test_documents_move_together():
    # Two documents with 50 entities each; every resample holds 0, 50 or 100 entities of
    # each document, so accuracy only takes the values of whole-document mixtures.
    correct = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    confidence = np.r_[np.full(50, 0.9), np.full(50, 0.2)]
    docs = np.r_[np.zeros(50, int), np.ones(50, int)]
    codes = confcal._validation.check_groups(docs, 100)
    _, values = _distribution(correct, confidence, codes, ("accuracy",), budget=0.3,
                              n_bins=5, binning="quantile", n_resamples=200, seed=0)
    assert set(np.unique(values[:, 0])) <= {0.0, 0.5, 1.0}
    ci = bootstrap_ci(correct, confidence, groups=docs, metrics=("accuracy", "auroc"),
                      n_resamples=200, seed=0)
    auroc_row = ci.set_index("metric").loc["auroc"]
    # resamples drawing one document twice hold one class: counted out, not guessed
    assert 0 < auroc_row["n_valid"] < 200
    assert auroc_row["low"] == auroc_row["high"] == 1.0


def test_interval_contains_estimate_and_narrows_with_more_documents():
    widths = []
    for n_docs in (20, 500):
        correct, confidence, docs = data(n=20 * n_docs, n_docs=n_docs, seed=2)
        ci = bootstrap_ci(correct, confidence, groups=docs, n_resamples=300, seed=1)
        assert ((ci.low <= ci.estimate) & (ci.estimate <= ci.high)).all()
        widths.append((ci.high - ci.low).to_numpy())
    assert (widths[1] < widths[0]).all()


def test_document_bootstrap_is_wider_than_row_bootstrap_when_documents_cluster():
    # Each document is either easy (all right) or hard (all wrong) at the same confidence:
    # rows within a document are perfectly correlated, so a row bootstrap is overconfident.
    rng = np.random.default_rng(4)
    doc_ok = rng.uniform(size=100) < 0.6
    docs = np.repeat(np.arange(100), 20)
    correct = doc_ok[docs]
    confidence = np.full(2000, 0.6)
    by_doc = bootstrap_ci(correct, confidence, groups=docs, metrics=("brier",), seed=0)
    by_row = bootstrap_ci(correct, confidence, metrics=("brier",), seed=0)

    def width(ci):
        return float(ci.high.iloc[0] - ci.low.iloc[0])

    assert width(by_doc) > 3 * width(by_row)


def test_undefined_estimate_warns_and_gives_nan_interval():
    with pytest.warns(UndefinedMetricWarning, match="auroc is undefined on the full data"):
        ci = bootstrap_ci([1, 1, 1], [0.2, 0.5, 0.9], metrics=("auroc", "brier"),
                          n_resamples=10)
    row = ci.set_index("metric").loc["auroc"]
    assert math.isnan(row["estimate"]) and math.isnan(row["low"]) and row["n_valid"] == 0
    assert not math.isnan(ci.set_index("metric").loc["brier", "low"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"groups": [1, 2]}, r"groups must have one id per prediction \(3\); found 2"),
        ({"groups": [1, None, 2]}, r"groups must not contain missing ids; .* index 1"),
        ({"groups": [1.0, float("nan"), 2.0]}, r"groups must not contain missing ids"),
        ({"metrics": ("auroc", "f1")}, r"metrics\[1\] must be one of .*; found 'f1'"),
        ({"metrics": ()}, r"metrics must be a non-empty sequence"),
        ({"n_resamples": 0}, r"n_resamples must be an integer >= 1; found 0"),
        ({"confidence_level": 1.0}, r"confidence_level must be a number in \(0, 1\); found 1\.0"),
        ({"seed": 1.5}, r"seed must be an int or None; found 1\.5"),
        ({"budget": 0}, r"budget must be a number in \(0, 1\]"),
        ({"binning": "x"}, r"binning must be one of"),
        ({"sample_weight": [1, -1, 1]}, r"sample_weight must be finite and >= 0"),
        ({"sample_weight": [1, 1]}, r"sample_weight must have one weight per prediction"),
    ],
)
def test_bad_options(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        bootstrap_ci([0, 1, 1], [0.2, 0.5, 0.9], **kwargs)


def test_biased_statistic_interval_is_widened_to_the_estimate_and_flagged():
    # 11 predictions: every resampled ECE exceeds the full-data ECE (0.0909), so the
    # 2.5% percentile (0.0998) lies above the estimate; the row is widened and flagged.
    correct = [0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1]
    confidence = [0.3, 0.3, 0.7, 0.2, 0.4, 0.1, 0.3, 0.5, 0.7, 0.5, 0.4]
    ci = bootstrap_ci(correct, confidence).set_index("metric")
    assert ci.loc["ece", "widened"]
    assert ci.loc["ece", "low"] == ci.loc["ece", "estimate"] == pytest.approx(1 / 11)
    assert not ci.loc["brier", "widened"]


def test_brier_estimate_keeps_the_last_digits_on_constant_data():
    # (0.1² + 0.9²) / 2 = 0.41 in one document (a running per-document sum gave
    # 0.4099999999999761), in 7 documents, and with one row per document
    y, c = [1] * 5000 + [0] * 5000, [0.9] * 10000
    for groups in (np.zeros(10000, dtype=int), np.arange(10000) % 7, None):
        ci = bootstrap_ci(y, c, groups=groups, metrics=("brier",), n_resamples=5)
        assert abs(ci.estimate[0] - 0.41) <= 1e-15


@pytest.mark.parametrize("weighted", [False, True])
def test_debiased_and_smooth_ece_resamples_equal_copying_rows(weighted):
    # the estimators beyond the binned ECE reweigh the same fixed sort: each resample must
    # equal the public function on the copied rows (with their weights)
    correct, confidence, docs = data(n=300, n_docs=30, decimals=2)
    weight = np.random.default_rng(4).uniform(0.5, 3.0, size=300) if weighted else None
    codes = confcal._validation.check_groups(docs, len(docs))
    metrics = ("debiased_ece", "smooth_ece")
    estimates, fast = _distribution(correct, confidence, codes, metrics, budget=0.3, n_bins=5,
                                    binning="quantile", n_resamples=12, seed=2,
                                    sample_weight=weight)
    resampler = _DocumentResampler(correct, confidence, codes)
    rng = np.random.default_rng(2)
    for i in range(12):
        counts = resampler.draw_counts(rng).astype(int)
        rows = np.repeat(np.arange(300), counts[codes])
        kw = {} if weight is None else {"sample_weight": weight[rows]}
        want = [confcal.debiased_ece(correct[rows], confidence[rows], **kw),
                confcal.smooth_ece(correct[rows], confidence[rows], **kw)]
        np.testing.assert_allclose(fast[i], want, rtol=1e-10, atol=1e-12)
    kw = {} if weight is None else {"sample_weight": weight}
    assert estimates["debiased_ece"] == pytest.approx(
        confcal.debiased_ece(correct, confidence, **kw), abs=1e-12)
    assert estimates["smooth_ece"] == pytest.approx(
        confcal.smooth_ece(correct, confidence, **kw), abs=1e-12)
