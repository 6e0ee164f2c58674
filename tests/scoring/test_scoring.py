"""score_documents and ExtractionResult: every behaviour the scorer promises."""

from __future__ import annotations

import copy
import random
import warnings

import numpy as np
import pandas as pd
import pytest

from confcal.exceptions import UndefinedMetricWarning, ValidationError
from confcal.scoring import (
    ENTITY_COLUMNS,
    OUTCOMES,
    ExtractionResult,
    score_documents,
    score_documents_iter,
)
from confcal.scoring import _scoring as scoring
from confcal.scoring.comparators import Number, Text
from confcal.scoring.matching import match_items
from confcal.scoring.presets import FCC_INVOICE
from confcal.scoring.schema import Field, Items, Schema


def invoice(n_items=3, seed=0):
    rng = random.Random(seed)
    items = [
        {"StartDate": f"2024-03-{k + 1:02d}", "EndDate": f"2024-03-{k + 8:02d}",
         "Days": rng.choice(["M-F", "Sa-Su", "MTWTF--"]), "Description": f"Program number {k}",
         "Rate": f"${100 * (k + 1):,.2f}"}
        for k in range(n_items)
    ]
    return {"Agency": "ACME Media", "Advertiser": "Smith for Senate", "GrossTotal": "$1,000.00",
            "PaymentTerms": "Net 30", "AgencyCommission": "$150.00", "NetAmountDue": "$850.00",
            "LineItems": items}


def with_confidence(doc, confidence=0.9):
    out = {k: {"value": v, "confidence": confidence} for k, v in doc.items() if k != "LineItems"}
    out["LineItems"] = [{k: {"value": v, "confidence": confidence} for k, v in item.items()}
                        for item in doc["LineItems"]]
    return out


def outcomes(result, **where):
    rows = result.entities
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows["outcome"].astype(str).tolist()


# --------------------------------------------------- required behaviour


def test_perfect_predictions_score_one():
    truth = invoice(5)
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": with_confidence(truth)})
    assert result.woa == 1.0 and result.f1 == 1.0
    assert result.precision == 1.0 and result.recall == 1.0
    assert result.counts["TP"] == 6 + 5 * 5


def test_shuffled_line_items_are_still_perfect():
    truth = invoice(8)
    pred = with_confidence(truth)
    random.Random(1).shuffle(pred["LineItems"])
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred})
    assert result.woa == 1.0 and result.f1 == 1.0
    items = result.entities[result.entities["field"].astype(str).str.startswith("LineItems.")]
    # each truth item is paired with the predicted item it was shuffled to
    order = [pred["LineItems"].index(with_confidence(truth)["LineItems"][i]) for i in range(8)]
    assert items.groupby("truth_index")["pred_index"].first().tolist() == order


def test_dropped_line_item_gives_fn_rows():
    truth = invoice(4)
    pred = with_confidence(truth)
    del pred["LineItems"][2]
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred})
    dropped = result.entities[result.entities["truth_index"] == 2]
    assert dropped["outcome"].astype(str).tolist() == ["FN"] * 5
    assert dropped["pred_index"].isna().all() and dropped["confidence"].isna().all()
    assert dropped["similarity"].tolist() == [0.0] * 5
    assert result.counts["FN"] == 5 and result.counts["TP"] == 6 + 3 * 5


def test_invented_line_item_keeps_its_confidence_into_calibration():
    truth = invoice(2)
    pred = with_confidence(truth, 0.6)
    invented = {"StartDate": "2024-09-01", "EndDate": "2024-09-02", "Days": "Su",
                "Description": "Invented show", "Rate": "$999.00"}
    pred["LineItems"].insert(1, {k: {"value": v, "confidence": 0.99} for k, v in invented.items()})
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred})
    fa = result.entities[result.entities["outcome"] == "FA"]
    assert len(fa) == 5
    assert fa["pred_index"].tolist() == [1] * 5 and fa["truth_index"].isna().all()
    assert fa["confidence"].tolist() == [0.99] * 5
    correct, confidence, n_without = result.to_calibration()
    assert (confidence == 0.99).sum() == 5
    assert not correct[confidence == 0.99].any()
    assert n_without == 0 and len(confidence) == len(result.entities)


# Hand-scored fixture: three FCC invoices, every outcome and similarity worked out.
#
# inv-A (2 line items, predicted in swapped order)
#   Agency        "ACME Media" vs "ACME Medla"     1 substitution / 10 chars  TP  sim 0.9
#   Advertiser    equal                                                       TP  1
#   GrossTotal    "$1,000.00" vs "1000"                                       TP  1
#   PaymentTerms  "Net 30" vs None (confidence 0.6)                           FN  0
#   AgencyCommission 150 vs 155: |5| > 0.01 * 155 = 1.55                      FD  0
#   NetAmountDue  equal                                                       TP  1
#   item 0 <-> pred 1: EndDate 2024-03-07 vs 2024-03-08 FD, other 4 TP        4 TP 1 FD
#   item 1 <-> pred 0: dates reformatted, Rate 400 vs 404 (4 <= 4.04): 5 TP   5 TP
#   (pairing: 0.8 + 1.0 = 1.8 beats the crossed pairing, which is at most 0.6 + 0.5)
# inv-B (1 line item; one item invented)
#   Agency equal TP 1; Advertiser "Vote Yes on 3" vs "Yes on 3": 5 deletions / 13 chars,
#   TP sim 8/13; GrossTotal TP 1; PaymentTerms None vs "Net 30" FA 0 (confidence 0.3);
#   AgencyCommission "$375.00" vs absent FN 0; NetAmountDue "$2,125.00" vs "2125" TP 1
#   item 0 <-> pred 0: 4 TP, Days None vs None (confidence 0.8) TN                4 TP 1 TN
#   pred 1 invented, unpaired: 5 FA (confidence 0.99)                                5 FA
# inv-C (2 line items, item 1 dropped)
#   Agency TP 1; Advertiser "Friends of Jane Doe" vs "Jane Doe": 11 deletions / 19 chars,
#   sim 8/19 < 0.5 FD; GrossTotal TP 1; PaymentTerms "Due on receipt" vs "Due upon receipt":
#   2 insertions / 16 chars TP sim 0.875; AgencyCommission TP 1; NetAmountDue 765 vs 756:
#   |9| > 7.65 FD 0
#   item 0 <-> pred 0: 5 TP; item 1 unpaired: 5 FN                                 5 TP 5 FN
#
# Totals: TP 13 + 8 + 9 = 30, FD 2 + 0 + 2 = 4, FA 0 + 6 + 0 = 6, FN 1 + 1 + 5 = 7, TN 1
#   (48 rows = 3 invoices x (6 fields + 2 entries x 5 sub-fields))
# precision = 30 / (30 + 4 + 6) = 0.75
# recall    = 30 / (30 + 4 + 7) = 30 / 41
# F1        = 2*30 / (2*30 + 2*4 + 6 + 7) = 60 / 81
# WOA over the 47 non-TN rows: 27 TP rows at 1, TP rows at 0.9, 8/13 and 0.875,
#   FD rows at 0, 0, 8/19, 0, FA/FN rows at 0:
#   (27 + 0.9 + 8/13 + 0.875 + 8/19) / 47

