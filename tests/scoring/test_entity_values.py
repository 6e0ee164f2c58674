"""The truth and prediction columns: ordinary object columns in memory, exact through files.

In memory they are object columns, so pandas works on them as on any other; in a file each
value is its JSON text (confcal.scoring._tables), read back into the same value and type.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from confcal.exceptions import ValidationError
from confcal.scoring import score_documents
from confcal.scoring._tables import ChunkWriter, value_from_json, value_to_json
from confcal.scoring.comparators import Text
from confcal.scoring.io import iter_entities, read_entities, write_entities
from confcal.scoring.presets import FCC_INVOICE
from confcal.scoring.schema import Field, Schema


@pytest.fixture(scope="module")
def entities() -> pd.DataFrame:
    truths = {"a": {"Agency": "ACME Media", "GrossTotal": "100", "NetAmountDue": 100,
                    "PaymentTerms": "Net 30"},
              "b": {"Agency": "acme media", "GrossTotal": 100.0, "PaymentTerms": None}}
    preds = {"a": {"Agency": {"value": "ACME Media", "confidence": 0.9},
                   "GrossTotal": 100, "NetAmountDue": "100", "PaymentTerms": "Net 60"},
             "b": {"Agency": "Zenith", "GrossTotal": "100.00"}}
    return score_documents(FCC_INVOICE, truths, preds).entities


def _column(entities: pd.DataFrame, name: str, field: str) -> pd.Series:
    return entities.loc[entities["field"] == field, name].reset_index(drop=True)


def test_the_value_columns_are_object_columns(entities):
    assert entities["truth"].dtype == object and entities["prediction"].dtype == object
    # no inference: a column whose values are all strings stays object (pandas would make
    # it "str" and NaN its None)
    agency = _column(entities, "truth", "Agency")
    assert agency.dtype == object and agency.tolist() == ["ACME Media", "acme media"]


def test_str_accessor_works_as_on_any_object_column(entities):
    truth = entities["truth"]
    # .str works; values that are not text give NaN, as on any object column
    want = pd.Series(truth.to_numpy(dtype=object), dtype=object, name="truth").str.lower()
    pd.testing.assert_series_equal(truth.str.lower(), want)
    agency = _column(entities, "truth", "Agency")
    assert agency.str.upper().tolist() == ["ACME MEDIA", "ACME MEDIA"]
    assert agency.str.contains("acme", case=False).tolist() == [True, True]
    assert agency.str.len().tolist() == [10, 10]
    gross = _column(entities, "truth", "GrossTotal")  # "100" and 100.0
    assert gross.str.len().iloc[0] == 3 and math.isnan(gross.str.len().iloc[1])


def test_astype_str_equality_value_counts_and_isin(entities):
    gross = _column(entities, "truth", "GrossTotal")
    net = _column(entities, "prediction", "NetAmountDue")
    # astype(str): each value's str, whatever its type
    assert gross.astype(str).tolist() == ["100", "100.0"]
    # ==: Python equality per element, so the text "100" is not the number 100
    assert (gross == "100").tolist() == [True, False]
    assert (gross == 100).tolist() == [False, True]
    assert (_column(entities, "prediction", "GrossTotal") == 100).tolist() == [True, False]
    assert (net == "100").tolist() == [True, False]  # b predicts no NetAmountDue: None
    # value_counts and isin group equal values (100 and 100.0 are equal in Python)
    counts = _column(entities, "truth", "Agency").str.lower().value_counts()
    assert counts.to_dict() == {"acme media": 2}
    assert entities["prediction"].isin(["Zenith", "Net 60"]).sum() == 2
    values = pd.Series(["100", 100, None, "100"], dtype=object)
    assert values.value_counts().to_dict() == {"100": 2, 100: 1}
    assert values.isin([100]).tolist() == [False, True, False, False]


# ------------------------------------------------------------------ through files
_SCALARS = (
    st.none() | st.booleans() | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec="utf-8"), max_size=8)
    # a lone surrogate (a Python str may hold one; JSON keeps it as an escape). Two in a
    # row would be read back as the one character their escapes spell, as JSON reads them
    | st.characters(categories=["Cs"])
    | st.sampled_from(["", "NA", "None", "null", "100", '"quoted"', "a,b\nc", "{}", "[]"])
    | st.decimals(allow_nan=False, places=3) | st.dates()
    | st.datetimes(timezones=st.none() | st.just(dt.timezone.utc))
    | st.datetimes().map(pd.Timestamp) | st.sampled_from([pd.NA, pd.NaT]))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)


def _same(got: Any, want: Any) -> bool:
    """Equal in value and in type, all the way down (NaN equals NaN)."""
    if type(got) is not type(want):
        return False
    if isinstance(want, list):
        return len(got) == len(want) and all(map(_same, got, want))
    if isinstance(want, dict):
        return list(got) == list(want) and all(_same(got[k], want[k]) for k in want)
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    if want is pd.NA or want is pd.NaT:
        return got is want
    return bool(got == want)


def _table(truth: list[Any], prediction: list[Any]) -> pd.DataFrame:
    n = len(truth)
    return pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n)], "field": ["Agency"] * n,
        "truth": pd.Series(truth, dtype=object), "prediction": pd.Series(prediction, dtype=object),
        "outcome": ["FD"] * n, "correct": [False] * n, "confidence": [0.5] * n,
        "similarity": [0.0] * n, "weight": [1.0] * n})


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_VALUES, _VALUES), min_size=1, max_size=8))
def test_mixed_values_round_trip_through_every_format(tmp_path: Path,
                                                     rows: list[tuple[Any, Any]]) -> None:
    truth, prediction = [t for t, _ in rows], [p for _, p in rows]
    table = _table(truth, prediction)
    for suffix in (".parquet", ".csv", ".csv.gz"):
        path = write_entities(table, tmp_path / f"e{suffix}")
        for back in (read_entities(path), pd.concat(iter_entities(path, chunk_rows=3))):
            for column, want in (("truth", truth), ("prediction", prediction)):
                got = back[column].tolist()
                assert all(map(_same, got, want)), (suffix, column, got, want)


def test_a_table_written_in_chunks_reads_back_the_same_values(tmp_path):
    values = ["100", 100, 100.0, True, None, [], "", float("nan"), {"k": [1, "x"]},
              Decimal("1.50"), dt.date(2024, 3, 1), np.int64(7), np.float32(0.5)]
    table = _table(values, values[::-1])
    for suffix in (".parquet", ".csv.gz"):
        writer = ChunkWriter(tmp_path / f"c{suffix}")
        writer.write(table.iloc[:5])
        writer.write(table.iloc[5:])
        back = read_entities(writer.close())
        # numpy scalars come back as the Python scalars they equal
        want = [v.item() if isinstance(v, np.generic) else v for v in values]
        assert all(map(_same, back["truth"].tolist(), want))
        assert all(map(_same, back["prediction"].tolist(), want[::-1]))


def test_the_file_holds_each_values_json_text(tmp_path):
    table = _table(["100", 100, 100.0, None, "", [], dt.date(2024, 3, 1)], [None] * 7)
    path = write_entities(table, tmp_path / "e.csv")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)["truth"].tolist()
    assert text == ['"100"', "100", "100.0", "", '""', "[]", '{"date": "2024-03-01"}']


@pytest.mark.parametrize("value, text", [
    ("ACME", '"ACME"'), ("", '""'), ("a\nb", '"a\\nb"'), ("é", '"é"'), ("\ud800", '"\\ud800"'),
    (100, "100"), (-0.0, "-0.0"), (1e16, "1e+16"), (float("inf"), "Infinity"), (True, "true"),
    (None, None), ([], "[]"), ([1, [None, "x"]], '[1, [null, "x"]]'),
    ({"a": 1}, '{"object": {"a": 1}}'), ({"date": "x"}, '{"object": {"date": "x"}}'),
    (Decimal("1.50"), '{"decimal": "1.50"}'), (dt.date(2024, 3, 1), '{"date": "2024-03-01"}'),
    (dt.datetime(2024, 3, 1, 9, 30), '{"datetime": "2024-03-01T09:30:00"}'),
    (pd.Timestamp("2024-03-01 09:30"), '{"timestamp": "2024-03-01T09:30:00"}'),
    (pd.NA, '{"missing": "NA"}'), (pd.NaT, '{"missing": "NaT"}'),
    (np.datetime64("NaT"), '{"missing": "NaT"}'), (np.bool_(True), "true"),
])
def test_value_texts_by_hand(value, text):
    assert value_to_json(value) == text
    if text is not None:
        back = value_from_json(text)
        want = value.item() if isinstance(value, np.generic) and value == value else value
        assert _same(back, want) or (isinstance(value, np.datetime64) and back is pd.NaT)


@pytest.mark.parametrize("value", [(1, 2), {1: "a"}, {"x"}, object(), 10**5000],
                         ids=["tuple", "int-keys", "set", "object", "5001-digit-int"])
def test_a_value_no_cell_can_hold_is_an_error(value):
    with pytest.raises(ValidationError, match=r"an entity-table value must be a string, "
                                              r"number, bool, list, dict \(text keys\)"):
        value_to_json(value)


def test_a_cell_that_is_not_a_values_json_text_names_file_line_and_column(tmp_path):
    # a table whose values were written as plain text (pandas' to_csv on the table)
    entities = score_documents(Schema({"Agency": Field(Text())}), {"a": {"Agency": "ACME"},
                                                             "b": {"Agency": "ACME"}}, {},
                               allow_empty=True)
    path = tmp_path / "plain.csv"
    entities.entities.to_csv(path, index=False)
    with pytest.raises(ValidationError) as info:
        read_entities(path)
    assert str(info.value) == (
        f"{path}: column truth must be valid JSON; found an error at column 1: Expecting "
        "value (first on line 2: 'ACME'; each value is its JSON text, as write_entities "
        "writes it: text in quotes)")
    assert info.value.location == {"source": str(path), "line": 2, "field": "truth"}
    with pytest.raises(ValidationError) as info:
        list(iter_entities(path, chunk_rows=1))
    assert info.value.location == {"source": str(path), "line": 2, "field": "truth"}
    # a JSON object that is none of the value forms; a Parquet column that is not text
    table = _table(["x", "y"], [None, None]).assign(truth=['"x"', '{"when": 1}'])
    table.to_parquet(tmp_path / "o.parquet")
    with pytest.raises(ValidationError, match=r"o.parquet: column truth must hold JSON objects "
                                              r"only in the value forms .*found \{\"when\": 1\} "
                                              r"\(first on row 1: "):
        read_entities(tmp_path / "o.parquet")
    table.assign(truth=[1, 2]).to_parquet(tmp_path / "i.parquet")
    with pytest.raises(ValidationError, match=r"i.parquet: column truth must hold text .* "
                                              r"found int values, first on row 0 \(1\)") as info:
        read_entities(tmp_path / "i.parquet")
    assert info.value.location == {"source": str(tmp_path / "i.parquet"), "index": 0,
                                   "field": "truth"}
    # a hostile cell is bounded like any JSON text
    table.assign(truth=["[" * 100 + "]" * 100, "1"]).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(ValidationError, match=r"column truth must nest objects and lists at "
                                              r"most 64 deep"):
        read_entities(tmp_path / "d.parquet")
