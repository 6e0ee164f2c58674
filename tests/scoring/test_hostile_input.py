"""Hostile input, the reading side: nothing lost silently, bounded cost on hostile input, a BOM
accepted, and an entity table that goes to Parquet as it is.

Every hostile input of the issue has a small-but-representative version here (megabytes,
not gigabytes): what is checked is the error (file, line, rule) and the memory held, never
the time (benchmarks/bench_hostile_input.py measures time and memory against the size).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import tracemalloc
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal import brier
from confcal._files import read_json_object
from confcal.cli import main
from confcal.exceptions import ValidationError
from confcal.scoring import _documents as documents
from confcal.scoring import io, score_documents, score_documents_iter
from confcal.scoring._documents import _PredictionIndex, _records, paired_documents
from confcal.scoring.comparators import Date, Number, Text
from confcal.scoring.io import (
    InputLimits,
    check_entities,
    iter_documents,
    read_documents,
    read_entities,
    write_entities,
)
from confcal.scoring.presets import FCC_INVOICE
from confcal.scoring.schema import Field, Items, Schema

AGENCY = Schema({"Agency": Field(Text())})


def _line(doc_id: Any, document: dict[str, Any]) -> str:
    return json.dumps({"doc_id": doc_id, "document": document}) + "\n"


def _jsonl(path: Path, *records: tuple[Any, dict[str, Any]]) -> Path:
    path.write_text("".join(_line(d, doc) for d, doc in records), encoding="utf-8")
    return path


def _raised(fn: Any, *args: Any, **kwargs: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        fn(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------ nothing lost silently
def test_an_empty_prediction_file_or_folder_is_an_error_unless_allowed(tmp_path: Path) -> None:
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Agency": "ACME"}))
    empty_file = tmp_path / "pred.jsonl"
    empty_file.write_text("\n\n   \n")  # blank lines only: no document
    empty_folder = tmp_path / "preds"
    empty_folder.mkdir()
    for empty, kind in ((empty_file, "file"), (empty_folder, "folder")):
        exc = _raised(lambda p=empty: list(paired_documents(truth, p)))
        assert str(exc).startswith(f"{empty}: the prediction {kind} must hold at least one "
                                   "document; found none (allow_empty=True")
        assert exc.source == str(empty)
        # asked for: every truth value scored as missing, and counted
        pairs = list(paired_documents(truth, empty, allow_empty=True))
        assert pairs == [("a", {"Agency": "ACME"}, None)]
    exc = _raised(read_documents, empty_file)
    assert "must contain at least one document; found none (allow_empty=True" in str(exc)
    assert read_documents(empty_file, allow_empty=True) == {}
    assert read_documents(empty_folder, allow_empty=True) == {}
    with pytest.raises(ValidationError, match="allow_empty must be True or False; found 1"):
        read_documents(empty_file, allow_empty=1)


def test_the_command_refuses_empty_predictions_naming_them(tmp_path: Path, capsys: Any) -> None:
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Agency": "ACME"}))
    empty = tmp_path / "pred.jsonl"
    empty.write_text("")
    out = tmp_path / "e.csv"
    args = ["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(empty),
            "-o", str(out)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"confcal: error: {empty}: the prediction file must hold at least "
                          "one document; found none")
    assert not out.exists()
    assert main([*args, "--allow-empty"]) == 0
    printed = capsys.readouterr().out
    # 6 top-level fields of one truth document without a prediction: 1 FN (Agency), 5 TN
    assert "(TP 0, FD 0, FA 0, FN 1, TN 5)" in printed
    assert "note: 1 truth documents without a prediction" in printed


def test_a_repeated_key_is_an_error_naming_file_line_and_key(tmp_path: Path) -> None:
    # the two cases: the doc id "a" then "b", a confidence 0.1 then 0.99
    pred = tmp_path / "pred.jsonl"
    pred.write_text(_line("a", {"Agency": "ACME"})
                    + '{"doc_id": "a", "doc_id": "b", "document": {}}\n'
                    + '{"doc_id": "c", "document": {"Agency": {"value": "X", '
                      '"confidence": 0.1, "confidence": 0.99}}}\n')
    exc = _raised(read_documents, pred)
    assert str(exc) == (f"{pred}, line 2: must not repeat a key in one object; found 'doc_id' "
                        "again at column 17")
    assert exc.location == {"source": str(pred), "line": 2}
    record = pred.read_text().splitlines(keepends=True)[2]
    pred.write_text(record)
    exc = _raised(read_documents, pred)
    column = record.index('"confidence"', record.index('"confidence"') + 1) + 1  # the second
    assert column == 74
    assert str(exc) == (f"{pred}, line 1: must not repeat a key in one object; found "
                        f"'confidence' again at column {column}")
    # a per-document file: the line within the file
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "inv-1.json").write_text('{\n  "Agency": "A",\n  "Agency": "B"\n}\n')
    exc = _raised(read_documents, folder)
    assert str(exc) == (f"{folder / 'inv-1.json'}: must not repeat a key in one object; "
                        "found 'Agency' again at line 3, column 3")
    assert (exc.line, exc.doc_id) == (3, "inv-1")


def test_a_repeated_key_is_found_in_the_decoders_order() -> None:
    # the inner object closes first, so its repeat is the one reported; keys equal to the
    # repeated one elsewhere (the outer "x" is not repeated) do not confuse the position
    text = '{"x": 1, "y": {"x": 2, "x": 3}, "z": [{"x": 4}]}'
    with pytest.raises(ValidationError, match=r"found 'x' again at column 24"):
        read_json_object(text, where="t:")
    assert text[23:26] == '"x"'
    text = '{"y": {"x": 1}, "x": 2, "x": 3}'
    with pytest.raises(ValidationError, match=r"found 'x' again at column 25"):
        read_json_object(text, where="t:")


def _parquet(path: Path, **columns: Any) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = {"doc_id": ["a", "a", "b"], "field": ["Agency", "Rate", "Agency"],
            "outcome": ["TP", "FD", "TP"], "correct": [True, False, True],
            "confidence": [0.9, 0.4, 0.8], "similarity": [1.0, 0.5, 1.0],
            "weight": [1.0, 1.0, 2.0]}
    arrays = {name: pa.array(values) for name, values in base.items()}
    arrays.update(columns)
    pq.write_table(pa.table(arrays), path)
    return path


def test_parquet_numbers_stored_as_text_or_bools_are_errors(tmp_path: Path) -> None:
    import pyarrow as pa

    path = _parquet(tmp_path / "text.parquet", confidence=pa.array(["0.9", "0.4", "0.8"]))
    exc = _raised(read_entities, path)
    assert str(exc) == (f"{path}: column confidence must hold numbers; found text (found 3 "
                        "values breaking it, first on row 0 ('0.9'))")
    assert exc.location == {"source": str(path), "field": "confidence", "index": 0}
    path = _parquet(tmp_path / "bool.parquet", weight=pa.array([True, True, True]))
    with pytest.raises(ValidationError, match=r"column weight must hold numbers; found a bool "
                                              r"column"):
        read_entities(path)
    path = _parquet(tmp_path / "correct.parquet", correct=pa.array(["1", "0", "1"]))
    with pytest.raises(ValidationError, match=r"column correct must be true/false \(or 1/0\); "
                                              r"found 3 values breaking it, first on row 0"):
        read_entities(path)
    # an object column in memory that mixes numbers and a text (pandas would coerce "0.4")
    table = read_entities(_parquet(tmp_path / "ok.parquet"))
    table["confidence"] = pd.Series([0.9, "0.4", 0.8], dtype=object)
    with pytest.raises(ValidationError, match=r"column confidence must hold numbers; found "
                                              r"text \(found 1 value breaking it, first on row "
                                              r"1 \('0.4'\)\)"):
        check_entities(table)


def test_parquet_decimals_and_float16_are_read_with_a_counted_warning(tmp_path: Path) -> None:
    import pyarrow as pa

    path = _parquet(tmp_path / "dec.parquet", confidence=pa.array(
        [Decimal("0.9"), Decimal("0.4"), None], type=pa.decimal128(3, 2)))
    with pytest.warns(UserWarning, match=r"column confidence holds 2 decimal values; each is "
                                         r"read as the nearest float64"):
        table = read_entities(path)
    np.testing.assert_array_equal(table["confidence"], [0.9, 0.4, np.nan])
    halves = np.array([0.9, 0.4, 0.8], dtype=np.float16)
    path = _parquet(tmp_path / "f16.parquet", confidence=pa.array(halves))
    with pytest.warns(UserWarning, match=r"column confidence is float16 \(3 significant "
                                         r"digits\): its 3 values are read exactly"):
        table = read_entities(path)
    # exactly the stored values: float16(0.9) is 0.89990234375, not 0.9
    assert table["confidence"].tolist() == [float(v) for v in halves]
    assert table["confidence"].iloc[0] == 0.89990234375
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float32 and int columns: no warning
        read_entities(_parquet(tmp_path / "f32.parquet", confidence=pa.array(
            np.array([0.5, 0.25, 1.0], dtype=np.float32)), weight=pa.array([1, 2, 3])))


def test_absurd_weights_are_refused_at_every_boundary(tmp_path: Path) -> None:
    import pyarrow as pa

    # 1e308: Σ weight is inf, and WOA = inf / inf became NaN with "every row is TN"
    path = _parquet(tmp_path / "w.parquet", weight=pa.array([1.0, 1e308, 1.0]))
    exc = _raised(read_entities, path)
    assert str(exc) == (f"{path}: column weight must be finite and within [1e-100, 1e+100] "
                        "(sums stay finite); found 1 value breaking it, first on row 1 "
                        "(1e+308)")
    # the largest accepted weight keeps the sums finite: WOA is the similarity mean
    table = read_entities(_parquet(tmp_path / "big.parquet",
                                   weight=pa.array([1e100, 1e100, 1e100])))
    from confcal.scoring import ExtractionResult

    # (1 + 0.5 + 1) / 3 with equal weights, whatever their size
    assert ExtractionResult(table, {}).woa == pytest.approx(2.5 / 3)
    huge = Schema({"Agency": Field(Text(), weight=1e60),
                   "LineItems": Items({"Rate": Field(Number(), weight=1e60)}, weight=1e60)})
    exc = _raised(score_documents, huge, {"a": {"Agency": "A"}}, {}, allow_empty=True)
    # the line-item sub-field's entity weight is 1e60 * 1e60 = 1e120
    assert str(exc) == ("schema field LineItems.Rate: the entity weight (the field's weight, "
                        "times its Items weight for a line-item sub-field) must be finite and "
                        "within [1e-100, 1e+100] so that sums stay finite; found 1e+120")
    assert exc.field == "LineItems.Rate"
    # the metrics' sample_weight is not bounded: they rescale by the largest weight first,
    # so 1e308 is as good as 1 (Brier of one row: (0.9 - 1)**2 = 0.01)
    assert brier([1, 0], [0.9, 0.2], sample_weight=[1e308, 0.0]) == pytest.approx(0.01)


# --------------------------------------------------------------------------- bounded input
def _peak(fn: Any) -> tuple[Any, int]:
    """What fn returns (or raises) and the peak of Python allocations while it ran."""
    tracemalloc.start()
    try:
        try:
            result: Any = fn()
        except ValidationError as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_of_nul_bytes_fails_at_the_line_limit_in_bounded_memory(tmp_path: Path) -> None:
    # 32 MiB of NUL bytes in one "line" (compressed to 32 KiB); the 10 GiB of them
    # was read as one line (6.6 GB resident, then a MemoryError traceback)
    path = tmp_path / "nul.jsonl.gz"
    path.write_bytes(gzip.compress(_line("a", {}).encode() + b"\0" * (32 << 20), 1))
    limits = InputLimits(max_line_bytes=1 << 20)
    exc, peak = _peak(lambda: list(iter_documents(path, limits=limits)))
    assert isinstance(exc, ValidationError)
    assert str(exc) == (f"{path}, line 2: must hold lines of at most 1,048,576 bytes "
                        "(InputLimits.max_line_bytes, --max-line-bytes on the command line); "
                        "found a longer one")
    assert exc.location == {"source": str(path), "line": 2}
    # the reader holds at most a line and a 1 MiB block (and gzip's buffers), not 32 MiB
    assert peak < 8 << 20, peak


def test_a_gzip_of_newlines_is_read_by_blocks_with_the_right_line_numbers(tmp_path: Path
                                                                          ) -> None:
    # 8 million blank lines (8 MB, 8 KB compressed) between two records: line numbers stay
    # exact although the blank run is counted in C, block by block
    n = 8_000_000
    path = tmp_path / "nl.jsonl.gz"
    path.write_bytes(gzip.compress(_line("a", {}).encode() + b"\n" * n + b"  \r\n\t\n"
                                   + b'{"doc_id": "b", "document": {"x": }}\n'))
    exc, peak = _peak(lambda: list(iter_documents(path)))
    assert isinstance(exc, ValidationError)
    # record 1, then n + 2 blank lines: the bad record is on line n + 4
    assert str(exc).startswith(f"{path}, line {n + 4}: must be valid JSON; found an error at "
                               "column 35")
    assert peak < 8 << 20, peak


def test_a_gzip_beyond_the_decompressed_limit_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(_line("a", {}).encode() + b"\n" * (3 << 20)))
    limits = InputLimits(max_decompressed_bytes=2 << 20)
    exc = _raised(lambda: list(iter_documents(path, limits=limits)))
    assert str(exc).startswith(f"{path}, line ")
    assert ("must decompress to at most 2,097,152 bytes (InputLimits.max_decompressed_bytes, "
            "--max-decompressed-bytes on the command line); found more by this line") in str(exc)
    assert len(list(iter_documents(path))) == 1  # within the default 4 GiB


def test_an_out_of_order_gzip_is_copied_record_by_record(tmp_path: Path) -> None:
    # out of order, with 4 MiB of blank lines between the records: the temporary copy used
    # for seeking holds the two records only (the 2 MB .gz became 2 GiB in /tmp)
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Agency": "A"}), ("b", {"Agency": "B"}))
    records = [_line("b", {"Agency": "B"}).encode(), _line("a", {"Agency": "A"}).encode()]
    pred = tmp_path / "pred.jsonl.gz"
    pred.write_bytes(gzip.compress(records[0] + b"\n" * (4 << 20) + records[1]))
    pairs = list(paired_documents(truth, pred))
    assert [(d, p) for d, _, p in pairs] == [("a", {"Agency": "A"}), ("b", {"Agency": "B"})]
    index = _PredictionIndex(pred, InputLimits())
    try:
        index._fh.seek(0, 2)
        assert index._fh.tell() <= sum(len(r) - 1 for r in records)  # without line endings
        assert index.get("a") == ({"Agency": "A"}, documents.Where(str(pred), (4 << 20) + 2))
    finally:
        index.close()


def test_an_out_of_order_gzip_copy_drops_whitespace_padding_inside_records(tmp_path: Path
                                                                          ) -> None:
    # 30 records, each padded with 1 MiB of spaces inside its JSON (valid JSON, within the
    # 16 MiB line limit; the .gz is ~30 KB): the copy for seeking is the records written
    # compactly, a few hundred bytes, not 30 MiB (a 0.9 MB .gz made 900 MiB in /tmp)
    pad = " " * (1 << 20)
    ids = [f"d{i}" for i in range(30)]
    value = {"Agency": {"value": "x\u00e9\"", "confidence": 0.25}, "GrossTotal": 1e-7,
             "n": 2**70, "z": None}
    truth = _jsonl(tmp_path / "truth.jsonl", *[(d, {"Agency": "A"}) for d in ids])
    lines = [f'{{"doc_id": "{d}",{pad}"document":{pad}{json.dumps(value)}{pad}}}'
             for d in reversed(ids)]
    pred = tmp_path / "pred.jsonl.gz"
    pred.write_bytes(gzip.compress("\n".join(lines).encode()))
    index = _PredictionIndex(pred, InputLimits())
    try:
        index._fh.seek(0, 2)
        assert index._fh.tell() < 200 * len(ids)
        for number, d in enumerate(reversed(ids), start=1):
            assert index.get(d) == (value, documents.Where(str(pred), number))
    finally:
        index.close()
    pairs = list(paired_documents(truth, pred))
    assert [d for d, _, _ in pairs] == ids and all(p == value for _, _, p in pairs)


def test_a_long_value_is_refused_before_the_quadratic_comparison(tmp_path: Path,
                                                                  capsys: Any) -> None:
    # one value of 20,000 characters against a 10,000 limit: 2 ms per comparison at the
    # limit, 22 s at a million characters (the issue)
    long = "x" * 20_000
    exc = _raised(score_documents, AGENCY, {"a": {"Agency": "ACME"}},
                  {"a": {"Agency": {"value": long, "confidence": 0.5}}})
    assert str(exc) == ("doc 'a', field Agency: the predicted value must be at most 10,000 "
                        "characters long (InputLimits.max_value_chars, --max-value-chars on the "
                        "command line; text comparison is quadratic in length); found 20,000")
    assert (exc.doc_id, exc.field) == ("a", "Agency")
    schema = Schema({"LineItems": Items({"Description": Field(Text()),
                                         "Date": Field(Date())})})
    exc = _raised(score_documents, schema,
                  {"a": {"LineItems": [{"Description": "x"}, {"Date": long}]}}, {},
                  allow_empty=True)
    assert str(exc).startswith("doc 'a', field LineItems[1].Date: the truth value must be at "
                               "most 10,000 characters long")
    # the stickler-1.0 scorer is bounded the same way
    exc = _raised(score_documents, FCC_INVOICE, {"a": {"Agency": long}}, {},
                  conventions="stickler-1.0", allow_empty=True)
    assert str(exc).startswith("doc 'a', field Agency: the truth value must be at most 10,000")
    # raised on purpose, the value is compared
    result = score_documents(AGENCY, {"a": {"Agency": long}}, {"a": {"Agency": long}},
                             limits=InputLimits(max_value_chars=20_000))
    assert result.entities["outcome"].tolist() == ["TP"]
    # the command line says where the document was read
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Agency": long}))
    pred = _jsonl(tmp_path / "pred.jsonl", ("a", {"Agency": "ACME"}))
    args = ["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(pred),
            "-o", str(tmp_path / "e.csv")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("confcal: error: doc 'a', field Agency: the truth value must be at "
                          "most 10,000 characters long")
    assert err.rstrip().endswith(f"(truth at {truth}, line 1; prediction at {pred}, line 1)")
    assert main([*args, "--max-value-chars", "20000"]) == 0
    assert "(TP 0, FD 1, FA 0, FN 0, TN 5)" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "rule", "at"), [
    # 100,000 brackets deep: a RecursionError traceback before. The two braces are depth 1
    # and 2, the brackets start at column 35: depth 65 is the 63rd, at column 35 + 62 = 97
    ('{"doc_id": "a", "document": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}",
     "must nest objects and lists at most 64 deep (InputLimits.max_depth, --max-depth); "
     "found deeper nesting", "column 97"),
    # a 10,001-digit integer: Python's int() guard, raised without file and line before
    ('{"doc_id": "a", "document": {"x": ' + "7" * 10_001 + "}}",
     "must hold integers of at most 4300 digits; found 10001 digits", "column 35"),
    # a lone surrogate: no UTF-8 file can hold it, and writing it failed later without a place
    ('{"doc_id": "a", "document": {"x": "ab\\udc80"}}',
     "must be valid Unicode; found a lone surrogate escape '\\\\udc80' (half of a UTF-16 "
     "pair)", "column 38"),
], ids=["deep", "long-integer", "lone-surrogate"])
def test_hostile_json_gives_a_located_error(tmp_path: Path, text: str, rule: str, at: str
                                            ) -> None:
    path = tmp_path / "pred.jsonl"
    path.write_text(_line("ok", {}) + text + "\n")
    exc = _raised(read_documents, path)
    assert str(exc) == f"{path}, line 2: {rule} at {at}"
    assert exc.location == {"source": str(path), "line": 2}


def test_the_depth_limit_counts_brackets_outside_strings_only_and_can_be_raised() -> None:
    # depth 2 really, with 100 brackets inside a string (and an escaped quote before them)
    text = '{"a": ["x\\"' + "[" * 100 + '"]}'
    assert read_json_object(text, where="t:") == {"a": ['x"' + "[" * 100]}
    deep = '{"a": ' + "[" * 70 + "]" * 70 + "}"
    with pytest.raises(ValidationError, match=r"at most 64 deep .* at column 70"):
        read_json_object(deep, where="t:")
    nested = read_json_object(deep, where="t:", limits=InputLimits(max_depth=100))["a"]
    depth = 0
    while nested != []:
        nested, depth = nested[0], depth + 1
    assert depth == 69  # 70 lists, the innermost empty
    with pytest.raises(ValidationError, match=r"max_depth must be at most 500"):
        InputLimits(max_depth=501)


def _depth_reference(text: str, max_depth: int) -> int | None:
    """The first bracket deeper than max_depth, character by character (JSON's rules)."""
    depth, inside, escaped = 0, False, False
    for i, char in enumerate(text):
        if inside:
            escaped, inside = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return i
        elif char in "]}":
            depth -= 1
    return None


_PIECES = st.sampled_from(["[", "]", "{", "}", '"', '\\"', "\\\\", "a", "é", " "])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_PIECES, max_size=40), st.integers(0, 4), st.integers(1, 8))
def test_the_depth_check_agrees_with_a_character_by_character_reference(
        pieces: list[str], max_depth: int, chunk: int) -> None:
    import confcal._files as files

    # backslashes only inside strings (outside one it is no JSON, and the parser says so)
    text, inside = "", False
    for piece in pieces:
        if piece.startswith("\\") and not inside:
            continue
        text += piece
        inside ^= piece == '"'
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(files, "_DEPTH_CHUNK", chunk)  # brackets and strings across chunks
        assert files._too_deep(text, max_depth) == _depth_reference(text, max_depth)