FIXTURE_TRUTHS = {
    "inv-A": {
        "Agency": "ACME Media", "Advertiser": "Smith for Senate", "GrossTotal": "$1,000.00",
        "PaymentTerms": "Net 30", "AgencyCommission": "$150.00", "NetAmountDue": "$850.00",
        "LineItems": [
            {"StartDate": "2024-03-01", "EndDate": "2024-03-07", "Days": "M-F",
             "Description": "News at 6", "Rate": "$600.00"},
            {"StartDate": "2024-03-01", "EndDate": "2024-03-07", "Days": "Sa-Su",
             "Description": "Late Show", "Rate": "$400.00"},
        ],
    },
    "inv-B": {
        "Agency": "Canal Partners", "Advertiser": "Vote Yes on 3", "GrossTotal": "$2,500.00",
        "PaymentTerms": None, "AgencyCommission": "$375.00", "NetAmountDue": "$2,125.00",
        "LineItems": [
            {"StartDate": "2024-05-01", "EndDate": "2024-05-31", "Days": None,
             "Description": "Morning Edition", "Rate": "$2,500.00"},
        ],
    },
    "inv-C": {
        "Agency": "GMMB", "Advertiser": "Friends of Jane Doe", "GrossTotal": "$900.00",
        "PaymentTerms": "Due on receipt", "AgencyCommission": "$135.00", "NetAmountDue": "$765.00",
        "LineItems": [
            {"StartDate": "2024-06-01", "EndDate": "2024-06-07", "Days": "M-F",
             "Description": "Evening News", "Rate": "$500.00"},
            {"StartDate": "2024-06-08", "EndDate": "2024-06-14", "Days": "Sa",
             "Description": "Weekend Update", "Rate": "$400.00"},
        ],
    },
}


def v(value, confidence=0.9):
    return {"value": value, "confidence": confidence}


FIXTURE_PREDICTIONS = {
    "inv-A": {
        "Agency": v("ACME Medla"), "Advertiser": v("Smith for Senate", 0.95),
        "GrossTotal": v("1000", 0.8), "PaymentTerms": v(None, 0.6),
        "AgencyCommission": v("$155.00", 0.7), "NetAmountDue": v("$850.00", 0.99),
        "LineItems": [
            {"StartDate": v("03/01/2024"), "EndDate": v("March 7, 2024"), "Days": v("Sa-Su"),
             "Description": v("Late Show"), "Rate": v("$404.00")},
            {"StartDate": v("2024-03-01"), "EndDate": v("2024-03-08", 0.5), "Days": v("M-F"),
             "Description": v("News at 6"), "Rate": v("600")},
        ],
    },
    "inv-B": {
        "Agency": v("Canal Partners"), "Advertiser": v("Yes on 3", 0.4),
        "GrossTotal": v("$2,500.00"), "PaymentTerms": v("Net 30", 0.3),
        "NetAmountDue": v("2125"),
        "LineItems": [
            {"StartDate": v("2024-05-01"), "EndDate": v("2024-05-31"), "Days": v(None, 0.8),
             "Description": v("Morning Edition"), "Rate": v("$2,500.00")},
            {k: v(x, 0.99) for k, x in {"StartDate": "2024-05-01", "EndDate": "2024-05-31",
                                         "Days": "M-F", "Description": "Evening News",
                                         "Rate": "$300.00"}.items()},
        ],
    },
    "inv-C": {
        "Agency": v("GMMB", 0.99), "Advertiser": v("Jane Doe", 0.7), "GrossTotal": v("$900"),
        "PaymentTerms": v("Due upon receipt", 0.8), "AgencyCommission": v("135"),
        "NetAmountDue": v("$756.00", 0.85),
        "LineItems": [
            {"StartDate": v("June 1, 2024"), "EndDate": v("06/07/2024"), "Days": v("M-F"),
             "Description": v("Evening News"), "Rate": v("$500")},
        ],
    },
}


@pytest.fixture()
def fixture_result():
    return score_documents(FCC_INVOICE, FIXTURE_TRUTHS, FIXTURE_PREDICTIONS)


def test_hand_scored_fixture_totals(fixture_result):
    r = fixture_result
    # Near-exact text acceptance (0.9): "Yes on 3" (8/13) and "Due upon receipt" (0.875)
    # are FD; "ACME Medla" (one edit in ten characters, 0.9) stays TP.
    assert {k: r.counts[k] for k in OUTCOMES} == {"TP": 28, "FD": 6, "FA": 6, "FN": 7, "TN": 1}
    assert len(r.entities) == 48
    assert r.precision == pytest.approx(28 / 40)
    assert r.recall == pytest.approx(28 / 41)
    assert r.f1 == pytest.approx(56 / 81)
    assert r.woa == pytest.approx((27 + 0.9 + 8 / 13 + 0.875 + 8 / 19) / 47)


def test_hand_scored_fixture_per_field_outcomes(fixture_result):
    r = fixture_result
    assert outcomes(r, doc_id="inv-A", field="PaymentTerms") == ["FN"]
    assert outcomes(r, doc_id="inv-A", field="AgencyCommission") == ["FD"]
    assert outcomes(r, doc_id="inv-A", field="LineItems.EndDate") == ["FD", "TP"]
    assert outcomes(r, doc_id="inv-B", field="PaymentTerms") == ["FA"]
    assert outcomes(r, doc_id="inv-B", field="AgencyCommission") == ["FN"]
    assert outcomes(r, doc_id="inv-B", field="LineItems.Days") == ["TN", "FA"]
    assert outcomes(r, doc_id="inv-C", field="Advertiser") == ["FD"]
    assert outcomes(r, doc_id="inv-C", field="LineItems.Rate") == ["TP", "FN"]
    sims = r.entities.set_index(["doc_id", "field"])["similarity"]
    assert sims[("inv-A", "Agency")] == pytest.approx(0.9)
    assert sims[("inv-B", "Advertiser")] == pytest.approx(8 / 13)
    assert sims[("inv-C", "Advertiser")] == pytest.approx(8 / 19)
    assert sims[("inv-C", "PaymentTerms")] == pytest.approx(0.875)
    pairs = r.entities[(r.entities.doc_id == "inv-A") & (r.entities.field == "LineItems.Rate")]
    assert pairs[["truth_index", "pred_index"]].values.tolist() == [[0, 1], [1, 0]]


def test_hand_scored_fixture_by_field(fixture_result):
    by_field = fixture_result.by_field().set_index("field")
    assert list(by_field.index) == list(FCC_INVOICE.entity_fields)
    assert list(by_field.columns) == ["n", "woa", "precision", "recall", "f1", *OUTCOMES]
    adv = by_field.loc["Advertiser"]
    # TP 1, FD 8/13, FD 8/19 (both below the near-exact 0.9)
    assert (adv.n, adv.TP, adv.FD) == (3, 1, 2)
    assert adv.woa == pytest.approx((1 + 8 / 13 + 8 / 19) / 3)
    assert adv.precision == pytest.approx(1 / 3) and adv.recall == pytest.approx(1 / 3)
    rate = by_field.loc["LineItems.Rate"]
    # TP in A (2), B (1), C (1); FA (invented, B); FN (dropped, C)
    assert (rate.TP, rate.FA, rate.FN, rate.n) == (4, 1, 1, 6)
    assert rate.precision == pytest.approx(4 / 5) and rate.recall == pytest.approx(4 / 5)
    assert rate.f1 == pytest.approx(4 / 5)
    assert by_field["n"].sum() == 47 and by_field["TN"].sum() == 1


