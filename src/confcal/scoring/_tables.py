"""The entity-table contract: checking entity tables and writing and reading them on disk.

Entity tables (the DataFrame of :func:`confcal.scoring.score_documents`) go to and come from
Parquet or CSV. Every error names the file and the row (or CSV line) where it was found.
Writing is atomic: a file is written under a temporary name in its destination folder and
renamed into place, so a failure never leaves a half-written table behind. The public names
are re-exported by :mod:`confcal.scoring.io`.

The ``truth`` and ``prediction`` columns hold the documents' raw values, of mixed types, in
object columns. On disk each value is its JSON text, so one column has one type (text) and
the value comes back exactly, type included (:func:`value_to_json`, :func:`value_from_json`):
``"100"`` (text) is ``"100"`` with its quotes, ``100`` (int) is ``100``, ``100.0`` (float)
is ``100.0``, ``true``, ``[]``, ``{"object": {...}}`` for a mapping, and NaN is ``NaN``
(Python's JSON reads and writes it). ``None`` is an empty cell (null in Parquet). The values
JSON has no form for are one-key objects naming their type: ``{"decimal": "1.50"}``,
``{"date": "2024-03-01"}``, ``{"datetime": ...}``, ``{"timestamp": ...}`` (pandas),
``{"missing": "NA"}`` (pandas.NA) and ``{"missing": "NaT"}``. Every JSON object in a cell is
one of these forms, so none is mistaken for another. A numpy scalar is written as the
Python scalar it equals and read back as that.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import math
import os
import re
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import StagedFile, read_json, read_json_object
from .._markdown import write_csv
from .._signature import SIGNATURE_ATTR
from .._validation import WEIGHT_RULE, InputLimits, check_limits, is_missing, shown, weight_ok
from ..exceptions import ValidationError
from ._result import OUTCOMES, value_column

__all__ = [
    "ENTITY_FORMATS",
    "REQUIRED_ENTITY_COLUMNS",
    "ChunkWriter",
    "as_written",
    "check_doc_ids",
    "check_entities",
    "iter_entities",
    "read_entities",
    "read_entity_tables",
    "value_from_json",
    "value_to_json",
    "write_entities",
]

ENTITY_FORMATS = (".parquet", ".csv", ".csv.gz")
"""File suffixes :func:`write_entities` and :func:`read_entities` understand."""

REQUIRED_ENTITY_COLUMNS: tuple[str, ...] = (
    "doc_id", "field", "outcome", "correct", "confidence", "similarity", "weight",
)
"""The entity-table columns a report needs (WOA, F1 and the calibration metrics)."""

# Text columns of the entity table: raw values of any JSON type, written as text.
_VALUE_COLUMNS = ("truth", "prediction")


def _check_parent(path: Path) -> None:
    """The folder an entity table goes into must exist: a typo in it is never created."""
    if not path.parent.is_dir():
        raise ValidationError(
            f"{path}: the folder {str(path.parent)!r} must exist; found "
            f"{'a file' if path.parent.exists() else 'no such folder'} (create it first)",
            source=path)


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((s for s in ENTITY_FORMATS if name.endswith(s)), path.suffix)


# ------------------------------------------------------------------------- values
class _Unwritable(Exception):
    """A value of a type no cell can hold."""


def _jsonable(value: Any) -> Any:
    """``value`` as what :func:`json.dumps` writes: its own form for JSON's types, a
    one-key object for the others (module docstring)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64) and np.isnat(value):
            return {"missing": "NaT"}
        return _jsonable(value.item())
    if value is pd.NA or value is pd.NaT:
        return {"missing": "NA" if value is pd.NA else "NaT"}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, (date, datetime)):  # pd.Timestamp is a datetime, a datetime a date
        kind = ("timestamp" if isinstance(value, pd.Timestamp)
                else "datetime" if isinstance(value, datetime) else "date")
        return {kind: value.isoformat()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"object": {k: _jsonable(v) for k, v in value.items()}}
    raise _Unwritable(value)


_SURROGATE = re.compile("[\ud800-\udfff]")
_ENCODE_STR = json.encoder.encode_basestring  # type: ignore[attr-defined]


def value_to_json(value: Any) -> str | None:
    """The JSON text of an entity-table value as a file holds it; None for None.

    Raises
    ------
    ValidationError
        For a value of another type than str, int, float, bool, list, dict with text keys,
        Decimal, date, datetime, pandas.Timestamp, pandas.NA, NaT, numpy scalar or None.

    See Also
    --------
    value_from_json : the value back from its text.

    Examples
    --------
    >>> from decimal import Decimal
    >>> [value_to_json(v) for v in ["100", 100, 100.0, True, None, [], Decimal("1.50")]]
    ['"100"', '100', '100.0', 'true', None, '[]', '{"decimal": "1.50"}']
    >>> value_to_json({"a": 1})
    '{"object": {"a": 1}}'
    """
    kind = type(value)
    if kind is str:  # the common case, without json.dumps' Python-level calls
        text = _ENCODE_STR(value)
    elif value is None:
        return None
    else:
        try:
            text = json.dumps(_jsonable(value), ensure_ascii=False)
        except (_Unwritable, ValueError):  # ValueError: an int of more than 4,300 digits
            raise ValidationError(
                "an entity-table value must be a string, number, bool, list, dict (text "
                "keys), Decimal, date, datetime or missing to be written; found "
                f"{type(value).__name__} {shown(value)}") from None
    if not text.isascii() and _SURROGATE.search(text):
        # a lone surrogate (possible in a Python str, never in a UTF-8 file): \u escapes
        text = json.dumps(_jsonable(value))
    return text


