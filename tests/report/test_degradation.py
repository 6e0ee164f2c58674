"""confcal.report.degradation: catastrophic failures and degradation tiers, on hand-worked
tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from confcal import Field, Items, Number, Schema, Text, score_documents
from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.report.degradation import TIERS, catastrophic_failures, degradation_tiers


def _rows(doc, outcomes, *, fields=None, similarity=None, weight=None, **meta):
    """Entity rows of one document: one per outcome, top-level fields F0, F1, ..."""
    fields = fields or [f"F{i}" for i in range(len(outcomes))]
    similarity = similarity or [1.0 if o in ("TP", "TN") else 0.0 for o in outcomes]
    weight = weight or [1.0] * len(outcomes)
    return [{"doc_id": doc, "field": f, "truth_index": pd.NA, "pred_index": pd.NA,
             "outcome": o, "similarity": s, "weight": w, **meta}
            for f, o, s, w in zip(fields, outcomes, similarity, weight, strict=True)]


# ------------------------------------------------------------------ catastrophic failures
def test_more_than_80_percent_of_truth_types_null_is_catastrophic():
    entities = pd.DataFrame(
        _rows("a", ["FN", "FN", "FN", "FN", "TP"])            # 4/5 = 0.8: not more than 0.8
        + _rows("b", ["FN", "FN", "FN", "FN", "FN", "TP"])    # 5/6 = 0.833: catastrophic
        + _rows("c", ["FN", "FN", "FA", "TN", "TN"])          # 2/2: FA/TN have no truth
        + _rows("d", ["TN", "FA"]))                           # no truth at all
    out = catastrophic_failures(entities)
    assert list(out.columns) == ["doc_id", "n_types", "n_null", "null_fraction", "catastrophic"]
    assert out["n_types"].tolist() == [5, 6, 2, 0]
    assert out["n_null"].tolist() == [4, 5, 2, 0]
    assert out["null_fraction"].tolist()[:3] == [0.8, 5 / 6, 1.0]
    assert np.isnan(out["null_fraction"].iloc[3])
    assert out["catastrophic"].tolist() == [False, True, True, False]


def test_a_line_item_type_is_null_only_when_none_of_its_items_got_a_value():
    # LineItems.Rate: one item predicted (FD), one missed (FN) -> the type is not null.
    # LineItems.Description: both missed -> null. Agency: FN -> null. 2 of 3 types null.
    entities = pd.DataFrame(
        _rows("a", ["FN"], fields=["Agency"])
        + _rows("a", ["FD", "FN", "FN", "FN"],
                fields=["LineItems.Rate", "LineItems.Rate", "LineItems.Description",
                        "LineItems.Description"]))
    out = catastrophic_failures(entities, null_fraction=0.5)
    assert (out["n_types"].item(), out["n_null"].item()) == (3, 2)
    assert out["catastrophic"].item()  # 2/3 > 0.5
    assert not catastrophic_failures(entities, null_fraction=2 / 3)["catastrophic"].item()


def test_catastrophic_failures_groups_by_the_metadata_columns():
    entities = pd.DataFrame(
        _rows("a", ["FN", "FN"], model="m1") + _rows("a", ["TP", "FN"], model="m2"))
    out = catastrophic_failures(entities)
    assert out[["doc_id", "model", "catastrophic"]].values.tolist() == [
        ["a", "m1", True], ["a", "m2", False]]
    pooled = catastrophic_failures(entities, by=[])  # one extraction of 2 types, 1 null
    assert pooled["n_types"].item() == 2 and pooled["n_null"].item() == 1


def test_catastrophic_failures_reads_a_scored_entity_table():
    schema = Schema({"Agency": Field(Text()), "Total": Field(Number()),
                     "LineItems": Items({"Rate": Field(Number())})})
    truths = {"x": {"Agency": "ACME", "Total": "10", "LineItems": [{"Rate": 1}, {"Rate": 2}]},
              "y": {"Agency": "ACME", "Total": "10", "LineItems": [{"Rate": 1}]}}
    predictions = {"x": {"Agency": None, "Total": None, "LineItems": []},
                   "y": {"Agency": "ACME", "Total": None, "LineItems": [{"Rate": 1}]}}
    entities = score_documents(schema, truths, predictions,
                               metadata={d: {"modality": "ocr"} for d in truths}).entities
    out = catastrophic_failures(entities)
    assert out["doc_id"].tolist() == ["x", "y"] and out["modality"].tolist() == ["ocr"] * 2
    assert out["null_fraction"].tolist() == [1.0, 1 / 3]
    assert out["catastrophic"].tolist() == [True, False]


def test_catastrophic_failures_validates_its_input():
    with pytest.raises(ValidationError, match=r"entities must have the columns \['doc_id', "
                                              r"'field', 'outcome'\].*without \['outcome'\]"):
        catastrophic_failures(pd.DataFrame({"doc_id": ["a"], "field": ["F"]}))
    with pytest.raises(ValidationError, match=r"outcome must be one of.*found 1 rows breaking "
                                              r"it, first at row 1 \('OK'\)"):
        catastrophic_failures(pd.DataFrame({"doc_id": ["a", "a"], "field": ["F", "G"],
                                            "outcome": ["TP", "OK"]}))
    with pytest.raises(ValidationError, match=r"null_fraction must be a number in \[0, 1\]"):
        catastrophic_failures(pd.DataFrame(_rows("a", ["TP"])), null_fraction=80)
    with pytest.raises(ValidationError, match="by must name columns of entities"):
        catastrophic_failures(pd.DataFrame(_rows("a", ["TP"])), by=["model"])


# --------------------------------------------------------------------------- tiers
def _variant(pipeline, doc, similarities, **meta):
    outcomes = ["TP" if s == 1 else "FD" for s in similarities]
    return _rows(doc, outcomes, similarity=list(similarities), pipeline=pipeline, **meta)


def test_tiers_from_the_accuracy_drop_on_shared_documents():
    rows = (_variant("original", "a", [1, 1, 1, 1]) + _variant("original", "b", [1, 1, 0, 0])
            # jpeg on a and b: WOA 7/8 against the baseline's 6/8 -> drop -0.125 (better): mild
            + _variant("jpeg", "a", [1, 1, 1, 1]) + _variant("jpeg", "b", [1, 1, 1, 0])
            # stains on a only: 0.96 against 1.0 on a -> drop 0.04: mild
            + _variant("stains", "a", [1, 1, 1, 0.84])
            # fax on a and c (c has no baseline): 0.8 against 1.0 -> drop 0.2: high
            + _variant("fax", "a", [1, 1, 1, 0.2]) + _variant("fax", "c", [1, 1, 1, 1]))
    out = degradation_tiers(pd.DataFrame(rows))
    assert out["pipeline"].tolist() == ["jpeg", "stains", "fax"]
    assert out["n_documents"].tolist() == [2, 1, 1]
    assert out["n_only_pipeline"].tolist() == [0, 0, 1]
    assert out["n_only_baseline"].tolist() == [0, 1, 1]
    assert out["baseline_accuracy"].tolist() == [0.75, 1.0, 1.0]
    assert out["accuracy"].tolist() == pytest.approx([0.875, 0.96, 0.8])
    assert out["drop"].tolist() == pytest.approx([-0.125, 0.04, 0.2])
    assert out["tier"].tolist() == ["mild", "mild", "high"]
    assert set(out["tier"]) <= set(TIERS)


@pytest.mark.parametrize("accuracy, tier", [
    (0.80, "moderate"),   # 0.85 - 0.80 = 0.04999999999999993 in floats: 5 points, moderate
    (0.8001, "mild"),     # 4.99 points
    (0.75, "moderate"),   # 10 points exactly: the moderate band is closed
    (0.7499, "high"),     # 10.01 points
])
def test_tier_edges_are_read_in_points(accuracy, tier):
    # one entity per document: WOA is the similarity itself
    rows = (_rows("a", ["FD"], similarity=[0.85], pipeline="original")
            + _rows("a", ["FD"], similarity=[accuracy], pipeline="blur"))
    assert degradation_tiers(pd.DataFrame(rows))["tier"].item() == tier


def test_woa_weights_are_used_and_tn_rows_ignored():
    rows = (_rows("a", ["TP", "FD", "TN"], similarity=[1.0, 0.0, 1.0], weight=[3.0, 1.0, 5.0],
                  pipeline="original")                   # (3*1 + 1*0) / 4 = 0.75
            + _rows("a", ["FD", "TP", "TN"], similarity=[0.0, 1.0, 1.0], weight=[3.0, 1.0, 5.0],
                    pipeline="noise"))                   # (3*0 + 1*1) / 4 = 0.25
    out = degradation_tiers(pd.DataFrame(rows))
    assert (out["baseline_accuracy"].item(), out["accuracy"].item()) == (0.75, 0.25)
    assert out["drop"].item() == 0.5 and out["tier"].item() == "high"


def test_each_by_group_has_its_own_baseline():
    rows = (_variant("original", "a", [1, 1], model="m1")
            + _variant("blur", "a", [1, 0.8], model="m1")
            + _variant("original", "a", [1, 0], model="m2")
            + _variant("blur", "a", [1, 0], model="m2"))
    out = degradation_tiers(pd.DataFrame(rows), by=["model"])
    assert out[["model", "pipeline", "drop", "tier"]].values.tolist() == [
        ["m1", "blur", pytest.approx(0.1), "moderate"], ["m2", "blur", 0.0, "mild"]]
    with pytest.raises(ValidationError, match="must score each document once per \\(by, "
                                              "pipeline\\) group; found doc_id 'a' in pipeline "
                                              "'original' with 2 rows for field 'F0'.*"
                                              "metadata columns here: \\['model'\\]"):
        degradation_tiers(pd.DataFrame(rows))


def test_a_source_column_names_the_document_when_variants_have_their_own_ids():
    rows = (_variant("original", "a", [1, 1]) + _variant("blur", "a__blur", [1, 0]))
    frame = pd.DataFrame(rows)
    frame["source"] = frame["doc_id"].str.split("__").str[0]
    out = degradation_tiers(frame, doc="source")
    assert out["n_documents"].item() == 1 and out["drop"].item() == 0.5


def test_a_pipeline_without_shared_documents_is_undefined_and_counted():
    rows = _variant("original", "a", [1]) + _variant("blur", "b", [1])
    with pytest.warns(UndefinedMetricWarning, match="pipeline 'blur' is undefined: no document "
                                                    "in both"):
        out = degradation_tiers(pd.DataFrame(rows))
    assert out["n_documents"].item() == 0
    assert (out["n_only_pipeline"].item(), out["n_only_baseline"].item()) == (1, 1)
    assert np.isnan(out["drop"].item()) and out["tier"].item() is None


def test_the_undefined_drop_warning_names_the_group_and_points_at_the_caller():
    # in run "m2" blur shares no document with the baseline; in run "m1" it shares "a"
    rows = [dict(r, model=m) for m, part in (
        ("m1", _variant("original", "a", [1]) + _variant("blur", "a", [1])),
        ("m2", _variant("original", "a", [1]) + _variant("blur", "b", [1]))) for r in part]
    with pytest.warns(UndefinedMetricWarning, match=r"pipeline 'blur' for \{'model': 'm2'\} "
                                                    r"is undefined") as record:
        out = degradation_tiers(pd.DataFrame(rows), by=["model"])
    assert [w.filename for w in record] == [__file__]  # the line that called degradation_tiers
    assert out["n_documents"].tolist() == [1, 0]

def test_degradation_tiers_validates_its_input():
    rows = pd.DataFrame(_variant("original", "a", [1]))
    with pytest.raises(ValidationError, match="pass the degradation pipeline of each document "
                                              "to score_documents as metadata"):
        degradation_tiers(rows.drop(columns="pipeline"))
    with pytest.raises(ValidationError, match=r"baseline must be a pipeline of entities; found "
                                              r"'clean' absent from the pipelines \['original'\]"):
        degradation_tiers(rows, baseline="clean")
    with pytest.raises(ValidationError, match="pipeline must not be missing; found 1 rows"):
        degradation_tiers(rows.assign(pipeline=[None]))
    with pytest.raises(ValidationError, match="similarity and weight must be finite"):
        degradation_tiers(rows.assign(similarity=[np.nan]))
    with pytest.raises(ValidationError, match="entities must be a pandas DataFrame"):
        degradation_tiers(rows.to_dict("records"))