def test_hand_scored_fixture_calibration(fixture_result):
    correct, confidence, n_without = fixture_result.to_calibration()
    entities = fixture_result.entities
    # every predicted leaf carries a confidence; rows without one are the absent side:
    # inv-B AgencyCommission (not predicted) and the 5 FN rows of the dropped inv-C item
    assert n_without == 6 == fixture_result.counts["without_confidence"]
    assert len(confidence) + n_without == len(entities)
    with_conf = entities[entities["confidence"].notna()]
    # a confident wrong null (FN with confidence 0.6) is an error calibration must see
    fn = with_conf[(with_conf.doc_id == "inv-A") & (with_conf.field == "PaymentTerms")]
    assert fn["confidence"].tolist() == [0.6] and not fn["correct"].any()
    # a confident right null (TN with confidence 0.8) is a correct prediction
    tn = with_conf[with_conf.outcome == "TN"]
    assert tn["confidence"].tolist() == [0.8] and tn["correct"].all()
    np.testing.assert_array_equal(correct, with_conf["correct"].to_numpy())
    np.testing.assert_array_equal(confidence, with_conf["confidence"].to_numpy())


def test_entity_table_shape(fixture_result):
    entities = fixture_result.entities
    assert tuple(entities.columns) == ENTITY_COLUMNS
    assert str(entities["truth_index"].dtype) == "Int64"
    assert isinstance(entities["outcome"].dtype, pd.CategoricalDtype)
    assert list(entities["outcome"].cat.categories) == list(OUTCOMES)
    assert list(entities["field"].cat.categories) == list(FCC_INVOICE.entity_fields)
    # raw values in ordinary object columns (tests/scoring/test_entity_values.py: pandas
    # operations, and round trips through files)
    assert entities["truth"].dtype == entities["prediction"].dtype == object
    assert entities["correct"].dtype == bool
    assert (entities["correct"] == entities["outcome"].isin(["TP", "TN"])).all()
    # top-level fields have no item indices
    top = entities[~entities["field"].astype(str).str.contains(".", regex=False)]
    assert top["truth_index"].isna().all() and top["pred_index"].isna().all()
    # rows: document order, schema order, then entries and sub-fields
    assert entities["doc_id"].tolist() == ["inv-A"] * 16 + ["inv-B"] * 16 + ["inv-C"] * 16
    assert entities["field"].astype(str).tolist()[:11] == list(FCC_INVOICE.entity_fields)


def test_raw_values_are_kept(fixture_result):
    e = fixture_result.entities
    row = e[(e.doc_id == "inv-A") & (e.field == "GrossTotal")].iloc[0]
    assert (row.truth, row.prediction) == ("$1,000.00", "1000")
    row = e[(e.doc_id == "inv-A") & (e.field == "PaymentTerms")].iloc[0]
    assert row.prediction is None
    fn_rows = e[(e.doc_id == "inv-C") & (e.outcome == "FN")]
    assert fn_rows["prediction"].isna().all() and fn_rows["truth"].notna().all()


def test_weighted_woa_uses_the_weight_column():
    schema = Schema({"A": Field(Text(), weight=3.0),
                     "L": Items({"X": Field(Number(), weight=2.0)}, weight=0.5)})
    truths = {"d": {"A": "abc", "L": [{"X": 1}]}}
    preds = {"d": {"A": "abd", "L": [{"X": 5}]}}
    result = score_documents(schema, truths, preds)
    assert result.entities["weight"].tolist() == [3.0, 1.0]  # 0.5 * 2.0 for L.X
    # (3 * 2/3 + 1 * 0) / (3 + 1)
    assert result.woa == pytest.approx(0.5)


def test_similarity_agrees_with_match_items():
    truth, pred = FIXTURE_TRUTHS["inv-A"], FIXTURE_PREDICTIONS["inv-A"]
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred})
    items = result.entities[result.entities["field"].astype(str).str.startswith("LineItems.")]
    per_pair = items.groupby(["truth_index", "pred_index"])["similarity"].mean()
    expected = match_items(truth["LineItems"], pred["LineItems"], FCC_INVOICE.fields["LineItems"])
    assert {(i, j): pytest.approx(s) for i, j, s in expected} == per_pair.to_dict()


# --------------------------------------------------------- leaf forms


def test_candidates_highest_probability_wins_ties_by_order():
    schema = Schema({"A": Field(Text()), "B": Field(Text())})
    preds = {"d": {
        "A": {"candidates": [{"value": "x", "probability": 0.2},
                             {"value": "y", "probability": 0.7},
                             {"value": "z", "probability": 0.1}]},
        "B": {"candidates": [{"value": "p", "probability": 0.5},
                             {"value": "q", "probability": 0.5}]},
    }}
    result = score_documents(schema, {"d": {"A": "y", "B": "q"}}, preds)
    assert result.entities["prediction"].tolist() == ["y", "p"]
    assert result.entities["confidence"].tolist() == [0.7, 0.5]
    assert outcomes(result) == ["TP", "FD"]


def test_raw_values_have_no_confidence():
    schema = Schema({"A": Field(Text())})
    result = score_documents(schema, {"d": {"A": "x"}}, {"d": {"A": "x"}})
    assert result.entities["confidence"].isna().all()
    correct, confidence, n_without = result.to_calibration()
    assert len(correct) == 0 and len(confidence) == 0 and n_without == 1


# ------------------------------------------------------------- bad input


def bad(predictions=None, truths=None, schema=FCC_INVOICE, **kwargs):
    truths = truths if truths is not None else {"inv-17": invoice(5)}
    if predictions is None:  # the truth documents alone, every prediction missing
        predictions, kwargs = {}, {"allow_empty": True, **kwargs}
    return score_documents(schema, truths, predictions, **kwargs)


def test_error_names_doc_and_field_path():
    pred = with_confidence(invoice(5))
    pred["LineItems"][3]["Rate"]["confidence"] = 1.5
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field LineItems\[3\]\.Rate: confidence "
                                              r"must be a number within \[0, 1\]; found 1\.5$"):
        bad({"inv-17": pred})


@pytest.mark.parametrize(
    ("leaf", "match"),
    [
        ({"value": "x", "confidence": float("nan")},
         r"confidence must be a number within \[0, 1\]; found nan"),
        ({"value": "x", "confidence": "0.9"},
         r"confidence must be a number within \[0, 1\]; found '0\.9'"),
        ({"value": "x", "confidence": True},
         r"confidence must be a number within \[0, 1\]; found True"),
        ({"value": "x", "confidence": -0.1},
         r"confidence must be a number within \[0, 1\]; found -0\.1"),
        ({"value": "x", "confidence": 0.5, "bbox": [1, 2]},
         (r"a value leaf must have the key 'value' and optionally 'confidence'; found keys "
         r"\['bbox', 'confidence', 'value'\]")),
        ({"value": {"nested": 1}},
         r"value must be a string, number, bool, date or missing; found a dict"),
        ({"conf": 0.5},
         r"a predicted leaf given as a mapping must have the key 'value' or 'candidates'; "
         r"found keys \['conf'\]"),
        (["a", "b"],
         r"a predicted value must be a string, number, bool, date or missing; found a list"),
        ({"candidates": []}, r"candidates must not be empty; found 0 candidates"),
        ({"candidates": "x"}, r"candidates must be a list of \{value, probability\}; found 'x'"),
        ({"candidates": [{"value": "x"}]},
         r"candidates\[0\] must have exactly the keys 'probability', 'value'; found \['value'\]"),
        ({"candidates": [{"value": "x", "probability": 0.5}, {"value": "y", "probability": 1.2}]},
         r"candidates\[1\]\.probability must be a number within \[0, 1\]; found 1\.2"),
        ({"candidates": ["x"]}, r"candidates\[0\] must be a mapping"),
        ({"candidates": [{"value": "x", "probability": 0.5}], "confidence": 0.5},
         r"a candidates leaf must have only the key 'candidates'"),
    ],
)
def test_malformed_leaves(leaf, match):
    top = {"Agency": leaf}
    with pytest.raises(ValidationError, match=r"^doc 'inv-17', field Agency: " + match):
        bad({"inv-17": top})
    item = {"LineItems": [{"Rate": 1}, {"Rate": leaf}]}
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field LineItems\[1\]\.Rate: " + match):
        bad({"inv-17": item})


