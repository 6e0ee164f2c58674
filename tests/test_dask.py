"""confcal.dask on a real two-process LocalCluster: same answers as one machine, and after
a worker is killed mid-computation."""

from __future__ import annotations

import json
import math
import os
import signal
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest

import confcal
from _optional import need_module
from confcal import dask as cdask
from confcal.datasets import load_demo
from confcal.exceptions import ValidationError
from confcal.report import compare_runs
from confcal.scoring import score_documents
from confcal.scoring.presets import FCC_INVOICE

dask = need_module("dask")
db = need_module("dask.bag")
dd = need_module("dask.dataframe")
distributed = need_module("distributed")

BUDGETS = (0.1, 0.3)


@pytest.fixture(scope="module")
def client() -> Any:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture(scope="module")
def corpus() -> Any:
    return load_demo()


def _lines(docs: dict[str, Any]) -> list[str]:
    return [json.dumps({"doc_id": d, "document": doc}) for d, doc in docs.items()]


def _assert_reports_equal(a: Any, b: Any) -> None:
    assert (a.n, a.n_errors) == (b.n, b.n_errors)
    for name in ("accuracy", "auroc", "ece", "mce", "brier"):
        assert abs(getattr(a, name) - getattr(b, name)) <= 1e-12, name
    for budget in BUDGETS:
        assert abs(a.ecarb[budget] - b.ecarb[budget]) <= 1e-12
    pd.testing.assert_frame_equal(a.bins, b.bins, rtol=0, atol=1e-12)


def test_score_and_report_equal_single_machine(client: Any, corpus: Any) -> None:
    run = corpus.run("sim-logprob", "high")
    preds = dict(run.predictions)
    del preds[next(iter(preds))]  # a truth document without prediction: scored as missing
    truths = db.from_sequence(_lines(corpus.truths), npartitions=4)
    predictions = db.from_sequence(_lines(preds), npartitions=3)
    ddf = cdask.score(FCC_INVOICE, truths, predictions)
    local = score_documents(FCC_INVOICE, corpus.truths, preds)
    got = ddf.compute().sort_values(["doc_id"], kind="stable", ignore_index=True)
    want = local.entities.sort_values(["doc_id"], kind="stable", ignore_index=True)
    assert len(got) == len(want)
    for column in ("field", "outcome"):
        assert got[column].astype(str).tolist() == want[column].astype(str).tolist()
    assert got["correct"].tolist() == want["correct"].tolist()
    np.testing.assert_array_equal(got["confidence"].to_numpy(), want["confidence"].to_numpy())
    np.testing.assert_allclose(got["similarity"], want["similarity"], rtol=0, atol=1e-12)

    correct, confidence, _ = local.to_calibration()
    _assert_reports_equal(cdask.dask_calibration_report(ddf, budgets=BUDGETS, split_every=2),
                          confcal.calibration_report(correct, confidence, budgets=BUDGETS))


def test_grouped_report_and_table(client: Any, corpus: Any) -> None:
    entities = corpus.score(tiers=["clean", "high"]).entities
    ddf = dd.from_pandas(entities, npartitions=7)
    reports = cdask.dask_calibration_reports(ddf, by=["model", "tier"], budgets=BUDGETS)
    assert len(reports) == 8
    whole = cdask.dask_calibration_reports(ddf, budgets=BUDGETS)
    assert list(whole) == [()]  # one type whatever `by` is: () keys the whole table
    _assert_reports_equal(whole[()], cdask.dask_calibration_report(ddf, budgets=BUDGETS))
    for (model, tier), rep in reports.items():
        group = entities[(entities["model"] == model) & (entities["tier"] == tier)]
        has = group["confidence"].notna()
        _assert_reports_equal(rep, confcal.calibration_report(
            group["correct"][has], group["confidence"][has], budgets=BUDGETS))
    got = cdask.dask_compare_runs(ddf, by=["model", "tier"], budgets=BUDGETS)
    want = compare_runs(entities, by=["model", "tier"], budgets=BUDGETS)
    got = got.sort_values(["model", "tier"], ignore_index=True)
    want = want.sort_values(["model", "tier"], ignore_index=True)
    for column in want.columns:
        if pd.api.types.is_float_dtype(want[column]):
            assert (got[column] - want[column]).abs().max() <= 1e-12, column
        else:
            assert got[column].tolist() == want[column].tolist(), column