def test_a_per_document_file_beyond_the_line_limit_is_not_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "a.json").write_bytes(b'{"Agency": "' + b"x" * (2 << 20) + b'"}')
    exc = _raised(read_documents, folder, limits=InputLimits(max_line_bytes=1 << 20))
    assert str(exc) == (f"{folder / 'a.json'}: must be a JSON file of at most 1,048,576 bytes "
                        "(InputLimits.max_line_bytes, --max-line-bytes on the command line); "
                        "found a larger one")


def test_command_line_limits_are_options(tmp_path: Path, capsys: Any) -> None:
    deep = {"Agency": "A", "x": [[[[[[[[[[]]]]]]]]]]}  # 11 deep
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", deep))
    args = ["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(truth),
            "-o", str(tmp_path / "e.csv")]
    assert main([*args, "--max-depth", "8"]) == 1
    assert (f"confcal: error: {truth}, line 1: must nest objects and lists at most 8 deep"
            in capsys.readouterr().err)
    assert main([*args, "--max-depth", "12", "--max-line-bytes", "1K"]) == 0
    capsys.readouterr()
    assert main([*args, "--max-line-bytes", "20"]) == 1
    assert "must hold lines of at most 20 bytes" in capsys.readouterr().err
    assert main([*args, "--max-depth", "501"]) == 2  # a usage error, before any reading
    assert "must be at most 500" in capsys.readouterr().err
    assert main([*args, "--max-line-bytes", "lots"]) == 2
    assert "must be a positive byte count such as 16777216, 16M or 4G" in capsys.readouterr().err


