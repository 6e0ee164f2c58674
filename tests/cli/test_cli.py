"""The confcal command end to end: demo, score, report, and what happens on bad input.

The end-to-end tests run ``python -m confcal`` in a subprocess (as a user or a CI job
would); the many small error cases call ``confcal.cli.main`` in-process, which parses and
reports exactly the same way.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import confcal
from confcal.cli import main
from confcal.datasets import _generate
from confcal.report import compare_runs
from confcal.scoring import score_documents
from confcal.scoring.io import read_entities
from confcal.scoring.presets import FCC_INVOICE

DATA = Path(_generate.__file__).with_name("data")
XSS = "<script>alert(1)</script>"
N_DOCS = 20


def _env() -> dict[str, str]:
    # the subprocess imports the same confcal as this test process, wherever it lives
    src = str(Path(confcal.__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "confcal", *map(str, args)], cwd=cwd,
                          env=_env(), capture_output=True, text=True, timeout=300, check=False)


def _records(name: str) -> list[dict]:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh][:N_DOCS]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """20 demo invoices, two runs; the second holds a confidently wrong script."""
    root = tmp_path_factory.mktemp("inputs")
    hostile = _records("predictions/sim-logprob__high.jsonl.gz")
    # as confident as can be, on the first invoice: first among the most confident errors
    hostile[0]["document"]["Agency"] = {"value": XSS, "confidence": 1.0}
    return {
        "truth": _write_jsonl(root / "truth.jsonl", _records("truth.jsonl.gz")),
        "calibrated": _write_jsonl(root / "calibrated.jsonl",
                                   _records("predictions/sim-calibrated__clean.jsonl.gz")),
        "hostile": _write_jsonl(root / "hostile.jsonl", hostile),
    }


def _no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr, done.stderr


# ------------------------------------------------------------------------- end to end
def test_demo_scores_every_extractor_and_writes_the_report(tmp_path):
    done = run("demo", "-o", "out", "--n-resamples", "10", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    lines = done.stdout.splitlines()
    assert lines[0].split()[:5] == ["model", "tier", "docs", "entities", "no"]
    table = [line for line in lines if line.strip().startswith("sim-")]
    assert len(table) == 16  # 4 extractors x 4 tiers
    assert {line.split()[0] for line in table} == {"sim-calibrated", "sim-overconfident",
                                                   "sim-verbalized", "sim-logprob"}
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        ".confcal-manifest.json", "auroc_vs_woa.png", "ecarb_curve.png", "metrics.csv",
        "reliability.png", "report.html", "report.md"]
    assert f"report: {Path('out') / 'report.html'}" in done.stdout
    metrics = pd.read_csv(out / "metrics.csv")
    assert len(metrics) == 16 and "auroc_low" in metrics.columns
    assert "synthetic" in (out / "report.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left over


def test_score_then_report_end_to_end(inputs, tmp_path):
    done = run("score", "--schema", "fcc-invoice", "--truth", inputs["truth"], "--pred",
               inputs["calibrated"], "--meta", "model=calibrated", "--meta", "tier=clean",
               "-o", "a.parquet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"scored {N_DOCS} documents" in done.stdout and "wrote a.parquet" in done.stdout
    from confcal.scoring.presets import FCC_INVOICE

    signature = (f"confcal:{confcal.__version__}|schema:fcc-invoice@{FCC_INVOICE.digest}"
                 "|conventions:confcal|match:0.0")
    assert f"signature: {signature}\n" in done.stdout
    done = run("score", "--schema", "fcc-invoice", "--truth", inputs["truth"], "--pred",
               inputs["hostile"], "--meta", "model=logprob", "--meta", "tier=high",
               "-o", "b.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run("report", "a.parquet", "b.csv", "--by", "model", "--budgets", "0.2,0.4",
               "--n-bins", "4", "--n-resamples", "20", "--extra", "debiased_ece,calibration_p",
               "-o", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    # the CSV table carries no signature, so the two are not known to be comparable
    assert "scored with different settings" in done.stderr
    assert "signature: confcal:" in done.stdout and "schema:unknown" in done.stdout
    assert "|ece:quantile-4|" in done.stdout
    metrics = pd.read_csv(tmp_path / "rep" / "metrics.csv")
    assert metrics["model"].tolist() == ["calibrated", "logprob"]
    # the same numbers as scoring and comparing in the library (Parquet and CSV round trips
    # lose nothing the metrics need)
    truths = {r["doc_id"]: r["document"] for r in map(json.loads, inputs["truth"].open())}
    expected = []
    for name, model in (("calibrated", "calibrated"), ("hostile", "logprob")):
        preds = {r["doc_id"]: r["document"] for r in map(json.loads, inputs[name].open())}
        expected.append(score_documents(FCC_INVOICE, truths, preds,
                                        metadata={d: {"model": model} for d in truths}).entities)
    library = compare_runs(pd.concat(expected), by="model", budgets=(0.2, 0.4), n_bins=4,
                           n_resamples=20, extra=["debiased_ece", "calibration_p"])
    pd.testing.assert_frame_equal(metrics, library, check_dtype=False)
    assert {"debiased_ece_low", "calibration_p"} <= set(metrics.columns)
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("sketch", [[], ["--sketch", "--n-resamples", "0"]],
                         ids=["rows", "sketch"])
def test_report_refuses_the_same_table_twice(inputs, tmp_path, capsys, sketch):
    assert main(_score(inputs, tmp_path / "a.parquet")) == 0
    assert main(_score(inputs, tmp_path / "b.parquet")) == 0  # another run, no --meta
    capsys.readouterr()
    for tables in (["a.parquet", "a.parquet"], ["a.parquet", "b.parquet"]):
        paths = [str(tmp_path / t) for t in tables]
        assert main(["report", *paths, *sketch, "-o", str(tmp_path / "rep")]) == 1
        err = _error(capsys)
        assert paths[0] in err and paths[1] in err and "--meta run=NAME" in err
        assert not (tmp_path / "rep").exists()
    # with metadata the two runs are told apart
    assert main(_score(inputs, tmp_path / "c.parquet", "--meta", "run=c")) == 0
    assert main(_score(inputs, tmp_path / "d.parquet", "--meta", "run=d")) == 0
    assert main(["report", str(tmp_path / "c.parquet"), str(tmp_path / "d.parquet"), *sketch,
                 "-o", str(tmp_path / "rep")]) == 0


def test_bad_json_on_line_17_is_reported_as_such(inputs, tmp_path):
    lines = inputs["hostile"].read_text().splitlines(keepends=True)
    lines[16] = lines[16].replace('"document": {', '"document": {,', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    done = run("score", "--schema", "fcc-invoice", "--truth", inputs["truth"], "--pred", bad,
               "-o", "out.parquet", cwd=tmp_path)
    assert done.returncode == 1
    _no_traceback(done)
    assert done.stderr.startswith(f"confcal: error: {bad}, line 17: must be valid JSON; found "
                                  "an error at column")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]  # nothing written


def test_bad_entity_table_fails_before_writing_anything(inputs, tmp_path):
    truths = {r["doc_id"]: r["document"] for r in map(json.loads, inputs["truth"].open())}
    preds = {r["doc_id"]: r["document"] for r in map(json.loads, inputs["calibrated"].open())}
    entities = score_documents(FCC_INVOICE, truths, preds).entities
    entities.loc[40, "confidence"] = 1.5
    entities.to_csv(tmp_path / "entities.csv", index=False)
    done = run("report", "entities.csv", "-o", "rep", cwd=tmp_path)
    assert done.returncode == 1
    _no_traceback(done)
    # CSV line numbers count the header: row 40 is on line 42
    assert done.stderr.strip() == (
        "confcal: error: entities.csv: column confidence must be empty or within [0, 1]; "
        "found 1 value breaking it, first on line 42 (1.5)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entities.csv"]


def test_usage_error_exits_2_and_version_runs(tmp_path):
    done = run("report", "entities.txt", "-o", "rep", cwd=tmp_path)
    assert done.returncode == 2
    assert "must end in .parquet, .csv, .csv.gz; found 'entities.txt'" in done.stderr
    done = run("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, f"confcal {confcal.__version__}")


def test_console_script_is_declared():
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"confcal": "confcal.cli:main"}
    assert {"matplotlib", "tqdm", "pyarrow"} <= {
        dep.split(">")[0] for dep in pyproject["project"]["optional-dependencies"]["cli"]}


# ------------------------------------------------------------------ in-process cases
def _score(inputs: dict[str, Path], out: Path, *extra: str, truth: Path | None = None,
           pred: Path | None = None) -> list[str]:
    return ["score", "--schema", "fcc-invoice", "--truth", str(truth or inputs["truth"]),
            "--pred", str(pred or inputs["calibrated"]), "-o", str(out), *extra]


@pytest.mark.parametrize(("args", "message"), [
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["demo", "--budgets", "0,2"], "must be comma-separated numbers in (0, 1]"),
    (["demo", "--n-bins", "0"], "argument --n-bins: must be an integer >= 1; found '0'"),
    (["demo", "--n-resamples", "many"], "must be an integer >= 0; found 'many'"),
    (["score", "--schema", "fcc-invoice", "--truth", "t", "--pred", "p", "-o", "x.json"],
     "must end in .parquet, .csv, .csv.gz; found 'x.json'"),
    (["score", "--schema", "s", "--truth", "t", "--pred", "p", "-o", "x.csv", "--meta", "m"],
     "argument --meta: must be KEY=VALUE; found 'm'"),
    (["score", "--schema", "s", "--truth", "t", "--pred", "p", "-o", "x.csv", "--meta",
      "correct=1"], "KEY must not be an entity-table column"),
    (["score", "--schema", "s", "--truth", "t", "--pred", "p", "-o", "x.csv", "--meta", "m=a",
      "--meta", "m=b"], "argument --meta: each KEY must be given once; found ['m']"),
    (["score", "--schema", "s", "--pred", "p", "-o", "x.csv"],
     "the following arguments are required: --truth"),
    (["report", "a.csv", "--by", "model,,tier", "-o", "r"], "must be comma-separated column"),
])
def test_usage_errors_exit_2(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("confcal: error: "), err
    return err.strip()[len("confcal: error: "):]


def test_data_errors_name_file_line_and_rule(inputs, tmp_path, capsys):
    out = tmp_path / "out.csv"
    records = [json.loads(line) for line in inputs["calibrated"].open()]

    dup = _write_jsonl(tmp_path / "dup.jsonl", records[:3] + [records[1]])
    assert main(_score(inputs, out, pred=dup)) == 1
    assert _error(capsys) == (f"{dup}, line 4: doc_id must be unique; found 'fcc-002' again "
                              "(first at line 2)")

    stray = _write_jsonl(tmp_path / "stray.jsonl", records[:2] + [
        {"doc_id": "inv-99", "document": {}}])
    assert main(_score(inputs, out, pred=stray)) == 1
    assert _error(capsys) == (f"{stray}, line 3: every predicted doc_id must be in the truth "
                              f"({inputs['truth']}); found 1 that are not, first 'inv-99'")

    shape = tmp_path / "shape.jsonl"
    shape.write_text('{"doc_id": "fcc-001", "doc": {}}\n')
    assert main(_score(inputs, out, pred=shape)) == 1
    assert _error(capsys) == (f'{shape}, line 1: must be an object with exactly the keys '
                              "\"doc_id\" and \"document\"; found keys ['doc', 'doc_id']")

    records[4]["document"]["GrossTotal"] = {"value": "1.00", "confidence": 1.5}
    conf = _write_jsonl(tmp_path / "conf.jsonl", records)
    assert main(_score(inputs, out, pred=conf)) == 1
    assert _error(capsys) == (
        "doc 'fcc-005', field GrossTotal: confidence must be a number within [0, 1]; found "
        f"1.5 (truth at {inputs['truth']}, line 5; prediction at {conf}, line 5)")

    assert main(_score(inputs, out, truth=tmp_path / "missing.jsonl")) == 1
    assert _error(capsys) == (f"{tmp_path / 'missing.jsonl'}: must be a JSONL file or a folder "
                              "of JSON files; found nothing at that path")
    assert not out.exists()


def test_schema_files_are_read_and_checked(inputs, tmp_path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text(FCC_INVOICE.to_json())
    out = tmp_path / "out.csv"
    assert main(_score(inputs, out, "--schema", str(schema))) == 0
    assert len(pd.read_csv(out)) > 0
    schema.write_text('{"fields": {"Agency": {"kind": "feild"}}}')
    assert main(_score(inputs, tmp_path / "other.csv", "--schema", str(schema))) == 1
    assert _error(capsys) == (f"{schema}: schema.fields.Agency.kind must be one of 'field', "
                              "'items'; found 'feild'")
    assert main(_score(inputs, out, "--schema", "fcc-invoices")) == 1
    assert "--schema must be fcc-invoice or a schema JSON file; found 'fcc-invoices'" in \
        _error(capsys)


def test_folders_of_json_files_score_like_jsonl(inputs, tmp_path, capsys):
    folder = tmp_path / "truth"
    folder.mkdir()
    for record in map(json.loads, inputs["truth"].open()):
        (folder / f"{record['doc_id']}.json").write_text(json.dumps(record["document"]))
    assert main(_score(inputs, tmp_path / "a.csv")) == 0
    assert main(_score(inputs, tmp_path / "b.csv", truth=folder)) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    (folder / "README.txt").write_text("notes")
    assert main(_score(inputs, tmp_path / "c.csv", truth=folder)) == 1
    assert _error(capsys) == (f"{folder}: a folder of documents must hold only <doc_id>.json "
                              "files (hidden files aside); found 1 other entries, first "
                              "'README.txt'")


def test_progress_bar_only_when_asked_and_same_result(inputs, tmp_path, capsys):
    assert main(_score(inputs, tmp_path / "plain.parquet")) == 0
    assert "doc/s" not in capsys.readouterr().err  # not a terminal: no bar
    assert main(_score(inputs, tmp_path / "bar.parquet", "--progress")) == 0
    assert "doc/s" in capsys.readouterr().err  # tqdm's rate, on stderr
    pd.testing.assert_frame_equal(read_entities(tmp_path / "plain.parquet"),
                                  read_entities(tmp_path / "bar.parquet"))


def test_strict_and_counted_missing_predictions(inputs, tmp_path, capsys):
    few = _write_jsonl(tmp_path / "few.jsonl",
                       [json.loads(line) for line in inputs["calibrated"].open()][:15])
    assert main(_score(inputs, tmp_path / "a.csv", pred=few)) == 0
    assert "note: 5 truth documents without a prediction (scored as all missing)" in \
        capsys.readouterr().out
    assert main(_score(inputs, tmp_path / "b.csv", "--strict", pred=few)) == 1
    # the command's spelling of the option, not the library's keyword
    assert "every truth document must have a prediction (--strict)" in _error(capsys)


def test_fields_and_doc_ids_in_another_case(inputs, tmp_path, capsys):
    records = [json.loads(line) for line in inputs["calibrated"].open()]
    lowered = [{"doc_id": r["doc_id"], "document": {k.lower(): v for k, v in
                                                    r["document"].items()}} for r in records]
    pred = _write_jsonl(tmp_path / "lower.jsonl", lowered)
    assert main(_score(inputs, tmp_path / "a.csv", pred=pred)) == 1
    err = _error(capsys)
    assert "predicted field names must be spelled as in the schema; found 'agency' for the " \
           "schema's 'Agency'" in err and "(--allow-case-mismatch ignores it" in err
    assert not (tmp_path / "a.csv").exists()
    # opted out: the note names the fields and how many there are
    assert main(_score(inputs, tmp_path / "b.csv", "--allow-case-mismatch", pred=pred)) == 0
    out = capsys.readouterr().out
    n_keys = sum(len(r["document"]) for r in records)
    names = list(dict.fromkeys(k for r in lowered for k in r["document"]))
    shown = ", ".join(repr(n) for n in names[:5])
    assert f"note: {n_keys:,} predicted fields not in the schema (ignored), {len(names)} " \
           f"distinct: {shown}" in out
    upper = [{"doc_id": r["doc_id"].upper(), "document": r["document"]} for r in records]
    assert main(_score(inputs, tmp_path / "c.csv",
                       pred=_write_jsonl(tmp_path / "upper.jsonl", upper))) == 1
    first = json.loads(inputs["truth"].open().readline())["doc_id"]
    assert f"first {first.upper()!r} (the truth has {first!r}, which differs from it only " \
           "in case)" in _error(capsys)


def test_debug_adds_the_traceback(inputs, tmp_path, capsys):
    missing = str(tmp_path / "missing.jsonl")
    assert main(["--debug", *_score(inputs, tmp_path / "o.csv", truth=Path(missing))]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.strip().endswith("found nothing at that path")
    # after the subcommand too
    assert main([*_score(inputs, tmp_path / "o.csv", truth=Path(missing)), "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_report_refuses_a_folder_that_is_not_a_report(inputs, tmp_path, capsys):
    assert main(_score(inputs, tmp_path / "e.csv", "--meta", "model=m")) == 0
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    assert main(["report", str(tmp_path / "e.csv"), "--n-resamples", "0", "-o", str(mine)]) == 1
    assert "must be new, empty or a previous confcal report" in _error(capsys)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.csv", "mine"]


def test_error_locations_match_whole_doc_ids():
    # the doc_id attribute is looked up, not the message: doc 1 never claims doc 10's error
    from confcal.cli._main import _stream_error
    from confcal.exceptions import ValidationError
    from confcal.scoring._documents import Read, Where

    message = "doc 10, field Agency: confidence must be a number within [0, 1]; found 2"
    recent = {1: Read(Where("t.jsonl", 1), None, 0), 10: Read(Where("t.jsonl", 10), None, 9)}
    exc = ValidationError(message, doc_id=10, field="Agency")
    assert _stream_error(exc, recent) == f"{message} (truth at t.jsonl, line 10)"


def test_streamed_score_errors_name_the_truth_file_and_line(tmp_path):
    # Found in review: a repeated truth doc_id was reported as stream positions (0-based),
    # and an empty truth file without its name.
    truth = tmp_path / "T.jsonl"
    truth.write_text('{"doc_id": "d1", "document": {"Agency": "A"}}\n'
                     '{"doc_id": "d2", "document": {"Agency": "B"}}\n'
                     '{"doc_id": "d2", "document": {"Agency": "C"}}\n')
    pred = tmp_path / "P.jsonl"
    pred.write_text('{"doc_id": "d1", "document": {"Agency": "A"}}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    for t, message in ((truth, "T.jsonl, line 3: doc_id must be unique; found 'd2' again "
                               "(first as document 2 of T.jsonl)"),
                       (empty, "empty.jsonl: must hold at least one document; found none")):
        proc = subprocess.run(
            [sys.executable, "-m", "confcal", "score", "--schema", "fcc-invoice", "--truth",
             str(t), "--pred", str(pred), "-o", str(tmp_path / "out.parquet")],
            capture_output=True, text=True, env=_env())
        assert proc.returncode == 1, proc.stderr
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr
        assert not (tmp_path / "out.parquet").exists()


def test_budgets_default_is_the_library_default():
    # --budgets defaults to None and is read as confcal.metrics.DEFAULT_BUDGETS when used,
    # so the command line has no budget tuple of its own (and no numpy at start-up)
    from confcal.cli import _main
    from confcal.metrics import DEFAULT_BUDGETS

    args = _main._parser().parse_args(["report", "x.parquet", "-o", "out"])
    assert args.budgets is None
    assert _main._budgets_or_default(args.budgets) is DEFAULT_BUDGETS
    assert _main._budgets_or_default((0.2,)) == (0.2,)
    # the help texts spell the default out ("default 0.1,0.3"): they must say the truth
    assert ",".join(f"{b:g}" for b in DEFAULT_BUDGETS) == "0.1,0.3"


def test_report_with_a_baseline_adds_paired_differences(inputs, tmp_path):
    for pred, model, out in (("calibrated", "calibrated", "a.parquet"),
                             ("hostile", "logprob", "b.csv")):
        done = run("score", "--schema", "fcc-invoice", "--truth", inputs["truth"], "--pred",
                   inputs[pred], "--meta", f"model={model}", "-o", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = run("report", "a.parquet", "b.csv", "--by", "model", "--n-resamples", "50",
               "--baseline", "calibrated", "-o", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    assert "differences from model=calibrated (paired, same documents" in done.stdout
    diff_line = next(line for line in done.stdout.splitlines()
                     if line.strip().startswith("logprob") and " p=" in line)
    metrics = pd.read_csv(tmp_path / "rep" / "metrics.csv")
    # the library's paired comparison of the same tables, read back from disk
    tables = {"calibrated": read_entities(tmp_path / "a.parquet"),
              "logprob": read_entities(tmp_path / "b.csv")}
    with pytest.warns(confcal.report.SmallSampleWarning, match="from 20 documents"):
        expected = confcal.compare_systems(tables, baseline="calibrated", n_resamples=50,
                                           seed=0).set_index(["system", "metric"])
    row = metrics.set_index("model").loc["logprob"]
    for metric in ("woa", "f1", "auroc", "ece", "debiased_ece", "smooth_ece", "brier",
                   "ecarb@0.1", "ecarb@0.3"):
        want = expected.loc[("logprob", metric)]
        assert row[f"{metric}_diff"] == pytest.approx(want["difference"], abs=1e-12)
        assert row[f"{metric}_diff_low"] == pytest.approx(want["low"], abs=1e-12)
        assert row[f"{metric}_diff_p"] == pytest.approx(want["p_value"], abs=1e-12)
    auroc = expected.loc[("logprob", "auroc")]
    assert f"{auroc['difference']:+.3f} [{auroc['low']:+.3f}, {auroc['high']:+.3f}]" in diff_line
    baseline = metrics.set_index("model").loc["calibrated"]
    assert baseline[["auroc_diff", "auroc_diff_p"]].isna().all()
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<h2>Differences from model=calibrated</h2>" in page
    assert f"{auroc['difference']:+.3f}<br>" in page
    assert "consistency band" in page  # the reliability panels' caption


def test_baseline_errors(inputs, tmp_path, capsys):
    entities = tmp_path / "e.csv"
    main(["score", "--schema", "fcc-invoice", "--truth", str(inputs["truth"]), "--pred",
          str(inputs["calibrated"]), "--meta", "model=m", "-o", str(entities)])
    capsys.readouterr()
    assert main(["report", str(entities), "--baseline", "m", "--n-resamples", "0",
                 "-o", str(tmp_path / "r")]) == 2
    assert "--baseline: needs --n-resamples >= 1" in capsys.readouterr().err
    assert main(["report", str(entities), "--by", "model", "--baseline", "other",
                 "-o", str(tmp_path / "r")]) == 1
    assert ("baseline must be a value of the column 'model' (one of ['m']); found 'other'"
            in capsys.readouterr().err)
    assert not (tmp_path / "r").exists()


HIDDEN_RUN = "evil\u202egpj.exe\x1b[31mRED\x1b]0;title\x07\r\x9b2J"
TERMINAL_CONTROLS = ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2066", "\u200f")


def test_nothing_from_the_data_reaches_the_terminal_as_a_control(tmp_path, capsys):
    # run names, doc ids and field names hold escape sequences and bidi overrides
    truth = {"d\u2066x\x1b[2J": {"Agency": "ACME", "GrossTotal": "12"}}
    pred = {"d\u2066x\x1b[2J": {"Agency": {"value": "ACME", "confidence": 0.9},
                                "Gross\x1b[1mTotal\u200f": {"value": "1", "confidence": 0.4}}}
    table = score_documents(FCC_INVOICE, truth, pred).entities
    table = pd.concat([table.assign(model=HIDDEN_RUN), table.assign(model="ok\u200f")])
    path = tmp_path / "e.csv"
    confcal.scoring.io.write_entities(table, path)
    out = tmp_path / "report"
    assert main(["report", str(path), "--n-resamples", "0", "--title", "T\u202e\x1b[5m",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr()
    for stream in (printed.out, printed.err):
        assert not any(c in stream for c in TERMINAL_CONTROLS), stream
    assert "evil\\u202egpj.exe\\x1b[31mRED\\x1b]0;title\\x07" in printed.out
    # the report's pages follow one rule: no bidi control or control character in either
    for page in ("report.html", "report.md"):
        text = (out / page).read_text(encoding="utf-8")
        assert not any(c in text for c in TERMINAL_CONTROLS if c != "\r"), page
        assert "evil\ufffdgpj.exe" in text
    # an error's message too (its doc id from the data)
    bad = tmp_path / "pred.jsonl"
    bad.write_text(json.dumps({"doc_id": "x\x1b[2J", "document": {"Agency": {
        "value": "A", "confidence": 2}}}) + "\n")
    truth_file = tmp_path / "truth.jsonl"
    truth_file.write_text(json.dumps({"doc_id": "x\x1b[2J", "document": {"Agency": "A"}}) + "\n")
    assert main(["score", "--schema", "fcc-invoice", "--truth", str(truth_file), "--pred",
                 str(bad), "-o", str(tmp_path / "x.csv")]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "confidence must be a number within [0, 1]" in err


def test_report_refuses_work_beyond_max_work_naming_the_flag(inputs, tmp_path, capsys):
    table = tmp_path / "e.csv"
    assert main(_score(inputs, table)) == 0
    capsys.readouterr()
    out = tmp_path / "r"
    assert main(["report", str(table), "--n-resamples", "1000000000", "-o", str(out)]) == 1
    err = _error(capsys)
    assert "rankings, n_resamples + 1" in err
    assert "more than --max-work 20000000000 allows" in err and not out.exists()
    assert main(["report", str(table), "--n-resamples", "10", "--max-work", "1e3", "-o",
                 str(out)]) == 1
    assert "more than --max-work 1000 allows" in _error(capsys)
