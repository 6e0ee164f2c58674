"""confcal.scoring.io: documents in, entity tables out and back, errors that say where."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from confcal.exceptions import ValidationError
from confcal.scoring import score_documents
from confcal.scoring.io import check_entities, read_documents, read_entities, write_entities
from confcal.scoring.presets import FCC_INVOICE


@pytest.fixture(scope="module")
def entities() -> pd.DataFrame:
    truths = {"inv-1": {"Agency": "NA", "GrossTotal": "100.00", "PaymentTerms": None,
                        "LineItems": [{"Description": "News", "Rate": "50"}]},
              "007": {"Agency": "Zenith", "GrossTotal": "10"}}
    preds = {"inv-1": {"Agency": {"value": "NA", "confidence": 0.9},
                       "GrossTotal": {"value": 100.0, "confidence": 0.8},
                       "LineItems": [{"Description": "News", "Rate": 50}]},
             "007": {"Agency": {"candidates": [{"value": "Zenit", "probability": 0.6}]}}}
    meta = {"inv-1": {"model": "m"}, "007": {"model": "m"}}
    return score_documents(FCC_INVOICE, truths, preds, metadata=meta).entities


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".csv.gz"])
def test_entity_tables_round_trip(entities, tmp_path, suffix):
    path = write_entities(entities, tmp_path / f"entities{suffix}")
    back = read_entities(path)
    assert list(back.columns) == list(entities.columns)
    # 6 top-level fields + 5 sub-fields of one line item; "007" has no items: 6 rows
    assert back["doc_id"].tolist() == ["inv-1"] * 11 + ["007"] * 6  # "007" stays text
    for column in ("correct", "confidence", "similarity", "weight", "threshold"):
        np.testing.assert_array_equal(back[column].to_numpy(dtype=float),
                                      entities[column].to_numpy(dtype=float))
    assert back["outcome"].tolist() == entities["outcome"].astype(str).tolist()
    # values come back with their types, missing stays missing, and the text "NA" is a value
    first = back.iloc[0]
    assert (first["truth"], first["prediction"]) == ("NA", "NA")
    gross = back[back["field"] == "GrossTotal"].iloc[0]
    assert (gross["truth"], gross["prediction"]) == ("100.00", 100.0)
    assert type(gross["prediction"]) is float
    terms = back[back["field"] == "PaymentTerms"].iloc[0]
    assert terms["truth"] is None and terms["prediction"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"entities{suffix}"]  # no temp file


def test_write_entities_refuses_unknown_formats(entities, tmp_path):
    with pytest.raises(ValidationError, match=r"path must end in one of .parquet, .csv, "
                                              r".csv.gz; found 'e.xlsx'"):
        write_entities(entities, tmp_path / "e.xlsx")


def test_write_entities_never_creates_a_missing_folder(entities, tmp_path):
    # a typo in the folder is an error, not a new folder tree (docs/cli.md, crash safety)
    with pytest.raises(ValidationError, match=r"the folder '.*typo' must exist; found no such "
                                              r"folder \(create it first\)"):
        write_entities(entities, tmp_path / "typo" / "e.parquet")
    assert not (tmp_path / "typo").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValidationError, match=r"must exist; found a file"):
        write_entities(entities, tmp_path / "file" / "e.csv")


def test_read_entities_names_the_file_and_the_line(entities, tmp_path):
    path = tmp_path / "e.csv"
    entities.drop(columns=["similarity", "weight"]).to_csv(path, index=False)
    with pytest.raises(ValidationError, match=r"e.csv must have the entity-table columns .* "
                                              r"found 2 missing: \['similarity', 'weight'\]"):
        read_entities(path)
    bad = entities.copy()
    bad["outcome"] = bad["outcome"].astype(str)
    bad.loc[3, "outcome"] = "OK"
    bad.to_csv(path, index=False)
    with pytest.raises(ValidationError, match=r"column outcome must be one of TP, FD, FA, FN, "
                                              r"TN; found 1 value breaking it, first on line 5"):
        read_entities(path)
    (tmp_path / "broken.csv.gz").write_bytes(b"not gzip")
    with pytest.raises(ValidationError, match="broken.csv.gz: must be a readable .csv.gz"):
        read_entities(tmp_path / "broken.csv.gz")


@pytest.mark.parametrize(("change", "message"), [
    ({"weight": 0.0}, r"column weight must be finite and within \[1e-100, 1e\+100\] \(sums "
                      r"stay finite\); found 17 values breaking it, first on row 0 \(0.0\)"),
    # 1e308: Σ weight overflows and WOA became inf/inf = NaN ("every row is TN")
    ({"weight": 1e308}, r"column weight must be finite and within \[1e-100, 1e\+100\]"),
    ({"weight": 1e-320}, r"column weight must be finite and within \[1e-100, 1e\+100\]"),
    ({"correct": "1"}, r"column correct must be true/false \(or 1/0\)"),
    ({"similarity": 1.2}, r"column similarity must be within \[0, 1\]"),
    ({"correct": "yes"}, r"column correct must be true/false \(or 1/0\)"),
    ({"doc_id": None}, "column doc_id must not be empty"),
])
def test_check_entities_rules(entities, change, message):
    with pytest.raises(ValidationError, match=message):
        check_entities(entities.assign(**change))


def test_check_entities_accepts_zero_one_labels(entities):
    out = check_entities(entities.assign(correct=entities["correct"].astype(int)))
    assert out["correct"].dtype == bool


def test_read_documents_jsonl_gzip_and_errors(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write('{"doc_id": 7, "document": {"Agency": "A"}}\n\n')
        fh.write('{"doc_id": "b", "document": {"Agency": "B"}}\n')
    assert read_documents(path) == {7: {"Agency": "A"}, "b": {"Agency": "B"}}
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"doc_id": "a", "document": {}}\n{"doc_id": "\xff"}\n')
    with pytest.raises(ValidationError, match=r"bad.jsonl, line 2: must be UTF-8 text"):
        read_documents(bad)
    bad.write_text('{"doc_id": true, "document": {}}\n')
    with pytest.raises(ValidationError, match=r"line 1: doc_id must be a non-empty string or "
                                              r"an integer; found True"):
        read_documents(bad)
    bad.write_text('{"doc_id": "a", "document": []}\n')
    with pytest.raises(ValidationError, match=r"line 1: document must be a JSON object of "
                                              r"field names to values; found a JSON list"):
        read_documents(bad)
    bad.write_text("\n\n")
    with pytest.raises(ValidationError, match="must contain at least one document; found none"):
        read_documents(bad)
    single = tmp_path / "one.json"
    single.write_text('{\n  "Agency": "A"\n}\n')
    with pytest.raises(ValidationError, match=r"one.json, line 1: must be valid JSON.*a .json "
                                              r"file is read as JSONL"):
        read_documents(single)


def test_read_documents_folder(tmp_path):
    (tmp_path / "inv-2.json").write_text('{"Agency": "B"}')
    (tmp_path / "inv-1.json").write_text('{"Agency": "A"}')
    (tmp_path / ".DS_Store").write_bytes(b"\x00")
    assert list(read_documents(tmp_path).items()) == [("inv-1", {"Agency": "A"}),
                                                      ("inv-2", {"Agency": "B"})]
    (tmp_path / "inv-3.json").write_text('["not", "a", "document"]')
    with pytest.raises(ValidationError, match=r"inv-3.json: must be one JSON object \(the "
                                              r"document\); found a JSON list"):
        read_documents(tmp_path)


def test_written_entity_tables_follow_the_umask(tmp_path):
    # mkstemp creates 0600; the finished table must get the mode of any new file
    import os
    import stat

    from confcal import load_demo
    from confcal.scoring.io import write_entities

    entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    old = os.umask(0o022)
    try:
        path = write_entities(entities, tmp_path / "entities.csv")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
