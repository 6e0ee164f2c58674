"""Errors that carry their location (file, line, document and field path): ValidationError's
attributes, set by every kind of raise site, and a command that formats them without reading
messages."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from confcal.cli import _main as cli
from confcal.exceptions import ValidationError
from confcal.scoring import (
    _columns,
    _items,
    _scoring,
    _stream,
    score_documents,
    score_documents_iter,
)
from confcal.scoring._documents import paired_documents
from confcal.scoring.comparators import Number, Text
from confcal.scoring.io import iter_entities, read_documents, read_entities
from confcal.scoring.predictions import parse_prediction
from confcal.scoring.schema import Field, Items, Schema

SCHEMA = Schema({"Agency": Field(Text()),
                 "LineItems": Items({"Description": Field(Text()), "Rate": Field(Number())})})


def _jsonl(path: Path, records: list[tuple[Any, Any]]) -> Path:
    path.write_text("".join(json.dumps({"doc_id": d, "document": doc}) + "\n"
                            for d, doc in records), encoding="utf-8")
    return path


def _raised(call: Any, *args: Any, **kwargs: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        result = call(*args, **kwargs)
        if hasattr(result, "__next__"):
            list(result)
    return info.value


# ------------------------------------------------------------------- the exception itself
def test_plain_construction_is_unchanged():
    exc = ValidationError("n_bins must be an integer >= 1; found 0")
    assert str(exc) == "n_bins must be an integer >= 1; found 0"
    assert exc.args == ("n_bins must be an integer >= 1; found 0",)
    assert exc.location == {}
    assert (exc.source, exc.line, exc.doc_id, exc.field, exc.index) == (None,) * 5
    assert isinstance(exc, ValueError)


def test_location_is_in_order_and_with_location_only_fills_in():
    exc = ValidationError("m", index=4, field="LineItems[3].Rate", doc_id="inv-17",
                          source=Path("t.jsonl"))
    assert list(exc.location) == ["source", "doc_id", "field", "index"]
    assert exc.source == "t.jsonl"  # a str, whatever path-like was given
    more = exc.with_location(line=17, doc_id="other", source=None)
    assert more is not exc and str(more) == "m"
    assert more.location == {"source": "t.jsonl", "line": 17, "doc_id": "inv-17",
                             "field": "LineItems[3].Rate", "index": 4}
    assert exc.line is None  # the original is untouched
    with pytest.raises(TypeError, match="with_location"):
        exc.with_location(column="x")


def test_with_location_keeps_subclass_traceback_and_pickles():
    from confcal.extras.augment import EnvelopeError

    try:
        raise EnvelopeError("outside the envelope", [{"rule": "x"}])
    except EnvelopeError as exc:
        copy = exc.with_location(source="pipeline.json")
    assert type(copy) is EnvelopeError and copy.violations == [{"rule": "x"}]
    assert copy.__traceback__ is not None and copy.source == "pipeline.json"
    back = pickle.loads(pickle.dumps(ValidationError("m", doc_id="a", line=3)))
    assert str(back) == "m" and back.location == {"line": 3, "doc_id": "a"}


def test_an_option_is_written_as_its_caller_spells_it():
    exc = ValidationError("doc 'a': needs a prediction ({option}); found none",
                          option=("strict", True), doc_id="a")
    assert str(exc) == "doc 'a': needs a prediction (strict=True); found none"
    assert exc.message(lambda name, value: f"--{name}") == \
        "doc 'a': needs a prediction (--strict); found none"
    assert exc.location == {"doc_id": "a"}  # an option is no location
    back = pickle.loads(pickle.dumps(exc.with_location(line=4)))
    assert str(back) == str(exc) and back.option == ("strict", True) and back.line == 4
    # without an option, braces in a message are text
    assert str(ValidationError("found {option} and {}")) == "found {option} and {}"


# ------------------------------------------------------------- the scorer: doc and field
@pytest.mark.parametrize("conventions", ["confcal", "stickler-1.0"])
@pytest.mark.parametrize("pred, field", [
    ({"Agency": {"value": "A", "confidence": 1.5}}, "Agency"),
    ({"LineItems": [{"Rate": 1}, {"Rate": {"value": 2, "confidence": "high"}}]},
     "LineItems[1].Rate"),
    ({"LineItems": [{"Rate": 1}, "not an item"]}, "LineItems[1]"),
    ({"LineItems": "not a list"}, "LineItems"),
])
def test_scorer_errors_carry_doc_id_and_field_path(pred, field, conventions):
    truths = {"a": {"Agency": "A"}, "inv-17": {"Agency": "A", "LineItems": [{"Rate": 1}]}}
    exc = _raised(score_documents, SCHEMA, truths, {"inv-17": pred}, conventions=conventions)
    assert (exc.doc_id, exc.field) == ("inv-17", field)
    assert str(exc).startswith(f"doc 'inv-17', field {field}: ")  # the message as before


def test_scorer_truth_and_document_errors_carry_doc_id():
    exc = _raised(score_documents, SCHEMA, {"a": {"LineItems": [{"Rate": [1, 2]}]}}, {},
                  allow_empty=True)
    assert exc.location == {"doc_id": "a", "field": "LineItems[0].Rate"}
    exc = _raised(score_documents, SCHEMA, {"a": {}, 7: "not a mapping"}, {}, allow_empty=True)
    assert exc.location == {"doc_id": 7}
    exc = _raised(score_documents, SCHEMA, {"a": {}}, {}, strict=True, allow_empty=True)
    assert exc.location == {"doc_id": "a"}
    exc = _raised(score_documents, SCHEMA, [("a", {}), ("b", {}), ("a", {})], {}, allow_empty=True)
    assert exc.location == {"doc_id": "a", "index": 2}


def test_stream_errors_carry_the_position_in_the_stream():
    pairs = [(f"d{i}", {"Agency": "A"}, {"Agency": "A"}) for i in range(10)]
    pairs[7] = ("d7", {"Agency": "A"}, {"Agency": {"value": "A", "confidence": 2}})
    exc = _raised(score_documents_iter, SCHEMA, iter(pairs), chunk_size=3)
    assert exc.location == {"doc_id": "d7", "field": "Agency", "index": 7}  # not 1 (in chunk)
    assert str(exc).startswith("doc 'd7', field Agency: confidence must be")
    exc = _raised(score_documents_iter, SCHEMA, [("a", {}, None), ("b", {}, None), ("a", {}, None)])
    assert exc.location == {"doc_id": "a", "index": 2}
    exc = _raised(score_documents_iter, SCHEMA, [("a", {}, None), "oops"])
    assert exc.location == {"index": 1}


def test_leaf_parsing_names_the_part_of_the_leaf():
    assert _raised(parse_prediction, {"value": "A", "confidence": 1.5}).field == "confidence"
    candidates = {"candidates": [{"value": "A", "probability": 0.5},
                                 {"value": "B", "probability": -1}]}
    assert _raised(parse_prediction, candidates).field == "candidates[1].probability"
    assert _raised(parse_prediction, {"candidates": []}).field == "candidates"
    assert _raised(parse_prediction, {"value": [1], "confidence": 0.5}).field == "value"
    assert _raised(parse_prediction, {"other": 1}).field is None  # the leaf as a whole


# ------------------------------------------------------------------ readers: file and line
def test_jsonl_and_folder_errors_carry_file_and_line(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"doc_id": "a", "document": {}}\n\n{"doc_id": "b", "document": {\n')
    exc = _raised(read_documents, bad)
    assert exc.location == {"source": str(bad), "line": 3}
    assert str(exc).startswith(f"{bad}, line 3: must be valid JSON")
    _jsonl(bad, [("a", {}), ("b", {}), ("a", {})])
    assert _raised(read_documents, bad).location == {"source": str(bad), "line": 3,
                                                      "doc_id": "a"}
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "x.json").write_text('{\n  "Agency": "A",\n  oops\n}')
    exc = _raised(read_documents, folder)
    assert exc.location == {"source": str(folder / "x.json"), "line": 3, "doc_id": "x"}
    assert _raised(read_documents, tmp_path / "none").location == {
        "source": str(tmp_path / "none")}


def test_entity_table_errors_carry_file_and_line_or_row(tmp_path):
    header = "doc_id,field,outcome,correct,confidence,similarity,weight\n"
    csv = tmp_path / "e.csv"
    csv.write_text(header + "a,Agency,TP,True,0.9,1.0,1.0\na,Rate,FD,False,1.5,0.0,1.0\n")
    exc = _raised(read_entities, csv)
    assert exc.location == {"source": str(csv), "line": 3, "field": "confidence"}
    assert _raised(iter_entities, csv, chunk_rows=1).location == exc.location
    table = pd.read_csv(csv)
    parquet = tmp_path / "e.parquet"
    table.to_parquet(parquet, index=False)
    exc = _raised(read_entities, parquet)
    assert exc.location == {"source": str(parquet), "field": "confidence", "index": 1}
    assert _raised(iter_entities, parquet, chunk_rows=1).location == exc.location


def test_paired_documents_errors_are_in_terms_of_the_truth_file(tmp_path):
    pred = _jsonl(tmp_path / "p.jsonl", [("a", {})])
    truth = _jsonl(tmp_path / "t.jsonl", [("a", {}), ("b", {}), ("b", {})])
    exc = _raised(paired_documents, truth, pred)
    assert exc.location == {"source": str(truth), "line": 3, "doc_id": "b", "index": 2}
    assert str(exc) == (f"{truth}, line 3: doc_id must be unique; found 'b' again (first as "
                        "document 2 of t.jsonl)")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    exc = _raised(paired_documents, empty, pred)
    assert exc.location == {"source": str(empty)}
    stray = _jsonl(tmp_path / "stray.jsonl", [("a", {}), ("zz", {})])
    exc = _raised(paired_documents, _jsonl(tmp_path / "t1.jsonl", [("a", {})]), stray)
    assert exc.location == {"source": str(stray), "line": 2, "doc_id": "zz"}


# ----------------------------------------------------------------------- schema JSON path
def test_schema_json_errors_carry_the_json_path():
    exc = _raised(Schema.from_json, '{"fields": {"Agency": {"kind": "feild"}}}')
    assert exc.field == "fields.Agency.kind"
    assert str(exc) == "schema.fields.Agency.kind must be one of 'field', 'items'; found 'feild'"
    text = json.dumps({"fields": {"Agency": {"kind": "field",
                                             "comparator": {"type": "Txet"}}}})
    assert _raised(Schema.from_json, text).field == "fields.Agency.comparator.type"
    text = json.dumps({"fields": {"Agency": {"kind": "field", "comparator": {"type": "Text"},
                                             "threshold": 2}}})
    assert _raised(Schema.from_json, text).field == "fields.Agency"
    assert _raised(Schema.from_json, '{"fields": {}, "colour": 1}').field is None
    assert _raised(Schema.from_json, '{\n"fields": oops}').location == {"line": 2}


# --------------------------------------------------------- the command reads no messages
def _score(truth: Path, pred: Path, out: Path) -> list[str]:
    return ["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(pred),
            "-o", str(out)]


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    docs = [(f"d{i}", {"Agency": "A"}) for i in range(8)]
    preds = list(docs)
    preds[5] = ("d5", {"Agency": {"value": "A", "confidence": 3}})
    return _jsonl(tmp_path / "truth.jsonl", docs), _jsonl(tmp_path / "pred.jsonl", preds)


def test_the_command_finds_the_file_and_line_however_a_message_is_worded(
        files, tmp_path, monkeypatch, capsys):
    truth, pred = files
    # The old command matched messages starting "doc 'd5'"; reworded, it lost the location.
    for module in (_scoring, _columns, _items):  # every module of the scorer that names docs
        monkeypatch.setattr(module, "doc_label", lambda doc_id: f"document «{doc_id}»")
    assert cli.main(_score(truth, pred, tmp_path / "out.csv")) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"confcal: error: document «d5», field Agency: confidence must be a number "
                   f"within [0, 1]; found 3 (truth at {truth}, line 6; prediction at {pred}, "
                   "line 6)")
    assert not (tmp_path / "out.csv").exists()


def test_the_command_formats_the_attributes_of_any_message(files, tmp_path, monkeypatch,
                                                           capsys):
    truth, pred = files

    def scorer(schema: Any, pairs: Any, **kwargs: Any) -> Any:
        for doc_id, _, _ in pairs:
            if doc_id == "d3":
                raise ValidationError("nothing here says where", doc_id="d3", field="Agency")
        yield  # pragma: no cover

    monkeypatch.setattr(_stream, "score_documents_iter", scorer)
    assert cli.main(_score(truth, pred, tmp_path / "out.csv")) == 1
    assert capsys.readouterr().err.strip() == (
        f"confcal: error: nothing here says where (truth at {truth}, line 4; prediction at "
        f"{pred}, line 4)")


def test_the_command_shows_reader_errors_as_raised(files, tmp_path, capsys):
    truth, pred = files
    with truth.open("a") as fh:
        fh.write('{"doc_id": "d3", "document": {}}\n')  # line 9 repeats line 4
    assert cli.main(_score(truth, pred, tmp_path / "out.csv")) == 1
    assert capsys.readouterr().err.strip() == (
        f"confcal: error: {truth}, line 9: doc_id must be unique; found 'd3' again (first as "
        "document 4 of truth.jsonl)")
