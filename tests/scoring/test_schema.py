"""Field, Items, Schema: defaults, validation, JSON round trip; the FCC invoice preset."""

from __future__ import annotations

import json

import pytest

from confcal.exceptions import ValidationError
from confcal.scoring.comparators import ANLS_THRESHOLD, Date, Exact, Number, Text
from confcal.scoring.presets import FCC_INVOICE, fcc_invoice
from confcal.scoring.schema import Field, Items, Schema

# ----------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    ("comparator", "threshold"),
    [(Text(), 0.9), (Text(ignore_punctuation=True), 0.9), (Exact(), 1.0), (Number(), 1.0),
     (Date(), 1.0)],
)
def test_default_thresholds(comparator, threshold):
    assert Field(comparator).threshold == threshold


def test_explicit_threshold_and_weight():
    field = Field(Text(), threshold=0.8, weight=2)
    assert (field.threshold, field.weight) == (0.8, 2.0)
    assert isinstance(field.weight, float)


def test_custom_comparator_needs_a_threshold():
    with pytest.raises(ValidationError, match="threshold must be given for a comparator without a "
                                              "default_threshold"):
        Field(lambda t, p: 1.0)
    assert Field(lambda t, p: 1.0, threshold=0.7).threshold == 0.7


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"threshold": 1.5}, r"threshold must be a number within \[0, 1\]; found 1\.5"),
        ({"threshold": -0.1}, r"threshold must be a number within \[0, 1\]; found -0\.1"),
        ({"threshold": float("nan")}, r"threshold must be a number within \[0, 1\]; found nan"),
        ({"threshold": "0.5"}, r"threshold must be a number within \[0, 1\]; found '0\.5'"),
        ({"weight": 0}, r"weight must be a number finite and within \[1e-100, 1e\+100\]; found 0$"),
        ({"weight": float("inf")}, r"weight must be a number finite and within .*; found inf"),
        ({"weight": True}, r"weight must be a number finite and within .*; found True"),
        # a weight that would make WOA's sums overflow is refused where it is written
        ({"weight": 1e308}, r"weight must be a number finite and within .*; found 1e\+308"),
        ({"weight": 1e-300}, r"weight must be a number finite and within .*; found 1e-300"),
    ],
)
def test_field_validation(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        Field(Text(), **kwargs)


def test_field_comparator_must_be_callable():
    with pytest.raises(ValidationError, match="comparator must be callable"):
        Field("Text")


def test_field_is_frozen():
    field = Field(Text())
    with pytest.raises(AttributeError):
        field.threshold = 0.1  # type: ignore[misc]


# -------------------------------------------------------------------- items


def test_items_validation():
    with pytest.raises(ValidationError, match="fields must not be empty; found 0 sub-fields"):
        Items({})
    with pytest.raises(ValidationError, match="Items sub-field 'Rate' must be a Field; found 'x'"):
        Items({"Rate": "x"})
    with pytest.raises(ValidationError, match="nested lists are not supported"):
        Items({"Sub": Items({"A": Field(Text())})})
    with pytest.raises(ValidationError, match="Items sub-field names must be non-empty strings"):
        Items({"": Field(Text())})
    with pytest.raises(ValidationError, match=r"match_threshold must be a number within \[0, 1\]"):
        Items({"A": Field(Text())}, match_threshold=2)
    with pytest.raises(ValidationError, match=r"weight must be a number finite and within"):
        Items({"A": Field(Text())}, weight=-1)
    with pytest.raises(ValidationError, match=r"weight must be a number finite and within"):
        Items({"A": Field(Text())}, weight=1e200)


def test_items_copies_its_fields():
    subs = {"A": Field(Text())}
    items = Items(subs)
    subs["B"] = Field(Number())
    assert list(items.fields) == ["A"]


# ------------------------------------------------------------------- schema


def test_entity_fields_name_line_item_subfields_with_a_dot():
    schema = Schema({"Agency": Field(Text()),
                     "LineItems": Items({"Rate": Field(Number()), "Days": Field(Text())}),
                     "Total": Field(Number())})
    assert schema.entity_fields == ("Agency", "LineItems.Rate", "LineItems.Days", "Total")


def test_entity_field_names_must_not_collide():
    with pytest.raises(ValidationError, match="entity field names must be unique; found 'L.Rate'"):
        Schema({"L.Rate": Field(Number()), "L": Items({"Rate": Field(Number())})})


def test_schema_validation():
    with pytest.raises(ValidationError, match="fields must not be empty"):
        Schema({})
    with pytest.raises(ValidationError, match="Schema field 'A' must be a Field or Items; found 3"):
        Schema({"A": 3})
    with pytest.raises(ValidationError, match="fields must be a mapping"):
        Schema([("A", Field(Text()))])


def test_json_round_trip_preserves_every_setting():
    schema = Schema({
        "Name": Field(Text(ignore_punctuation=True), threshold=0.8, weight=2.0),
        "Code": Field(Exact()),
        "Amount": Field(Number(rel_tol=0.0, abs_tol=0.01, decimal=",")),
        "When": Field(Date(dayfirst=True)),
        "Rows": Items({"X": Field(Text()), "Y": Field(Number())}, match_threshold=0.4, weight=0.5),
    })
    text = schema.to_json()
    assert Schema.from_json(text) == schema
    assert Schema.from_dict(json.loads(text)) == schema
    assert Schema.from_json(FCC_INVOICE.to_json()) == FCC_INVOICE


def test_json_records_resolved_thresholds():
    data = json.loads(Schema({"A": Field(Text())}).to_json())
    assert data["fields"]["A"]["threshold"] == 0.9
    assert data["format"] == "confcal.schema" and data["version"] == 1


def test_json_thresholds_default_when_absent():
    data = {"fields": {"A": {"kind": "field", "comparator": {"type": "Date"}}}}
    assert Schema.from_dict(data).fields["A"] == Field(Date())


def test_custom_comparator_cannot_be_written_to_json():
    schema = Schema({"LineItems": Items({"Rate": Field(lambda t, p: 1.0, threshold=0.5)})})
    with pytest.raises(ValidationError, match=r"field 'LineItems\.Rate': comparator must be one of "
                                              r"\['Text', 'Exact', 'Number', 'Date'\]"):
        schema.to_json()


def _spec(**overrides):
    base = {"kind": "field", "comparator": {"type": "Text"}, "threshold": 0.5, "weight": 1.0}
    base.update(overrides)
    return {"fields": {"A": base}}


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (_spec(comparator={"type": "Fuzzy"}),
         (r"schema\.fields\.A\.comparator\.type must be one of 'Text', 'Exact', 'Number', 'Date'; "
         r"found 'Fuzzy'")),
        (_spec(comparator={"type": "Number", "tolerance": 1}),
         (r"schema\.fields\.A\.comparator parameters of Number must be among "
         r"\['abs_tol', 'decimal', 'rel_tol'\]; found unknown \['tolerance'\]")),
        (_spec(comparator={"type": "Number", "rel_tol": -1}),
         r"schema\.fields\.A\.comparator: rel_tol must be a finite number >= 0; found -1"),
        (_spec(treshold=0.5),
         r"schema\.fields\.A keys must be among .*; found unknown \['treshold'\]"),
        (_spec(threshold=2),
         r"schema\.fields\.A: threshold must be a number within \[0, 1\]; found 2"),
        (_spec(kind="list"),
         r"schema\.fields\.A\.kind must be one of 'field', 'items'; found 'list'"),
        ({"fields": {"L": {"kind": "items", "fields": {"X": {"kind": "items", "fields": {}}}}}},
         r"schema\.fields\.L\.fields\.X\.kind must be 'field'; found 'items'"),
        ({"fields": {"L": {"kind": "items", "fields": {}}}},
         r"schema\.fields\.L: fields must not be empty"),
        ({"version": 2, "fields": {}}, r"schema\.version must be 1; found 2"),
        ({"format": "stickler", "fields": {}}, r"schema\.format must be 'confcal\.schema'"),
        ({}, r"schema must have the keys \['fields'\]; found \[\]"),
        ({"fields": []}, r"schema\.fields must be an object; found \[\]"),
    ],
)
def test_from_dict_reports_the_json_path(data, match):
    with pytest.raises(ValidationError, match=match):
        Schema.from_dict(data)