_BLANKS = st.sampled_from([b"", b" ", b"\t", b"\r", b"  \t"])
_RECORDS = st.sampled_from([b'{"a": 1}', b' {"b": [2]} ', b'x\r', b"\0\0", b"z" * 9])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.one_of(_BLANKS, _RECORDS), max_size=12), st.booleans(), st.booleans(),
       st.integers(1, 9))
def test_records_match_a_line_by_line_reference(lines: list[bytes], bom: bool, last_newline: bool,
                                                block: int) -> None:
    # the block reader against the obvious one, at tiny block sizes so that records and
    # blank runs straddle block boundaries
    import tempfile

    text = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    data = (b"\xef\xbb\xbf" if bom else b"") + text
    want, offset = [], len(data) - len(text)
    for number, line in enumerate(text.split(b"\n"), start=1):
        stripped = line.lstrip(b" \t\r\n\x0b\x0c")
        if stripped:
            want.append((number, offset + len(line) - len(stripped), stripped))
        offset += len(line) + 1
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(documents, "_BLOCK", block)
        for name, payload in (("t.jsonl", data), ("t.jsonl.gz", gzip.compress(data))):
            path = Path(tmp) / name
            path.write_bytes(payload)
            got = list(_records(path, InputLimits()))
            assert got == want
            raw = data  # offsets point into the decompressed text
            assert all(raw[o:o + len(r)] == r for _, o, r in got)


