"""Reproducibility signatures: equal for equal settings, different when any setting changes."""

from __future__ import annotations

import pytest

import confcal
from confcal._signature import (
    SIGNATURE_ATTR,
    calibration_signature,
    combine_signatures,
    table_signature,
)
from confcal.scoring._scoring import extraction_signature, score_documents
from confcal.scoring.comparators import Date, Number, Text
from confcal.scoring.io import read_entities, write_entities
from confcal.scoring.presets import FCC_INVOICE, fcc_invoice
from confcal.scoring.schema import Field, Items, Schema

TRUTH = {"a": {"Agency": "ACME", "LineItems": [{"Description": "News", "Rate": 10}]}}
PRED = {"a": {"Agency": {"value": "ACME", "confidence": 0.9}}}


def parts(signature: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in signature.split("|"))


def test_extraction_signature_names_every_setting():
    signature = score_documents(FCC_INVOICE, TRUTH, PRED).signature
    got = parts(signature)
    assert list(got) == ["confcal", "schema", "conventions", "match"]
    assert got["confcal"] == confcal.__version__
    assert got["schema"] == f"fcc-invoice@{FCC_INVOICE.digest}"
    assert got["conventions"] == "confcal" and got["match"] == "0.0"
    assert len(FCC_INVOICE.digest) == 12 and int(FCC_INVOICE.digest, 16) >= 0


def test_identical_settings_give_identical_signatures():
    first = score_documents(FCC_INVOICE, TRUTH, PRED).signature
    # another schema object with the same settings, other documents
    again = score_documents(fcc_invoice(), {"b": {"Agency": "X"}}, {}, allow_empty=True).signature
    assert first == again


@pytest.mark.parametrize("variant", [
    fcc_invoice(text_threshold=0.5),                      # a threshold
    fcc_invoice(match_threshold=0.7),                     # the match threshold
    Schema({**FCC_INVOICE.fields, "GrossTotal": Field(Number(rel_tol=0.02))},
           name="fcc-invoice"),                           # a comparator option
    Schema({**FCC_INVOICE.fields, "Agency": Field(Text(), weight=2.0)},
           name="fcc-invoice"),                           # a weight
    Schema(dict(reversed(list(FCC_INVOICE.fields.items()))), name="fcc-invoice"),  # order
    Schema(FCC_INVOICE.fields, name="my-invoice"),        # the name
])
def test_any_changed_setting_changes_the_signature(variant):
    assert extraction_signature(variant, "confcal") != extraction_signature(FCC_INVOICE, "confcal")


def test_conventions_are_in_the_signature():
    assert (extraction_signature(FCC_INVOICE, "stickler-1.0")
            != extraction_signature(FCC_INVOICE, "confcal"))
    stickler = parts(extraction_signature(FCC_INVOICE, "stickler-1.0"))
    assert stickler["conventions"] == "stickler-1.0"
    assert stickler["match"] == "0.7"  # the threshold stickler-eval pairs at, not the schema's
    result = score_documents(FCC_INVOICE, TRUTH, PRED, conventions="stickler-1.0")
    assert result.signature == extraction_signature(FCC_INVOICE, "stickler-1.0")


def test_match_part_lists_each_items_field():
    one = Schema({"A": Field(Text())})
    assert parts(extraction_signature(one, "confcal"))["match"] == "none"
    two = Schema({"L1": Items({"X": Field(Text())}, match_threshold=0.5),
                  "L2": Items({"Y": Field(Date())})})
    assert parts(extraction_signature(two, "confcal"))["match"] == "L1=0.5,L2=0.0"


def test_custom_comparator_is_named_custom():
    def same(t, p):
        return float(t == p)

    schema = Schema({"A": Field(same, threshold=1.0)}, name="mine")
    assert schema.has_custom_comparators
    assert parts(extraction_signature(schema, "confcal"))["schema"].startswith("custom@")
    assert not FCC_INVOICE.has_custom_comparators


def test_schema_name_is_validated_and_round_trips():
    with pytest.raises(confcal.ValidationError, match="name must be a non-empty string"):
        Schema({"A": Field(Text())}, name="a|b")
    assert Schema.from_json(FCC_INVOICE.to_json()) == FCC_INVOICE
    assert Schema.from_json(FCC_INVOICE.to_json()).name == "fcc-invoice"


def test_calibration_report_signature():
    correct, confidence = [0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8]
    report = confcal.calibration_report(correct, confidence)
    assert report.signature == f"confcal:{confcal.__version__}|ece:quantile-5|ecarb-ties:expected"
    assert report.to_dict()["signature"] == report.signature
    assert report.signature == confcal.calibration_report(correct, confidence).signature
    for other in (confcal.calibration_report(correct, confidence, n_bins=10),
                  confcal.calibration_report(correct, confidence, binning="uniform"),
                  confcal.calibration_report(correct, confidence, ties="pessimistic")):
        assert other.signature != report.signature


def test_combine_refuses_disagreeing_settings():
    a = calibration_signature(binning="quantile", n_bins=5, ties="expected")
    b = calibration_signature(binning="quantile", n_bins=10, ties="expected")
    with pytest.raises(ValueError, match="signatures disagree on 'ece'"):
        combine_signatures([a, b])
    assert combine_signatures([a, a]) == a


def test_signature_survives_a_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    result = score_documents(FCC_INVOICE, TRUTH, PRED)
    path = write_entities(result.entities, tmp_path / "e.parquet")
    back = read_entities(path)
    assert back.attrs[SIGNATURE_ATTR] == result.signature
    assert table_signature(back, binning="quantile", n_bins=5, ties="expected") == (
        result.signature + "|ece:quantile-5|ecarb-ties:expected")
    # CSV keeps no metadata: the table then says so instead of guessing
    csv = read_entities(write_entities(result.entities, tmp_path / "e.csv"))
    assert parts(table_signature(csv, binning="quantile", n_bins=5, ties="expected"))[
        "schema"] == "unknown"


def test_report_and_cli_print_the_signature(tmp_path):
    pytest.importorskip("matplotlib")
    from confcal.report import write_report

    entities = confcal.load_demo().score(models=["sim-logprob"], tiers=["clean"]).entities
    written = write_report(entities, tmp_path / "rep", by="model", n_resamples=0)
    assert written.signature == (f"confcal:{confcal.__version__}|schema:fcc-invoice@"
                                 f"{FCC_INVOICE.digest}|conventions:confcal|match:0.0"
                                 "|ece:quantile-5|ecarb-ties:expected")
    assert f"Signature: {written.signature}" in written.html.read_text()
    # Markdown escapes the pipes (they would start a table); a renderer shows them plainly
    escaped = written.signature.replace("|", "\\|")
    assert f"Signature: {escaped}" in written.markdown.read_text()


@pytest.mark.parametrize("signature", [5, ["confcal:0.1.0"], {"a": 1}])
def test_a_non_string_signature_attribute_is_an_error_naming_it(signature):
    import pandas as pd

    entities = pd.DataFrame({"doc_id": ["a"]})
    entities.attrs["confcal.signature"] = signature
    kind = type(signature).__name__
    with pytest.raises(confcal.exceptions.ValidationError,
                       match=r"entities\.attrs\['confcal\.signature'\] must be a string \(the "
                             rf"settings that scored the table\); found {kind}"):
        table_signature(entities, binning="quantile", n_bins=5, ties="expected")