def test_document_that_is_not_a_mapping():
    with pytest.raises(ValidationError, match=r"^doc 'inv-17': the predicted document must be a "
                                              r"mapping of field names to leaves; found list$"):
        bad({"inv-17": [1, 2]})
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17': the truth document must be a mapping "
                                              r"of field names to values; found str$"):
        bad(truths={"inv-17": "text"})


def test_list_field_that_is_not_a_list():
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field LineItems: the prediction must "
                                              r"be a list of items \(mappings\); found dict"):
        bad({"inv-17": {"LineItems": {"Rate": 1}}})
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field LineItems: the truth value must "
                                              r"be a list of items \(mappings\); found str"):
        bad(truths={"inv-17": {"LineItems": "none"}})
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field LineItems\[1\]: predicted item "
                                              r"must be a mapping of sub-fields; found str"):
        bad({"inv-17": {"LineItems": [{"Rate": 1}, "Rate: 2"]}})


def test_truth_value_that_is_not_a_scalar():
    with pytest.raises(ValidationError,
                       match=r"^doc 'inv-17', field Agency: truth value must be a string, number, "
                             r"bool, date or missing; found a dict"):
        bad(truths={"inv-17": {"Agency": {"value": "x"}}})
    truth = invoice(3)
    truth["LineItems"][2]["Days"] = ["M", "T"]
    with pytest.raises(ValidationError, match=r"^doc 'inv-17', field LineItems\[2\]\.Days: truth "
                                              r"value must be .*; found a list"):
        bad(truths={"inv-17": truth})


def test_prediction_for_unknown_doc_id():
    with pytest.raises(ValidationError,
                       match=r"predictions doc ids must be doc ids of truths; found 1 "
                                              r"absent from truths, first 'inv-99'"):
        bad({"inv-99": {}})


def test_duplicate_doc_ids():
    doc = invoice(1)
    with pytest.raises(ValidationError, match=r"truths must not repeat a doc id; found 'x' at "
                                              r"positions 0 and 2"):
        score_documents(FCC_INVOICE, [("x", doc), ("y", doc), ("x", doc)], {})
    with pytest.raises(ValidationError, match=r"predictions must not repeat a doc id; found 'x'"):
        score_documents(FCC_INVOICE, {"x": doc}, [("x", doc), ("x", doc)])


@pytest.mark.parametrize(
    ("truths", "match"),
    [
        ([{"Agency": "x"}], (r"truths must be a mapping doc_id -> document or an iterable of "
                            r"\(doc_id, document\) pairs; found dict .* at position 0")),
        ("abc", r"truths must be a mapping .*; found str"),
        (5, r"truths must be a mapping .*; found int"),
        ({}, r"truths must contain at least one document; found 0"),
        ([(None, {})], r"truths doc ids must not be missing; found None at position 0"),
        ([(["a"], {})], r"truths doc ids must be hashable; found \['a'\] at position 0"),
    ],
)
def test_bad_document_collections(truths, match):
    with pytest.raises(ValidationError, match=match):
        score_documents(FCC_INVOICE, truths, {})


def test_bad_schema_and_options():
    with pytest.raises(ValidationError, match="schema must be a confcal Schema; found dict"):
        score_documents({"A": Field(Text())}, {"d": {}}, {})
    with pytest.raises(ValidationError, match="strict must be True or False; found 1"):
        score_documents(FCC_INVOICE, {"d": {}}, {}, strict=1)


def test_truth_without_prediction_is_all_fn_and_counted():
    truth = invoice(2)
    truth["PaymentTerms"] = None
    result = score_documents(FCC_INVOICE, {"a": truth, "b": truth}, {"b": with_confidence(truth)})
    rows = result.entities[result.entities["doc_id"] == "a"]
    assert rows["outcome"].astype(str).value_counts().to_dict() == {"FN": 5 + 2 * 5, "TN": 1}
    assert result.counts["docs_missing_prediction"] == 1
    assert result.counts["documents"] == 2
    with pytest.raises(ValidationError, match=r"^doc 'a': every truth document must have a "
                                              r"prediction \(strict=True\); found none$"):
        score_documents(FCC_INVOICE, {"a": truth, "b": truth}, {"b": truth}, strict=True)


def test_no_predicted_documents_is_an_error_unless_allowed():
    truth = invoice(1)
    for empty in ({}, [], iter([])):
        with pytest.raises(ValidationError,
                           match=r"^predictions must contain at least one document; found 0 "
                                 r"\(for 2 truth documents\): an empty collection is most "
                                 r"often a wrong path or filter \(allow_empty=True scores "
                                 r"every truth document as missing\)$") as info:
            score_documents(FCC_INVOICE, {"a": truth, "b": truth}, empty)
        assert info.value.option == ("allow_empty", True)
    # allowed: each truth document scored as all-missing, and counted; the rows equal those
    # of a truth document whose prediction is absent while another one has a prediction
    result = score_documents(FCC_INVOICE, {"a": truth, "b": truth}, {}, allow_empty=True)
    assert result.counts["docs_missing_prediction"] == 2
    assert result.counts["documents"] == 2
    # 6 top-level + 1 item x 5 sub-fields, every one present in truth: 11 FN per document
    assert result.entities["outcome"].astype(str).value_counts().to_dict() == {"FN": 22}
    some = score_documents(FCC_INVOICE, {"a": truth, "b": truth}, {"b": with_confidence(truth)})
    pd.testing.assert_frame_equal(
        result.entities[result.entities["doc_id"] == "a"].reset_index(drop=True),
        some.entities[some.entities["doc_id"] == "a"].reset_index(drop=True))
    for conventions in ("confcal", "stickler-1.0"):
        with pytest.raises(ValidationError, match=r"^predictions must contain at least one"):
            score_documents(FCC_INVOICE, {"a": truth}, {}, conventions=conventions)
    with pytest.raises(ValidationError, match=r"^doc 'a': every truth document must have a "
                                              r"prediction \(strict=True\)"):
        score_documents(FCC_INVOICE, {"a": truth}, {}, allow_empty=True, strict=True)
    with pytest.raises(ValidationError, match="allow_empty must be True or False; found 1"):
        score_documents(FCC_INVOICE, {"a": truth}, {}, allow_empty=1)