# --------------------------------------------------------------------------------- BOM
def test_a_byte_order_mark_is_accepted_in_every_text_input(tmp_path: Path) -> None:
    bom = "\ufeff"
    path = tmp_path / "truth.jsonl"
    path.write_text(bom + _line("a", {"Agency": "A"}) + _line("b", {}), encoding="utf-8")
    assert list(read_documents(path)) == ["a", "b"]
    gz = tmp_path / "truth.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert list(read_documents(gz)) == ["a", "b"]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.json").write_text(bom + '{"Agency": "A"}', encoding="utf-8")
    assert read_documents(folder) == {"a": {"Agency": "A"}}
    # out of order: the index reads the first record after the mark too
    pred = tmp_path / "pred.jsonl"
    pred.write_text(bom + _line("b", {}) + _line("a", {"Agency": "A"}), encoding="utf-8")
    assert [p for _, _, p in paired_documents(path, pred)] == [{"Agency": "A"}, {}]
    # a schema file read as text (the command's --schema FILE)
    schema = tmp_path / "schema.json"
    schema.write_text(bom + json.dumps(AGENCY.to_dict()), encoding="utf-8")
    assert Schema.from_json(schema.read_text(encoding="utf-8")) == AGENCY
    # an entity table written by a spreadsheet program
    table = score_documents(AGENCY, {"a": {"Agency": "A"}}, {}, allow_empty=True).entities
    csv = tmp_path / "e.csv"
    write_entities(table, csv)
    csv.write_bytes(b"\xef\xbb\xbf" + csv.read_bytes())
    assert list(read_entities(csv).columns) == list(table.columns)
    # a mark is only a mark at the start: inside a record it is an error
    path.write_text(_line("a", {}) + bom + _line("b", {}), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"line 2: must be valid JSON"):
        read_documents(path)


# ---------------------------------------------------------------------- Parquet-ready
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".csv.gz"])
def test_the_entity_table_goes_to_a_file_and_back_losslessly(tmp_path: Path, suffix: str
                                                             ) -> None:
    truths = {"a": {"Agency": "100", "GrossTotal": 100, "NetTotal": 100.0,
                    "PaymentTerms": True, "InvoiceDate": dt.date(2024, 3, 1),
                    "LineItems": [{"Rate": Decimal("1.50"), "Description": ""}]}}
    preds = {"a": {"Agency": {"value": 100, "confidence": 0.9},
                   "GrossTotal": {"value": "100", "confidence": 0.8},
                   "NetTotal": None, "InvoiceDate": "2024-03-01",
                   "LineItems": [{"Rate": {"value": 1.5, "confidence": 0.7},
                                  "Description": []}]}}
    for conventions in ("confcal", "stickler-1.0"):
        entities = score_documents(FCC_INVOICE, truths, preds, conventions=conventions).entities
        path = write_entities(entities, tmp_path / f"{conventions}{suffix}")
        back = read_entities(path)
        assert list(back.columns) == list(entities.columns)
        for column in ("truth", "prediction"):
            assert back[column].dtype == object
            for got, want in zip(back[column], entities[column], strict=True):
                # the same value and the same type: "100" stays text, 100 an int, 100.0 a
                # float, True a bool, the date a date, the Decimal a Decimal, "" and [] as
                # they were, None None
                assert type(got) is type(want), (column, got, want)
                assert got == want or (got != got and want != want), (column, got, want)
    # the values as the scorer saw them
    row = entities.set_index("field").loc["Agency"]
    assert (row["truth"], row["prediction"]) == ("100", 100)