_FROM_TAG: dict[str, Callable[[str], Any]] = {
    "decimal": Decimal, "date": date.fromisoformat, "datetime": datetime.fromisoformat,
    "timestamp": pd.Timestamp, "missing": lambda raw: {"NA": pd.NA, "NaT": pd.NaT}[raw],
}


def _restored(data: Any) -> Any:
    """Decoded JSON back to the value: every object is one of the forms of the module
    docstring (top-down, so an ``object``'s members are values again)."""
    if isinstance(data, list):
        return [_restored(v) for v in data]
    if not isinstance(data, dict):
        return data
    (tag, raw), = data.items() if len(data) == 1 else ((None, None),)
    if tag == "object" and isinstance(raw, dict):
        return {k: _restored(v) for k, v in raw.items()}
    if tag in _FROM_TAG and isinstance(raw, str):
        try:
            return _FROM_TAG[tag](raw)
        except (ValueError, KeyError, InvalidOperation):
            pass
    raise ValueError('must hold JSON objects only in the value forms {"object": {...}}, '
                     '{"decimal": "1.50"}, {"date": ...}, {"datetime": ...}, {"timestamp": '
                     '...} and {"missing": "NA"}; found ' + json.dumps(data)[:80])


_LIMITS = InputLimits()
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def value_from_json(text: str, *, where: str = "text") -> Any:
    """The entity-table value whose JSON text ``text`` is (:func:`value_to_json`).

    The text is read by the package's JSON reader (nesting and repeated keys are errors,
    with their place), except for the common case of a text without objects or deep
    nesting, which the C scanner reads directly. A lone surrogate escape is kept: the
    writer makes one of a Python string that held one.

    Raises
    ------
    ValidationError
        ``<where> must be valid JSON; found an error at column C: <reason>``, or a JSON
        object that is not one of the value forms.

    See Also
    --------
    value_to_json : the text of a value.

    Examples
    --------
    >>> [value_from_json(t) for t in ['"100"', '100', '100.0', 'true', '[]', 'NaN']]
    ['100', 100, 100.0, True, [], nan]
    >>> value_from_json('{"date": "2024-03-01"}')
    datetime.date(2024, 3, 1)
    >>> value_from_json('ACME', where="e.csv: column truth, line 2:")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: e.csv: column truth, line 2: must be valid JSON; found an
    error at column 1: Expecting value
    """
    if "{" not in text and text.count("[") <= _LIMITS.max_depth:
        try:
            value, end = _SCAN(text, 0)
            if end == len(text):
                return value
        except (StopIteration, ValueError):
            pass  # the reader below says where and why
    try:
        return _restored(read_json(text, where=where, limits=_LIMITS, lone_surrogates=True))
    except ValidationError:
        raise
    except ValueError as exc:
        raise ValidationError(f"{where} {exc}") from None


def as_written(entities: pd.DataFrame) -> pd.DataFrame:
    """The table as written: doc_id as text, truth and prediction as each value's JSON text
    (:func:`value_to_json`), so that one column holds one type."""
    frame = entities.copy(deep=False)
    frame["doc_id"] = frame["doc_id"].map(str) if "doc_id" in frame else None
    for column in _VALUE_COLUMNS:
        if column in frame:
            frame[column] = pd.Series([value_to_json(v) for v in frame[column]], dtype=object,
                                      index=frame.index)
    return frame


def _restore_values(frame: pd.DataFrame, name: str, row: str, offset: int) -> pd.DataFrame:
    """The table read from a file with its truth and prediction values restored from their
    JSON text; an empty cell is None. Each distinct text is read once."""
    for column in _VALUE_COLUMNS:
        if column in frame:
            codes, texts = pd.factorize(frame[column].to_numpy(dtype=object))  # missing: -1
            values = np.empty(len(texts) + 1, dtype=object)  # values[-1] is None, for -1
            for k, text in enumerate(texts):
                values[k] = _cell(text, column, name, row,
                                  functools.partial(_first_row, codes, k, offset))
            frame[column] = value_column(values[codes]).set_axis(frame.index)
    return frame


def _first_row(codes: np.ndarray, k: int, offset: int) -> int:
    """The number of the first row holding distinct text ``k`` (only for an error)."""
    return int(np.argmax(codes == k)) + offset


def _cell(text: Any, column: str, name: str, row: str, first: Callable[[], int]) -> Any:
    """The value of one distinct cell text; ``first()`` numbers its first row, for errors."""
    if not isinstance(text, str):
        number = first()
        raise ValidationError(
            f"{name}: column {column} must hold text (each value's JSON text, as "
            f"write_entities writes it); found {type(text).__name__} values, first on {row} "
            f"{number} ({text!r:.80})", **_at(row, number, column))
    try:
        return value_from_json(text, where=f"{name}: column {column}")
    except ValidationError as exc:
        number = first()
        raise ValidationError(f"{exc} (first on {row} {number}: {text!r:.60}; each value is "
                              "its JSON text, as write_entities writes it: text in quotes)",
                              **_at(row, number, column)) from None


def _at(row: str, number: int, column: str) -> dict[str, Any]:
    return {"line" if row == "line" else "index": number, "field": column}