def test_from_json_rejects_bad_json():
    with pytest.raises(ValidationError, match="text must be valid JSON"):
        Schema.from_json("{not json")
    with pytest.raises(ValidationError, match="text must be a JSON object; found a JSON list"):
        Schema.from_json("[]")
    with pytest.raises(ValidationError, match="text must be a JSON string; found dict"):
        Schema.from_json({"fields": {}})


# --------------------------------------------------------------- FCC preset


def test_fcc_invoice_preset():
    fields = FCC_INVOICE.fields
    assert list(fields) == ["Agency", "Advertiser", "GrossTotal", "PaymentTerms",
                            "AgencyCommission", "NetAmountDue", "LineItems"]
    for name in ("Agency", "Advertiser", "PaymentTerms"):
        assert fields[name] == Field(Text(), threshold=0.9)
    for name in ("GrossTotal", "AgencyCommission", "NetAmountDue"):
        assert fields[name] == Field(Number(rel_tol=0.01), threshold=1.0)
    items = fields["LineItems"]
    assert isinstance(items, Items) and items.match_threshold == 0.0
    assert list(items.fields) == ["StartDate", "EndDate", "Days", "Description", "Rate"]
    assert items.fields["StartDate"] == items.fields["EndDate"] == Field(Date())
    assert items.fields["Days"] == items.fields["Description"] == Field(Text())
    assert items.fields["Rate"] == Field(Number(rel_tol=0.01))
    assert {f.weight for f in items.fields.values()} == {1.0}