def test_killed_worker_is_retried_with_the_same_answer(client: Any, corpus: Any) -> None:
    entities = corpus.score(tiers=["high"]).entities
    correct = entities["correct"].to_numpy()[entities["confidence"].notna().to_numpy()]
    confidence = entities["confidence"].dropna().to_numpy()
    want = confcal.calibration_report(correct, confidence, budgets=BUDGETS)

    def slow(part: pd.DataFrame) -> pd.DataFrame:
        time.sleep(0.3)  # keeps tasks running long enough to kill a worker among them
        return part

    ddf = dd.from_pandas(entities, npartitions=24).map_partitions(slow)
    pids = client.run(os.getpid)
    started = time.monotonic()
    future = client.submit(cdask.dask_calibration_report, ddf, budgets=BUDGETS, pure=False)
    # wait until work is running on a worker, then kill that worker's process outright
    victim = None
    while victim is None and time.monotonic() - started < 60:
        busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
        victim = busy[0] if busy else None
        time.sleep(0.05)
    assert victim is not None, "no task was seen running within 60 s"
    os.kill(pids[victim], signal.SIGKILL)
    got = future.result(timeout=180)
    assert not future.cancelled()
    _assert_reports_equal(got, want)
    # the nanny restarted the worker: the cluster is whole again
    client.wait_for_workers(2, timeout=60)


def test_invalid_inputs(corpus: Any) -> None:
    truths = db.from_sequence(_lines({"a": {}, "b": {}}) + _lines({"a": {}}), npartitions=2)
    preds = db.from_sequence(_lines({"a": {}}), npartitions=1)
    with pytest.raises(ValidationError, match=r"truths must not repeat a doc id; found 1 "
                                              r"repeated, first 'a' \(2 times\)"):
        cdask.score(FCC_INVOICE, truths, preds)
    truths = db.from_sequence(_lines({"a": {}}), npartitions=1)
    stray = db.from_sequence(_lines({"a": {}, "zz": {}}), npartitions=1)
    with pytest.raises(ValidationError, match=r"found 1 absent from truths, first 'zz'"):
        cdask.score(FCC_INVOICE, truths, stray)
    with pytest.raises(ValidationError, match=r"truths must be a dask Bag .* found list"):
        cdask.score(FCC_INVOICE, [1], preds)
    with pytest.raises(ValidationError, match=r"ddf must be a dask DataFrame"):
        cdask.dask_calibration_report(pd.DataFrame())
    with pytest.raises(ValidationError, match=r"split_every must be an integer >= 2; found 1"):
        cdask.dask_calibration_report(dd.from_pandas(pd.DataFrame(
            {"correct": [True], "confidence": [0.5]}), npartitions=1), split_every=1)
    bad = db.from_sequence(["not json"], npartitions=1)
    with pytest.raises(ValidationError, match=r"truths lines must be valid JSON"):
        cdask.score(FCC_INVOICE, bad, preds)


def _weighted_frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 2, size=n)
    frame = pd.DataFrame({"correct": rng.uniform(size=n) < conf, "confidence": conf,
                          "w": rng.integers(0, 4, size=n).astype(float),
                          "model": rng.choice(["a", "b"], size=n)})
    frame.loc[frame.index[:400], "w"] = 0.0  # the first partition carries no weight
    frame.loc[frame.index[::7], "confidence"] = np.nan  # rows without a confidence
    return frame


def test_weighted_reports_equal_the_in_memory_weighted_report(client: Any) -> None:
    frame = _weighted_frame()
    ddf = dd.from_pandas(frame, npartitions=7)
    has = frame["confidence"].notna()
    want = confcal.calibration_report(frame["correct"][has], frame["confidence"][has],
                                      sample_weight=frame["w"][has], budgets=BUDGETS)
    for weight in ("w", ddf["w"]):
        got = cdask.dask_calibration_report(ddf, sample_weight=weight, budgets=BUDGETS)
        _assert_reports_equal(got, want)
        # whole-number weights: AUROC and ECARB bit for bit
        assert got.auroc == want.auroc and dict(got.ecarb) == dict(want.ecarb)
    grouped = cdask.dask_calibration_reports(ddf, by="model", sample_weight="w",
                                             budgets=BUDGETS)
    for (model,), got in grouped.items():
        part = frame[has & (frame["model"] == model)]
        _assert_reports_equal(got, confcal.calibration_report(
            part["correct"], part["confidence"], sample_weight=part["w"], budgets=BUDGETS))


