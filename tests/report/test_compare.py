"""compare_systems: paired document resamples, the centred p-value, shared documents."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

import confcal
from _profiles import examples
from confcal import ValidationError, compare_runs, compare_systems
from confcal.datasets import load_demo
from confcal.metrics.bootstrap import (
    SystemMetrics,
    _distribution,
    draw_counts,
    paired_resamples,
)
from confcal.report import DocumentsDroppedWarning
from confcal.report._compare import _paired_difference

PROPERTY = settings(max_examples=examples(40), deadline=None)


def frame(docs, correct, confidence, **extra):
    return pd.DataFrame({"doc_id": docs, "correct": correct, "confidence": confidence, **extra})


def simulated(rng, noise=(1.0, 1.0), n_docs=60, size=20):
    """Two systems on the same documents; more noise in the confidence, a worse ranking."""
    docs = np.repeat(np.arange(n_docs), size)
    shared = 1.0 + rng.standard_normal(n_docs)[docs]
    out = {}
    for name, level in zip(("a", "b"), noise, strict=True):
        logit = shared + rng.normal(0, 0.7, docs.size)
        correct = rng.uniform(size=docs.size) < expit(logit)
        out[name] = frame(docs, correct, expit(logit + level * rng.standard_normal(docs.size)))
    return out


# ------------------------------------------------------------------ hand-worked
def test_two_systems_by_hand():
    # documents x, y; system a ranks its right predictions first in both, b in one:
    # a: right (0.9, 0.8), wrong (0.2, 0.1) -> AUROC 1; b: wrong 0.9 above right 0.8 in y:
    # pairs (right, wrong) of b: (0.7, 0.9) lost, (0.7, 0.1) won, (0.8, 0.9) lost,
    # (0.8, 0.1) won -> 2/4 = 0.5. Difference 1 - 0.5 = 0.5; Brier: a (0.01 + 0.04 + 0.04 +
    # 0.01) / 4 = 0.025, b (0.09 + 0.81 + 0.04 + 0.01) / 4 = 0.2375
    a = frame(["x", "x", "y", "y"], [1, 0, 1, 0], [0.9, 0.2, 0.8, 0.1])
    b = frame(["x", "x", "y", "y"], [1, 0, 1, 0], [0.7, 0.9, 0.8, 0.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", confcal.report.SmallSampleWarning)
        result = compare_systems({"a": a, "b": b}, baseline="b", metrics=["auroc", "brier"],
                                 n_resamples=200)
    got = result.set_index(["system", "metric"])
    assert got.loc[("a", "auroc"), "estimate"] == 1.0
    assert got.loc[("b", "auroc"), "estimate"] == 0.5
    assert got.loc[("a", "auroc"), "difference"] == 0.5
    assert got.loc[("a", "brier"), "difference"] == pytest.approx(0.025 - 0.2375, abs=1e-15)
    assert math.isnan(got.loc[("b", "auroc"), "p_value"])  # the baseline itself
    assert list(result.columns) == ["system", "metric", "estimate", "difference", "low",
                                    "high", "p_value", "n_valid"]


def test_paired_difference_by_hand():
    # estimate 0.3 - 0.1 = 0.2; resampled differences 0.1, 0.25, 0.4, 0.05: distances from
    # 0.2 are 0.1, 0.05, 0.2, 0.15; those >= 0.2: one -> p = (1 + 1) / (1 + 4) = 0.4.
    # level 0.5: k = ceil(5 * 0.5) = 3 -> h = the 3rd smallest distance, 0.15
    diff, low, high, p, used = _paired_difference(0.3, 0.1, np.array([0.3, 0.35, 0.6, 0.1]),
                                                  np.array([0.2, 0.1, 0.2, 0.05]), 0.5)
    assert diff == pytest.approx(0.2)
    assert (low, high) == pytest.approx((0.05, 0.35))
    assert (p, used) == (pytest.approx(0.4), 4)
    # too few resamples for the level: an infinite interval, and p is at least 1/(1 + B)
    _, low, high, p, _ = _paired_difference(1.0, 0.0, np.array([1.0]), np.array([0.0]), 0.95)
    assert (low, high, p) == (-math.inf, math.inf, 0.5)



def test_a_tie_within_the_tolerance_is_a_tie_in_the_interval_too():
    # difference 1.0, one resample at 2.97e-14: its distance 1 - 2.97e-14 is within the
    # tie tolerance of |1.0|, so p = (1 + 1) / (1 + 1) = 1; the interval's h (that same
    # distance) is raised to 1.0 so that 0 lies on its edge, not just outside it
    diff, low, high, p, _ = _paired_difference(1.0, 0.0, np.array([2.965817583519127e-14]),
                                               np.zeros(1), 0.5)
    assert (diff, p) == (1.0, 1.0)
    assert (low, high) == (0.0, 2.0)

@PROPERTY
@given(values=st.lists(st.floats(-1, 1), min_size=1, max_size=60),
       estimate=st.floats(-1, 1), level=st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_interval_excludes_zero_exactly_when_p_is_below_one_minus_level(values, estimate,
                                                                         level):
    values = np.array(values)
    diff, low, high, p, _ = _paired_difference(estimate, 0.0, values, np.zeros_like(values),
                                               level)
    outside = not (low <= 0.0 <= high)
    assert outside == (p <= 1 - level + 1e-12), (diff, low, high, p)


def test_identical_systems_differ_by_nothing():
    rng = np.random.default_rng(0)
    table = simulated(rng)["a"]
    result = compare_systems({"a": table, "b": table.copy()}, baseline="a", n_resamples=100)
    rows = result[result.system == "b"]
    assert (rows["difference"] == 0).all() and (rows["p_value"] == 1).all()
    assert (rows["low"] == 0).all() and (rows["high"] == 0).all()


# ---------------------------------------------------------------- paired resamples
def test_every_resample_draws_the_same_documents_for_every_system():
    # recompute each resample by copying the drawn documents' rows of each system
    rng = np.random.default_rng(3)
    tables = simulated(rng, n_docs=15, size=8)
    codes = {k: t["doc_id"].to_numpy() for k, t in tables.items()}
    systems = [SystemMetrics(t["correct"].to_numpy(bool), t["confidence"].to_numpy(float),
                             codes[k], 15, ["auroc", "ece", "brier", "ecarb"],
                             budgets=(0.1, 0.3), n_bins=5, binning="quantile")
               for k, t in tables.items()]
    _, values = paired_resamples(systems, 15, n_resamples=12, seed=9)
    rng = np.random.default_rng(9)
    for i in range(12):
        counts = draw_counts(rng, 15).astype(int)
        for j, (k, t) in enumerate(tables.items()):
            rows = np.repeat(np.arange(len(t)), counts[codes[k]])
            y, c = t["correct"].to_numpy(bool)[rows], t["confidence"].to_numpy(float)[rows]
            want = [confcal.auroc(y, c), confcal.ece(y, c), confcal.brier(y, c),
                    confcal.ecarb(y, c, budget=0.1), confcal.ecarb(y, c, budget=0.3)]
            np.testing.assert_allclose(values[j][i], want, atol=1e-12)


def test_one_system_resamples_as_bootstrap_ci():
    rng = np.random.default_rng(4)
    t = simulated(rng)["a"]
    y, c = t["correct"].to_numpy(bool), t["confidence"].to_numpy(float)
    docs = t["doc_id"].to_numpy()
    metrics = ("auroc", "ece", "brier", "debiased_ece", "smooth_ece")
    system = SystemMetrics(y, c, docs, 60, metrics, budgets=(0.3,), n_bins=5,
                           binning="quantile")
    _, (paired,) = paired_resamples([system], 60, n_resamples=30, seed=2)
    _, single = _distribution(y, c, docs, metrics, budget=0.3, n_bins=5, binning="quantile",
                              n_resamples=30, seed=2)
    np.testing.assert_allclose(paired, single, atol=1e-12)


def test_estimates_are_those_of_compare_runs_and_the_metric_functions():
    entities = load_demo().score(tiers=["high"]).entities
    tables = {m: g for m, g in entities.groupby("model", sort=False)}
    result = compare_systems(tables, baseline="sim-calibrated", n_resamples=20)
    runs = compare_runs(entities, by="model").set_index("model")
    got = result.set_index(["system", "metric"])["estimate"]
    for model, group in tables.items():
        for metric in ("woa", "f1", "auroc", "ece", "brier", "ecarb@0.1", "ecarb@0.3"):
            assert got[(model, metric)] == pytest.approx(runs.at[model, metric], abs=1e-12)
        has = group["confidence"].notna()
        y, c = group["correct"][has].to_numpy(bool), group["confidence"][has].to_numpy(float)
        assert got[(model, "debiased_ece")] == pytest.approx(confcal.debiased_ece(y, c),
                                                             abs=1e-12)
        assert got[(model, "smooth_ece")] == pytest.approx(confcal.smooth_ece(y, c), abs=1e-9)
    assert list(result["metric"].unique()) == ["woa", "f1", "auroc", "ece", "debiased_ece",
                                               "smooth_ece", "brier", "ecarb@0.1",
                                               "ecarb@0.3"]
    assert result.attrs["n_documents"] == 75 and result.attrs["baseline"] == "sim-calibrated"


def test_a_clearly_better_system_is_found_better():
    rng = np.random.default_rng(6)
    tables = simulated(rng, noise=(0.3, 2.0), n_docs=100)
    result = compare_systems(tables, baseline="b", metrics=["auroc"], n_resamples=300)
    row = result[result.system == "a"].iloc[0]
    assert row.difference > 0.05 and row.low > 0 and row.p_value < 0.01


def test_equally_good_systems_are_rarely_told_apart():
    # a short version of benchmarks/bench_inference.py (400 replications, every metric)
    rejected = 0
    for r in range(100):
        tables = simulated(np.random.default_rng(100 + r))
        rejected += compare_systems(tables, baseline="a", metrics=["auroc"], n_resamples=99,
                                    seed=r).iloc[1].p_value < 0.05
    assert rejected <= 10


# ----------------------------------------------------------- documents and order
def test_a_missing_document_is_an_error_naming_it_and_the_system():
    a = frame([1, 1, 2, 3], [1, 0, 1, 0], [0.9, 0.2, 0.8, 0.3])
    b = frame([1, 1, 2], [1, 0, 1], [0.7, 0.4, 0.6])
    with pytest.raises(ValidationError, match=r"tables\['b'\] has no rows for 1 document that "
                                              r"tables\['a'\] has, first 3") as caught:
        compare_systems({"a": a, "b": b}, baseline="a")
    assert caught.value.doc_id == 3


def test_intersection_counts_what_it_leaves_out():
    rng = np.random.default_rng(1)
    tables = simulated(rng, n_docs=40)
    a = tables["a"]
    extra = frame([100, 100, 101], [1, 0, 1], [0.9, 0.1, 0.5])
    tables["a"] = pd.concat([a, extra], ignore_index=True)
    with pytest.warns(DocumentsDroppedWarning, match=r"compares the 40 documents every system "
                                                     r"has; left out 2 documents \(3 rows\) "
                                                     r"of 'a', 0 documents \(0 rows\) of 'b'"):
        result = compare_systems(tables, baseline="b", n_resamples=50, on="intersection")
    assert result.attrs["dropped"] == {"a": {"documents": 2, "rows": 3},
                                       "b": {"documents": 0, "rows": 0}}
    # the same as comparing the tables without the extra documents
    plain = compare_systems({"a": a, "b": tables["b"]}, baseline="b", n_resamples=50)
    np.testing.assert_array_equal(result[["estimate", "p_value"]].to_numpy(),
                                  plain[["estimate", "p_value"]].to_numpy())


@settings(max_examples=examples(15), deadline=None)  # every metric, the smooth ECE included
@given(seed=st.integers(0, 2**16), draw=st.data())
def test_row_order_and_table_order_never_matter(seed, draw):
    rng = np.random.default_rng(seed)
    tables = simulated(rng, n_docs=12, size=5)
    # confidences on a grid: ties across rows and documents
    for t in tables.values():
        t["confidence"] = np.round(t["confidence"], 1)
    perm = np.array(draw.draw(st.permutations(range(60))), dtype=np.intp)
    shuffled = {"b": tables["b"].iloc[perm], "a": tables["a"].iloc[perm[::-1]]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small samples, one-class resamples
        first = compare_systems(tables, baseline="a", n_resamples=20, seed=1)
        second = compare_systems(shuffled, baseline="a", n_resamples=20, seed=1)
    second = second.set_index(["system", "metric"]).loc[
        list(zip(first.system, first.metric, strict=True))].reset_index()
    np.testing.assert_allclose(second[["estimate", "difference", "low", "high", "p_value"]],
                               first[["estimate", "difference", "low", "high", "p_value"]],
                               atol=1e-12)


@PROPERTY
@given(seed=st.integers(0, 2**16), weights=st.lists(st.integers(1, 3), min_size=40,
                                                     max_size=40))
def test_integer_sample_weights_are_repeated_rows(seed, weights):
    rng = np.random.default_rng(seed)
    tables = simulated(rng, n_docs=8, size=5)
    w = np.array(weights, dtype=float)
    weighted = {k: t.assign(sample_weight=w) for k, t in tables.items()}
    repeated = {k: t.iloc[np.repeat(np.arange(40), w.astype(int))] for k, t in tables.items()}
    metrics = ["auroc", "ece", "debiased_ece", "brier", "ecarb"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = compare_systems(weighted, baseline="a", metrics=metrics, n_resamples=25)
        b = compare_systems(repeated, baseline="a", metrics=metrics, n_resamples=25)
    np.testing.assert_allclose(a[["estimate", "difference", "low", "high", "p_value"]],
                               b[["estimate", "difference", "low", "high", "p_value"]],
                               atol=1e-12)


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize("call, message", [
    (lambda t: compare_systems({"a": t}, baseline="a"),
     r"tables must map at least two system names to tables; found 1"),
    (lambda t: compare_systems({"a": t, "b": t}, baseline="c"),
     r"baseline must be one of the systems \['a', 'b'\]; found 'c'"),
    (lambda t: compare_systems({"a": t, "b": t}, baseline="a", metrics=["woa"]),
     r"metrics asks for woa, which needs entity tables .* found tables\['a'\] without them"),
    (lambda t: compare_systems({"a": t, "b": t}, baseline="a", on="union"),
     r"on must be one of 'error', 'intersection'; found 'union'"),
    (lambda t: compare_systems({"a": t, "b": t.drop(columns="correct")}, baseline="a"),
     r"tables\['b'\] must have the columns doc_id, correct and confidence .* \['correct'\]"),
    (lambda t: compare_systems({"a": t, "b": t.assign(confidence=1.5)}, baseline="a"),
     r"tables\['b'\]: confidence must be finite and within \[0, 1\]"),
    (lambda t: compare_systems({"a": t, "b": t.assign(doc_id=None)}, baseline="a"),
     r"tables\['b'\]: column doc_id must not be empty; found 3 values breaking it, first "
     r"on row 0 \(None\)"),
])
def test_compare_systems_rejects_bad_input(call, message):
    t = frame([1, 2, 3], [1, 0, 1], [0.9, 0.2, 0.6])
    with pytest.raises(ValidationError, match=message):
        call(t)


def test_an_empty_doc_id_is_located_alike_in_both_kinds_of_table():
    # one rule for the plain (doc_id, correct, confidence) table and the entity table
    t = frame([1, 2, 3], [1, 0, 1], [0.9, 0.2, 0.6]).astype({"doc_id": object})
    t.loc[1, "doc_id"] = ""
    with pytest.raises(ValidationError, match=r"^tables\['b'\]: column doc_id must not be "
                                              r"empty; found 1 value breaking it, first on "
                                              r"row 1 \(''\)$") as info:
        compare_systems({"a": frame([1, 2, 3], [1, 0, 1], [0.9, 0.2, 0.6]), "b": t},
                        baseline="a")
    assert (info.value.index, info.value.field) == (1, "doc_id")