def test_fcc_invoice_factory():
    assert fcc_invoice() == FCC_INVOICE
    lenient = fcc_invoice(text_threshold=ANLS_THRESHOLD, match_threshold=0.7)
    assert lenient.fields["Agency"] == Field(Text(), threshold=0.5)
    assert lenient.fields["LineItems"].fields["Description"].threshold == 0.5
    assert lenient.fields["LineItems"].match_threshold == 0.7
    assert lenient.fields["GrossTotal"] == FCC_INVOICE.fields["GrossTotal"]
    with pytest.raises(ValidationError, match="threshold must be a number within"):
        fcc_invoice(text_threshold=1.5)


@pytest.mark.parametrize(
    ("truth", "prediction", "outcome"),
    [
        # one character is the value: 1 - 1/6 = 0.83, 1 - 3/13 = 0.77, 1 - 4/13 = 0.69
        ("Net 30", "Net 60", "FD"),
        ("Vote Yes on 3", "Vote No on 3", "FD"),
        ("Blue Wave Ads", "Red Wave Ads", "FD"),
        # case, spacing and NFKC variants normalize to the same string: 1.0
        ("ACME Media", "acme  media", "TP"),
        ("ACME Media", "\uff21\uff23\uff2d\uff25 Media", "TP"),  # fullwidth ACME
        # one edit in 16 characters: 1 - 1/16 = 0.94
        ("Buying Time LLC", "Buying Time, LLC", "TP"),
    ],
)
def test_fcc_invoice_accepts_only_near_exact_text(truth, prediction, outcome):
    from confcal.scoring import score_documents

    result = score_documents(FCC_INVOICE, {"a": {"Agency": truth}},
                             {"a": {"Agency": {"value": prediction, "confidence": 0.9}}})
    row = result.entities.set_index("field").loc["Agency"]
    assert row.outcome == outcome
    # the lenient ANLS cut-off accepts every one of them
    lenient = score_documents(fcc_invoice(text_threshold=ANLS_THRESHOLD), {"a": {"Agency": truth}},
                              {"a": {"Agency": prediction}})
    assert lenient.entities.set_index("field").loc["Agency"].outcome == "TP"