def test_unknown_predicted_fields_are_ignored_and_counted():
    truth = invoice(2)
    pred = with_confidence(truth)
    pred["InvoiceNumber"] = "17"
    pred["LineItems"][0]["Spots"] = 3
    pred["LineItems"][1]["Spots"] = 3
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred})
    assert result.counts["unknown_fields"] == 3
    assert result.woa == 1.0
    with pytest.raises(ValidationError,
                       match=r"^doc 'a': predicted fields must be defined by the schema "
                             r"\(strict=True\); found unknown \['InvoiceNumber'\]$"):
        score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, strict=True)
    del pred["InvoiceNumber"]
    with pytest.raises(ValidationError,
                       match=r"^doc 'a', field LineItems\[0\]: predicted sub-fields "
                                              r"must be defined by the schema \(strict=True\); "
                                              r"found unknown \['Spots'\]$"):
        score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, strict=True)


def test_unknown_predicted_fields_are_named():
    truth = invoice(2)
    pred = with_confidence(truth)
    pred["InvoiceNumber"] = "17"
    pred["Notes"] = "x"
    pred["LineItems"][0]["Spots"] = 3
    pred["LineItems"][1]["Spots"] = 3
    for conventions in ("confcal", "stickler-1.0"):
        result = score_documents(FCC_INVOICE, {"a": truth, "b": truth}, {"a": pred, "b": pred},
                                 conventions=conventions)
        # 2 docs x (2 top-level + 2 sub-field keys) = 8 keys, 3 distinct names in first order
        assert result.counts["unknown_fields"] == 8
        assert result.unknown_field_names == ("InvoiceNumber", "Notes", "LineItems.Spots")


@pytest.mark.parametrize("conventions", ["confcal", "stickler-1.0"])
def test_a_field_named_in_another_case_is_an_error_naming_both(conventions):
    truth = invoice(1)
    pred = with_confidence(truth)
    pred["grosstotal"] = pred.pop("GrossTotal")
    with pytest.raises(ValidationError,
                       match=r"^doc 'a': predicted field names must be spelled as in the "
                             r"schema; found 'grosstotal' for the schema's 'GrossTotal', which "
                             r"differs only in case \(allow_case_mismatch=True ignores it as "
                             r"an unknown field instead\)$") as info:
        score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, conventions=conventions)
    assert info.value.option == ("allow_case_mismatch", True)
    # opted out: counted and named as unknown, its truth scored against a missing value
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, conventions=conventions,
                             allow_case_mismatch=True)
    assert result.unknown_field_names == ("grosstotal",)
    pred = with_confidence(truth)
    pred["LineItems"][0]["rate"] = pred["LineItems"][0].pop("Rate")
    with pytest.raises(ValidationError, match=r"^doc 'a', field LineItems\[0\]: predicted "
                                              r"sub-field names .* found 'rate' for the "
                                              r"schema's 'Rate'") as info:
        score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, conventions=conventions)
    assert info.value.location == {"doc_id": "a", "field": "LineItems[0]"}
    with pytest.raises(ValidationError, match="allow_case_mismatch must be True or False"):
        score_documents(FCC_INVOICE, {"a": truth}, {"a": pred}, allow_case_mismatch="yes")


def test_a_doc_id_in_another_case_is_named():
    truth = invoice(1)
    with pytest.raises(ValidationError,
                       match=r"found 1 absent from truths, first 'inv-1' \(the truth has "
                             r"'INV-1', which differs from it only in case\)$"):
        score_documents(FCC_INVOICE, {"INV-1": truth}, {"inv-1": truth})
    with pytest.raises(ValidationError, match=r"first 'x'$"):  # no hint without a match
        score_documents(FCC_INVOICE, {"INV-1": truth}, {"x": truth})



def test_a_doc_id_of_another_type_written_alike_is_named():
    # 1 and "1" are two values that an entity table writes as one text: the stray
    # prediction's error says which truth id it was most likely meant for
    truth = invoice(1)
    with pytest.raises(ValidationError,
                       match=r"first '1' \(the truth has 1, an int written as the same "
                             r"text: doc ids are compared as values\)$"):
        score_documents(FCC_INVOICE, {1: truth}, {"1": truth})
    with pytest.raises(ValidationError, match=r"first 1 \(the truth has '1', a str"):
        score_documents(FCC_INVOICE, {"1": truth}, {1: truth})
    # a value written as the same text is named before one in another case
    with pytest.raises(ValidationError, match=r"first 'True' \(the truth has True, a bool"):
        score_documents(FCC_INVOICE, {"TRUE": truth, True: truth}, {"True": truth})

def test_unscored_truth_fields_are_counted():
    truth = invoice(2)
    truth["InvoiceNumber"] = "17"
    truth["LineItems"][1]["Spots"] = 3
    result = score_documents(FCC_INVOICE, {"a": truth}, {"a": with_confidence(invoice(2))},
                             strict=True)
    assert result.counts["unscored_truth_fields"] == 2


# ----------------------------------------------------- collections, metadata


def test_iterable_of_pairs_and_non_string_ids():
    doc = invoice(1)
    result = score_documents(FCC_INVOICE, [(1, doc), (2, doc)], iter([(2, doc)]))
    assert result.entities["doc_id"].unique().tolist() == [1, 2]
    assert result.counts["docs_missing_prediction"] == 1


def test_metadata_columns_follow_the_entity_columns():
    doc = invoice(1)
    result = score_documents(FCC_INVOICE, {"a": doc, "b": doc}, {"a": doc, "b": doc},
                             metadata={"a": {"model": "m1", "tier": 1}, "b": {"model": "m2"}})
    entities = result.entities
    assert tuple(entities.columns) == (*ENTITY_COLUMNS, "model", "tier")
    assert entities.groupby("doc_id")["model"].unique().map(list).to_dict() == {"a": ["m1"],
                                                                                "b": ["m2"]}
    assert entities.loc[entities.doc_id == "b", "tier"].isna().all()


@pytest.mark.parametrize(
    ("metadata", "match"),
    [
        ({"zzz": {"model": "m"}},
         (r"metadata doc ids must be doc ids of truths; found 1 absent from "
                                  r"truths, first 'zzz'")),
        ({"a": {"outcome": "x"}}, (r"metadata columns must be strings other than the entity-table "
                                  r"columns .*; found 'outcome' for doc 'a'")),
        ({"a": "m1"}, r"metadata for doc 'a' must be a mapping of column -> value; found 'm1'"),
        (["a"], r"metadata must be a mapping doc_id -> \{column: value\}; found list"),
    ],
)
def test_bad_metadata(metadata, match):
    with pytest.raises(ValidationError, match=match):
        score_documents(FCC_INVOICE, {"a": invoice(1)}, {}, metadata=metadata, allow_empty=True)


# ------------------------------------------------------- undefined metrics


def test_undefined_metrics_warn_and_return_nan():
    schema = Schema({"A": Field(Text()), "B": Field(Text())})
    result = score_documents(schema, {"d": {"A": None, "B": ""}}, {"d": {"A": None}})
    assert outcomes(result) == ["TN", "TN"]
    for metric in ("woa", "precision", "recall", "f1"):
        with pytest.warns(UndefinedMetricWarning, match=f"{metric} is undefined"):
            assert np.isnan(getattr(result, metric))
    with pytest.warns(UndefinedMetricWarning, match=r"by_field: .* fields \['A', 'B'\]"):
        table = result.by_field()
    assert table[["woa", "precision", "recall", "f1"]].isna().all().all()