def test_float_confidences_on_the_cluster_equal_the_in_memory_report(client: Any) -> None:
    frame = _weighted_frame(seed=1).dropna()
    ddf = dd.from_pandas(frame, npartitions=9)
    got = cdask.dask_calibration_report(ddf, budgets=BUDGETS)
    want = confcal.calibration_report(frame["correct"], frame["confidence"], budgets=BUDGETS)
    _assert_reports_equal(got, want)
    assert got.auroc == want.auroc and dict(got.ecarb) == dict(want.ecarb)


def test_empty_and_weightless_partitions(client: Any) -> None:
    frame = _weighted_frame(seed=2)
    empty = frame.iloc[:0]
    ddf = dd.from_pandas(frame, npartitions=3)
    ddf = dd.concat([dd.from_pandas(empty, npartitions=1), ddf,
                     dd.from_pandas(empty, npartitions=1)])
    has = frame["confidence"].notna()
    want = confcal.calibration_report(frame["correct"][has], frame["confidence"][has],
                                      sample_weight=frame["w"][has], budgets=BUDGETS)
    _assert_reports_equal(cdask.dask_calibration_report(ddf, sample_weight="w",
                                                        budgets=BUDGETS), want)
    weightless = dd.from_pandas(frame.assign(w=0.0), npartitions=3)
    with pytest.warns(confcal.UndefinedMetricWarning, match=r"all carry zero weight"):
        rep = cdask.dask_calibration_report(weightless, sample_weight="w")
    assert math.isnan(rep.auroc) and rep.n == int(has.sum())


def test_dask_input_is_checked_like_arrays() -> None:
    base = pd.DataFrame({"correct": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
                         "confidence": [0.1, np.nan, 0.3, 0.4, 0.5, 0.6],
                         "w": [1.0, 1.0, 1.0, 1.0, -1.0, 1.0]})
    with dask.config.set(scheduler="sync"):
        text = base.assign(correct=["yes", "no", "no", "yes", "no", "no"])
        with pytest.raises(ValidationError, match=r"^ddf column 'correct' must be bool or "
                                                  r"0/1; .*first in partition 0 at row 0 "
                                                  r"\('yes'\)"):
            cdask.dask_calibration_report(dd.from_pandas(text, npartitions=2))
        for bad in (0.5, 2.0):
            frame = base.copy()
            frame.loc[4, "correct"] = bad
            with pytest.raises(ValidationError, match=rf"^ddf column 'correct' must be bool "
                                                      rf"or 0/1; .*first in partition 1 at "
                                                      rf"row 1 \({bad}\)"):
                cdask.dask_calibration_report(dd.from_pandas(frame, npartitions=2))
        with pytest.raises(ValidationError, match=r"^ddf column 'w' must be finite and >= 0;"
                                                  r" .*first in partition 1 at row 1"):
            cdask.dask_calibration_report(dd.from_pandas(base, npartitions=2),
                                          sample_weight="w")
        with pytest.raises(ValidationError, match=r"confidence' must be finite and within "
                                                  r"\[0, 1\]; .*partition 0 at row 2 \(1.5\)"):
            cdask.dask_calibration_report(dd.from_pandas(base.assign(
                confidence=[0.1, np.nan, 1.5, 0.4, 0.5, 0.6]), npartitions=2))
        ddf = dd.from_pandas(base, npartitions=2)
        with pytest.raises(ValidationError, match=r"sample_weight must be a column of ddf"):
            cdask.dask_calibration_report(ddf, sample_weight="nope")
        with pytest.raises(ValidationError, match=r"aligned with ddf .* found a Series of 3"):
            cdask.dask_calibration_report(
                ddf, sample_weight=dd.from_pandas(base["w"], npartitions=3))
        with pytest.raises(ValidationError, match=r"a column name or a dask Series; found list"):
            cdask.dask_calibration_report(ddf, sample_weight=[1.0] * 6)
        nothing = dd.from_pandas(base.assign(confidence=np.nan), npartitions=2)
        with pytest.raises(ValidationError, match=r"at least one row with a confidence"):
            cdask.dask_calibration_report(nothing)


