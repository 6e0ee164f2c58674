"""Streaming scoring: score_documents_iter, iter_documents, and `confcal score` in chunks."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from confcal.cli import _main as cli
from confcal.datasets import load_demo
from confcal.exceptions import ValidationError
from confcal.report import (
    RunSummary,
    compare_runs,
    compare_runs_sketched,
    merge_summaries,
    summarize_runs,
)
from confcal.scoring import score_documents, score_documents_iter
from confcal.scoring._documents import paired_documents
from confcal.scoring.comparators import Text
from confcal.scoring.io import (
    iter_documents,
    iter_entities,
    read_entities,
    write_entities,
)
from confcal.scoring.presets import FCC_INVOICE
from confcal.scoring.schema import Field, Schema

AGENCY = Schema({"Agency": Field(Text())})


@pytest.fixture(scope="module")
def demo_run() -> tuple[dict[str, Any], dict[str, Any]]:
    corpus = load_demo()
    run = corpus.run("sim-logprob", "high")
    return dict(corpus.truths), dict(run.predictions)


def _stream(truths: dict[str, Any], preds: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    return [(d, t, preds.get(d)) for d, t in truths.items()]


# ------------------------------------------------------------------ score_documents_iter
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_chunks_concatenate_to_the_whole_table(demo_run: Any, chunk_size: int) -> None:
    truths, preds = demo_run[0], dict(demo_run[1])
    del preds[next(iter(preds))]  # one document without prediction: counted in both
    whole = score_documents(FCC_INVOICE, truths, preds)
    chunks = list(score_documents_iter(FCC_INVOICE, _stream(truths, preds),
                                       chunk_size=chunk_size))
    assert len(chunks) == -(-len(truths) // chunk_size)
    stacked = pd.concat([c.entities for c in chunks], ignore_index=True)
    pd.testing.assert_frame_equal(stacked, whole.entities)
    counts: dict[str, int] = {}
    for c in chunks:
        for k, v in c.counts.items():
            counts[k] = counts.get(k, 0) + v
    assert counts == whole.counts
    assert counts["docs_missing_prediction"] == 1


def test_stream_is_consumed_lazily() -> None:
    pulled = []

    def source() -> Any:
        for i in range(10):
            pulled.append(i)
            yield f"d{i}", {"Agency": "A"}, None

    stream = score_documents_iter(AGENCY, source(), chunk_size=3)
    first = next(stream)
    assert len(first.entities) == 3 and pulled == [0, 1, 2]


def test_repeated_id_across_chunks_names_both_positions() -> None:
    stream = [("a", {}, None), ("b", {}, None), ("c", {}, None), ("a", {}, None)]
    it = score_documents_iter(AGENCY, stream, chunk_size=2)
    next(it)  # the first chunk is fine; the repeat is in the second
    with pytest.raises(ValidationError, match=r"repeat a doc id; found 'a' at positions 0 and 3"):
        next(it)


def test_metadata_mapping_and_callable() -> None:
    stream = [("a", {"Agency": "X"}, None), ("b", {"Agency": "Y"}, None)]
    by_map = pd.concat([c.entities for c in score_documents_iter(
        AGENCY, stream, chunk_size=1, metadata={"a": {"model": "m1"}, "b": {"model": "m2"}},
        allow_empty=True)])
    assert by_map["model"].tolist() == ["m1", "m2"]
    by_call = pd.concat([c.entities for c in score_documents_iter(
        AGENCY, stream, chunk_size=1, metadata=lambda d: {"model": d.upper()},
        allow_empty=True)])
    assert by_call["model"].tolist() == ["A", "B"]
    with pytest.raises(ValidationError, match=r"metadata doc ids must be doc ids of pairs; "
                                              r"found 1 absent from pairs, first 'zz'"):
        list(score_documents_iter(AGENCY, stream, metadata={"zz": {"model": "m"}},
                                  allow_empty=True))


@pytest.mark.parametrize("bad, match", [
    ({"pairs": []}, r"pairs must contain at least one document; found 0"),
    ({"pairs": [("a", {})]}, r"triples; found tuple \('a', \{\}\) at position 0"),
    ({"pairs": [(None, {}, None)]}, r"must not be missing; found None at position 0"),
    ({"pairs": [(["x"], {}, None)]}, r"must be hashable; found \['x'\] at position 0"),
    ({"pairs": [("a", {}, None)], "chunk_size": 0}, r"chunk_size must be an integer >= 1; found 0"),
    ({"pairs": "abc"}, r"pairs must be an iterable of .* found str"),
])
def test_invalid_streams_raise(bad: dict[str, Any], match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        list(score_documents_iter(AGENCY, **bad))


def test_strict_raises_for_a_missing_prediction() -> None:
    with pytest.raises(ValidationError, match=r"doc 'a': every truth document must have a "
                                              r"prediction \(strict=True\)"):
        list(score_documents_iter(AGENCY, [("a", {"Agency": "X"}, None)], strict=True))


# ------------------------------------------------------------------------- JSONL reading
def _write_jsonl(path: Path, records: list[tuple[Any, Any]]) -> Path:
    text = "".join(json.dumps({"doc_id": d, "document": doc}) + "\n" for d, doc in records)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_iter_documents_yields_before_a_later_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"doc_id": "a", "document": {}}\n{"doc_id": "b", "document": {}}\nnope\n')
    it = iter_documents(path)
    assert next(it) == ("a", {}) and next(it) == ("b", {})
    with pytest.raises(ValidationError, match=r"t.jsonl, line 3: must be valid JSON"):
        next(it)


@pytest.mark.parametrize("order", ["same", "shuffled", "missing"])
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", "folder"])
def test_pairing_any_order(tmp_path: Path, demo_run: Any, order: str, suffix: str) -> None:
    truths, preds = demo_run
    records = list(preds.items())
    if order == "shuffled":
        random.Random(0).shuffle(records)
    elif order == "missing":
        records = records[:3] + records[5:]  # two absent: scored as missing, not an error
    truth_path = _write_jsonl(tmp_path / "truth.jsonl", list(truths.items()))
    if suffix == "folder":
        pred_path = tmp_path / "preds"
        pred_path.mkdir()
        for d, doc in records:
            (pred_path / f"{d}.json").write_text(json.dumps(doc))
    else:
        pred_path = _write_jsonl(tmp_path / f"pred{suffix}", records)
    got = list(paired_documents(truth_path, pred_path))
    expected = dict(records)
    assert [d for d, _, _ in got] == list(truths)
    assert all(t == truths[d] and p == expected.get(d) for d, t, p in got)


@pytest.mark.parametrize("case, match", [
    ("stray", (r"pred.jsonl, line 2: every predicted doc_id must be in the truth .*; found 1 "
               r"that are not, first 'zz'")),
    ("repeat", r"pred.jsonl, line 3: doc_id must be unique; found 'a' again \(first at line 1\)"),
    ("repeat_tail", r"pred.jsonl, line 3: doc_id must be unique; found 'b' again"),
])
def test_pairing_errors_name_file_and_line(tmp_path: Path, case: str, match: str) -> None:
    truth = _write_jsonl(tmp_path / "truth.jsonl", [("a", {}), ("b", {})])
    preds = {"stray": [("a", {}), ("zz", {}), ("b", {})],
             "repeat": [("a", {}), ("b", {}), ("a", {})],
             "repeat_tail": [("a", {}), ("b", {}), ("b", {})]}[case]
    pred = _write_jsonl(tmp_path / "pred.jsonl", preds)
    with pytest.raises(ValidationError, match=match):
        list(paired_documents(truth, pred))


# ------------------------------------------------------------------------------ the CLI
@pytest.mark.parametrize("out_name", ["out.parquet", "out.csv.gz"])
def test_cli_score_streams_in_row_groups(tmp_path: Path, demo_run: Any, monkeypatch: Any,
                                         capsys: Any, out_name: str) -> None:
    truths, preds = demo_run
    records = list(preds.items())
    random.Random(1).shuffle(records)  # forces the indexed path
    truth_path = _write_jsonl(tmp_path / "truth.jsonl.gz", list(truths.items()))
    pred_path = _write_jsonl(tmp_path / "pred.jsonl", records)
    monkeypatch.setattr(cli, "_STREAM_CHUNK", 10)
    out = tmp_path / out_name
    assert cli.main(["score", "--schema", "fcc-invoice", "--truth", str(truth_path),
                     "--pred", str(pred_path), "--meta", "model=m", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    whole = score_documents(FCC_INVOICE, truths, preds,
                            metadata={d: {"model": "m"} for d in truths})
    reference = tmp_path / f"ref{out_name[3:]}"
    write_entities(whole.entities, reference)
    pd.testing.assert_frame_equal(read_entities(out), read_entities(reference))
    assert f"scored {len(truths)} documents" in text
    assert f"WOA {whole.woa:.3f}, F1 {whole.f1:.3f}" in text
    if out_name.endswith(".parquet"):
        import pyarrow.parquet as pq

        assert pq.ParquetFile(out).num_row_groups == -(-len(truths) // 10)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_cli_error_leaves_nothing_and_says_where(tmp_path: Path, monkeypatch: Any,
                                                 capsys: Any) -> None:
    truth = _write_jsonl(tmp_path / "truth.jsonl", [(f"d{i}", {"Agency": "A"}) for i in range(30)])
    preds = [(f"d{i}", {"Agency": "A"}) for i in range(30)]
    preds[25] = ("d25", {"Agency": {"value": "A", "confidence": 7}})
    pred = _write_jsonl(tmp_path / "pred.jsonl", preds)
    monkeypatch.setattr(cli, "_STREAM_CHUNK", 10)
    out = tmp_path / "out.parquet"
    assert cli.main(["score", "--schema", "fcc-invoice", "--truth", str(truth),
                     "--pred", str(pred), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "doc 'd25'" in err and f"prediction at {pred}, line 26" in err
    assert list(tmp_path.glob("*out.parquet*")) == []


# ---------------------------------------------------------------- sketched reports


@pytest.fixture(scope="module")
def demo_entities() -> pd.DataFrame:
    return load_demo().score(tiers=["clean", "high"]).entities


def _assert_tables_close(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    for column in want.columns:
        if pd.api.types.is_float_dtype(want[column]):
            assert (got[column] - want[column]).abs().max() <= 1e-12, column
        else:
            assert got[column].tolist() == want[column].tolist(), column


@pytest.mark.parametrize("chunk", [997, 50_000])
def test_sketched_table_equals_compare_runs(demo_entities: pd.DataFrame, chunk: int) -> None:
    e = demo_entities
    chunks = [e.iloc[i:i + chunk] for i in range(0, len(e), chunk)]
    got = compare_runs_sketched(chunks, by=["model", "tier"], budgets=(0.1, 0.3))
    want = compare_runs(e, by=["model", "tier"], budgets=(0.1, 0.3))
    _assert_tables_close(got, want)
    # the default `by` is the metadata columns, as in compare_runs
    _assert_tables_close(compare_runs_sketched(chunks), compare_runs(e))


def test_summaries_merge_in_any_order(demo_entities: pd.DataFrame) -> None:
    e = demo_entities.sample(frac=1.0, random_state=3)
    parts = [summarize_runs(e.iloc[i::4], ["model"]) for i in range(4)]
    a = merge_summaries(merge_summaries(parts[0], parts[1]), merge_summaries(parts[2], parts[3]))
    b = merge_summaries(parts[3], parts[1], parts[2], parts[0])
    for key in a:
        assert a[key].sketch == b[key].sketch and a[key].doc_ids == b[key].doc_ids
        assert a[key].n_entities == b[key].n_entities
        ta, tb = a[key].totals, b[key].totals
        assert (ta.tp, ta.fd, ta.fa, ta.fn, ta.tn) == (tb.tp, tb.fd, tb.fa, tb.fn, tb.tn)
        assert ta.weight == pytest.approx(tb.weight, rel=1e-12)
        assert ta.weighted_similarity == pytest.approx(tb.weighted_similarity, rel=1e-12)
    with pytest.raises(ValidationError, match="other must be a RunSummary; found int"):
        next(iter(a.values())).merge(1)  # type: ignore[arg-type]
    assert isinstance(next(iter(a.values())), RunSummary)


def test_iter_entities_reads_needed_columns_and_names_the_row(tmp_path: Path,
                                                               demo_entities: pd.DataFrame) -> None:
    path = write_entities(demo_entities, tmp_path / "e.parquet")
    chunks = list(iter_entities(path, columns=["model"], chunk_rows=5000))
    assert all(set(c.columns) == {"doc_id", "field", "outcome", "correct", "confidence",
                                  "similarity", "weight", "model"} for c in chunks)
    assert sum(len(c) for c in chunks) == len(demo_entities)
    bad = demo_entities.copy()
    bad.loc[7003, "confidence"] = 1.5
    write_entities(bad, tmp_path / "bad.csv")
    with pytest.raises(ValidationError, match=r"bad.csv: column confidence must be empty or "
                                              r"within \[0, 1\]; found 1 value breaking it, "
                                              r"first on line 7005 \(1.5\)"):
        list(iter_entities(tmp_path / "bad.csv", chunk_rows=5000))
    with pytest.raises(ValidationError, match=r"must have the columns .* found 1 missing: "
                                              r"\['nope'\]"):
        list(iter_entities(path, columns=["nope"]))


def test_cli_report_sketch(tmp_path: Path, demo_entities: pd.DataFrame, capsys: Any) -> None:
    paths = []
    for tier, group in demo_entities.groupby("tier", sort=False):
        paths.append(str(write_entities(group, tmp_path / f"{tier}.parquet")))
    out = tmp_path / "report"
    assert cli.main(["report", *paths, "--by", "model,tier", "--sketch", "--n-resamples", "0",
                     "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".confcal-manifest.json", "metrics.csv",
                                                     "report.md"]
    # groups come in order of first appearance: here tier by tier, as the files were given
    got = pd.read_csv(out / "metrics.csv").sort_values(["model", "tier"], ignore_index=True)
    want = compare_runs(demo_entities, by=["model", "tier"], budgets=(0.1, 0.3)
                        ).sort_values(["model", "tier"], ignore_index=True)
    _assert_tables_close(got, want)
    assert "sketches" in (out / "report.md").read_text()
    capsys.readouterr()


def test_cli_report_sketch_default_by_and_csv(tmp_path: Path, demo_entities: pd.DataFrame,
                                              capsys: Any) -> None:
    path = write_entities(demo_entities, tmp_path / "all.csv.gz")
    out = tmp_path / "report"
    assert cli.main(["report", str(path), "--sketch", "--n-resamples", "0", "-o", str(out)]) == 0
    got = pd.read_csv(out / "metrics.csv")
    want = compare_runs(demo_entities, budgets=(0.1, 0.3))
    assert list(got.columns) == list(want.columns)  # by = every metadata column
    assert (got["auroc"] - want["auroc"]).abs().max() <= 1e-12
    capsys.readouterr()


def test_a_stream_without_any_prediction_is_refused_as_in_memory() -> None:
    # the same words as score_documents with no predicted document, once the stream has
    # ended (its chunks were scored as all-missing on the way); allow_empty scores them
    stream = [(d, {"Agency": "X"}, None) for d in "abc"]
    with pytest.raises(ValidationError) as in_memory:
        score_documents(AGENCY, [(d, t) for d, t, _ in stream], [])
    chunks = []
    with pytest.raises(ValidationError) as streamed:
        for chunk in score_documents_iter(AGENCY, stream, chunk_size=2):
            chunks.append(chunk)
    assert str(streamed.value) == str(in_memory.value)
    assert str(streamed.value).startswith(
        "predictions must contain at least one document; found 0 (for 3 truth documents)")
    assert [len(c.entities) for c in chunks] == [2, 1]
    allowed = list(score_documents_iter(AGENCY, stream, chunk_size=2, allow_empty=True))
    assert sum(c.counts["docs_missing_prediction"] for c in allowed) == 3
    assert sum(c.counts["FN"] for c in allowed) == 3  # "X" not extracted, three times
    # one prediction anywhere in the stream is enough
    stream[2] = ("c", {"Agency": "X"}, {"Agency": "X"})
    assert sum(len(c.entities) for c in score_documents_iter(AGENCY, stream, chunk_size=2)) == 3
    with pytest.raises(ValidationError, match=r"^allow_empty must be True or False; found 1$"):
        score_documents_iter(AGENCY, stream, allow_empty=1)  # type: ignore[arg-type]


def test_metadata_dtypes_are_inferred_chunk_by_chunk() -> None:
    # the one documented difference between the stacked chunks and the whole table: each
    # chunk infers its metadata dtypes alone (tiers 1, 2 | None: int64 then object), the
    # whole table from all values (1, 2, None: float64 with NaN); one type throughout
    # stacks to the same column
    stream = [(d, {"Agency": "X"}, {"Agency": "X"}) for d in "abc"]
    for tiers, same in (((1, 2, None), False), ((1, 2, 3), True), (("m", "n", "o"), True)):
        meta = {d: {"tier": t} for d, t in zip("abc", tiers, strict=True)}
        whole = score_documents(AGENCY, [(d, t) for d, t, _ in stream],
                                [(d, p) for d, _, p in stream], metadata=meta).entities
        stacked = pd.concat([c.entities for c in score_documents_iter(
            AGENCY, stream, chunk_size=2, metadata=meta)], ignore_index=True)
        pd.testing.assert_frame_equal(stacked.drop(columns="tier"), whole.drop(columns="tier"))
        if same:
            pd.testing.assert_series_equal(stacked["tier"], whole["tier"])
        else:
            assert whole["tier"].dtype == "float64" and stacked["tier"].dtype == object
            assert stacked["tier"].tolist() == [1, 2, None]