def test_precision_undefined_but_f1_defined_when_nothing_predicted():
    schema = Schema({"A": Field(Text())})
    result = score_documents(schema, {"d": {"A": "x"}}, {"d": {}})
    with pytest.warns(UndefinedMetricWarning,
                      match=r"precision is undefined: no predicted entities"):
        assert np.isnan(result.precision)
    assert result.recall == 0.0 and result.f1 == 0.0 and result.woa == 0.0


def test_no_warning_when_defined(fixture_result):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixture_result.by_field()
        _ = (fixture_result.woa, fixture_result.precision, fixture_result.recall, fixture_result.f1)


# ------------------------------------------------------------ internals


def test_custom_comparator_in_a_schema():
    schema = Schema({"Code": Field(lambda t, p: float(str(t)[:3] == str(p)[:3]), threshold=1.0),
                     "L": Items({"X": Field(lambda t, p: 1.0 - abs(t - p) / 10, threshold=0.8)})})
    truths = {"d": {"Code": "ABC-1", "L": [{"X": 1}, {"X": 5}]}}
    preds = {"d": {"Code": "ABC-2", "L": [{"X": 5}, {"X": 2}]}}
    result = score_documents(schema, truths, preds)
    assert outcomes(result) == ["TP", "TP", "TP"]
    assert result.entities["similarity"].tolist() == pytest.approx([1.0, 0.9, 1.0])


def test_chunked_similarities_give_identical_results(monkeypatch):
    rng = random.Random(3)
    truths, preds = {}, {}
    for d in range(12):
        truth = invoice(rng.randrange(0, 7), seed=d)
        pred = with_confidence(copy.deepcopy(truth), 0.7)
        rng.shuffle(pred["LineItems"])
        if pred["LineItems"] and rng.random() < 0.5:
            pred["LineItems"].pop()
        truths[f"d{d}"], preds[f"d{d}"] = truth, pred
    reference = score_documents(FCC_INVOICE, truths, preds)
    monkeypatch.setattr(scoring, "_BLOCK_BUDGET", 7)  # a document or two per block
    chunked = score_documents(FCC_INVOICE, truths, preds)
    pd.testing.assert_frame_equal(reference.entities, chunked.entities)
    assert reference.counts == chunked.counts


def test_result_is_frozen(fixture_result):
    assert isinstance(fixture_result, ExtractionResult)
    with pytest.raises(AttributeError):
        fixture_result.counts = {}  # type: ignore[misc]


def test_docs_examples_run():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "scoring.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    with warnings.catch_warnings():
        # the first example's by_field() has fields with no evaluated rows: NaN + warning
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        for block in blocks:
            exec(compile(block, "docs/scoring.md", "exec"), {})  # noqa: S102 - our own docs


def test_fields_sharing_a_comparator_keep_their_own_rows_and_errors():
    class Unhashable:
        """A callable comparator that defines __eq__ without __hash__ (so is unhashable)."""

        def __eq__(self, other):
            return isinstance(other, Unhashable)

        def __call__(self, truth, prediction):
            return float(truth == prediction)

    same = Unhashable()
    schema = Schema({"A": Field(Number()), "B": Field(same, threshold=1.0), "C": Field(Number()),
                     "D": Field(same, threshold=1.0)})
    truths = {"x": {"A": 1, "B": "b", "C": 3, "D": "d"}, "y": {"A": 10, "B": "q", "C": 30,
                                                               "D": "z"}}
    preds = {"x": {"A": 1, "B": "b", "C": 4, "D": "d"}, "y": {"A": 10, "B": "r", "C": 30, "D": "z"}}
    result = score_documents(schema, truths, preds)
    assert result.entities["field"].astype(str).tolist() == ["A", "B", "C", "D"] * 2
    assert outcomes(result) == ["TP", "TP", "FD", "TP", "TP", "FD", "TP", "TP"]
    preds["y"]["C"] = {"value": 30, "confidence": 2}
    with pytest.raises(ValidationError, match=r"^doc 'y', field C: confidence must be a number "):
        score_documents(schema, truths, preds)


# ------------------------------------------------------------------ one copy of the rules

def test_totals_agree_everywhere_woa_and_f1_are_reported(fixture_result):
    # the scorer, its per-field table and the report's runs table all read ExtractionTotals
    from confcal.report import compare_runs, summarize_runs
    from confcal.scoring import ExtractionTotals

    r = fixture_result
    t = r.totals
    assert isinstance(t, ExtractionTotals)
    assert (t.tp, t.fd, t.fa, t.fn, t.tn) == tuple(r.counts[k] for k in OUTCOMES)
    assert (r.woa, r.precision, r.recall, r.f1) == (t.woa, t.precision, t.recall, t.f1)
    by_field = r.by_field()
    assert by_field[["TP", "FD", "FA", "FN", "TN"]].sum().tolist() == [28, 6, 6, 7, 1]
    entities = r.entities.assign(model="m")
    row = compare_runs(entities, by="model").iloc[0]
    assert row["woa"] == pytest.approx(t.woa, rel=1e-12) and row["f1"] == pytest.approx(t.f1)
    summary = summarize_runs(entities, ["model"])[("m",)]
    assert summary.totals.tp == t.tp and summary.totals.woa == pytest.approx(t.woa, rel=1e-12)


def test_totals_merge_is_the_totals_of_the_whole(fixture_result):
    e = fixture_result.entities
    from confcal.scoring import ExtractionTotals
    from confcal.scoring._totals import outcome_codes

    def totals(frame):
        return ExtractionTotals.from_codes(outcome_codes(frame["outcome"]),
                                           frame["weight"].to_numpy(),
                                           frame["similarity"].to_numpy())

    whole = totals(e)
    parts = totals(e.iloc[:17]) + totals(e.iloc[17:31]) + totals(e.iloc[31:])
    assert (parts.tp, parts.fd, parts.fa, parts.fn, parts.tn) == (whole.tp, whole.fd, whole.fa,
                                                                   whole.fn, whole.tn)
    assert parts.woa == pytest.approx(whole.woa, rel=1e-12)
    empty = ExtractionTotals()
    assert np.isnan(empty.woa) and np.isnan(empty.f1) and (empty + whole) == whole


def test_outcome_codes_refuse_an_unknown_label():
    from confcal.scoring._totals import outcome_codes

    assert outcome_codes(pd.Series(["TP", "TN", "FA"])).tolist() == [0, 4, 2]
    with pytest.raises(ValidationError, match=r"outcome must be one of .*found 2 rows breaking "
                                              r"it, first at row 1 \('tp'\)"):
        outcome_codes(pd.Series(["TP", "tp", None]))


# ------------------------------------- user comparators take the batched path (rule 17)


def _jaro_winkler(truth, prediction):
    from rapidfuzz.distance import JaroWinkler

    return JaroWinkler.normalized_similarity(str(truth), str(prediction))


class CountedJaroWinkler:
    """A plain callable comparator that records its calls: ``log[method]`` -> arguments."""

    def __init__(self):
        self.log = {"call": [], "pairwise": [], "elementwise": []}

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __call__(self, truth, prediction):
        self.log["call"].append((truth, prediction))
        return _jaro_winkler(truth, prediction)