class ChunkWriter:
    """Write an entity table chunk by chunk: Parquet row groups, or CSV rows appended.

    Like :func:`write_entities`, the file is written under a temporary name and renamed
    into place by :meth:`close`; :meth:`abort` removes it. Every chunk must have the
    columns of the first (the Parquet schema is fixed by it; text columns are typed as
    strings up front so that a chunk whose values are all missing still fits).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.suffix = _suffix(self.path)
        if self.suffix not in ENTITY_FORMATS:
            raise ValidationError(
                f"path must end in one of {', '.join(ENTITY_FORMATS)}; found {self.path.name!r}")
        if self.suffix == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise ValidationError(
                    f"{self.path}: writing Parquet needs pyarrow; found it not installed (in a "
                    "checkout: pip install -e '.[cli]'; or write .csv)", source=self.path) from None
        _check_parent(self.path)
        self._staged = StagedFile(self.path)
        self.tmp = self._staged.tmp
        self._writer: Any = None
        self._columns: list[str] | None = None
        self.rows = 0

    def write(self, entities: pd.DataFrame) -> None:
        frame = as_written(entities)
        if self._columns is None:
            self._columns = list(frame.columns)
        elif list(frame.columns) != self._columns:
            raise ValidationError(
                f"{self.path}: every chunk must have the columns of the first "
                f"{self._columns}; found {list(frame.columns)}", source=self.path)
        if self.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            if self._writer is None:
                schema = pa.Schema.from_pandas(frame, preserve_index=False)
                for column in ("doc_id", *_VALUE_COLUMNS):
                    if column in frame:
                        i = schema.get_field_index(column)
                        schema = schema.set(i, pa.field(column, pa.string()))
                signature = entities.attrs.get(SIGNATURE_ATTR)
                if signature:
                    # pandas' own key for DataFrame.attrs: pd.read_parquet restores them
                    schema = schema.with_metadata({
                        **(schema.metadata or {}),
                        b"PANDAS_ATTRS": json.dumps({SIGNATURE_ATTR: signature}).encode()})
                self._schema = schema
                self._writer = pq.ParquetWriter(self.tmp, schema)
            table = pa.Table.from_pandas(frame, schema=self._schema, preserve_index=False)
            self._writer.write_table(table)  # one row group per chunk
        else:
            if self._writer is None:
                # open across write() calls; closed by close() or abort()
                self._writer = (gzip.open(self.tmp, "wt", encoding="utf-8", newline="")  # noqa: SIM115
                                if self.suffix == ".csv.gz"
                                else open(self.tmp, "w", encoding="utf-8", newline=""))  # noqa: SIM115
                write_csv(frame, self._writer, neutralise=False)
            else:
                write_csv(frame, self._writer, neutralise=False, header=False)
        self.rows += len(frame)

    def close(self) -> Path:
        if self._writer is None:
            self.abort()
            raise ValidationError(f"{self.path}: nothing to write; found no rows",
                                  source=self.path)
        try:
            self._writer.close()
        except BaseException:
            self._staged.discard()
            raise
        return self._staged.commit()

    def abort(self) -> None:
        try:
            if self._writer is not None:
                self._writer.close()
        finally:
            self._staged.discard()


def write_entities(entities: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write an entity table to Parquet (``.parquet``) or CSV (``.csv``, ``.csv.gz``).

    ``doc_id`` is written as text, and so are ``truth`` and ``prediction`` (values of any
    JSON type; missing values stay empty/null), so one column never mixes types; the
    other columns keep their types. The file is written under a temporary name and renamed
    into place. Parquet needs ``pyarrow`` (the ``cli`` extra).

    Returns
    -------
    pathlib.Path
        The path written.

    See Also
    --------
    confcal.scoring.io.read_entities : reads it back, values and types intact.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_entities(entities, pathlib.Path(tmp) / "entities.csv")
    ...     len(read_entities(path)) == len(entities)
    True
    """
    path = Path(path)
    suffix = _suffix(path)
    if suffix not in ENTITY_FORMATS:
        raise ValidationError(
            f"path must end in one of {', '.join(ENTITY_FORMATS)}; found {path.name!r}")
    if not isinstance(entities, pd.DataFrame):
        raise ValidationError(f"entities must be a pandas DataFrame; found "
                              f"{type(entities).__name__}")
    frame = as_written(entities)
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401  (a clear message instead of pandas' ImportError)
        except ImportError:
            raise ValidationError(
                f"{path}: writing Parquet needs pyarrow; found it not installed (in a "
                "checkout: pip install -e '.[cli]'; or write .csv)", source=path) from None
    _check_parent(path)
    with StagedFile(path) as staged:
        if suffix == ".parquet":
            frame.to_parquet(staged.tmp, index=False)
        else:
            write_csv(frame, staged.tmp, neutralise=False,
                      compression="gzip" if suffix == ".csv.gz" else None)
    return path


def _existing_entity_table(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path and its format suffix, for an entity table file that exists."""
    path = Path(path)
    suffix = _suffix(path)
    if suffix not in ENTITY_FORMATS:
        raise ValidationError(
            f"{path}: an entity table must end in one of {', '.join(ENTITY_FORMATS)}; "
            f"found {path.name!r}", source=path)
    if not path.is_file():
        raise ValidationError(f"{path}: must be an entity table file; found nothing there",
                              source=path)
    return path, suffix


def read_entities(path: str | os.PathLike[str], *,
                  limits: InputLimits | None = None) -> pd.DataFrame:
    """Read an entity table written by :func:`write_entities` (or any tool) and check it.

    The columns of :data:`REQUIRED_ENTITY_COLUMNS` must be present and valid (see
    :func:`check_entities`); errors name the file, the column and the first offending
    line (CSV, counting the header as line 1) or row (Parquet, 0-based), in the message
    and in the ``source`` and ``line`` (CSV) or ``index`` (Parquet) attributes.

    The table is bounded before it is held: at most ``limits.max_rows`` rows (records: a
    quoted CSV cell of several lines is one row) and
    ``limits.max_decompressed_bytes`` of CSV text (after decompression) or of decoded
    Parquet columns; a table beyond either is an error naming the file and the limit.

    Parameters
    ----------
    path : path-like
        ``.parquet``, ``.csv`` or ``.csv.gz``.
    limits : InputLimits, optional
        The bounds (default :class:`~confcal.scoring.io.InputLimits()`).

    Returns
    -------
    pandas.DataFrame
        ``doc_id``, ``truth`` and ``prediction`` as text, ``field`` and ``outcome`` as text,
        the numeric columns as numbers, other columns as read.

    See Also
    --------
    confcal.scoring.io.write_entities : writes what this reads.
    confcal.scoring.io.iter_entities : the same table in chunks.
    compare_runs : the runs table of it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "entities.csv"
    ...     _ = path.write_text("doc_id,field,outcome,correct,confidence,similarity,weight\\n"
    ...                         "inv-1,Agency,TP,True,0.9,1.0,1.0\\n"
    ...                         "inv-1,Rate,FD,False,1.5,0.0,1.0\\n")
    ...     read_entities(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: .../entities.csv: column confidence must be empty or within
    [0, 1]; found 1 value breaking it, first on line 3 (1.5)
    """
    checked = check_limits(limits)
    limit = checked.max_rows
    return _read_bounded(path, checked, limit,
                         lambda where, found: _rows_error(where, limit, found))


def read_entity_tables(paths: Sequence[str | os.PathLike[str]], *,
                       limits: InputLimits | None = None) -> list[pd.DataFrame]:
    """Read several entity tables, bounded together: ``limits.max_rows`` bounds the sum.

    Each table is read and checked as :func:`read_entities` reads it (the byte bound is
    each table's), one after the other, each allowed only the rows the tables before it
    left: the rows held never exceed ``limits.max_rows`` however many tables are given.

    Parameters
    ----------
    paths : sequence of path-like
        ``.parquet``, ``.csv`` or ``.csv.gz`` tables (at least one).
    limits : InputLimits, optional
        The bounds (default :class:`~confcal.scoring.io.InputLimits()`).

    Returns
    -------
    list of pandas.DataFrame
        One per path, in order.

    Raises
    ------
    ValidationError
        ``<path>: the entity tables read together must have at most N rows
        (InputLimits.max_rows, --max-rows on the command line; ...); found R in the K
        tables before it and more than M in it``, naming the table that crossed the bound;
        every error of :func:`read_entities`.

    See Also
    --------
    read_entities : one table.
    iter_entities : one table in chunks, rows unbounded.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> paths = [tmp / "a.csv", tmp / "b.csv"]
    >>> for path in paths:
    ...     _ = path.write_text("doc_id,field,outcome,correct,confidence,similarity,weight\\n"
    ...                         "inv-1,Agency,TP,True,0.9,1.0,1.0\\n"
    ...                         "inv-2,Agency,TP,True,0.8,1.0,1.0\\n")
    >>> [len(t) for t in read_entity_tables(paths)]
    [2, 2]
    >>> read_entity_tables(paths, limits=InputLimits(max_rows=3))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: .../b.csv: the entity tables read together must have at
    most 3 rows (InputLimits.max_rows, --max-rows on the command line; confcal report --sketch
    streams tables of any length in bounded memory); found 2 in the 1 table before it and more
    than 1 in it
    """
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Sequence) \
            or not paths:
        raise ValidationError(f"paths must be a non-empty sequence of entity table paths; "
                              f"found {paths!r:.80}")
    checked = check_limits(limits)
    limit, held = checked.max_rows, 0
    tables: list[pd.DataFrame] = []
    for path in paths:
        before, k = held, len(tables)

        def too_many(where: Path, found: str, before: int = before, k: int = k
                     ) -> ValidationError:
            if not k:
                return _rows_error(where, limit, found)
            return ValidationError(
                f"{where}: the entity tables read together must have at most {limit:,} rows "
                f"(InputLimits.max_rows, --max-rows on the command line; confcal report "
                f"--sketch streams tables of any length in bounded memory); found {before:,} "
                f"in the {k} table{'s' if k > 1 else ''} before it and {found} in it",
                source=where)

        if limit - held < 1:
            raise too_many(Path(path), "more than 0")
        tables.append(_read_bounded(path, checked, limit - held, too_many))
        held += len(tables[-1])
    return tables


def _read_bounded(path: str | os.PathLike[str], limits: InputLimits, max_rows: int,
                  too_many: Callable[[Path, str], ValidationError]) -> pd.DataFrame:
    """:func:`read_entities` with at most ``max_rows`` rows, counted as records (a
    quoted cell of several lines is one), ``too_many(path, found)`` the error beyond."""
    path, suffix = _existing_entity_table(path)
    with _reading(path, suffix):
        if suffix == ".parquet":
            frame = _read_parquet(path, limits, max_rows, too_many)
            row, offset = "row", 0
        else:
            # only an empty cell is missing: the texts "NA", "None" or "null" are values
            _check_header(path, limits)
            with _BoundedText(path, limits) as fh:
                # the parser stops after max_rows + 1 records: the bound is on records
                # (what pandas holds), and the rows beyond are never read
                frame = pd.read_csv(fh, dtype=_TEXT_COLUMNS, keep_default_na=False,
                                    na_values=[""], nrows=max_rows + 1)
            if len(frame) > max_rows:
                raise too_many(path, f"more than {max_rows:,}")
            row, offset = "line", 2
        return _checked(frame, str(path), row, offset)


def _check_header(path: Path, limits: InputLimits) -> None:
    """No column named twice in a CSV header: pandas would rename the second
    ``confidence`` to ``confidence.1``, which a report then takes for a run column."""
    import csv

    with _BoundedText(path, limits) as raw, \
            io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", newline="") as text:
        try:
            header = next(csv.reader(text), [])
        except csv.Error as exc:  # a header field beyond csv's field size limit
            raise ValidationError(f"{path}, line 1: must be a CSV header; found {exc}",
                                  source=path, line=1) from None
    seen: dict[str, int] = {}
    for position, name in enumerate(header):
        if name in seen:
            raise ValidationError(
                f"{path}, line 1: every column must be named once; found {name!r} twice "
                f"(columns {seen[name] + 1} and {position + 1})", source=path, line=1)
        seen[name] = position


def _rows_error(path: Path, limit: int, found: str) -> ValidationError:
    return ValidationError(
        f"{path}: an entity table read whole must have at most {limit:,} rows "
        f"(InputLimits.max_rows, --max-rows on the command line; confcal report --sketch "
        f"streams a table of any length in bounded memory); found {found}", source=path)


def _bytes_error(path: Path, limit: int, what: str, found: str) -> ValidationError:
    return ValidationError(
        f"{path}: an entity table must hold at most {limit:,} bytes {what} "
        f"(InputLimits.max_decompressed_bytes, --max-decompressed-bytes on the command "
        f"line); found {found}", source=path)


class _BoundedText(io.RawIOBase):
    """A CSV table's bytes (decompressed, for ``.csv.gz``) as pandas reads them, refused
    past ``limits.max_decompressed_bytes`` before the bytes beyond are held."""

    def __init__(self, path: Path, limits: InputLimits) -> None:
        super().__init__()
        self._path, self._max_bytes = path, limits.max_decompressed_bytes
        self._raw: Any = gzip.open(path, "rb") if path.name.endswith(".gz") \
            else open(path, "rb")  # noqa: SIM115 - closed with this reader
        self._bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        self._bytes += n
        if self._bytes > self._max_bytes:
            what = "of text after decompression" if self._path.name.endswith(".gz") \
                else "of text"
            raise _bytes_error(self._path, self._max_bytes, what, "more")
        return int(n)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _parquet_bounds(parquet: Any, path: Path, limits: InputLimits,
                    rows: tuple[int, Callable[[Path, str], ValidationError]] | None) -> None:
    """A Parquet table's declared rows (``rows``: the bound and its error, None for no
    bound) and decoded size within the limits (read from its footer, before any column
    is decoded)."""
    meta = parquet.metadata
    if rows is not None and meta.num_rows > rows[0]:
        raise rows[1](path, f"{meta.num_rows:,}")
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if size > limits.max_decompressed_bytes:
        raise _bytes_error(path, limits.max_decompressed_bytes, "of decoded columns",
                           f"{size:,} (its footer)")


def _read_parquet(path: Path, limits: InputLimits, max_rows: int,
                  too_many: Callable[[Path, str], ValidationError]) -> pd.DataFrame:
    """A whole Parquet table, bounded by its footer and then by the bytes decoded (a footer
    can understate them), with the table's signature."""
    pq = _parquet_module(path)
    import pyarrow as pa

    parquet = pq.ParquetFile(path)
    _parquet_bounds(parquet, path, limits, (max_rows, too_many))
    batches, held, n_rows = [], 0, 0
    for batch in parquet.iter_batches(batch_size=65_536):
        held += batch.nbytes
        n_rows += batch.num_rows
        if held > limits.max_decompressed_bytes:
            raise _bytes_error(path, limits.max_decompressed_bytes, "of decoded columns",
                               "more")
        if n_rows > max_rows:  # a footer can understate its rows too
            raise too_many(path, f"more than {max_rows:,}")
        batches.append(batch)
    signature = _parquet_signature(parquet, path, limits)
    frame = _to_pandas(pa.Table.from_batches(batches, schema=parquet.schema_arrow), path)
    if signature is not None:
        frame.attrs[SIGNATURE_ATTR] = signature
    return frame


def _parquet_signature(parquet: Any, path: Path, limits: InputLimits) -> str | None:
    """The table's signature from its Parquet metadata, which is checked first: the
    ``pandas`` and ``PANDAS_ATTRS`` keys, when present, hold JSON objects within the input
    limits (no deeper than ``max_depth``), and the signature, when present, is a string."""
    metadata = parquet.schema_arrow.metadata or {}
    found = {}
    for key in (b"pandas", b"PANDAS_ATTRS"):
        if key in metadata:
            found[key] = read_json_object(
                metadata[key], where=f"{path}: Parquet metadata key {key.decode()!r}",
                source=path, limits=limits)
    signature = found.get(b"PANDAS_ATTRS", {}).get(SIGNATURE_ATTR)
    if signature is not None and not isinstance(signature, str):
        raise ValidationError(
            f"{path}: Parquet metadata key 'PANDAS_ATTRS', entry {SIGNATURE_ATTR!r} must be a "
            f"string (the settings that scored the table); found {type(signature).__name__} "
            f"{shown(signature)}", source=path, field=f"PANDAS_ATTRS.{SIGNATURE_ATTR}")
    return signature


def _to_pandas(table: Any, path: Path) -> pd.DataFrame:
    """A pyarrow table or batch as a DataFrame; pandas' own metadata in it (the ``pandas``
    key: index columns, dtypes) must be of the shape pyarrow reads."""
    try:
        return table.to_pandas()  # type: ignore[no-any-return]
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValidationError(
            f"{path}: Parquet metadata key 'pandas' must describe the table's columns as "
            f"pandas writes it; found it unreadable ({type(exc).__name__}: {shown(str(exc))})",
            source=path, field="pandas") from None


def iter_entities(path: str | os.PathLike[str], *, columns: Sequence[str] | None = None,
                  chunk_rows: int = 1_000_000,
                  limits: InputLimits | None = None) -> Iterator[pd.DataFrame]:
    """Read an entity table in chunks, each checked like :func:`read_entities`.

    Parquet is read one row-group batch at a time and only ``columns`` (plus
    :data:`REQUIRED_ENTITY_COLUMNS`) are decoded; CSV is read ``chunk_rows`` rows at a
    time. Errors name the file and the row (Parquet, 0-based over the whole file) or line
    (CSV) as :func:`read_entities` does.

    Parameters
    ----------
    path : path-like
        ``.parquet``, ``.csv`` or ``.csv.gz``.
    columns : sequence of str, optional
        Columns wanted besides the required ones; default every column.
    chunk_rows : int, default 1,000,000
        Rows per chunk (at most).
    limits : InputLimits, optional
        ``max_decompressed_bytes`` bounds the CSV text (after decompression) or the
        Parquet columns' decoded size; rows are not bounded (one chunk is held at a time).

    Yields
    ------
    pandas.DataFrame

    See Also
    --------
    confcal.scoring.io.read_entities : the whole table at once.
    confcal.report.compare_runs_sketched : the runs table from chunks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_entities(entities, pathlib.Path(tmp) / "entities.csv")
    ...     sizes = [len(c.columns) for c in iter_entities(path, columns=["model"],
    ...                                                    chunk_rows=2_500)]
    >>> len(sizes), sizes[0]   # 6,155 rows in chunks of 2,500; 7 required columns and model
    (3, 8)
    """
    path, suffix = _existing_entity_table(path)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValidationError(f"chunk_rows must be an integer >= 1; found {chunk_rows!r}")
    wanted = None if columns is None else list(dict.fromkeys([*REQUIRED_ENTITY_COLUMNS, *columns]))
    checked = check_limits(limits)
    with _reading(path, suffix), ExitStack() as stack:
        if suffix == ".parquet":
            chunks, row, seen = _parquet_chunks(path, wanted, chunk_rows, checked), "row", 0
        else:
            _check_header(path, checked)
            fh = stack.enter_context(_BoundedText(path, checked))
            chunks = pd.read_csv(fh, dtype=_TEXT_COLUMNS, keep_default_na=False, na_values=[""],
                                 usecols=(lambda c: c in wanted) if wanted else None,
                                 chunksize=chunk_rows)
            row, seen = "line", 2
        for frame in chunks:
            yield _checked(frame, str(path), row, seen)
            seen += len(frame)


# Read as text, whatever they look like: "007" is an id, "1" a value's JSON text
_TEXT_COLUMNS = {c: str for c in ("doc_id", "field", "outcome", *_VALUE_COLUMNS)}


def _parquet_module(path: Path) -> Any:
    """pyarrow.parquet, or the error that says how to install it."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValidationError(
            f"{path}: reading Parquet needs pyarrow; found it not installed (in a "
            "checkout: pip install -e '.[cli]')", source=path) from None
    return pq


def _parquet_chunks(path: Path, wanted: list[str] | None, chunk_rows: int,
                    limits: InputLimits) -> Iterator[pd.DataFrame]:
    """The row-group batches of a Parquet table, only the ``wanted`` columns decoded, each
    carrying the table's signature; the decoded bytes bounded by the footer and as read."""
    parquet = _parquet_module(path).ParquetFile(path)
    names = parquet.schema_arrow.names
    absent = [c for c in (wanted or []) if c not in names]
    if absent:
        raise ValidationError(f"{path} must have the columns {wanted}; found {len(absent)} "
                              f"missing: {absent}", source=path)
    _parquet_bounds(parquet, path, limits, None)
    signature = _parquet_signature(parquet, path, limits)
    decoded = 0
    for batch in parquet.iter_batches(batch_size=chunk_rows, columns=wanted):
        decoded += batch.nbytes
        if decoded > limits.max_decompressed_bytes:
            raise _bytes_error(path, limits.max_decompressed_bytes, "of decoded columns",
                               "more")
        frame = _to_pandas(batch, path)
        if signature is not None:
            frame.attrs[SIGNATURE_ATTR] = signature
        yield frame


def _checked(frame: pd.DataFrame, name: str, row: str, offset: int) -> pd.DataFrame:
    """A table (or chunk) as read, checked (:func:`check_entities`), its values restored."""
    for column in ("field", "outcome"):
        if column in frame and isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(object)
    frame = check_entities(frame.reset_index(drop=True), name=name, row=row, offset=offset)
    return _restore_values(frame, name, row, offset)


@contextmanager
def _reading(path: Path, suffix: str) -> Iterator[None]:
    """Errors while reading a table name it: a ValidationError gets the file as its source,
    an undecodable CSV names line and column, another failure to read says what it was."""
    try:
        yield
    except ValidationError as exc:
        raise exc.with_location(source=path) from None
    except UnicodeDecodeError:
        raise _undecodable(path) from None
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise ValidationError(f"{path}: must be a readable {suffix} table; found {exc}",
                              source=path) from None


def _undecodable(path: Path) -> ValidationError:
    """The error for a CSV table that is not UTF-8, with the line and column of the first
    undecodable byte (pandas says only "position 0" of some buffer); read in blocks, so a
    file without newlines costs no more memory than a block."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    line, column = 1, 1
    with (gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")) as fh:
        while block := fh.read(1 << 20):
            pending = len(decoder.getstate()[0])  # at most 3 bytes of an unfinished char
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                start = max(exc.start - pending, 0)
                newline = block.rfind(b"\n", 0, start)
                line += block.count(b"\n", 0, start)
                column = start - newline if newline >= 0 else column + start
                break
            newline = block.rfind(b"\n")
            line += block.count(b"\n")
            column = len(block) - newline if newline >= 0 else column + len(block)
        else:  # not found again (the file changed meanwhile): no line to name
            return ValidationError(f"{path}: must be UTF-8 text; found an undecodable byte",
                                   source=str(path))
    return ValidationError(f"{path}, line {line}: must be UTF-8 text; found an undecodable "
                           f"byte at column {column} (counting bytes)",
                           source=str(path), line=line)


def _first(mask: np.ndarray, values: Any, row: str, offset: int) -> str:
    bad = np.flatnonzero(mask)
    value = values[int(bad[0])]
    if isinstance(value, np.generic):
        value = value.item()
    noun = "value" if bad.size == 1 else "values"
    return (f"found {bad.size} {noun} breaking it, first on {row} {int(bad[0]) + offset} "
            f"({shown(value)})")


def check_doc_ids(doc_id: Any, name: str, *, row: str = "row", offset: int = 0) -> None:
    """Refuse a table's ``doc_id`` column holding a missing value (None, NaN, ``""``, ...):
    every row belongs to a document. The error names the table, the count and the first
    row (``row`` ``"line"`` and ``offset`` 2 number CSV lines) and carries its location."""
    values = np.asarray(doc_id, dtype=object)
    bad = np.fromiter((is_missing(v) for v in values), dtype=bool, count=len(values))
    if bad.any():
        raise ValidationError(
            f"{name}: column doc_id must not be empty; {_first(bad, values, row, offset)}",
            **_first_at(bad, row, offset, "doc_id"))


def _first_at(mask: np.ndarray, row: str, offset: int, column: str) -> dict[str, Any]:
    """The location attributes of the row :func:`_first` names: a CSV line, else a row."""
    number = int(np.flatnonzero(mask)[0]) + offset
    return {"line" if row == "line" else "index": number, "field": column}


def _floats(raw: pd.Series) -> np.ndarray:
    """A column as float64: NaN where a cell is no number, and an integer beyond the float
    range (a CSV cell of 310+ digits) as an infinity of its sign, which every column's rule
    refuses with its row."""
    try:
        return pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    except OverflowError:
        return np.array([_float(v) for v in raw.to_numpy(dtype=object)], dtype=float)


def _float(value: Any) -> float:
    try:
        return float(pd.to_numeric(value, errors="coerce"))
    except OverflowError:
        return -math.inf if str(value).lstrip().startswith("-") else math.inf


def _check_numeric(raw: pd.Series, column: str, name: str, row: str, offset: int) -> None:
    """A numeric column holds numbers, not text or flags that would be coerced.

    Refused (an error): text (a Parquet string column, ``"0.9"``), bools (True is no
    confidence), anything else that is not a number. Accepted with one warning that counts
    the values: decimals (Parquet ``decimal128``, read as :class:`decimal.Decimal`; each is
    rounded to the nearest float64, as a CSV number is) and float16 (widened to float64
    exactly; but it holds 3 significant digits, so distinct confidences may have been tied
    when the table was written). int, float32 and float64 columns are read as they are.
    """
    dtype = raw.dtype
    where = f"{name}: column {column} must hold numbers"
    if pd.api.types.is_bool_dtype(dtype):
        mask = raw.notna().to_numpy()
        found = _first(mask, raw.to_numpy(), row, offset)
        raise ValidationError(f"{where}; found a bool column ({found})",
                              **_first_at(mask, row, offset, column))
    if dtype == np.float16:
        warnings.warn(f"{name}: column {column} is float16 (3 significant digits): its "
                      f"{len(raw):,} values are read exactly, but values closer than that "
                      "were tied when the table was written", UserWarning, stacklevel=4)
        return
    if pd.api.types.is_numeric_dtype(dtype):
        return
    values = raw.to_numpy(dtype=object)
    kinds = np.fromiter((_kind(v) for v in values), dtype=np.int8, count=len(values))
    bad = kinds < 0
    if bad.any():
        first = values[int(np.flatnonzero(bad)[0])]
        what = ("text" if isinstance(first, str) else "bools" if isinstance(first, (bool, np.bool_))
                else f"{type(first).__name__} values")
        raise ValidationError(f"{where}; found {what} ({_first(bad, values, row, offset)})",
                              **_first_at(bad, row, offset, column))
    decimals = int((kinds == 1).sum())
    if decimals:
        warnings.warn(f"{name}: column {column} holds {decimals:,} decimal values; each is "
                      "read as the nearest float64", UserWarning, stacklevel=4)


def _kind(value: Any) -> int:
    """0 a number or missing, 1 a Decimal, -1 anything else (text, bool, ...)."""
    if isinstance(value, (bool, np.bool_)):
        return -1
    if isinstance(value, Decimal):
        return 1
    if isinstance(value, (int, float, np.integer, np.floating)) or value is None:
        return 0
    return 0 if is_missing(value, blank=False) else -1


def check_entities(entities: Any, *, name: str = "entities", row: str = "row",
                   offset: int = 0) -> pd.DataFrame:
    """Check an entity table for a report; returns it with ``correct`` as bool.

    Rules: the columns of :data:`REQUIRED_ENTITY_COLUMNS` are present; ``doc_id`` has no
    missing value; ``outcome`` is one of TP, FD, FA, FN, TN; ``correct`` is bool (or 0/1)
    and true exactly for TP and TN; ``confidence`` is empty or within [0, 1];
    ``similarity`` is within [0, 1]; ``weight`` is within [1e-100, 1e100] (so that sums
    stay finite: :data:`confcal._validation.MAX_WEIGHT`); those three columns hold numbers
    (text and bools are errors, decimals and float16 are read with a warning that counts
    them); at least one row.

    Parameters
    ----------
    entities : pandas.DataFrame
    name : str
        What to call the table in messages (a file name).
    row, offset : str, int
        How rows are named in messages: ``row 0`` by default, ``line 2`` for the first data
        row of a CSV file (``row="line", offset=2``). The error's ``field`` attribute is the
        column, and ``line`` (with ``row="line"``) or else ``index`` the first offending
        row as the message numbers it.

    See Also
    --------
    confcal.scoring.io.read_entities : reads and checks a file.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"doc_id": ["a", "a"], "field": ["Agency", "Rate"],
    ...                       "outcome": ["TP", "FD"], "correct": [True, True],
    ...                       "confidence": [0.9, 0.4], "similarity": [1.0, 0.0],
    ...                       "weight": [1.0, 1.0]})
    >>> check_entities(table)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: entities: column correct must be true exactly for TP and TN
    outcomes; found 1 value breaking it, first on row 1 (True)
    """
    if not isinstance(entities, pd.DataFrame):
        raise ValidationError(
            f"{name} must be a pandas DataFrame (an entity table); found "
            f"{type(entities).__name__}")
    missing = [c for c in REQUIRED_ENTITY_COLUMNS if c not in entities.columns]
    if missing:
        raise ValidationError(
            f"{name} must have the entity-table columns {list(REQUIRED_ENTITY_COLUMNS)}; "
            f"found {len(missing)} missing: {missing}")
    if len(entities) == 0:
        raise ValidationError(f"{name} must have at least one row; found 0")
    frame = entities.reset_index(drop=True)
    check_doc_ids(frame["doc_id"], name, row=row, offset=offset)
    outcome = frame["outcome"].astype(object).to_numpy()
    bad = ~np.isin(outcome, np.array(OUTCOMES, dtype=object))
    if bad.any():
        raise ValidationError(
            f"{name}: column outcome must be one of {', '.join(OUTCOMES)}; "
            f"{_first(bad, outcome, row, offset)}", **_first_at(bad, row, offset, "outcome"))
    correct = frame["correct"].to_numpy()
    if correct.dtype != bool:
        numeric = _floats(frame["correct"])
        text = np.fromiter((isinstance(v, str) for v in correct), dtype=bool, count=len(correct))
        bad = ~((numeric == 0) | (numeric == 1)) | text  # the text "1" is not coerced
        if bad.any():
            raise ValidationError(
                f"{name}: column correct must be true/false (or 1/0); "
                f"{_first(bad, correct, row, offset)}", **_first_at(bad, row, offset, "correct"))
        correct = numeric == 1
    bad = correct != np.isin(outcome, np.array(["TP", "TN"], dtype=object))
    if bad.any():
        raise ValidationError(
            f"{name}: column correct must be true exactly for TP and TN outcomes; "
            f"{_first(bad, correct, row, offset)}", **_first_at(bad, row, offset, "correct"))
    checks = (
        ("confidence", "must be empty or within [0, 1]", True, lambda x: (x >= 0) & (x <= 1)),
        ("similarity", "must be within [0, 1]", False, lambda x: (x >= 0) & (x <= 1)),
        ("weight", f"must be {WEIGHT_RULE} (sums stay finite)", False, weight_ok),
    )
    numbers: dict[str, np.ndarray] = {}
    for column, rule, empty_ok, ok in checks:
        raw = frame[column]
        _check_numeric(raw, column, name, row, offset)
        values = _floats(raw)
        not_number = np.isnan(values) & ~raw.isna().to_numpy()
        good = ok(values) | (np.isnan(values) & ~not_number if empty_ok else False)
        if not good.all():
            raise ValidationError(
                f"{name}: column {column} {rule}; "
                f"{_first(~good, raw.to_numpy(dtype=object), row, offset)}",
                **_first_at(~good, row, offset, column))
        numbers[column] = values
    out = frame.copy(deep=False)
    out["correct"] = correct
    for column, values in numbers.items():
        out[column] = values
    return out
