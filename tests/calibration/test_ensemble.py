"""confcal.calibration.ensemble: logistic stacking of confidence signals, cross-fitted by
document; aligning entity tables; the complementary-signals generator."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.calibration.calibrators import CalibrationWarning
from confcal.calibration.ensemble import (
    DEFAULT_EPS,
    ENSEMBLE,
    ENTITY_KEY,
    ConfidenceEnsemble,
    align_signals,
    complementary_signals,
    cross_fit_ensemble,
    ensemble_report,
)
from confcal.exceptions import ValidationError
from confcal.metrics import DEFAULT_BUDGETS, auroc, brier, ecarb, ece
from confcal.metrics.bootstrap import bootstrap_ci
from confcal.scoring import score_documents
from confcal.scoring.presets import FCC_INVOICE

ROOT = Path(__file__).resolve().parents[2]

# a fit that does not converge is a failure here, unless a test expects it
pytestmark = pytest.mark.filterwarnings(
    "error::confcal.calibration.calibrators.CalibrationWarning")

# The toy of the docstrings: two signals a, b in {0.5, 0.9}; cells (a, b, right, wrong).
# The accuracies 1/2, 3/4, 3/4, 9/10 have logits 0, log 3, log 3, log 9 = additive in
# logit(a), logit(b) with coefficients 1/2 each (log 3 = ½ log 9), so with l2 = 0 the
# maximum-likelihood fit reproduces every cell exactly.
CELLS = [(0.5, 0.5, 1, 1), (0.9, 0.5, 3, 1), (0.5, 0.9, 3, 1), (0.9, 0.9, 9, 1)]


def _toy():
    a = [ca for ca, cb, r, w in CELLS for _ in range(r + w)]
    b = [cb for ca, cb, r, w in CELLS for _ in range(r + w)]
    y = [k < r for ca, cb, r, w in CELLS for k in range(r + w)]
    return np.array(y), np.array(a), np.array(b)


def _logit(p):
    return np.log(p) - np.log1p(-p)


# ---------------------------------------------------------------------------------------
# hand-worked fits
# ---------------------------------------------------------------------------------------
def test_one_signal_reproduces_the_accuracy_of_each_level():
    # a = 0.5 (logit 0): 1 right of 2; a = 0.9 (logit log 9): 3 right of 4. Two levels,
    # two parameters: σ(b) = 1/2 gives b = 0; σ(c·log 9) = 3/4 gives c = log 3/log 9 = 1/2
    ens = ConfidenceEnsemble.fit([1, 0, 1, 1, 1, 0], {"a": [0.5, 0.5, 0.9, 0.9, 0.9, 0.9]},
                                 l2=0.0)
    assert ens.coef == pytest.approx((0.5,), abs=1e-12)
    assert ens.intercept == pytest.approx(0.0, abs=1e-12)
    assert ens.transform({"a": [0.5, 0.9]}) == pytest.approx([0.5, 0.75], abs=1e-12)


def test_two_signals_additive_in_logit_hand_worked():
    y, a, b = _toy()
    ens = ConfidenceEnsemble.fit(y, {"b": b, "a": a}, l2=0.0)
    assert ens.names == ("a", "b")  # sorted, whatever the mapping order
    assert ens.coef_ == pytest.approx([0.5, 0.5], abs=1e-10)
    assert ens.intercept_ == pytest.approx(0.0, abs=1e-10)
    # (.5, .5) -> σ(0) = 1/2; (.9, .5) -> σ(½ log 9) = σ(log 3) = 3/4; (.9, .9) -> 9/10
    out = ens.transform({"a": [0.5, 0.9, 0.5, 0.9], "b": [0.5, 0.5, 0.9, 0.9]})
    assert out == pytest.approx([0.5, 0.75, 0.75, 0.9], abs=1e-10)


def test_two_documents_hand_worked_report():
    # The 20 toy rows copied into two documents: with 2 folds each document is scored by
    # the fit on the other, which is the exact fit above.
    y, a, b = _toy()
    rep = ensemble_report(np.r_[y, y], {"a": np.r_[a, a], "b": np.r_[b, b]},
                          groups=[1] * 20 + [2] * 20, folds=2, l2=0.0)
    assert rep.fit.confidence[:20] == pytest.approx(rep.fit.confidence[20:], abs=1e-12)
    # AUROC of a: 16 right x 4 wrong = 64 pairs. a = .9 holds 12 right / 2 wrong, a = .5
    # holds 4 / 2: wins 12·2, ties 12·2 + 4·2 -> (24 + 12 + 4) / 64 = 40/64
    assert rep.value("auroc", "a") == rep.value("auroc", "b") == 40 / 64
    # ensemble levels .5 (1 right, 1 wrong), .75 (6, 2), .9 (9, 1):
    # (9·3 + ½·9·1 + 6·1 + ½·6·2 + ½·1·1) / 64 = (27 + 4.5 + 6 + 6 + 0.5) / 64 = 44/64
    assert rep.value("auroc", ENSEMBLE) == pytest.approx(44 / 64, abs=1e-12)
    assert rep.auroc_gain == pytest.approx(4 / 64, abs=1e-12)
    # Brier: the fit is each cell's accuracy p, so Σ over cells of n·p(1-p), / 40 rows
    # (2 copies): 2·(2·¼ + 4·3/16 + 4·3/16 + 10·9/100) / 40 = 2·(0.5 + 1.5 + 0.9) / 40
    assert rep.value("brier", ENSEMBLE) == pytest.approx(2 * 2.9 / 40, abs=1e-12)
    # ECE, 5 quantile bins of 8 rows on the sorted scores .5 ×4, .75 ×16, .9 ×20: each
    # bin's accuracy equals its mean score (every level is its cell's accuracy) -> 0
    assert rep.value("ece", ENSEMBLE) == pytest.approx(0.0, abs=1e-10)


def test_ridge_penalty_first_order_conditions_hand_worked():
    # With l2 > 0 the optimum solves Σ(p - y) = 0 (intercept, not penalized) and
    # Σ(p - y)·z_j + l2·c_j = 0. The toy with l2 = 4: check both at the fit.
    y, a, b = _toy()
    ens = ConfidenceEnsemble.fit(y, {"a": a, "b": b}, l2=4.0)
    p = ens.transform({"a": a, "b": b})
    r = p - y
    assert r.sum() == pytest.approx(0.0, abs=1e-9)
    for j, z in enumerate((_logit(a), _logit(b))):
        assert (r * z).sum() + 4.0 * ens.coef[j] == pytest.approx(0.0, abs=1e-9)
    assert 0 < ens.coef[0] < 0.5  # shrunk from the unpenalized ½


# ---------------------------------------------------------------------------------------
# independent reference: the penalized log-likelihood minimized by scipy on the same folds
# (the ensemble fits with scikit-learn; the reference shares no code with it)
# ---------------------------------------------------------------------------------------
def _scipy_fit(x, y, l2, w=None):
    from scipy.optimize import minimize
    from scipy.special import expit

    w = np.ones(len(y)) if w is None else w
    a = np.column_stack([np.ones(len(y)), x])
    pen = np.r_[0.0, np.full(x.shape[1], l2)]

    def objective(b):
        f = a @ b
        loss = np.dot(w, np.logaddexp(0.0, f) - y * f) + 0.5 * np.dot(pen * b, b)
        return loss, a.T @ (w * (expit(f) - y)) + pen * b

    def hessian(b):
        p = expit(a @ b)
        return (a * (w * p * (1 - p))[:, None]).T @ a + np.diag(pen)

    result = minimize(objective, np.zeros(a.shape[1]), jac=True, hess=hessian,
                      method="trust-ncg", options={"gtol": 1e-11, "maxiter": 200})
    # trust-ncg may stop on rounding a hair above gtol ("bad approximation"): the gradient
    # itself says whether this is the optimum
    assert np.max(np.abs(objective(result.x)[1])) < 1e-7 * len(y), result.message
    return result.x[1:], result.x[0]


def _scipy_oof(y, signals, fold, l2, eps, sample_weight=None):
    from scipy.special import expit

    names = sorted(signals)
    x = np.column_stack([_logit(np.clip(signals[k], eps, 1 - eps)) for k in names])
    out = np.empty(len(y))
    for f in np.unique(fold):
        test = fold == f
        sw = None if sample_weight is None else sample_weight[~test]
        coef, intercept = _scipy_fit(x[~test], y[~test].astype(float), l2, sw)
        out[test] = expit(x[test] @ coef + intercept)
    return out


@pytest.mark.parametrize("weighted", [False, True])
def test_cross_fit_agrees_with_an_independent_minimizer(weighted):
    s = align_signals(complementary_signals(n_documents=80, seed=3))
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=len(s.correct)) if weighted else None
    for l2 in (0.5, 10.0):
        cf = cross_fit_ensemble(s.correct, s.confidences, groups=s.groups, folds=4, seed=1,
                                l2=l2, sample_weight=w)
        ref = _scipy_oof(s.correct, s.confidences, cf.fold, l2, DEFAULT_EPS, w)
        assert np.max(np.abs(cf.confidence - ref)) < 1e-8


def test_final_model_agrees_with_the_independent_minimizer():
    s = align_signals(complementary_signals(n_documents=50, seed=4))
    ens = ConfidenceEnsemble.fit(s.correct, s.confidences, l2=2.0, eps=1e-3)
    x = np.column_stack([_logit(np.clip(s.confidences[k], 1e-3, 1 - 1e-3))
                         for k in ens.names])
    coef, intercept = _scipy_fit(x, s.correct.astype(float), 2.0)
    assert ens.coef_ == pytest.approx(coef, abs=1e-8)
    assert ens.intercept_ == pytest.approx(intercept, abs=1e-8)


def test_report_metrics_are_the_metric_functions_on_the_scores():
    s = align_signals(complementary_signals(n_documents=40, seed=5))
    rep = s.report(folds=4, n_resamples=50, seed=3)
    t = rep.table
    scores = {("logprob", "raw"): s.confidences["logprob"],
              ("verbalized", "raw"): s.confidences["verbalized"],
              (ENSEMBLE, "stacked"): rep.fit.confidence}
    for (signal, method), score in scores.items():
        row = t[(t.signal == signal) & (t.method == method)].iloc[0]
        assert row["auroc"] == auroc(s.correct, score)
        assert row["ece"] == ece(s.correct, score)
        assert row["brier"] == brier(s.correct, score)
        for b in DEFAULT_BUDGETS:
            assert row[f"ecarb@{b:g}"] == ecarb(s.correct, score, budget=b)
        ci = bootstrap_ci(s.correct, score, groups=s.groups, n_resamples=50, seed=3,
                          budget=0.1).set_index("metric")
        assert (row["auroc_low"], row["auroc_high"]) == tuple(ci.loc["auroc", ["low", "high"]])
        assert (row["ecarb@0.1_low"], row["ecarb@0.1_high"]) == tuple(
            ci.loc["ecarb@0.1", ["low", "high"]])
    # the recalibrated rows are one-signal cross-fits on the same folds
    alone = cross_fit_ensemble(s.correct, {"logprob": s.confidences["logprob"]},
                               groups=s.groups, folds=4, seed=3)
    row = t[(t.signal == "logprob") & (t.method == "recalibrated")].iloc[0]
    assert row["auroc"] == auroc(s.correct, alone.confidence)
    assert list(t.columns[:9]) == ["signal", "method", "n", "n_errors", "auroc", "ece",
                                   "brier", "ecarb@0.1", "ecarb@0.3"]


# ---------------------------------------------------------------------------------------
# no document is scored by a combiner fitted on it
# ---------------------------------------------------------------------------------------
@st.composite
def grouped_signals(draw, max_docs=12):
    n_docs = draw(st.integers(3, max_docs))
    sizes = draw(st.lists(st.integers(1, 6), min_size=n_docs, max_size=n_docs))
    n = sum(sizes)
    groups = np.repeat([f"d{i}" for i in range(n_docs)], sizes)
    unit = st.floats(0.0, 1.0, allow_nan=False)
    y = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    a = np.array(draw(st.lists(unit, min_size=n, max_size=n)))
    b = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 0.9, 0.95, 1.0]), min_size=n,
                               max_size=n)))
    folds = draw(st.integers(2, min(5, n_docs)))
    seed = draw(st.integers(0, 2**32 - 1))
    return y, {"a": a, "b": b}, groups, folds, seed


def _cross_fit_or_reject(y, signals, groups, folds, seed, **kw):
    try:
        return cross_fit_ensemble(y, signals, groups=groups, folds=folds, seed=seed, **kw)
    except ValidationError as exc:  # a fold whose training rows hold one class only
        assume("must hold correct and incorrect" not in str(exc))
        raise


@settings(max_examples=examples(60), deadline=None)
@given(data=grouped_signals())
def test_each_fold_model_never_saw_the_documents_it_scores(data):
    y, signals, groups, folds, seed = data
    cf = _cross_fit_or_reject(y, signals, groups, folds, seed)
    # the folds partition the documents, and every row sits in its document's fold
    held = [set(g) for g in cf.fold_groups]
    assert sorted(d for g in held for d in g) == sorted(set(groups))
    for i, g in enumerate(groups):
        assert g in held[cf.fold[i]]
    for f, model in enumerate(cf.models):
        train = cf.fold != f
        assert not set(groups[train]) & set(groups[~train])
        # the model of fold f is exactly the fit on the rows outside fold f ...
        refit = ConfidenceEnsemble.fit(y[train], {k: v[train] for k, v in signals.items()})
        assert refit == model
        # ... and it scored fold f
        assert np.array_equal(cf.confidence[~train],
                              model.transform({k: v[~train] for k, v in signals.items()}))


@settings(max_examples=examples(60), deadline=None)
@given(data=grouped_signals(), pick=st.integers(0, 10**6))
def test_a_documents_labels_never_reach_its_own_scores(data, pick):
    # Relabel one document's rows: the combiner that scores them never saw them, so their
    # scores are unchanged to the last bit (the folds depend only on groups and seed).
    y, signals, groups, folds, seed = data
    before = _cross_fit_or_reject(y, signals, groups, folds, seed)
    doc = sorted(set(groups))[pick % len(set(groups))]
    mine = groups == doc
    flipped = y.copy()
    flipped[mine] = ~flipped[mine]
    after = _cross_fit_or_reject(flipped, signals, groups, folds, seed)
    assert np.array_equal(before.confidence[mine], after.confidence[mine])


@settings(max_examples=examples(40), deadline=None)
@given(data=grouped_signals())
def test_invariant_to_the_order_of_the_inputs(data):
    y, signals, groups, folds, seed = data
    one = _cross_fit_or_reject(y, signals, groups, folds, seed)
    two = _cross_fit_or_reject(y, dict(reversed(list(signals.items()))), groups, folds, seed)
    assert np.array_equal(one.confidence, two.confidence)
    assert one.final == two.final and one.names == two.names == ("a", "b")


@settings(max_examples=examples(40), deadline=None)
@given(data=grouped_signals(), perm_seed=st.integers(0, 1000))
def test_row_order_only_permutes_the_scores(data, perm_seed):
    y, signals, groups, folds, seed = data
    one = _cross_fit_or_reject(y, signals, groups, folds, seed)
    p = np.random.default_rng(perm_seed).permutation(len(y))
    two = _cross_fit_or_reject(y[p], {k: v[p] for k, v in signals.items()}, groups[p],
                               folds, seed)
    assert np.array_equal(one.fold[p], two.fold)
    assert np.allclose(one.confidence[p], two.confidence, rtol=0, atol=1e-9)


@settings(max_examples=examples(40), deadline=None)
@given(data=grouped_signals(), l2=st.sampled_from([0.1, 1.0, 25.0]))
def test_every_fit_is_at_its_optimum(data, l2):
    # first-order conditions of Σ logloss + l2/2·||c||², checked outside the fitting code
    y, signals, groups, _, _ = data
    assume(0 < y.sum() < len(y))
    ens = ConfidenceEnsemble.fit(y, signals, l2=l2)
    p = ens.transform(signals)
    r = p - y
    scale = len(y)
    assert abs(r.sum()) <= 1e-7 * scale
    for j, k in enumerate(ens.names):
        z = _logit(np.clip(signals[k], DEFAULT_EPS, 1 - DEFAULT_EPS))
        assert abs((r * z).sum() + l2 * ens.coef[j]) <= 1e-6 * scale
    assert ((p >= 0) & (p <= 1)).all()


def test_integer_weights_are_repeated_rows_and_zero_weights_are_absent_rows():
    s = align_signals(complementary_signals(n_documents=30, seed=6))
    rng = np.random.default_rng(2)
    w = rng.integers(0, 4, size=len(s.correct)).astype(float)
    weighted = ConfidenceEnsemble.fit(s.correct, s.confidences, sample_weight=w)
    rep = np.repeat(np.arange(len(w)), w.astype(int))
    repeated = ConfidenceEnsemble.fit(s.correct[rep], {k: v[rep] for k, v in
                                                       s.confidences.items()})
    assert weighted.coef_ == pytest.approx(repeated.coef_, abs=1e-9)
    assert weighted.intercept_ == pytest.approx(repeated.intercept_, abs=1e-9)


def test_folds_follow_the_rule_of_cross_validate_calibrator():
    # documents listed in sorted order: the same seed deals them into the same folds
    from confcal.calibration.calibrators import cross_validate_calibrator

    s = align_signals(complementary_signals(n_documents=23, seed=10))
    for seed in (0, 5):
        cf = s.cross_fit(folds=4, seed=seed)
        table = pd.DataFrame({"doc_id": s.groups, "correct": s.correct,
                              "confidence": s.confidences["logprob"]})
        cv = cross_validate_calibrator(table, folds=4, seed=seed).iloc[:-1]
        assert cv["n_eval"].tolist() == np.bincount(cf.fold).tolist()
        assert cv["n_groups"].tolist() == [len(g) for g in cf.fold_groups]


def test_same_seed_same_scores_other_seed_other_folds():
    s = align_signals(complementary_signals(n_documents=40, seed=7))
    one, two = s.cross_fit(seed=11), s.cross_fit(seed=11)
    assert np.array_equal(one.confidence, two.confidence)
    assert not np.array_equal(one.fold, s.cross_fit(seed=12).fold)


# ---------------------------------------------------------------------------------------
# complementary information: the point of the ensemble
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complementary_signals_the_ensemble_beats_each_input(seed):
    s = align_signals(complementary_signals(seed=seed))
    rep = s.report()
    best = max(rep.value("auroc", "logprob"), rep.value("auroc", "verbalized"))
    # measured 0.027 / 0.026 / 0.042 above the best input at the default eps
    assert rep.value("auroc", ENSEMBLE) >= best + 0.015
    # the verbalized signal's 1.0s read as 0.99: measured 0.084 / 0.091 / 0.090
    tuned = s.report(eps={"verbalized": 0.01})
    assert tuned.value("auroc", ENSEMBLE) >= best + 0.06
    assert tuned.value("ece", ENSEMBLE) < min(tuned.value("ece", k, "recalibrated")
                                              for k in ("logprob", "verbalized"))
    assert tuned.value("brier", ENSEMBLE) < min(tuned.value("brier", k, "recalibrated")
                                                for k in ("logprob", "verbalized"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_added_noise_signal_costs_nothing_meaningful(seed):
    s = align_signals(complementary_signals(seed=seed))
    noise = np.random.default_rng(100 + seed).uniform(size=len(s.correct))
    rep = ensemble_report(s.correct, {"logprob": s.confidences["logprob"], "noise": noise},
                          groups=s.groups)
    assert rep.value("auroc", "noise") == pytest.approx(0.5, abs=0.04)
    assert rep.value("auroc", ENSEMBLE) >= rep.value("auroc", "logprob") - 0.01
    # the noise moves the combined logit by a tenth of what logprob does (its coefficient
    # times the spread of its logit; measured 0.04 / 0.09 / 0.09 of logprob's)
    c = rep.fit.final.coefficients
    spread = {k: abs(c[k]) * _logit(np.clip(v, DEFAULT_EPS, 1 - DEFAULT_EPS)).std()
              for k, v in (("logprob", s.confidences["logprob"]), ("noise", noise))}
    assert spread["noise"] < 0.15 * spread["logprob"]


def test_each_signal_sees_its_own_cause_of_error():
    t = complementary_signals(seed=0)["logprob"]
    s = align_signals(complementary_signals(seed=0))
    cause = t["cause"].to_numpy()
    for signal, sees, blind in (("logprob", "reading", "meaning"),
                                ("verbalized", "meaning", "reading")):
        c = s.confidences[signal]
        # separating the correct rows from the errors of each cause
        seen = auroc(np.r_[np.ones((cause == "none").sum()), np.zeros((cause == sees).sum())],
                     np.r_[c[cause == "none"], c[cause == sees]])
        unseen = auroc(np.r_[np.ones((cause == "none").sum()),
                             np.zeros((cause == blind).sum())],
                       np.r_[c[cause == "none"], c[cause == blind]])
        assert seen > 0.8 and abs(unseen - 0.5) < 0.1, (signal, seen, unseen)


def test_generator_is_seeded():
    one, two = complementary_signals(n_documents=10, seed=3), complementary_signals(
        n_documents=10, seed=3)
    pd.testing.assert_frame_equal(one["verbalized"], two["verbalized"])
    assert not complementary_signals(n_documents=10, seed=4)["logprob"].equals(
        one["logprob"])
    v = complementary_signals(seed=0)["verbalized"]["confidence"]
    assert np.allclose(v * 20, np.round(v * 20)) and (v == 1.0).any()


# ---------------------------------------------------------------------------------------
# clipping is explicit and counted
# ---------------------------------------------------------------------------------------
def test_clipped_and_saturated_confidences_are_counted():
    y = [1, 0, 1, 0, 1, 1]
    conf = {"a": [1.0, 0.0, 0.9999999, 0.5, 0.6, 0.7], "b": [0.2, 0.4, 0.6, 0.8, 1.0, 0.3]}
    rep = ensemble_report(y, conf, groups=[1, 1, 2, 2, 3, 3], folds=3)
    t = rep.table.set_index(["signal", "method"])
    # a: 1.0 and 0.0 exactly (saturated), 0.9999999 > 1 - 1e-6 (clipped only)
    assert t.loc[("a", "raw"), ["n_clipped", "n_saturated"]].tolist() == [3, 2]
    assert t.loc[("b", "raw"), ["n_clipped", "n_saturated"]].tolist() == [1, 1]
    # rows with any signal clipped: 0, 1, 2 (a) and 4 (b)
    assert t.loc[(ENSEMBLE, "stacked"), ["n_clipped", "n_saturated"]].tolist() == [4, 3]
    assert dict(rep.fit.n_clipped) == {"a": 3, "b": 1}
    # at eps = 0.1 a also clips 0.9999999 and 0.0 ... and b clips nothing more
    wide = cross_fit_ensemble(y, conf, groups=[1, 1, 2, 2, 3, 3], folds=3,
                              eps={"a": 0.1})
    assert dict(wide.eps) == {"a": 0.1, "b": DEFAULT_EPS}
    assert dict(wide.n_clipped) == {"a": 3, "b": 1}
    # a clipped confidence is read as the bound: 1.0 and 0.9999999 give the same score
    ens = wide.final
    assert ens.transform({"a": [1.0], "b": [0.5]}) == ens.transform({"a": [0.95], "b": [0.5]})


def test_separable_data_without_penalty_warns():
    with pytest.warns(CalibrationWarning, match="did not converge"):
        ConfidenceEnsemble.fit([0, 0, 1, 1], {"a": [0.1, 0.2, 0.8, 0.9]}, l2=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ens = ConfidenceEnsemble.fit([0, 0, 1, 1], {"a": [0.1, 0.2, 0.8, 0.9]})
    assert ens.coef[0] > 0


# ---------------------------------------------------------------------------------------
# aligning entity tables
# ---------------------------------------------------------------------------------------
def test_align_joins_on_the_key_in_any_row_order_and_matches_the_array_path():
    tables = complementary_signals(n_documents=30, seed=8)
    shuffled = tables["verbalized"].sample(frac=1.0, random_state=1)
    s = align_signals({"logprob": tables["logprob"], "verbalized": shuffled})
    assert np.array_equal(s.confidences["verbalized"],
                          tables["verbalized"]["confidence"].to_numpy())
    assert s.n_joined == len(tables["logprob"]) and s.n_excluded == 0
    a = s.report(folds=3)
    b = ensemble_report(tables["logprob"]["correct"].to_numpy(),
                        {"logprob": tables["logprob"]["confidence"].to_numpy(),
                         "verbalized": tables["verbalized"]["confidence"].to_numpy()},
                        groups=tables["logprob"]["doc_id"].to_numpy(), folds=3)
    pd.testing.assert_frame_equal(a.table, b.table)


def _two_tables():
    t = complementary_signals(n_documents=6, seed=9)
    return t["logprob"], t["verbalized"]


def test_unaligned_keys_are_an_error_naming_the_first_and_counting():
    lp, vb = _two_tables()
    item = vb.index[vb["field"] == "LineItems.Rate"][0]
    with pytest.raises(ValidationError, match=(
            r"3 of \d+ keys could not be joined: 'logprob' lacks 1, 'verbalized' lacks 2; "
            r"first doc_id='doc-0000', field='Agency', truth_index=<NA>, pred_index=<NA>, "
            r"in \['logprob'\] only")) as info:
        align_signals({"logprob": lp.drop(index=[5]), "verbalized": vb.drop(index=[0, item])})
    assert info.value.doc_id == "doc-0000" and info.value.field == "Agency"


def test_repeated_key_is_an_error():
    lp, vb = _two_tables()
    with pytest.raises(ValidationError, match=r"tables\['verbalized'\] must hold one row per "
                       r"key .*found 1 keys repeated, first doc_id='doc-0000', "
                       r"field='Advertiser'.*\(2 rows\)"):
        align_signals({"logprob": lp, "verbalized": pd.concat([vb, vb.iloc[[1]]])})


def test_different_extractions_are_an_error():
    lp, vb = _two_tables()
    flipped = vb.copy()
    flipped.loc[3, "correct"] = not flipped.loc[3, "correct"]
    with pytest.raises(ValidationError, match=r"same extraction; 'correct' differs between "
                       r"'logprob' and 'verbalized' on 1 keys, first doc_id='doc-0000', "
                       r"field='AgencyCommission'") as info:
        align_signals({"logprob": lp, "verbalized": flipped})
    assert info.value.field == "AgencyCommission"
    other = vb.copy()
    other.loc[2, "prediction"] = "something else"
    with pytest.raises(ValidationError, match=r"'prediction' differs .* \('value-2' and "
                       r"'something else'\)"):
        align_signals({"logprob": lp, "verbalized": other})
    # without a prediction column in every table, only correct is compared
    align_signals({"logprob": lp, "verbalized": other.drop(columns="prediction")})


def test_rows_without_a_confidence_are_left_out_and_counted():
    lp, vb = _two_tables()
    lp, vb = lp.copy(), vb.copy()
    lp.loc[[0, 1], "confidence"] = np.nan
    vb.loc[[1, 4, 7], "confidence"] = None
    s = align_signals({"logprob": lp, "verbalized": vb})
    assert dict(s.n_without_confidence) == {"logprob": 2, "verbalized": 3}
    assert s.n_excluded == 4 and s.n_joined == len(lp) == len(s.correct) + 4
    assert 0 not in s.keys.index.tolist() or len(s.keys) == len(s.correct)


def test_confidence_out_of_range_names_the_key():
    lp, vb = _two_tables()
    vb = vb.copy()
    vb.loc[4, "confidence"] = 1.5
    with pytest.raises(ValidationError, match=r"tables\['verbalized'\]\['confidence'\] must be "
                       r"within \[0, 1\] or missing \(NaN\); found 1 values outside, first 1.5 "
                       r"at doc_id='doc-0000', field='NetAmountDue'"):
        align_signals({"logprob": lp, "verbalized": vb})


def test_missing_key_values_match_whatever_their_spelling():
    # <NA> in an Int64 column, None and NaN in object columns are one "no item"
    lp, vb = _two_tables()
    vb = vb.copy()
    vb["truth_index"] = vb["truth_index"].astype(object).where(vb["truth_index"].notna(), None)
    vb["pred_index"] = vb["pred_index"].astype("float64")
    vb["field"] = vb["field"].astype(str)  # not categorical
    s = align_signals({"logprob": lp, "verbalized": vb})
    assert s.n_joined == len(lp)


def test_extraction_results_from_two_strategies():
    truth = {"inv-1": {"Agency": "ACME Media", "GrossTotal": "100.00",
                       "LineItems": [{"Rate": "40"}, {"Rate": "60"}]},
             "inv-2": {"Agency": "Blue Sky", "GrossTotal": "250.00",
                       "LineItems": [{"Rate": "250"}]}}
    values = {"inv-1": {"Agency": "ACME Media", "GrossTotal": "101.00",
                        "LineItems": [{"Rate": "40"}, {"Rate": "66"}]},
              "inv-2": {"Agency": "Blue Sky", "GrossTotal": "250",
                        "LineItems": [{"Rate": "250"}]}}

    def with_conf(conf):
        def leaf(v, c):
            return {"value": v, "confidence": c}
        out = {}
        for doc, d in values.items():
            out[doc] = {"Agency": leaf(d["Agency"], conf), "GrossTotal": leaf(d["GrossTotal"],
                                                                              conf / 2),
                        "LineItems": [{"Rate": leaf(i["Rate"], conf)} for i in d["LineItems"]]}
        return out

    a = score_documents(FCC_INVOICE, truth, with_conf(0.9))
    b = score_documents(FCC_INVOICE, truth, with_conf(0.6))
    s = align_signals({"logprob": a, "verbalized": b})
    keep = a.entities["confidence"].notna()
    assert len(s.correct) == int(keep.sum())
    assert s.n_excluded == int((~keep).sum())  # rows without a confidence (no prediction)
    assert s.confidences["verbalized"] == pytest.approx(
        a.entities["confidence"][keep].to_numpy() * 0.6 / 0.9)
    assert list(s.keys.columns) == list(ENTITY_KEY)


@pytest.mark.parametrize("tables, match", [
    ([], r"tables must be a mapping of strategy name -> entity table"),
    ({"a": pd.DataFrame()}, r"tables must hold at least 2 entity tables; found 1"),
    ({"a": 1, "b": 2}, r"tables\['a'\] must be an entity table \(a DataFrame\) or an "
                       r"ExtractionResult; found int"),
    ({"ensemble": pd.DataFrame(), "b": pd.DataFrame()}, r"must not name a strategy 'ensemble'"),
    ({"a": pd.DataFrame({"doc_id": [1]}), "b": pd.DataFrame()},
     r"tables\['a'\] must have the columns .* found \['field', 'truth_index', 'pred_index', "
     r"'correct', 'confidence'\] missing"),
])
def test_align_errors(tables, match):
    with pytest.raises(ValidationError, match=match):
        align_signals(tables)


def test_align_key_and_weight_options():
    lp, vb = _two_tables()
    lp = lp.assign(weight=np.arange(len(lp), dtype=float) + 1)
    s = align_signals({"logprob": lp, "verbalized": vb}, weight="weight")
    assert np.array_equal(s.sample_weight, lp["weight"].to_numpy())
    with pytest.raises(ValidationError, match=r"must have the weight column 'w'"):
        align_signals({"logprob": lp, "verbalized": vb}, weight="w")
    with pytest.raises(ValidationError, match=r"key must be a non-empty sequence"):
        align_signals({"logprob": lp, "verbalized": vb}, key="doc_id")
    with pytest.raises(ValidationError, match=r"must hold one row per key \('doc_id',\)"):
        align_signals({"logprob": lp, "verbalized": vb}, key=["doc_id"])


def test_align_checks_each_argument_and_column():
    # one case per rule align_signals checks before it joins or after: the ``by`` column, the
    # strategy names, the confidence dtype, rows every strategy scores, the weight dtype
    lp, vb = _two_tables()
    with pytest.raises(ValidationError, match=r"by must be a column name \(a string\); found 3"):
        align_signals({"logprob": lp, "verbalized": vb}, by=3)
    with pytest.raises(ValidationError, match=r"tables must be keyed by non-empty strings; "
                                              r"found ''"):
        align_signals({"logprob": lp, "": vb})
    with pytest.raises(ValidationError, match=r"tables\['verbalized'\]\['confidence'\] must be "
                                              r"numbers within \[0, 1\] or missing \(NaN\); "
                                              r"found dtype object"):
        align_signals({"logprob": lp, "verbalized": vb.assign(
            confidence=pd.Series("high", index=vb.index, dtype=object))})
    # logprob scores only the even rows, verbalized only the odd ones: no row has both
    even = lp.assign(confidence=lp["confidence"].where(lp.index % 2 == 0))
    odd = vb.assign(confidence=vb["confidence"].where(vb.index % 2 == 1))
    with pytest.raises(ValidationError, match=rf"tables must share rows where every strategy "
                                              rf"gives a confidence; found none of {len(lp)} "
                                              rf"joined rows"):
        align_signals({"logprob": even, "verbalized": odd})
    with pytest.raises(ValidationError, match=r"tables\['logprob'\]\['flag'\] must be "
                                              r"non-negative numbers; found dtype bool"):
        align_signals({"logprob": lp.assign(flag=True), "verbalized": vb}, weight="flag")


# ---------------------------------------------------------------------------------------
# argument errors
# ---------------------------------------------------------------------------------------
Y = [1, 0, 1, 0, 1, 0]
C = {"a": [0.9, 0.2, 0.8, 0.3, 0.7, 0.4], "b": [0.6, 0.5, 0.7, 0.4, 0.6, 0.5]}
G = ["x", "x", "y", "y", "z", "z"]


@pytest.mark.parametrize("kwargs, match", [
    ({"folds": 4}, r"folds must be at most the number of documents \(distinct groups\) \(3\); "
                   r"found 4"),
    ({"folds": 1}, r"folds must be an integer >= 2; found 1"),
    ({"eps": 0.5}, r"eps must be a number in \(0, 0.5\); found 0.5"),
    ({"eps": {"c": 0.1}}, r"eps must name only the signals \['a', 'b'\]; found \['c'\]"),
    ({"eps": {"a": -1}}, r"eps\['a'\] must be a number in \(0, 0.5\); found -1"),
    ({"l2": -1.0}, r"l2 must be a finite number >= 0; found -1.0"),
    ({"seed": -1}, r"seed"),
    ({"groups": ["x"] * 5}, r"groups must have one id per prediction \(6\); found 5"),
    ({"groups": ["x", None, "y", "y", "z", "z"]}, r"groups must not contain missing ids"),
    ({"sample_weight": [1, 1, 1, 1, 1, -1]}, r"sample_weight must be finite and >= 0"),
    ({"confidences": [0.1] * 6}, r"confidences must be a mapping of signal name -> "
                                 r"confidence array"),
    ({"confidences": {"a": [0.1] * 5}}, r"correct and confidences\['a'\] must have the "
                                        r"same length; correct has 6 and confidences\['a'\] "
                                        r"has 5"),
    ({"confidences": {"a": [0.1] * 5 + [float("nan")]}},
     r"confidences\['a'\] must be finite and within \[0, 1\]; found 1 value breaking it, "
     r"first at index 5"),
    ({"confidences": {"ensemble": [0.1] * 6}}, r"must not name a signal 'ensemble'"),
    ({"confidences": {"": [0.1] * 6}}, r"confidences must be keyed by non-empty strings"),
])
def test_cross_fit_errors(kwargs, match):
    args = {"groups": G, "confidences": C, **kwargs}
    confidences = args.pop("confidences")
    with pytest.raises(ValidationError, match=match):
        cross_fit_ensemble(Y, confidences, **args)


def test_a_fold_with_one_class_is_named():
    # documents x (two right), y (two right), z (two wrong): the rows outside z's fold
    # are all right
    with pytest.raises(ValidationError, match=r"fitting fold \d of 3: the rows outside fold "
                       r"\d must hold correct and incorrect predictions .*found no incorrect "
                       r"prediction among 4 rows"):
        cross_fit_ensemble([1, 1, 1, 1, 0, 0], C, groups=G, folds=3)


def test_report_needs_two_signals_and_checks_its_options():
    with pytest.raises(ValidationError, match=r"confidences must hold at least 2 signals; "
                       r"found 1"):
        ensemble_report(Y, {"a": C["a"]}, groups=G, folds=2)
    with pytest.raises(ValidationError, match=r"budgets\[0\] must be a number in \(0, 1\]"):
        ensemble_report(Y, C, groups=G, folds=2, budgets=[0])
    with pytest.raises(ValidationError, match=r"binning must be one of"):
        ensemble_report(Y, C, groups=G, folds=2, binning="equal")
    with pytest.raises(ValidationError, match=r"n_resamples must be an integer >= 0"):
        ensemble_report(Y, C, groups=G, folds=2, n_resamples=-1)


def test_groups_none_makes_every_row_its_own_document():
    cf = cross_fit_ensemble(Y, C, groups=None, folds=3)
    assert sorted(len(g) for g in cf.fold_groups) == [2, 2, 2]
    with pytest.raises(TypeError, match="groups"):
        cross_fit_ensemble(Y, C)  # groups is required: grouping is never implicit


def test_fitted_ensemble_checks_its_fields_and_inputs():
    with pytest.raises(ValidationError, match=r"coef must hold one finite number per name"):
        ConfidenceEnsemble(names=("a", "b"), coef=(1.0,), intercept=0.0)
    with pytest.raises(ValidationError, match=r"names must not repeat a signal"):
        ConfidenceEnsemble(names=("a", "a"), coef=(1.0, 1.0), intercept=0.0)
    with pytest.raises(ValidationError, match=r"intercept must be a finite number"):
        ConfidenceEnsemble(names=("a",), coef=(1.0,), intercept=math.inf)
    ens = ConfidenceEnsemble(names=("a", "b"), coef=(1.0, 2.0), intercept=0.0,
                             eps={"b": 0.01})
    assert ens.eps == (DEFAULT_EPS, 0.01) and dict(ens.eps_by_signal) == {"a": DEFAULT_EPS,
                                                                          "b": 0.01}
    with pytest.raises(ValidationError, match=r"confidences must hold exactly the signals "
                       r"\['a', 'b'\]; found \['b'\] missing and \['c'\] not fitted"):
        ens.transform({"a": [0.5], "c": [0.5]})
    with pytest.raises(ValidationError, match=r"must be finite and within \[0, 1\]"):
        ens.transform({"a": [0.5], "b": [1.5]})
    # logit 0.5 = 0, logit 0.99 = log 99: σ(2·log 99) = 99² / (99² + 1)
    assert ens.transform({"a": [0.5], "b": [1.0]})[0] == pytest.approx(9801 / 9802,
                                                                       rel=1e-12)


def test_report_value_and_frame():
    y, a, b = _toy()
    rep = ensemble_report(y, {"a": a, "b": b}, groups=np.arange(20) % 4, folds=2)
    assert rep.to_frame() is not rep.table and rep.to_frame().equals(rep.table)
    assert rep.table["method"].tolist() == ["raw", "raw", "recalibrated", "recalibrated",
                                            "stacked"]
    with pytest.raises(ValidationError, match=r"metric and signal must name"):
        rep.value("auroc", "c")


# ---------------------------------------------------------------------------------------
# documentation
# ---------------------------------------------------------------------------------------
def test_api_reference_lists_every_name():
    import confcal.calibration.ensemble as module

    text = (ROOT / "docs" / "api.md").read_text()
    head = "## `confcal.calibration.ensemble`"
    assert head in text
    section = text.split(head, 1)[1].split("\n## ", 1)[0]
    for name in module.__all__:
        assert f"`{name}" in section or f"`class {name}" in section or f"**{name}**" in section


def test_documented_figures_are_measured():
    # docs/calibration.md quotes the table of the generator at its defaults: recompute it
    text = (ROOT / "docs" / "calibration.md").read_text()
    section = text.split("\n## An ensemble of confidence signals\n", 1)[1]
    s = align_signals(complementary_signals(seed=0))
    for label, eps in (("default eps", DEFAULT_EPS), ("eps={'verbalized': 0.01}",
                                                      {"verbalized": 0.01})):
        table = s.report(eps=eps).table
        block = section.split(f"<!-- {label} -->", 1)[1].split("\n\n", 1)[0]
        rows = [line for line in block.splitlines() if line.startswith("| ")
                and not line.startswith("| signal")]
        assert len(rows) == len(table)
        for line, (_, r) in zip(rows, table.iterrows(), strict=True):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert cells[:2] == [r["signal"], r["method"]]
            expected = [f"{r[m]:.3f}" for m in ("auroc", "ece", "brier", "ecarb@0.1",
                                                 "ecarb@0.3")]
            assert cells[2:7] == expected, (label, line)
    assert re.search(r"python -m confcal\.calibration\.ensemble", section)


def test_documented_example_runs():
    import doctest

    text = (ROOT / "docs" / "calibration.md").read_text()
    section = text.split("\n## An ensemble of confidence signals\n", 1)[1]
    blocks = re.findall(r"```pycon\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1
    test = doctest.DocTestParser().get_doctest(blocks[0], {}, "calibration.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries == 6


def test_the_module_prints_the_documented_tables():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "confcal.calibration.ensemble",
                          "--documents", "40"], capture_output=True, text=True, check=True,
                         timeout=120)
    assert out.stdout.count("| ensemble | stacked |") == 2 and out.stderr == ""


def test_pandas_signals_are_matched_by_label():
    # correct, two signals, weights and documents as Series, the later ones shuffled: the fit
    # and the cross-fitted report are those of the aligned arrays
    rng = np.random.default_rng(5)
    n = 120
    a, b = rng.uniform(size=n), rng.uniform(size=n)
    y = rng.uniform(size=n) < (a + b) / 2
    w = rng.uniform(0.5, 2.0, size=n)
    docs = np.repeat(np.arange(30), 4)
    labels = [f"r{i}" for i in range(n)]
    perm = rng.permutation(n)

    def series(values, order=None):
        s = pd.Series(values, index=labels)
        return s if order is None else s.iloc[order]

    fitted = ConfidenceEnsemble.fit(series(y), {"a": series(a, perm), "b": series(b, perm[::-1])},
                                    sample_weight=series(w, perm))
    plain = ConfidenceEnsemble.fit(y, {"a": a, "b": b}, sample_weight=w)
    assert fitted.coef == plain.coef and fitted.intercept == plain.intercept
    shuffled = cross_fit_ensemble(series(y), {"a": series(a, perm), "b": series(b)},
                                  groups=series(docs, perm[::-1]), folds=3, seed=1)
    aligned = cross_fit_ensemble(y, {"a": a, "b": b}, groups=docs, folds=3, seed=1)
    np.testing.assert_array_equal(shuffled.confidence, aligned.confidence)
    with pytest.raises(ValidationError, match=r"correct and confidences\['a'\] must have the "
                                              r"same index labels"):
        ConfidenceEnsemble.fit(series(y), {"a": pd.Series(a)})