@pytest.mark.parametrize("name", ["entities.csv", "entities.csv.gz"])
def test_a_csv_table_that_is_not_utf8_is_an_error_naming_line_and_column(tmp_path: Path,
                                                                        name: str) -> None:
    # pandas says only "can't decode byte 0xed in position 0"; the error names the line
    # (header = line 1) and the byte: an encoded lone surrogate in line 4, at byte 11
    header = "doc_id,field,outcome,correct,confidence,similarity,weight\n"
    rows = "a,Agency,TP,True,0.5,1.0,1.0\n" * 2 + 'b,Agency,"\xed\xa0\x80",True,0.5,1.0,1.0\n'
    data = header.encode() + rows.encode("latin-1")
    assert data.splitlines()[3].index(b"\xed") == 10  # 0-based: byte 11 of line 4
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    for read in (read_entities, lambda p: list(io.iter_entities(p))):
        with pytest.raises(ValidationError) as info:
            read(path)
        assert str(info.value) == (f"{path}, line 4: must be UTF-8 text; found an "
                                   "undecodable byte at column 11 (counting bytes)")
        assert info.value.line == 4


# ----------------------------------------------------------- line items, all against all
def _items(*texts: str) -> list[dict[str, Any]]:
    return [{"Description": t} for t in texts]


def test_line_item_work_is_bounded_per_document_hand_worked():
    # truth: 3 + 4 = 7 characters of Description; prediction: 5 characters ("Rate" is a
    # number: no text work). Work = 7 x 5 = 35 character pairs.
    truth = {"d": {"LineItems": _items("abc", "defg")}}
    pred = {"d": {"LineItems": [{"Description": {"value": "hijkl", "confidence": 0.5},
                                 "Rate": 3}]}}
    score_documents(FCC_INVOICE, truth, pred, limits=io.InputLimits(max_pair_chars=35))
    with pytest.raises(ValidationError, match=r"doc 'd', field LineItems: comparing the line "
                                              r"items must cost at most 34 character pairs .*"
                                              r"found 35$") as info:
        score_documents(FCC_INVOICE, truth, pred, limits=io.InputLimits(max_pair_chars=34))
    assert (info.value.doc_id, info.value.field) == ("d", "LineItems")
    # the stickler-1.0 scorer compares all against all too: the same bound
    with pytest.raises(ValidationError, match="found 35$"):
        score_documents(FCC_INVOICE, truth, pred, conventions="stickler-1.0",
                        limits=io.InputLimits(max_pair_chars=34))


def test_a_top_k_leaf_counts_its_longest_candidate():
    truth = {"d": {"LineItems": _items("ab")}}
    pred = {"d": {"LineItems": [{"Description": {"candidates": [
        {"value": "x", "probability": 0.6}, {"value": "yyyy", "probability": 0.4}]}}]}}
    with pytest.raises(ValidationError, match="found 8$"):  # 2 x max(1, 4)
        score_documents(FCC_INVOICE, truth, pred, limits=io.InputLimits(max_pair_chars=7))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(max_size=6), max_size=5), st.lists(st.text(max_size=6), max_size=5))
def test_the_work_is_the_count_of_compared_character_pairs(truths, preds):
    # brute force: every truth item against every predicted item, characters x characters
    work = sum(len(t) * len(p) for t in truths for p in preds)
    doc_t, doc_p = {"d": {"LineItems": _items(*truths)}}, {"d": {"LineItems": _items(*preds)}}
    score_documents(FCC_INVOICE, doc_t, doc_p, limits=io.InputLimits(max_pair_chars=max(work, 1)))
    if work > 1:
        with pytest.raises(ValidationError, match=f"found {work:,}$"):
            score_documents(FCC_INVOICE, doc_t, doc_p,
                            limits=io.InputLimits(max_pair_chars=work - 1))


def test_the_command_refuses_a_document_whose_items_cost_too_much(tmp_path, capsys):
    line = json.dumps({"doc_id": "d",
                       "document": {"LineItems": _items("a" * 1000, "b" * 1000)}})
    (tmp_path / "t.jsonl").write_text(line + "\n")
    (tmp_path / "p.jsonl").write_text(line + "\n")
    argv = ["score", "--schema", "fcc-invoice", "--truth", str(tmp_path / "t.jsonl"),
            "--pred", str(tmp_path / "p.jsonl"), "-o", str(tmp_path / "e.csv")]
    assert main([*argv, "--max-pair-chars", "3999999"]) == 1
    assert "found 4,000,000" in capsys.readouterr().err  # (1000 + 1000) x (1000 + 1000)
    assert main([*argv, "--max-pair-chars", "4000000"]) == 0


def test_items_with_one_character_values_are_bounded_by_their_pairs():
    # 1,001 x 1,000 items of one character: 1,001 x 1,000 x 1 x 1 = 1,001,000 character
    # pairs, far under max_pair_chars, but 1,001,000 item pairs, one over the default 10**6
    truth = {"d": {"LineItems": _items(*"a" * 1001)}}
    pred = {"d": {"LineItems": _items(*"b" * 1000)}}
    with pytest.raises(ValidationError, match=(
            r"^doc 'd', field LineItems: the line items must make at most 1,000,000 pairs "
            r"of truth and predicted items \(InputLimits.max_item_pairs, --max-item-pairs .*"
            r"found 1,001,000 \(1,001 truth x 1,000 predicted items\)$")) as info:
        score_documents(FCC_INVOICE, truth, pred)
    assert (info.value.doc_id, info.value.field) == ("d", "LineItems")
    with pytest.raises(ValidationError, match="found 1,001,000"):  # the same bound
        score_documents(FCC_INVOICE, truth, pred, conventions="stickler-1.0")
    # empty values: no characters at all, the same pairs
    empty = {"d": {"LineItems": _items(*[""] * 3)}}
    with pytest.raises(ValidationError, match=r"found 9 \(3 truth x 3 predicted"):
        score_documents(FCC_INVOICE, empty, empty, limits=InputLimits(max_item_pairs=8))
    score_documents(FCC_INVOICE, empty, empty, limits=InputLimits(max_item_pairs=9))


def _capped_run(args: list[str], cap_bytes: int, timeout: float) -> Any:
    """``python -m confcal ARGS`` with its address space capped (the ``prlimit --as``
    cap), so a regression fails the test with a MemoryError, not the machine."""
    import os
    import resource
    import subprocess
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    return subprocess.run([sys.executable, "-m", "confcal", *args], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=cap, env=env)