class BatchedJaroWinkler(CountedJaroWinkler):
    """The same comparator with ``pairwise`` and ``elementwise`` (bit-identical entries)."""

    def pairwise(self, truths, predictions):
        self.log["pairwise"].append((truths, predictions))
        return np.array([[_jaro_winkler(t, p) for p in predictions] for t in truths])

    def elementwise(self, truths, predictions):
        self.log["elementwise"].append((truths, predictions))
        return np.array([_jaro_winkler(t, p) for t, p in zip(truths, predictions, strict=True)])


class PairwiseJaroWinkler(CountedJaroWinkler):
    pairwise = BatchedJaroWinkler.pairwise


class ElementwiseJaroWinkler(CountedJaroWinkler):
    elementwise = BatchedJaroWinkler.elementwise


def _text_schema(text, terms):
    return Schema({
        "Agency": Field(text, threshold=0.9), "Advertiser": Field(text, threshold=0.9),
        "PaymentTerms": Field(terms, threshold=0.9), "GrossTotal": Field(Number()),
        "LineItems": Items({"Days": Field(text, threshold=0.9),
                            "Description": Field(text, threshold=0.9), "Rate": Field(Number())}),
    })


def _messy_corpus():
    rng = random.Random(11)
    truths, preds = {}, {}
    for d in range(6):
        truth = invoice(rng.randrange(1, 5), seed=d)
        pred = with_confidence(copy.deepcopy(truth), 0.8)
        rng.shuffle(pred["LineItems"])
        pred["LineItems"][0]["Description"] = {"value": None, "confidence": 0.4}  # a missing cell
        pred["LineItems"][-1]["Days"]["value"] += "x"
        truths[f"d{d}"], preds[f"d{d}"] = truth, pred
    truths["d1"]["LineItems"][0]["Days"] = ""
    preds["d2"]["PaymentTerms"] = None
    preds["d5"]["LineItems"] = []  # line items on the truth side only
    return truths, preds


def _present_blocks(truths, preds, subs=("Days", "Description")):
    """The (truth values, predicted values) each pairwise call should get: sub-field by
    sub-field, document by document, present values only, blocks with a value on each side."""
    from confcal._validation import is_missing

    def present(items, sub):
        values = (i[sub]["value"] if isinstance(i[sub], dict) else i[sub] for i in items)
        return [v for v in values if not is_missing(v)]

    blocks = [(present(truths[d]["LineItems"], sub), present(preds[d]["LineItems"], sub))
              for sub in subs for d in truths]
    return [(t, p) for t, p in blocks if t and p]


def test_user_batched_comparator_is_called_in_batches_and_scores_alike():
    truths, preds = _messy_corpus()
    text, terms = BatchedJaroWinkler(), BatchedJaroWinkler()
    got = score_documents(_text_schema(text, terms), truths, preds)
    plain, plain_terms = CountedJaroWinkler(), CountedJaroWinkler()
    expected = score_documents(_text_schema(plain, plain_terms), truths, preds)
    pd.testing.assert_frame_equal(got.entities, expected.entities, check_exact=True)
    assert got.counts == expected.counts

    # Top level: one elementwise call for Agency and Advertiser (the same comparator), with
    # the 12 values of 6 documents, one for PaymentTerms, none per pair.
    assert [len(t) for t, _ in text.log["elementwise"]] == [12]
    assert [len(t) for t, _ in terms.log["elementwise"]] == [5]  # d2 predicts no terms
    assert text.log["call"] == terms.log["call"] == terms.log["pairwise"] == []
    # Line items: one pairwise call per sub-field and document with a value on both sides,
    # given present values only: 5 documents with predicted items x 2 sub-fields, less d4,
    # whose one predicted Description is the missing cell.
    blocks = _present_blocks(truths, preds)
    assert text.log["pairwise"] == blocks and len(blocks) == 9
    # The plain callable: once per pair of present values.
    assert len(plain.log["call"]) == 12 + sum(len(t) * len(p) for t, p in blocks)


def test_user_batched_comparator_is_batched_per_chunk_of_a_stream():
    truths, preds = _messy_corpus()
    text, terms = BatchedJaroWinkler(), BatchedJaroWinkler()
    stream = ((d, truths[d], preds[d]) for d in truths)
    chunks = list(score_documents_iter(_text_schema(text, terms), stream, chunk_size=4))
    assert [len(t) for t, _ in text.log["elementwise"]] == [8, 4]  # 2 fields x 4, then x 2
    reference = score_documents(_text_schema(Text(), Text()), truths, preds)
    assert sum(c.counts["TP"] for c in chunks) > 0
    assert len(pd.concat([c.entities for c in chunks])) == len(reference.entities)


@pytest.mark.parametrize("kind", [PairwiseJaroWinkler, ElementwiseJaroWinkler])
def test_a_comparator_with_one_batched_method_uses_it(kind):
    truths, preds = _messy_corpus()
    text = kind()
    got = score_documents(_text_schema(text, text), truths, preds)
    expected = score_documents(_text_schema(CountedJaroWinkler(), CountedJaroWinkler()),
                               truths, preds)
    pd.testing.assert_frame_equal(got.entities, expected.entities, check_exact=True)
    if kind is PairwiseJaroWinkler:  # top-level pairs one by one, line items per document
        assert len(text.log["pairwise"]) == 9 and len(text.log["call"]) == 12 + 5
    else:  # line items from the gathered pairs of all documents: one call per sub-field
        assert len(text.log["elementwise"]) == 1 + 2 and text.log["call"] == []


class Transposed(BatchedJaroWinkler):
    def pairwise(self, truths, predictions):
        return super().pairwise(truths, predictions).T


class Percent(BatchedJaroWinkler):
    def elementwise(self, truths, predictions):
        return 100 * super().elementwise(truths, predictions)


def test_batched_comparator_errors_name_the_field_and_the_comparator():
    truths = {"d": {"Agency": "ACME", "Advertiser": "Smith",
                    "LineItems": [{"Description": "x"}, {"Description": "y"}]}}
    preds = {"d": {"Agency": "ACME", "Advertiser": "Smyth",
                   "LineItems": [{"Description": "x"}, {"Description": "z"}, {"Description": "w"}]}}
    schema = Schema({"Agency": Field(Text()), "Advertiser": Field(Text()),
                     "LineItems": Items({"Description": Field(Transposed(), threshold=0.9)})})
    with pytest.raises(ValidationError, match=(
            r"^field LineItems\.Description: comparator Transposed\(\) pairwise must return an "
            r"array of shape \(2, 3\) of finite numbers within \[0, 1\]; found ndarray of "
            r"shape \(3, 2\)$")) as exc:
        score_documents(schema, truths, preds)
    assert exc.value.location == {"field": "LineItems.Description"}
    percent = Percent()
    schema = Schema({"Agency": Field(percent, threshold=0.9),
                     "Advertiser": Field(percent, threshold=0.9)})
    with pytest.raises(ValidationError, match=(
            r"^fields Agency, Advertiser: comparator Percent\(\) elementwise must return an "
            r"array of shape \(2,\) of finite numbers within \[0, 1\]; found 2 values breaking "
            r"it, first 100.0 for truth 'ACME' and prediction 'ACME'$")) as exc:
        score_documents(schema, truths, preds)
    assert exc.value.field is None  # one call for two fields: no single field to name
    schema = Schema({"Agency": Field(Text()), "Advertiser": Field(lambda t, p: 2, threshold=1)})
    with pytest.raises(ValidationError, match=r"^field Advertiser: comparator <function .*> must "
                                              r"return a number within \[0, 1\]; found 2 for "
                                              r"truth 'Smith' and prediction 'Smyth'$") as exc:
        score_documents(schema, truths, preds)
    assert exc.value.field == "Advertiser"


