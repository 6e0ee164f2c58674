"""confcal.report: the run table (hand-checked), its intervals, and the written report."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from _optional import program_or_none
from _profiles import examples
from confcal.datasets import load_demo
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.report import (
    _render,
    _runs,
    compare_runs,
    format_differences,
    format_runs,
    to_html,
    to_markdown,
    write_report,
)

XSS = "<script>alert(1)</script>"
XSS_MODEL = "<img src=x onerror=alert(2)>"


def _toy() -> pd.DataFrame:
    """Three documents, one run; every figure of test_compare_runs_by_hand comes from it."""
    rows = [  # doc, field, outcome, similarity, confidence
        ("a", "Agency", "TP", 1.0, 0.9),
        ("a", "Rate", "FD", 0.0, 0.8),
        ("b", "Agency", "FD", 0.4, 0.6),
        ("b", "Rate", "FN", 0.0, np.nan),
        ("b", "PaymentTerms", "TN", 1.0, 0.7),
        ("c", "Agency", "FA", 0.0, 0.95),
        ("c", "Rate", "TP", 1.0, 0.3),
    ]
    frame = pd.DataFrame(rows, columns=["doc_id", "field", "outcome", "similarity",
                                        "confidence"])
    frame["correct"] = frame["outcome"].isin(["TP", "TN"])
    frame["weight"] = 1.0
    frame["truth"] = ["ACME", "100", "Zenith", "7", None, None, "250"]
    frame["prediction"] = ["ACME", "140", "Zen", None, None, "Net 30", "250"]
    frame["model"] = "m"
    return frame


def test_compare_runs_by_hand():
    table = compare_runs(_toy(), budgets=(0.5,), n_bins=2)
    row = table.iloc[0]
    assert list(table.columns) == [
        "model", "n_documents", "n_entities", "n_without_confidence", "woa", "f1", "auroc",
        "ece", "brier", "ecarb@0.5", "ecarb_ceiling@0.5"]
    assert (row["model"], row["n_documents"], row["n_entities"]) == ("m", 3, 7)
    assert row["n_without_confidence"] == 1  # the FN without a confidence, counted
    # WOA over the 6 non-TN rows: (1 + 0 + 0.4 + 0 + 0 + 1) / 6 = 0.4
    assert row["woa"] == pytest.approx(0.4)
    # F1 = 2 TP / (2 TP + 2 FD + FA + FN) = 4 / (4 + 4 + 1 + 1) = 0.4
    assert row["f1"] == pytest.approx(0.4)
    # calibration rows: right (0.9, 0.7 [the TN], 0.3), wrong (0.8, 0.6, 0.95);
    # pairs ranked right: 0.9>0.8, 0.9>0.6, 0.7>0.6 -> 3 of 9
    assert row["auroc"] == pytest.approx(1 / 3)
    # 2 equal-mass bins: {0.3, 0.6, 0.7} acc 2/3 conf 0.5333; {0.8, 0.9, 0.95} acc 1/3
    # conf 0.8833 -> 0.5 * 0.1333 + 0.5 * 0.55 = 0.341667
    assert row["ece"] == pytest.approx(0.5 * (2 / 3 - 1.6 / 3) + 0.5 * (2.65 / 3 - 1 / 3))
    # (0.01 + 0.64 + 0.36 + 0.09 + 0.9025 + 0.49) / 6
    assert row["brier"] == pytest.approx(2.4925 / 6)
    # k = 3 least confident (0.3, 0.6, 0.7) hold 1 of 3 errors: 1 / (3/6 * 3) = 2/3
    assert row["ecarb@0.5"] == pytest.approx(2 / 3)
    assert row["ecarb_ceiling@0.5"] == pytest.approx(2.0)


def test_point_estimates_match_the_scorer_and_the_metrics():
    result = load_demo().score(models=["sim-verbalized"], tiers=["moderate"])
    row = compare_runs(result.entities, budgets=(0.1, 0.3)).iloc[0]
    assert row["woa"] == pytest.approx(result.woa) and row["f1"] == pytest.approx(result.f1)
    correct, confidence, n_without = result.to_calibration()
    rep = confcal.calibration_report(correct, confidence, budgets=(0.1, 0.3))
    assert row["n_without_confidence"] == n_without == result.counts["without_confidence"]
    assert (row["auroc"], row["ece"], row["brier"]) == (rep.auroc, rep.ece, rep.brier)
    assert (row["ecarb@0.1"], row["ecarb@0.3"]) == (rep.ecarb[0.1], rep.ecarb[0.3])


def test_groups_default_to_metadata_and_keep_missing_keys():
    a, b = _toy(), _toy().assign(model="n", doc_id=lambda f: f["doc_id"] + "2")
    b.loc[b["doc_id"] == "c2", "model"] = None  # a run without a name is still a run
    table = compare_runs(pd.concat([a, b]), budgets=(0.5,), n_bins=2)
    assert table["model"].tolist()[:2] == ["m", "n"] and pd.isna(table["model"][2])
    assert table["n_entities"].tolist() == [7, 5, 2]
    whole = compare_runs(pd.concat([a, b]), by=(), budgets=(0.5,))
    assert len(whole) == 1 and whole["n_entities"].item() == 14
    assert "model" not in whole.columns


def test_bootstrap_intervals_resample_documents():
    entities = load_demo().score(models=["sim-logprob"], tiers=["high"]).entities
    table = compare_runs(entities, budgets=(0.1, 0.3), n_resamples=200, seed=3)
    row = table.iloc[0]
    for metric in ("woa", "f1", "auroc", "ece", "brier", "ecarb@0.1", "ecarb@0.3"):
        assert row[f"{metric}_low"] <= row[metric] <= row[f"{metric}_high"], metric
    assert "ecarb_ceiling@0.3_low" not in table.columns
    # exactly confcal.bootstrap_ci with the documents as groups and the same seed
    has = entities["confidence"].notna()
    ci = confcal.bootstrap_ci(entities["correct"][has], entities["confidence"][has],
                              groups=entities["doc_id"][has], budget=0.1, n_resamples=200,
                              seed=3).set_index("metric")
    assert row["auroc_low"] == ci.at["auroc", "low"]
    assert row["ecarb@0.1_high"] == ci.at["ecarb@0.1", "high"]
    again = compare_runs(entities, budgets=(0.1, 0.3), n_resamples=200, seed=3)
    pd.testing.assert_frame_equal(table, again)
    assert table.attrs["n_resamples"] == 200 and table.attrs["by"] == ["model", "tier",
                                                                      "pipeline",
                                                                      "confidence_source"]


def test_woa_f1_resamples_equal_copying_the_drawn_documents():
    frame = pd.concat([_toy(), _toy().assign(doc_id=lambda f: f["doc_id"] + "x",
                                              similarity=lambda f: f["similarity"] * 0.5)])
    sums = _runs.ExtractionSums(frame)
    docs = list(pd.unique(frame["doc_id"]))
    rng = np.random.default_rng(0)
    for _ in range(20):
        counts = np.bincount(rng.integers(0, len(docs), len(docs)), minlength=len(docs))
        copied = pd.concat([frame[frame["doc_id"] == d] for d, c in zip(docs, counts, strict=True)
                            for _ in range(c)])
        evaluated = copied[copied["outcome"] != "TN"]
        tally = copied["outcome"].value_counts()
        tp, fd, fa, fn = (tally.get(k, 0) for k in ("TP", "FD", "FA", "FN"))
        woa, f1 = sums.woa_f1(counts.astype(float))
        assert woa == pytest.approx(evaluated["similarity"].mean())
        assert f1 == pytest.approx(2 * tp / (2 * tp + 2 * fd + fa + fn))


def test_undefined_metrics_warn_naming_the_group():
    raw = _toy().assign(confidence=np.nan)  # a run whose extractor gives no confidence
    with pytest.warns(UndefinedMetricWarning, match=r"model='m': no entity carries a "
                                                    r"confidence \(all 7 rows\)"):
        row = compare_runs(raw).iloc[0]
    assert np.isnan(row["auroc"]) and row["n_without_confidence"] == 7
    assert row["woa"] == pytest.approx(0.4)  # extraction quality is still defined
    right = _toy()
    right = right[right["correct"]]
    with pytest.warns(UndefinedMetricWarning) as caught:
        compare_runs(right)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("compare_runs, model='m': auroc is undefined") for m in messages)
    assert any(m.startswith("compare_runs, model='m': ecarb is undefined") for m in messages)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"by": "tier"}, r"by must name columns of entities; found \['tier'\] absent"),
    ({"budgets": (0.0,)}, r"budgets\[0\] must be a number in \(0, 1\]; found 0.0"),
    ({"n_resamples": -1}, "n_resamples must be an integer >= 0; found -1"),
    ({"binning": "equal"}, "binning must be one of 'quantile', 'uniform'; found 'equal'"),
    ({"seed": 1.5}, "seed must be an int or None; found 1.5"),
])
def test_compare_runs_rejects_bad_options(kwargs, message):
    with pytest.raises(ValidationError, match=message):
        compare_runs(_toy(), **kwargs)


def test_compare_runs_checks_the_entity_table():
    with pytest.raises(ValidationError, match=r"must have the entity-table columns .*found 1 "
                                              r"missing: \['outcome'\]"):
        compare_runs(_toy().drop(columns="outcome"))
    bad = _toy()
    bad.loc[2, "confidence"] = 1.5
    with pytest.raises(ValidationError, match=r"column confidence must be empty or within "
                                              r"\[0, 1\]; found 1 value breaking it, first on "
                                              r"row 2 \(1.5\)"):
        compare_runs(bad)


def _indexed() -> pd.DataFrame:
    frame = _toy()
    frame["truth_index"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["pred_index"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    return frame


def test_an_entity_given_twice_is_an_error():
    doubled = pd.concat([_indexed(), _indexed()], ignore_index=True)
    with pytest.raises(ValidationError,
                       match=r"^entities must hold each entity \(run, doc_id, field, item "
                             r"indices\) once; found 7 repeated rows, first model='m', "
                             r"doc_id='a', field='Agency', truth_index=<NA>, pred_index=<NA> "
                             r"at rows 0 and 7$") as info:
        compare_runs(doubled)
    assert info.value.index == 7
    with pytest.raises(ValidationError, match="found 7 repeated rows"):
        _runs.summarize_runs(doubled, ["model"])
    # with the tables named, and a hint when no metadata column tells runs apart
    bare = doubled.drop(columns="model")
    with pytest.raises(ValidationError, match=r"at row 0 of a.csv and row 0 of b.csv; tables "
                                              r"of different runs need a metadata column"):
        _runs.check_unique_entities(bare, sources=[("a.csv", 7), ("b.csv", 7)])
    # line items: one doc and field, different item indices, are different entities
    items = _indexed()
    items["field"] = "LineItems.Rate"
    items["doc_id"] = "a"
    items["truth_index"] = pd.array(range(7), dtype="Int64")
    _runs.check_unique_entities(items)
    # two runs with their metadata: the same documents, no error, two rows
    other = _indexed().assign(model="n")
    assert compare_runs(pd.concat([_indexed(), other], ignore_index=True))["model"].tolist() \
        == ["m", "n"]
    # a table without the item-index columns cannot tell line items apart: not checked
    compare_runs(pd.concat([_toy(), _toy()], ignore_index=True))


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 3),
                          st.sampled_from([None, 0, 1])), min_size=1, max_size=40))
def test_entity_keys_are_equal_exactly_when_the_rows_are(rows):
    # reference: pandas groupby over the same columns, missing values one group
    frame = pd.DataFrame(rows, columns=["run", "doc", "index"]).astype(
        {"run": object, "index": "Int64"})
    codes = _runs._key_codes(frame, ["run", "doc", "index"])
    groups = frame.groupby(["run", "doc", "index"], dropna=False, sort=False).ngroup()
    same = codes[:, None] == codes[None, :]
    assert (same == (groups.to_numpy()[:, None] == groups.to_numpy()[None, :])).all()


def test_summaries_of_one_run_in_two_tables_must_not_share_documents():
    a = _runs.summarize_runs(_indexed(), ["model"])
    b = _runs.summarize_runs(_indexed().assign(doc_id=lambda f: f["doc_id"] + "2"), ["model"])
    merged = _runs.merge_summaries(a, b, disjoint=True, names=["a.csv", "b.csv"])
    assert len(merged[("m",)].doc_ids) == 6
    with pytest.raises(ValidationError,
                       match=r"found 3 documents of run \('m',\) in both a.csv and again.csv, "
                             r"first 'a'"):
        _runs.merge_summaries(a, b, a, disjoint=True, names=["a.csv", "b.csv", "again.csv"])
    # chunks of one table may split a document: not disjoint, merged
    assert _runs.merge_summaries(a, a)[("m",)].n_entities == 14
    with pytest.raises(ValidationError, match="names must name every part"):
        _runs.merge_summaries(a, b, disjoint=True, names=["a.csv"])


def test_format_runs_and_writers_escape_everything():
    with pytest.warns(confcal.report.SmallSampleWarning, match=r"intervals from 3 documents"):
        table = compare_runs(_toy().assign(model=XSS_MODEL), budgets=(0.5,), n_bins=2,
                             n_resamples=50)
    text = format_runs(table)
    assert list(text.columns) == ["model", "docs", "entities", "no confidence", "WOA", "F1",
                                  "AUROC", "ECE", "Brier", "ECARB@0.5", "max@0.5"]
    assert re.fullmatch(r"0\.400 \[\d\.\d{3}, \d\.\d{3}\]", text["WOA"].item())
    page = to_html(text)
    assert XSS_MODEL not in page and html_escaped(XSS_MODEL) in page
    assert re.search(r'<span class="ci">\d\.\d{3}\u2013\d\.\d{3}</span>', page)
    markdown = to_markdown(pd.DataFrame({"v": ["a|b\nc", XSS]}))
    assert markdown.splitlines()[2:] == ["| a\\|b c |", "| &lt;script&gt;alert(1)&lt;/script&gt; |"]


def html_escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


# ------------------------------------------------------------------------ written report
@pytest.fixture(scope="module")
def hostile_entities() -> pd.DataFrame:
    """Two demo runs, plus a confidently wrong extraction that is a script, in a run whose
    name is markup."""
    entities = load_demo().score(models=["sim-calibrated", "sim-overconfident"],
                                 tiers=["clean", "high"]).entities
    entities["model"] = entities["model"].astype(object)
    wrong = entities.index[(entities["outcome"] == "FD") & entities["confidence"].notna()][0]
    entities.loc[wrong, ["prediction", "confidence"]] = [XSS, 0.99999]
    entities.loc[entities["model"] == "sim-overconfident", "model"] = XSS_MODEL
    return entities


@pytest.fixture(scope="module")
def written(hostile_entities, tmp_path_factory) -> _render.WrittenReport:
    out = tmp_path_factory.mktemp("written") / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is undefined in these runs
        return write_report(hostile_entities, out, by=("model", "tier"), n_resamples=30,
                            notes=["synthetic data"])


def test_report_folder_contents(written):
    names = sorted(p.name for p in written.directory.iterdir())
    assert names == [".confcal-manifest.json", "auroc_vs_woa.png", "ecarb_curve.png",
                     "metrics.csv", "reliability.png", "report.html", "report.md"]
    manifest = json.loads((written.directory / ".confcal-manifest.json").read_text())
    assert [e["path"] for e in manifest["entries"]] == names[1:]  # every file it wrote
    assert manifest["what"] == "report"
    metrics = pd.read_csv(written.metrics)
    assert len(metrics) == 4 and "auroc_low" in metrics.columns
    pd.testing.assert_frame_equal(metrics, written.runs, check_dtype=False)
    for figure in written.figures:
        assert figure.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    md = written.markdown.read_text()
    assert "![Reliability diagrams](reliability.png)" in md
    assert "## Pooled by model" in md


def test_extracted_script_appears_only_escaped(written):
    page = written.html.read_text()
    assert "<script" not in page.lower()  # the report itself has none, and none got in
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert XSS_MODEL not in page and html_escaped(XSS_MODEL) in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    md = written.markdown.read_text()
    assert "<script" not in md.lower() and XSS_MODEL not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md


def test_report_html_is_self_contained(written):
    page = written.html.read_text()
    sources = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(sources) == 3
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1], validate=True).startswith(b"\x89PNG")
    assert not re.search(r"(?:src|href)=\"(?!data:)", page)  # nothing to fetch
    assert "http://" not in page and "https://" not in page


def test_existing_folders_are_replaced_only_when_they_hold_a_report(written, tmp_path):
    out = tmp_path / "report"
    shutil.copytree(written.directory, out)  # a report, manifest and all, moved elsewhere
    frame = _toy()
    before = (out / "report.md").read_text()
    write_report(frame, out, n_resamples=0, n_bins=2, budgets=(0.5,))
    assert (out / "report.md").read_text() != before
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValidationError, match=r"must be new, empty or a previous confcal "
                                              r"report; found 1 entry it did not write, "
                                              r"first 'notes.txt' \(not in its manifest"):
        write_report(frame, out, n_resamples=0, n_bins=2, budgets=(0.5,))
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    (out / "report.md").write_text("my edits")  # a report edited by hand is the user's
    with pytest.raises(ValidationError, match=r"first 'report.md' \(changed since the run "
                                              r"wrote it"):
        write_report(frame, out, n_resamples=0, n_bins=2, budgets=(0.5,))
    assert (out / "report.md").read_text() == "my edits"
    (out / "metrics.csv").unlink()
    (out / "metrics.csv").mkdir()  # a folder named like an output file: never deleted
    (out / "metrics.csv" / "thesis.tex").write_text("years of work")
    (out / "report.md").unlink()
    with pytest.raises(ValidationError, match=r"first 'metrics.csv/' \(a folder where the "
                                              r"run wrote a file\)"):
        write_report(frame, out, n_resamples=0, n_bins=2, budgets=(0.5,))
    assert (out / "metrics.csv" / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no staging left


def test_a_failure_leaves_nothing_half_written(tmp_path, monkeypatch):
    out = tmp_path / "report"

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_render, "_markdown_page", broken)
    with pytest.raises(OSError, match="disk full"):
        write_report(_toy(), out, n_resamples=0, n_bins=2, budgets=(0.5,))
    assert list(tmp_path.iterdir()) == []


CHROMIUM = program_or_none("chromium")
# Appended to a copy of the report (the report itself has no script, and its CSP forbids
# one): after load, records for every image whether the browser decoded it.
_PROBE = """<script>
window.addEventListener('load', () => {
  const seen = [...document.images].map(i => i.complete && i.naturalWidth > 0 ? 'ok' : 'bad');
  document.body.setAttribute('data-images', seen.join(','));
});
</script>"""


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
               *args]
    # check=False: chromium may exit non-zero over a missing D-Bus; the files it wrote are
    # what the tests assert on
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(profile)})


@pytest.mark.usefixtures("chromium")
def test_report_renders_in_headless_chromium(written, tmp_path):
    shot = tmp_path / "report.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1280,2400",
                     written.html.as_uri(), profile=tmp_path / "profile-1")
    assert shot.is_file(), done.stderr[-2000:]
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 20_000  # a page, not a blank
    page = written.html.read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", _PROBE + "\n</body>"))
    dom = _chromium("--dump-dom", "--virtual-time-budget=10000", probe.as_uri(),
                    profile=tmp_path / "profile-2").stdout
    assert 'data-images="ok,ok,ok"' in dom, dom[-500:]


# ----------------------------------------------------------------- the baseline
def test_write_report_with_a_baseline_compares_within_the_other_columns(tmp_path):
    entities = load_demo().score(tiers=["clean", "high"],
                                 models=["sim-calibrated", "sim-logprob"]).entities
    written = write_report(entities, tmp_path / "r", by=["model", "tier"], n_resamples=40,
                           baseline="sim-logprob")
    runs = written.runs
    assert runs.attrs["baseline"] == "sim-logprob" and runs.attrs["differences"] == [
        "woa", "f1", "auroc", "ece", "debiased_ece", "smooth_ece", "brier", "ecarb@0.1",
        "ecarb@0.3"]
    # each tier on its own: sim-calibrated against sim-logprob on that tier's documents
    for tier in ("clean", "high"):
        group = entities[entities["tier"] == tier]
        expected = confcal.compare_systems(
            {m: g for m, g in group.groupby("model", sort=False)}, baseline="sim-logprob",
            n_resamples=40).set_index(["system", "metric"])
        row = runs[(runs.model == "sim-calibrated") & (runs.tier == tier)].iloc[0]
        for metric in runs.attrs["differences"]:
            assert row[f"{metric}_diff"] == expected.at[("sim-calibrated", metric), "difference"]
            assert row[f"{metric}_diff_high"] == expected.at[("sim-calibrated", metric), "high"]
        assert runs[runs.model == "sim-logprob"]["auroc_diff"].isna().all()
    text = format_differences(runs)
    assert text[["model", "tier"]].values.tolist() == [["sim-calibrated", "clean"],
                                                       ["sim-calibrated", "high"]]
    assert re.fullmatch(r"[+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\] p=\d\.\d{3}",
                        text["ΔAUROC"].iloc[0])
    # the runs table's own text leaves the differences to their table
    assert not any("diff" in c for c in format_runs(runs).columns)
    page = written.html.read_text(encoding="utf-8")
    assert "<h2>Differences from model=sim-logprob</h2>" in page
    assert "with the same tier, on the documents both have" in page
    assert "## Differences from model=sim-logprob" in written.markdown.read_text()
    assert "auroc_diff_p" in pd.read_csv(written.metrics).columns


@pytest.mark.parametrize("kwargs, message", [
    ({"baseline": "nobody"}, r"baseline must be a value of the column 'model' \(one of "),
    ({"baseline": "sim-calibrated", "n_resamples": 0}, r"baseline needs paired resamples"),
    ({"baseline": "sim-calibrated", "by": []}, r"baseline needs runs to compare"),
    ({"baseline": "sim-calibrated", "baseline_on": "all"},
     r"baseline_on must be one of 'error', 'intersection'; found 'all'"),
])
def test_write_report_baseline_errors_come_before_any_work(tmp_path, kwargs, message):
    entities = load_demo().score(tiers=["clean"], models=["sim-calibrated"]).entities
    options = {"by": "model", "n_resamples": 10, **kwargs}
    with pytest.raises(ValidationError, match=message):
        write_report(entities, tmp_path / "r", **options)
    assert not (tmp_path / "r").exists()


def test_reliability_panels_draw_consistency_bands_that_respect_documents():
    entities = load_demo().score(tiers=["high"], models=["sim-calibrated"]).entities
    runs = compare_runs(entities, by="model")
    fig, _ = _render._reliability_panels(entities, ["model"], runs, 30, n_resamples=200,
                                         seed=0)
    ax = fig.axes[0]
    has = entities["confidence"].notna()
    test = confcal.calibration_test(entities["correct"][has], entities["confidence"][has],
                                    groups=entities["doc_id"][has], n_bins=10,
                                    binning="uniform", n_resamples=200)
    assert test.null == "grouped"
    assert ax.get_title().splitlines()[-1] == (
        f"consistency test: p={test.p_value:.3f} (200 redraws, documents)")
    bands = [c for c in ax.containers if c.get_label() == "95% consistency band"]
    assert len(bands) == 1
    # without resamples (n_resamples=0), no bands and no test
    fig, _ = _render._reliability_panels(entities, ["model"], runs, 30)
    assert not [c for c in fig.axes[0].containers if "consistency" in str(c.get_label())]


# ----------------------------------------------------------------- the work bound
def _table(rows: int = 840) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    confidence = rng.random(rows).round(3)
    correct = rng.random(rows) < confidence
    return pd.DataFrame({
        "doc_id": [f"d{i // 10}" for i in range(rows)],
        "field": [f"F{i % 10}" for i in range(rows)],
        "similarity": correct.astype(float), "correct": correct,
        "outcome": np.where(correct, "TP", "FD"), "confidence": confidence, "weight": 1.0})


@pytest.mark.parametrize(("options", "work"), [
    # (n_resamples + 1) * (rows + runs * (10,000 * n_bins + 20,000 * budgets))
    ({"n_resamples": 10**9}, (10**9 + 1) * (840 + 10_000 * 5 + 20_000 * 2)),  # 9.08e13
    ({"n_resamples": 1000, "n_bins": 10**6}, 1001 * (840 + 10_000 * 10**6 + 40_000)),
    ({"n_resamples": 1000, "budgets": [i / 10_000 for i in range(1, 10_001)]},
     1001 * (840 + 50_000 + 20_000 * 10_000)),  # 2.0e11: the 45 minutes measured
    ({"n_resamples": 20, "max_work": 1000}, 21 * (840 + 50_000 + 40_000)),
])
def test_a_request_beyond_the_work_bound_is_refused_before_it_starts(options, work, tmp_path):
    from confcal.report import MAX_WORK, compare_runs, write_report

    assert MAX_WORK == 2e10
    rule = (rf"the metrics would cost {work:.3g} units of work.*more than max_work="
            rf"{int(options.get('max_work', MAX_WORK))} allows")
    with pytest.raises(ValidationError, match=rule.replace("+", r"\+")):
        compare_runs(_table(), **options)  # instant: checked before any resample
    with pytest.raises(ValidationError, match=rule.replace("+", r"\+")):
        write_report(_table(), tmp_path / "r", **options)
    assert not (tmp_path / "r").exists()


def test_the_work_bound_can_be_raised_and_is_itself_checked():
    from confcal.report import compare_runs

    table = _table(40)
    # 3 * (40 + 10,000 * 5 + 20,000 * 2) = 270,120 > 1e5: refused, allowed with 3e5
    with pytest.raises(ValidationError, match=r"2\.7e\+05 units of work"):
        compare_runs(table, n_resamples=2, max_work=1e5)
    with pytest.warns(UserWarning, match="fewer than 30"):  # 4 documents
        assert len(compare_runs(table, n_resamples=2, max_work=3e5)) == 1
    with pytest.raises(ValidationError, match=r"max_work must be a number >= 1; found 0"):
        compare_runs(table, max_work=0)