def test_the_command_refuses_5000_empty_items_under_a_memory_cap(tmp_path):
    # the attack: 5,000 items a side with empty values (a 100 KB input) took 40 s and 3.1 GB
    doc = {"LineItems": _items(*[""] * 5000)}
    for name in ("t.jsonl", "p.jsonl"):
        _jsonl(tmp_path / name, ("d", doc))
    argv = ["score", "--schema", "fcc-invoice", "--truth", str(tmp_path / "t.jsonl"),
            "--pred", str(tmp_path / "p.jsonl"), "-o", str(tmp_path / "e.csv")]
    done = _capped_run(argv, 1 << 30, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "found 25,000,000 (5,000 truth x 5,000 predicted items)" in done.stderr
    assert "Traceback" not in done.stderr
    # raised for a real input beyond the default: 1,100 x 1,000 items pass under the cap
    _jsonl(tmp_path / "t.jsonl", ("d", {"LineItems": _items(*"a" * 1100)}))
    _jsonl(tmp_path / "p.jsonl", ("d", {"LineItems": _items(*"b" * 1000)}))
    assert _capped_run(argv, 1 << 30, 60).returncode == 1
    done = _capped_run([*argv, "--max-item-pairs", "1100000"], 1 << 30, 60)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------- entity tables: bounded before they are held
_ROW = b"a,Agency,TP,True,0.5,1.0,1.0\n"
_HEADER = b"doc_id,field,outcome,correct,confidence,similarity,weight\n"


def _row_bomb(path: Path, rows: int) -> Path:
    """A .csv.gz of ``rows`` short rows, written a block at a time (a few MB of .gz)."""
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(_HEADER)
        block = _ROW * 100_000
        for _ in range(rows // 100_000):
            out.write(block)
        out.write(_ROW * (rows % 100_000))
    return path


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
def test_a_csv_table_read_whole_is_bounded_by_rows_and_bytes(tmp_path, name):
    path = tmp_path / name
    data = _HEADER + _ROW * 5  # 58 + 5 x 29 = 203 bytes, 6 lines
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    assert len(read_entities(path, limits=InputLimits(max_rows=5))) == 5
    with pytest.raises(ValidationError, match=(
            rf"^{path}: an entity table read whole must have at most 4 rows "
            r"\(InputLimits.max_rows, --max-rows on the command line; confcal report --sketch "
            r"streams .*\); found more than 4$")) as info:
        read_entities(path, limits=InputLimits(max_rows=4))
    assert info.value.source == str(path)
    assert len(read_entities(path, limits=InputLimits(max_decompressed_bytes=203))) == 5
    with pytest.raises(ValidationError, match=r"at most 202 bytes of text.*"
                                              r"--max-decompressed-bytes.*found more$"):
        read_entities(path, limits=InputLimits(max_decompressed_bytes=202))
    # the streamed reader holds a chunk at a time: rows unbounded, bytes bounded
    assert sum(map(len, io.iter_entities(path, chunk_rows=2))) == 5
    with pytest.raises(ValidationError, match="at most 202 bytes"):
        list(io.iter_entities(path, limits=InputLimits(max_decompressed_bytes=202)))


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
def test_the_row_bound_counts_records_not_lines(tmp_path, name):
    # the attack: the bound counted line breaks, so 5 rows whose quoted cells hold 3 line
    # breaks each (20 lines after the header) were refused under max_rows=5 ("lines")
    row = b'a,"Agency\nof\r\nmany\rlines",TP,True,0.5,1.0,1.0\r\n'
    data = _HEADER + row * 5
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    read = read_entities(path, limits=InputLimits(max_rows=5))
    assert len(read) == 5 and set(read["field"]) == {"Agency\nof\r\nmany\rlines"}
    with pytest.raises(ValidationError, match=r"at most 4 rows .*; found more than 4$"):
        read_entities(path, limits=InputLimits(max_rows=4))
    assert len(read_entities(path, limits=InputLimits(max_rows=1 << 40))) == 5


def _toy_tables(tmp_path: Path) -> list[Path]:
    """A CSV table of 5 rows, a Parquet one of 5 and a CSV one of 1."""
    frame = pd.DataFrame({"doc_id": list("abcde"), "field": ["Agency"] * 5,
                          "outcome": ["TP"] * 5, "correct": [True] * 5,
                          "confidence": [0.5] * 5, "similarity": [1.0] * 5,
                          "weight": [1.0] * 5})
    return [write_entities(frame.assign(model="m1"), tmp_path / "a.csv"),
            write_entities(frame.assign(model="m2"), tmp_path / "b.parquet"),
            write_entities(frame.assign(model="m3").iloc[:1], tmp_path / "c.csv")]


def test_the_row_bound_holds_for_the_sum_of_the_tables(tmp_path):
    # the attack: max_rows bounded each table, so k tables held k times the bound
    paths = _toy_tables(tmp_path)
    assert [len(t) for t in io.read_entity_tables(paths, limits=InputLimits(max_rows=11))
            ] == [5, 5, 1]
    rule = (r"the entity tables read together must have at most {} rows "
            r"\(InputLimits.max_rows, --max-rows on the command line; confcal report --sketch "
            r"streams tables of any length in bounded memory\); found {}$")
    cases = [(10, paths[2], "10 in the 2 tables before it and more than 0 in it"),
             (9, paths[1], "5 in the 1 table before it and 5 in it"),  # the footer's count
             (4, paths[0], None)]
    for limit, where, found in cases:
        message = (rf"^{where}: an entity table read whole must have at most 4 rows"
                   if found is None else rf"^{where}: " + rule.format(f"{limit:,}", found))
        with pytest.raises(ValidationError, match=message) as info:
            io.read_entity_tables(paths, limits=InputLimits(max_rows=limit))
        assert info.value.source == str(where)
    swapped = [paths[1], paths[0]]  # CSV after Parquet: refused by records read
    with pytest.raises(ValidationError, match=rf"^{paths[0]}: .*found 5 in the 1 table "
                                              r"before it and more than 4 in it$"):
        io.read_entity_tables(swapped, limits=InputLimits(max_rows=9))
    with pytest.raises(ValidationError, match="paths must be a non-empty sequence"):
        io.read_entity_tables([])
    with pytest.raises(ValidationError, match="paths must be a non-empty sequence"):
        io.read_entity_tables(str(paths[0]))


def test_the_report_bounds_the_rows_of_all_its_tables_together(tmp_path, capsys):
    paths = [str(p) for p in _toy_tables(tmp_path)]
    out = str(tmp_path / "r")
    assert main(["report", *paths, "--n-resamples", "0", "--max-rows", "10", "-o", out]) == 1
    err = capsys.readouterr().err
    assert (f"{paths[2]}: the entity tables read together must have at most 10 rows" in err
            and "--max-rows" in err and "found 10 in the 2 tables before it" in err)
    assert not (tmp_path / "r").exists()
    assert main(["report", *paths, "--n-resamples", "0", "--max-rows", "11", "-o", out]) == 0


def test_a_parquet_table_is_bounded_by_its_footer_and_by_what_it_decodes(tmp_path):
    frame = pd.DataFrame({"doc_id": ["a"] * 5, "field": ["Agency"] * 5, "outcome": ["TP"] * 5,
                          "correct": [True] * 5, "confidence": [0.5] * 5,
                          "similarity": [1.0] * 5, "weight": [1.0] * 5})
    path = write_entities(frame, tmp_path / "t.parquet")
    assert len(read_entities(path, limits=InputLimits(max_rows=5))) == 5
    with pytest.raises(ValidationError, match=r"at most 4 rows .*; found 5$"):
        read_entities(path, limits=InputLimits(max_rows=4))
    with pytest.raises(ValidationError, match=r"at most 10 bytes of decoded columns "
                                              r"\(InputLimits.max_decompressed_bytes"):
        read_entities(path, limits=InputLimits(max_decompressed_bytes=10))
    with pytest.raises(ValidationError, match=r"at most 10 bytes of decoded columns"):
        list(io.iter_entities(path, limits=InputLimits(max_decompressed_bytes=10)))
    assert len(read_entities(path)) == 5  # the defaults hold it


def test_the_report_refuses_a_csv_gz_that_expands_past_its_rows_under_a_memory_cap(tmp_path):
    # the attack: a 7 MB .csv.gz grew to 12.6 GB and aborted the process (std::bad_alloc)
    bomb = _row_bomb(tmp_path / "bomb.csv.gz", 10_000_001)
    assert bomb.stat().st_size < 4 << 20  # 290 MB of text in a few MB
    done = _capped_run(["report", str(bomb), "-o", str(tmp_path / "out")], 2 << 30, 120)
    assert done.returncode == 1, done.stderr
    assert "must have at most 10,000,000 rows" in done.stderr
    assert "--sketch" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz"])
def test_a_scored_csv_with_line_breaks_in_its_cells_is_read_back_by_the_report(tmp_path, name):
    # the attack: a doc id and a metadata value with a lone \r made `confcal score -o x.csv`
    # a table `confcal report` refused (blaming the outcome column)
    doc = {"Agency": "ACME\rMedia"}
    _jsonl(tmp_path / "t.jsonl", ("a\rb", doc), ("c\nd", doc), ("e\x00f", doc))
    _jsonl(tmp_path / "p.jsonl", ("a\rb", doc), ("c\nd", doc), ("e\x00f", doc))
    table = tmp_path / name
    assert main(["score", "--schema", "fcc-invoice", "--truth", str(tmp_path / "t.jsonl"),
                 "--pred", str(tmp_path / "p.jsonl"), "--meta", "model=m\r=1+1",
                 "-o", str(table)]) == 0
    read = read_entities(table)
    assert sorted(read["doc_id"].unique()) == ["a\rb", "c\nd", "e\x00f"]
    assert set(read["model"]) == {"m\r=1+1"}  # data: lossless, never prefixed
    assert main(["report", str(table), "--n-resamples", "0", "-o", str(tmp_path / "r")]) == 0
    metrics = pd.read_csv(tmp_path / "r" / "metrics.csv")
    assert metrics["model"].tolist() == ["m\r=1+1"]  # a text cell starting with m: not quoted


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
def test_a_column_named_twice_in_a_csv_header_is_an_error(tmp_path, name):
    # the attack: a second `confidence` became a run column `confidence.1`
    data = (b"doc_id,field,outcome,correct,confidence,similarity,weight,confidence\n"
            b"a,Agency,TP,True,0.5,1.0,1.0,0.9\n")
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    message = (rf"^{path}, line 1: every column must be named once; found 'confidence' "
               r"twice \(columns 5 and 8\)$")
    for read in (read_entities, lambda p: list(io.iter_entities(p))):
        with pytest.raises(ValidationError, match=message) as info:
            read(path)
        assert info.value.line == 1


def test_doc_ids_that_write_as_the_same_text_are_an_error(tmp_path, capsys):
    # the attack: doc ids 1 and "1" were scored as two documents and written as one
    truth = [(1, {"Agency": "A"}), ("1", {"Agency": "B"})]
    with pytest.raises(ValidationError, match=(
            r"^truths doc ids must stay distinct as text \(an entity table writes them so\); "
            r"found 1 at position 0 and '1' at position 1, both '1'$")) as info:
        score_documents(AGENCY, truth, truth)
    assert (info.value.doc_id, info.value.index) == ("1", 1)
    # the same from JSONL files, through the command
    _jsonl(tmp_path / "t.jsonl", (1, {"Agency": "A"}), ("1", {"Agency": "B"}))
    assert main(["score", "--schema", "fcc-invoice", "--truth", str(tmp_path / "t.jsonl"),
                 "--pred", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "e.csv")]) == 1
    assert "found 1 at position 0 and '1' at position 1" in capsys.readouterr().err
    assert not (tmp_path / "e.csv").exists()


@pytest.mark.parametrize("first, second", [(1, "1"), ("1", 1), (1, np.int64(1)),
                                           (2.5, "2.5")])
def test_doc_ids_written_alike_are_an_error_chunks_apart(first, second):
    # the attack: the rule held within one streamed chunk only, so a 1 and a "1" more
    # than a chunk apart were scored as two documents and written as one
    ids = [first, *(f"d{i}" for i in range(9)), second]  # 5 chunks of 2 apart
    pairs = [(d, {"Agency": "A"}, {"Agency": "A"}) for d in ids]
    if first == second and type(first) is not str:  # 1 and np.int64(1): the same id
        message = r"^pairs must not repeat a doc id; found \S*1\)? at positions 0 and 10$"
    else:
        message = (rf"^pairs doc ids must stay distinct as text \(an entity table writes "
                   rf"them so\); found {first!r} at position 0 and {second!r} at position "
                   rf"10, both '{first}'$")
    with pytest.raises(ValidationError, match=message) as info:
        list(score_documents_iter(AGENCY, pairs, chunk_size=2))
    assert info.value.index == 10
    distinct = [(d, {}, None) for d in [1, "2", 3, "x", 11, "1.0", 1.5]]  # no two alike
    assert sum(len(c.entities) for c in score_documents_iter(AGENCY, distinct, chunk_size=2,
                                                                 allow_empty=True)) == 7


@settings(max_examples=examples(60), deadline=None)
@given(ids=st.lists(st.sampled_from([0, 1, 2, "0", "1", "2", "a", 1.5, "1.5"]),
                    min_size=1, max_size=12, unique_by=lambda d: (type(d), d)),
       chunk_size=st.integers(1, 4))
def test_streamed_doc_ids_are_checked_as_the_whole_input_is(ids, chunk_size):
    # any chunk size gives the in-memory scorer's verdict on the same ids
    truths = [(d, {"Agency": "A"}) for d in ids]
    try:
        score_documents(AGENCY, truths, [], allow_empty=True)
        whole = None
    except ValidationError as exc:
        whole = str(exc).replace("truths", "pairs", 1)
    try:
        list(score_documents_iter(AGENCY, [(d, t, None) for d, t in truths],
                                  chunk_size=chunk_size, allow_empty=True))
        streamed = None
    except ValidationError as exc:
        streamed = str(exc)
    assert streamed == whole
    texts = [str(d) for d in ids]
    assert (whole is None) == (len(set(texts)) == len(texts))


def test_score_refuses_doc_ids_written_alike_in_far_apart_chunks(tmp_path, capsys,
                                                                monkeypatch):
    from confcal.cli import _main as cli_main

    monkeypatch.setattr(cli_main, "_STREAM_CHUNK", 2)
    records = [(1, {"Agency": "A"}), *((f"d{i}", {"Agency": "A"}) for i in range(7)),
               ("1", {"Agency": "B"})]
    _jsonl(tmp_path / "t.jsonl", *records)
    assert main(["score", "--schema", "fcc-invoice", "--truth", str(tmp_path / "t.jsonl"),
                 "--pred", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "e.csv")]) == 1
    assert "found 1 at position 0 and '1' at position 8, both '1'" in capsys.readouterr().err
    assert not (tmp_path / "e.csv").exists()