def _hypothesis_docs():
    from hypothesis import strategies as st

    value = st.one_of(st.none(), st.just(""), st.text(alphabet="abAB 1.", max_size=5),
                      st.integers(0, 3))
    leaf = st.one_of(value, value.map(lambda v: {"value": v, "confidence": 0.5}))
    truth_item = st.fixed_dictionaries({"X": value, "Y": value})
    pred_item = st.fixed_dictionaries({"X": leaf, "Y": leaf})
    doc = st.tuples(st.fixed_dictionaries({"A": value, "L": st.lists(truth_item, max_size=4)}),
                    st.fixed_dictionaries({"A": leaf, "L": st.lists(pred_item, max_size=4)}))
    return st.lists(doc, min_size=1, max_size=4)


def test_batched_and_pair_by_pair_score_identically():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from _profiles import examples

    def schema(c):
        return Schema({"A": Field(c, threshold=0.8),
                       "L": Items({"X": Field(c, threshold=0.8), "Y": Field(c, threshold=0.5)},
                                  match_threshold=0.3)})

    @settings(max_examples=examples(150), deadline=None)
    @given(_hypothesis_docs(),
           st.sampled_from([BatchedJaroWinkler, PairwiseJaroWinkler, ElementwiseJaroWinkler]))
    def check(docs, kind):
        truths = {f"d{i}": t for i, (t, _) in enumerate(docs)}
        preds = {f"d{i}": p for i, (_, p) in enumerate(docs)}
        got = score_documents(schema(kind()), truths, preds)
        expected = score_documents(schema(CountedJaroWinkler()), truths, preds)
        pd.testing.assert_frame_equal(got.entities, expected.entities, check_exact=True)

    check()


def test_format_characters_alone_are_missing_as_is_missing_says():
    # A value of spaces and invisible format characters (U+200B zero-width space, U+FEFF,
    # U+00AD soft hyphen) is missing, as is_missing and the scalar comparator read it:
    # "" against "\u200b" is two missing values (TN, similarity 1), "ACME" against
    # " \ufeff\u00ad " a value not extracted (FN), never an invented or a wrong value.
    schema = Schema({"A": Field(Text()), "L": Items({"X": Field(Text())})})
    truths = {"d": {"A": "", "L": [{"X": "ACME"}]}}
    preds = {"d": {"A": "\u200b", "L": [{"X": {"value": " \ufeff\u00ad ", "confidence": 0.9}}]}}
    rows = score_documents(schema, truths, preds).entities
    assert rows["outcome"].tolist() == ["TN", "FN"]
    assert rows["similarity"].tolist() == [1.0, 0.0]
    assert Text()("", "\u200b") == 1.0 and Text()("ACME", " \ufeff\u00ad ") == 0.0


def test_every_row_follows_is_missing_of_its_two_values():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from _profiles import examples
    from confcal._validation import is_missing

    text = st.text(alphabet=" aB\u200b\ufeff\u00ad\u3000\u00e9", max_size=4)
    value = st.one_of(st.none(), text)
    leaf = st.one_of(value, value.map(lambda v: {"value": v, "confidence": 0.5}))
    doc = st.tuples(
        st.fixed_dictionaries({"A": value, "L": st.lists(st.fixed_dictionaries({"X": value}),
                                                         max_size=3)}),
        st.fixed_dictionaries({"A": leaf, "L": st.lists(st.fixed_dictionaries({"X": leaf}),
                                                        max_size=3)}))
    schema = Schema({"A": Field(Text()), "L": Items({"X": Field(Text())})})

    @settings(max_examples=examples(200), deadline=None)
    @given(st.lists(doc, min_size=1, max_size=3))
    def check(docs):
        truths = {f"d{i}": t for i, (t, _) in enumerate(docs)}
        preds = {f"d{i}": p for i, (_, p) in enumerate(docs)}
        rows = score_documents(schema, truths, preds).entities
        for truth, pred, outcome, similarity, field in zip(
                rows["truth"], rows["prediction"], rows["outcome"], rows["similarity"],
                rows["field"], strict=True):
            tm, pm = is_missing(truth), is_missing(pred)
            expected = {(True, True): "TN", (True, False): "FA", (False, True): "FN"}
            assert outcome == expected.get((tm, pm), outcome), (truth, pred, outcome)
            if field == "A":  # top-level rows: the scalar comparator's similarity
                if not (tm or pm):
                    assert outcome in ("TP", "FD")
                assert similarity == Text()(truth, pred) or outcome in ("FA", "FN")

    check()


def test_the_earliest_faulty_document_is_named_across_blocks():
    # Line items are read and checked in blocks of consecutive documents (about 45
    # invoices of 20 items): 60 invoices make two blocks, and a bad confidence in the
    # first invoice is named before a malformed item in the last one, although items are
    # checked to be mappings before any leaf within a block.
    truths = {f"d{i:02d}": invoice(20, seed=i) for i in range(60)}
    preds = {d: with_confidence(t) for d, t in truths.items()}
    preds["d00"]["LineItems"][3]["Rate"]["confidence"] = 1.5
    preds["d59"]["LineItems"][0] = "not an item"
    from confcal.scoring import _items

    assert len(_items.chunks([20 * 20 + _items.ITEM_COST * 40] * 60,
                             scoring._BLOCK_BUDGET)) == 2
    with pytest.raises(ValidationError, match=r"^doc 'd00', field LineItems\[3\]\.Rate: ") as exc:
        score_documents(FCC_INVOICE, truths, preds)
    assert (exc.value.doc_id, exc.value.field) == ("d00", "LineItems[3].Rate")
    # within one block, the item check comes first
    preds["d01"]["LineItems"][0] = "not an item"
    with pytest.raises(ValidationError, match=r"^doc 'd01', field LineItems\[0\]: predicted item"):
        score_documents(FCC_INVOICE, truths, preds)


def test_every_format_character_alone_is_missing_in_both_column_rules():
    # The scorer asks is_missing only about strings that str.isprintable refuses, which
    # holds every string of spaces and format characters because no character of category
    # Cf is printable (checked here against the interpreter's own table, character by
    # character); a format character beside a letter is a value.
    import unicodedata

    from confcal._validation import is_missing
    from confcal.scoring._columns import missing_by_lengths
    from confcal.scoring._kernels import missing_mask
    from confcal.scoring._text import value_lengths

    cf = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert len(cf) > 100 and not any(ch.isprintable() for ch in cf)
    values = [*cf, *(f" {ch} " for ch in cf), *(f"a{ch}" for ch in cf), "café", "\u3000", " "]
    expected = [is_missing(v) for v in values]
    assert expected == [True] * (2 * len(cf)) + [False] * (len(cf) + 1) + [True, True]
    assert missing_mask(values).tolist() == expected
    assert missing_by_lengths(values, value_lengths(values)).tolist() == expected