def test_a_weight_series_must_hold_the_rows_of_each_partition() -> None:
    base = pd.DataFrame({"correct": [1, 0, 1, 1, 0, 1],
                         "confidence": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                         "w": [1.0, 2.0, 3.0, 1.0, 0.0, 3.0]})
    ddf = dd.from_pandas(base, npartitions=2)  # divisions (0, 3, 5)
    want = confcal.calibration_report(base["correct"], base["confidence"],
                                      sample_weight=base["w"], budgets=BUDGETS)
    with dask.config.set(scheduler="sync"):
        # a Series from ddf's own columns, with known or unknown divisions, pairs as is
        for frame in (ddf, ddf.clear_divisions()):
            for weight in (frame["w"], frame["w"] * 1.0):
                got = cdask.dask_calibration_report(frame, sample_weight=weight,
                                                    budgets=BUDGETS)
                _assert_reports_equal(got, want)
                # the zero-weight row counts in n, as in calibration_report
                assert (got.n, got.n_errors) == (want.n, want.n_errors) == (6, 2)
        ones = pd.Series(np.ones(6))
        # the same partition count, other divisions: named eagerly, not Dask's own error
        other = dd.from_pandas(ones, chunksize=5)  # divisions (0, 5, 5)
        with pytest.raises(ValidationError, match=r"^sample_weight must be aligned with ddf "
                                                  r"\(the same divisions.*found divisions "
                                                  r"\(0, 5, 5\), ddf has \(0, 3, 5\)"):
            cdask.dask_calibration_report(ddf, sample_weight=other)
        # unknown divisions on one side: the partition that holds other rows is named
        with pytest.raises(ValidationError, match=r"^sample_weight must be aligned with ddf "
                                                  r".*found 5 rows in partition 0, ddf has 3"):
            cdask.dask_calibration_report(ddf, sample_weight=other.clear_divisions())
        # text labels (Dask raised TypeError) and shifted labels (NaN weights before)
        for index, label in ((list("abcdef"), "'a'"), (range(3, 9), "3")):
            series = dd.from_pandas(pd.Series(np.ones(6), index=index), npartitions=2)
            with pytest.raises(ValidationError, match=r"^sample_weight must be aligned"):
                cdask.dask_calibration_report(ddf, sample_weight=series)
            with pytest.raises(ValidationError, match=rf"same index, in the same order\); "
                                                      rf"found index {label} in partition 0 "
                                                      rf"at row 0, where ddf has 0"):
                cdask.dask_calibration_report(ddf.clear_divisions(),
                                              sample_weight=series.clear_divisions())
        # repeated labels (pandas raised "cannot reindex" inside Dask)
        repeated = dd.from_pandas(pd.Series(np.ones(6), index=[0, 0, 1, 1, 2, 2]),
                                  npartitions=2)
        with pytest.raises(ValidationError, match=r"^sample_weight must be aligned"):
            cdask.dask_calibration_report(ddf.clear_divisions(),
                                          sample_weight=repeated.clear_divisions())
def test_score_refuses_empty_predictions_as_in_memory(client: Any) -> None:
    docs = {"a": {"Agency": "ACME", "GrossTotal": "$10.00"}, "b": {"Agency": "GMMB"}}
    truths = db.from_sequence(_lines(docs), npartitions=2)
    none = db.from_sequence([], npartitions=1)
    with pytest.raises(ValidationError) as on_dask:
        cdask.score(FCC_INVOICE, truths, none)
    with pytest.raises(ValidationError) as in_memory:
        score_documents(FCC_INVOICE, docs, {})
    assert str(on_dask.value) == str(in_memory.value)
    assert str(on_dask.value).startswith("predictions must contain at least one document; "
                                         "found 0 (for 2 truth documents)")
    assert on_dask.value.option == in_memory.value.option == ("allow_empty", True)
    # allowed: every truth document scored as all-missing, the rows of the in-memory call
    table = cdask.score(FCC_INVOICE, truths, none, allow_empty=True).compute()
    local = score_documents(FCC_INVOICE, docs, {}, allow_empty=True).entities
    for column in ("doc_id", "field", "outcome", "correct"):
        assert table[column].astype(str).tolist() == local[column].astype(str).tolist()
    assert set(table["outcome"].astype(str)) == {"FN", "TN"}
    with pytest.raises(ValidationError, match="allow_empty must be True or False; found 1"):
        cdask.score(FCC_INVOICE, truths, none, allow_empty=1)