# ------------------------------------------------------------- 400-digit numbers

BIG = "1" + "0" * 399  # a 400-digit integer: no float holds it


def test_a_400_digit_confidence_is_a_located_error_in_the_command(tmp_path: Path,
                                                                  capsys: Any) -> None:
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Agency": "ACME"}))
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"doc_id": "a", "document": {"Agency": {"value": "ACME", "confidence": '
                    + BIG + "}}}\n")
    args = ["score", "--schema", "fcc-invoice", "--truth", str(truth), "--pred", str(pred),
            "-o", str(tmp_path / "e.csv")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("confcal: error: doc 'a', field Agency: confidence must be a number "
                          "within [0, 1]; found 1000")
    assert "(400 characters)" in err and "Traceback" not in err
    # the same through the library, a Python int this time
    with pytest.raises(ValidationError, match=r"field Agency: confidence must be a number "
                                              r"within \[0, 1\]; found 1000.*\(401 characters"):
        score_documents(AGENCY, {"a": {"Agency": "ACME"}},
                        {"a": {"Agency": {"value": "ACME", "confidence": 10**400}}})


def test_a_400_digit_rel_tol_is_an_error_naming_it(tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(ValidationError, match=r"rel_tol must be a finite number >= 0; found "
                                              r"1000.* \(beyond the float range\)"):
        Number(rel_tol=10**400)
    with pytest.raises(ValidationError, match=r"abs_tol must be a finite number >= 0"):
        Number(abs_tol=-(10**400))
    schema = tmp_path / "schema.json"
    schema.write_text('{"fields": {"Total": {"kind": "field", "comparator": {"type": '
                      '"Number", "rel_tol": ' + BIG + '}, "threshold": 1.0, "weight": 1.0}}}')
    truth = _jsonl(tmp_path / "truth.jsonl", ("a", {"Total": "1"}))
    args = ["score", "--schema", str(schema), "--truth", str(truth), "--pred", str(truth),
            "-o", str(tmp_path / "e.csv")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"confcal: error: {schema}: schema.fields.Total.comparator: rel_tol "
                          "must be a finite number >= 0; found 1000")
    assert "(beyond the float range)" in err


@pytest.mark.parametrize("column", ["confidence", "similarity", "weight", "correct"])
@pytest.mark.parametrize("cell", [BIG, "-" + BIG, "1" + "0" * 5000])
def test_a_huge_integer_cell_in_an_entity_table_is_a_located_error(tmp_path: Path,
                                                                    column: str,
                                                                    cell: str) -> None:
    table = score_documents(AGENCY, {"a": {"Agency": "ACME"}},
                            {"a": {"Agency": {"value": "ACME", "confidence": 0.5}}})
    frame = table.entities.astype({column: object})
    frame.loc[0, column] = cell
    path = tmp_path / "e.csv"
    frame.to_csv(path, index=False)
    exc = _raised(read_entities, path)
    assert exc.field == column and exc.line == 2
    assert f"column {column} must" in str(exc) and len(str(exc)) < 400


# ------------------------------------------------------------- Parquet metadata

def _with_metadata(path: Path, key: bytes, value: bytes) -> Path:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}),
                                                  key: value}), path)
    return path


DEEP = b"[" * 100_000 + b"]" * 100_000  # a RecursionError in json.loads


@pytest.mark.parametrize(("key", "value", "rule"), [
    (b"PANDAS_ATTRS", DEEP, "must nest objects and lists at most 64 deep"),
    (b"pandas", DEEP, "must nest objects and lists at most 64 deep"),
    (b"PANDAS_ATTRS", b'{"confcal.signature": ' + b"[" * 5000 + b"]" * 5000 + b"}",
     "must nest objects and lists at most 64 deep"),
    (b"PANDAS_ATTRS", b"[1, 2]", "must be a JSON object; found a JSON list"),
    (b"PANDAS_ATTRS", b"\xff\xfe", "must be valid JSON"),
    (b"PANDAS_ATTRS", b'{"confcal.signature": 5}',
     "entry 'confcal.signature' must be a string (the settings that scored the table); "
     "found int 5"),
    (b"PANDAS_ATTRS", b'{"confcal.signature": {"a": [1]}}',
     "entry 'confcal.signature' must be a string (the settings that scored the table); "
     "found dict {'a': [1]}"),
    (b"pandas", b'{"columns": 5}', "must describe the table's columns as pandas writes it; "
     "found it unreadable (KeyError"),
])
def test_hostile_parquet_metadata_is_an_error_naming_the_file_and_key(
        tmp_path: Path, key: bytes, value: bytes, rule: str) -> None:
    path = _with_metadata(_parquet(tmp_path / "e.parquet"), key, value)
    for read in (read_entities, lambda p: list(io.iter_entities(p))):
        exc = _raised(read, path)
        assert str(exc).startswith(f"{path}: Parquet metadata key {key.decode()!r}")
        assert rule in str(exc) and exc.source == str(path)


def test_a_string_signature_in_parquet_metadata_is_kept(tmp_path: Path) -> None:
    path = _with_metadata(_parquet(tmp_path / "e.parquet"), b"PANDAS_ATTRS",
                          b'{"confcal.signature": "confcal:0.1.0|schema:x", "other": [1]}')
    assert read_entities(path).attrs == {"confcal.signature": "confcal:0.1.0|schema:x"}


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.lists(st.text("ab", max_size=4), max_size=3),
                          st.lists(st.text("ab", max_size=4), max_size=3)),
                min_size=1, max_size=4),
       st.integers(1, 30), st.integers(1, 9))
def test_the_work_bounds_name_the_first_document_beyond_them(docs, max_pairs, max_items):
    # The scorer checks the bounds from the columns it reads; the stickler-1.0 path still
    # checks them document by document before anything else: both refuse the same
    # (first) document with the same message.
    truth = {f"d{i}": {"LineItems": _items(*t)} for i, (t, _) in enumerate(docs)}
    pred = {f"d{i}": {"LineItems": _items(*p)} for i, (_, p) in enumerate(docs)}
    limits = InputLimits(max_pair_chars=max_pairs, max_item_pairs=max_items,
                         max_value_chars=4)
    outcomes = []
    for conventions in ("confcal", "stickler-1.0"):
        try:
            score_documents(FCC_INVOICE, truth, pred, limits=limits, conventions=conventions)
        except ValidationError as exc:
            outcomes.append((str(exc), exc.doc_id, exc.field))
        else:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
