"""Reading documents and writing entity tables, with errors that say where.

Documents come as JSONL files (one ``{"doc_id": ..., "document": {...}}`` per line, gzip
allowed) or folders of per-document JSON files; entity tables (the DataFrame of
:func:`confcal.scoring.score_documents`) go to and come from Parquet or CSV. Every error
names the file and the line (JSONL), file (folder) or row (entity table) where it was found.

Writing is atomic: a file is written under a temporary name in its destination folder and
renamed into place, so a failure never leaves a half-written table behind.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._files import StagedFile, read_json_object
from .._signature import SIGNATURE_ATTR
from .._validation import is_missing
from ..exceptions import ValidationError
from ._result import OUTCOMES

__all__ = [
    "ENTITY_FORMATS",
    "REQUIRED_ENTITY_COLUMNS",
    "check_entities",
    "iter_documents",
    "iter_entities",
    "read_documents",
    "read_entities",
    "write_entities",
]

ENTITY_FORMATS = (".parquet", ".csv", ".csv.gz")
"""File suffixes :func:`write_entities` and :func:`read_entities` understand."""

REQUIRED_ENTITY_COLUMNS: tuple[str, ...] = (
    "doc_id", "field", "outcome", "correct", "confidence", "similarity", "weight",
)
"""The entity-table columns a report needs (WOA, F1 and the calibration metrics)."""

_DOCUMENT_KEYS = frozenset({"doc_id", "document"})
# Text columns of the entity table: raw values of any JSON type, written as text.
_VALUE_COLUMNS = ("truth", "prediction")


# ---------------------------------------------------------------------------- documents
class _Where(NamedTuple):
    """Where a document was read: a file and, for JSONL, the line. Its text starts the
    messages (``truth.jsonl, line 17``); its fields are the errors' ``source`` and ``line``."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return self.source if self.line is None else f"{self.source}, line {self.line}"


def _invalid(where: _Where, rule: str, **location: Any) -> ValidationError:
    """The error ``"<where>: <rule>"``, its location also in the attributes."""
    return ValidationError(f"{where}: {rule}", source=where.source, line=where.line, **location)


def _open_text(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, gunzipped when the name ends in .gz."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:  # type: ignore[operator]
            for number, raw in enumerate(fh, start=1):
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _invalid(
                        _Where(str(path), number), "must be UTF-8 text; found an undecodable "
                        f"byte at position {exc.start}") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise _invalid(_Where(str(path)), f"must be a readable gzip file; found {exc}") from None


def _check_doc_id(doc_id: Any, where: _Where) -> None:
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or is_missing(doc_id):
        raise _invalid(where, f"doc_id must be a non-empty string or an integer; found {doc_id!r}")


def _iter_jsonl(path: Path) -> Iterator[tuple[Any, dict[str, Any], _Where]]:
    """(doc_id, document, where) per non-blank line, read one line at a time.

    Repeated doc ids are not checked here: the callers keep the set of ids (whole-file
    readers) or leave it to the scorer (streaming), whichever holds the ids anyway.
    """
    return _iter_lines(path, _open_text(path))


def _iter_lines(path: Path, lines: Iterable[tuple[int, str]]
                ) -> Iterator[tuple[Any, dict[str, Any], _Where]]:
    hint = (" (a .json file is read as JSONL, one document per line; for one JSON file per "
            "document, give their folder)") if path.suffix == ".json" else ""
    for number, line in lines:
        if not line.strip():
            continue  # blank lines carry no data
        where = _Where(str(path), number)
        shape = 'an object with exactly the keys "doc_id" and "document"'
        record = read_json_object(line, where=f"{where}:", what=shape, hint=hint,
                                  source=where.source, line=where.line)
        if record.keys() != _DOCUMENT_KEYS:
            raise _invalid(where, f"must be {shape}; found keys {sorted(record)}{hint}")
        doc_id, document = record["doc_id"], record["document"]
        _check_doc_id(doc_id, where)
        if not isinstance(document, dict):
            raise _invalid(
                where, "document must be a JSON object of field names to values; found a "
                f"JSON {type(document).__name__}", doc_id=doc_id)
        yield doc_id, document, where


def _read_jsonl(path: Path) -> tuple[dict[Any, Any], dict[Any, _Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, _Where] = {}
    for doc_id, document, where in _iter_jsonl(path):
        if doc_id in documents:
            raise _invalid(
                where, f"doc_id must be unique; found {doc_id!r} again (first at line "
                f"{where_of[doc_id].line})", doc_id=doc_id)
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_folder(path: Path) -> Iterator[tuple[Any, dict[str, Any], _Where]]:
    """(doc_id, document, where) per ``<doc_id>.json`` file, in sorted file-name order."""
    # The listing is checked first so that a stray entry fails before any document is used.
    return _iter_folder_files(path, _folder_entries(path))


def _folder_entries(path: Path) -> list[Path]:
    entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    others = [p.name for p in entries if not (p.is_file() and p.suffix == ".json")]
    if others:
        raise _invalid(
            _Where(str(path)), "a folder of documents must hold only <doc_id>.json files "
            f"(hidden files aside); found {len(others)} other entries, first {others[0]!r}")
    return entries


def _iter_folder_names(path: Path) -> Iterator[tuple[Any, None, _Where]]:
    for file in _folder_entries(path):
        yield file.stem, None, _Where(str(file))


def _iter_folder_files(path: Path, entries: Iterable[Path]
                       ) -> Iterator[tuple[Any, dict[str, Any], _Where]]:
    for file in entries:
        where = _Where(str(file))
        document = read_json_object(file.read_bytes(), where=f"{where}:",
                                    what="one JSON object (the document)",
                                    source=where.source, doc_id=file.stem)
        yield file.stem, document, where


def _read_folder(path: Path) -> tuple[dict[Any, Any], dict[Any, _Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, _Where] = {}
    for doc_id, document, where in _iter_folder(path):
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_documents(path: str | os.PathLike[str]
                    ) -> Iterator[tuple[Any, dict[str, Any], _Where]]:
    path = Path(path)
    if path.is_dir():
        yield from _iter_folder(path)
    elif path.is_file():
        yield from _iter_jsonl(path)
    else:
        raise _invalid(_Where(str(path)), "must be a JSONL file or a folder of JSON files; "
                       "found nothing at that path")


def iter_documents(path: str | os.PathLike[str]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Stream (doc_id, document) pairs from a JSONL file or a folder, one at a time.

    The streaming twin of :func:`read_documents`: the same formats and the same errors
    (naming the file and line), raised when the offending line is reached, but only one
    document is held at a time. Repeated doc ids are *not* checked here (that needs the
    set of ids, which :func:`confcal.scoring.score_documents_iter` keeps).

    Parameters
    ----------
    path : path-like
        A JSONL file (``.gz`` allowed) of ``{"doc_id": ..., "document": {...}}`` lines, or a
        folder of ``<doc_id>.json`` files.

    Yields
    ------
    (doc_id, document)

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "truth.jsonl"
    ...     _ = path.write_text('{"doc_id": "inv-1", "document": {"Agency": "ACME"}}\\n\\n'
    ...                         '{"doc_id": 2, "document": {"Agency": "Zenith"}}\\n')
    ...     list(iter_documents(path))
    [('inv-1', {'Agency': 'ACME'}), (2, {'Agency': 'Zenith'})]
    """
    for doc_id, document, _ in _iter_documents(path):
        yield doc_id, document


def _read_documents(path: str | os.PathLike[str]
                    ) -> tuple[dict[Any, Any], dict[Any, _Where]]:
    """Documents by doc id, and where each was read (file and line) for messages."""
    path = Path(path)
    if path.is_dir():
        documents, where_of = _read_folder(path)
    elif path.is_file():
        documents, where_of = _read_jsonl(path)
    else:
        raise _invalid(_Where(str(path)), "must be a JSONL file or a folder of JSON files; "
                       "found nothing at that path")
    if not documents:
        raise _invalid(_Where(str(path)), "must contain at least one document; found none")
    return documents, where_of


def read_documents(path: str | os.PathLike[str]) -> dict[Any, dict[str, Any]]:
    """Read documents from a JSONL file or a folder of per-document JSON files.

    Parameters
    ----------
    path : path-like
        A JSONL file (gzip-compressed when the name ends in ``.gz``) whose every non-blank
        line is ``{"doc_id": ..., "document": {...}}``, or a folder of ``<doc_id>.json``
        files each holding one document (hidden files are skipped; any other entry is an
        error, so nothing is skipped silently).

    Returns
    -------
    dict
        doc_id -> document, in file (or sorted file-name) order; ready for
        :func:`confcal.scoring.score_documents`.

    Raises
    ------
    ValidationError
        Naming the file and line: invalid JSON, a line that is not an object with exactly
        the keys ``doc_id`` and ``document``, a doc id that is not a non-empty string or an
        integer, a repeated doc id, a document that is not an object, no documents. The
        error's ``source`` and ``line`` attributes say the same (and ``doc_id`` once the
        line's doc id is known).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "truth.jsonl"
    ...     _ = path.write_text('{"doc_id": "inv-1", "document": {"Agency": "ACME"}}\\n'
    ...                         '{"doc_id": "inv-2", "document": {"Agency": "Zenith"}\\n')
    ...     read_documents(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: .../truth.jsonl, line 2: must be valid JSON; found an error at column 53: Expecting ',' delimiter
    """
    return _read_documents(path)[0]


class _PredictionIndex:
    """doc_id -> where its document is in a prediction file, to fetch documents one by one.

    Used by :func:`_paired_documents` when the prediction file is not in truth order. A
    JSONL file is indexed by byte offset (a ``.gz`` file is first decompressed once to a
    temporary file, because seeking backwards in gzip re-reads from the start); a folder
    needs no index (each document is its own file). Memory: about 200 bytes per document.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.is_dir()
        self.entries: dict[Any, tuple[int, int, int]] = {}  # id -> (offset, line, ordinal)
        self.used = bytearray()
        self._tmp: Any = None
        if self.folder:
            for ordinal, (doc_id, _, where) in enumerate(_iter_folder_names(path)):
                self.entries[doc_id] = (0, 0, ordinal)
            self.used = bytearray(len(self.entries))
            return
        if path.name.endswith(".gz"):
            self._tmp = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the index)
            with gzip.open(path, "rb") as src:
                while block := src.read(1 << 20):
                    self._tmp.write(block)
            self._tmp.seek(0)
            fh = self._tmp
        else:
            fh = open(path, "rb")  # noqa: SIM115  (closed in close(), after the last seek)
        self._fh = fh
        offset, ordinal = 0, 0
        for number, raw in enumerate(fh, start=1):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            doc_id, _ = self._parse(raw, number)
            if doc_id in self.entries:
                raise _invalid(
                    _Where(str(path), number), f"doc_id must be unique; found {doc_id!r} again "
                    f"(first at line {self.entries[doc_id][1]})", doc_id=doc_id)
            self.entries[doc_id] = (start, number, ordinal)
            ordinal += 1
        self.used = bytearray(ordinal)

    def _parse(self, raw: bytes, number: int) -> tuple[Any, dict[str, Any]]:
        # The same checks and messages as the streaming reader, for one line.
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _invalid(
                _Where(str(self.path), number), "must be UTF-8 text; found an undecodable "
                f"byte at position {exc.start}") from None
        doc_id, document, _ = next(_iter_lines(self.path, [(number, line)]))
        return doc_id, document

    def get(self, doc_id: Any) -> tuple[dict[str, Any], _Where] | None:
        """The document and where it was read, or None when the file has no such id."""
        entry = self.entries.get(doc_id)
        if entry is None:
            return None
        offset, number, ordinal = entry
        self.used[ordinal] = 1
        if self.folder:
            file = self.path / f"{doc_id}.json"
            return next(_iter_folder_files(self.path, [file]))[1], _Where(str(file))
        self._fh.seek(offset)
        return self._parse(self._fh.readline(), number)[1], _Where(str(self.path), number)

    def unused(self, consumed: int) -> tuple[int, Any, int]:
        """How many records past the ``consumed`` read in order were never fetched, and the
        first of them (doc_id, line)."""
        count, first = 0, (None, 0)
        for doc_id, (_, number, ordinal) in self.entries.items():
            if ordinal >= consumed and not self.used[ordinal]:
                if count == 0:
                    first = (doc_id, number)
                count += 1
        return count, first[0], first[1]

    def close(self) -> None:
        if not self.folder:
            self._fh.close()


class _Read(NamedTuple):
    """Where :func:`_paired_documents` read a document: its truth, its prediction (None
    without one), and its position among the truth documents (0-based)."""

    truth: _Where
    prediction: _Where | None
    ordinal: int


def _paired_documents(
    truth_path: str | os.PathLike[str], pred_path: str | os.PathLike[str],
    recent: dict[Any, _Read] | None = None, keep: int = 10_000,
) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any] | None]]:
    """(doc_id, truth, prediction or None) for every truth document, streaming both files.

    Predictions in the truth's order (what a pipeline usually writes) are read in lockstep:
    one document of each file in memory. At the first out-of-order or absent prediction,
    the prediction file is indexed (:class:`_PredictionIndex`) and read by seeking; the
    documents read in lockstep so far stay valid. A prediction whose doc id is not in the
    truth (or is repeated) is an error naming its file and line, and so are a truth file
    without documents and a truth doc id repeated within the last ``keep`` documents (one
    repeated further apart is the scorer's to find: it keeps every id, this keeps a window).

    ``recent``, when given, receives doc_id -> :class:`_Read` of the last ``keep``
    documents, so that a scoring error about a doc id can say where its document was read.
    """
    recent = {} if recent is None else recent
    truth_path, pred_path = Path(truth_path), Path(pred_path)
    preds = _iter_documents(pred_path)
    pending = next(preds, None)
    consumed = 0  # prediction records paired in lockstep, read in file order
    index: _PredictionIndex | None = None
    ordinal = -1
    try:
        for ordinal, (doc_id, truth, t_where) in enumerate(_iter_documents(truth_path)):
            if doc_id in recent:
                raise _invalid(
                    t_where, f"doc_id must be unique; found {doc_id!r} again (first as "
                    f"document {recent[doc_id].ordinal + 1} of {truth_path.name})",
                    doc_id=doc_id, index=ordinal)
            pred: dict[str, Any] | None = None
            p_where: _Where | None = None
            if index is None and pending is not None and pending[0] == doc_id:
                _, pred, p_where = pending
                pending = next(preds, None)
                consumed += 1
            elif index is None and pending is not None:
                index = _PredictionIndex(pred_path)
            if index is not None:
                hit = index.get(doc_id)
                if hit is not None:
                    pred, p_where = hit
            recent[doc_id] = _Read(t_where, p_where, ordinal)
            if len(recent) > keep:
                del recent[next(iter(recent))]
            yield doc_id, truth, pred
        if ordinal < 0:
            raise _invalid(_Where(str(truth_path)), "must hold at least one document; found none")
        if index is None and pending is not None:
            # Left over after lockstep pairing: strays or repeats; the index tells which.
            index = _PredictionIndex(pred_path)
        if index is not None:
            count, stray, line = index.unused(consumed)
            if count:
                where = (_Where(str(pred_path), line) if line
                         else _Where(str(pred_path / f"{stray}.json")))
                raise _invalid(
                    where, f"every predicted doc_id must be in the truth ({truth_path}); "
                    f"found {count} that are not, first {stray!r}", doc_id=stray)
    finally:
        if index is not None:
            index.close()


# ------------------------------------------------------------------------ entity tables
def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((s for s in ENTITY_FORMATS if name.endswith(s)), path.suffix)


def _as_text(value: Any) -> str | None:
    if is_missing(value):
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)  # keep "100.0" distinct from the string "100"
    return str(value)


def _as_written(entities: pd.DataFrame) -> pd.DataFrame:
    """The table as written: doc_id, truth and prediction as text (one type per column)."""
    frame = entities.copy(deep=False)
    frame["doc_id"] = frame["doc_id"].map(str) if "doc_id" in frame else None
    for column in _VALUE_COLUMNS:
        if column in frame:
            frame[column] = pd.Series([_as_text(v) for v in frame[column]], dtype=object,
                                      index=frame.index)
    return frame


class _ChunkWriter:
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
                    f"{self.path}: writing Parquet needs pyarrow; found it not installed (pip "
                    "install 'confcal[cli]', or write .csv)", source=self.path) from None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._staged = StagedFile(self.path)
        self.tmp = self._staged.tmp
        self._writer: Any = None
        self._columns: list[str] | None = None
        self.rows = 0

    def write(self, entities: pd.DataFrame) -> None:
        frame = _as_written(entities)
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
                frame.to_csv(self._writer, index=False)
            else:
                frame.to_csv(self._writer, index=False, header=False)
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
    frame = _as_written(entities)
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401  (a clear message instead of pandas' ImportError)
        except ImportError:
            raise ValidationError(
                f"{path}: writing Parquet needs pyarrow; found it not installed (pip install "
                "'confcal[cli]', or write .csv)", source=path) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    with StagedFile(path) as staged:
        if suffix == ".parquet":
            frame.to_parquet(staged.tmp, index=False)
        else:
            frame.to_csv(staged.tmp, index=False,
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


def read_entities(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read an entity table written by :func:`write_entities` (or any tool) and check it.

    The columns of :data:`REQUIRED_ENTITY_COLUMNS` must be present and valid (see
    :func:`check_entities`); errors name the file, the column and the first offending
    line (CSV, counting the header as line 1) or row (Parquet, 0-based), in the message
    and in the ``source`` and ``line`` (CSV) or ``index`` (Parquet) attributes.

    Returns
    -------
    pandas.DataFrame
        ``doc_id``, ``truth`` and ``prediction`` as text, ``field`` and ``outcome`` as text,
        the numeric columns as numbers, other columns as read.

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
    confcal.exceptions.ValidationError: .../entities.csv: column confidence must be empty or within [0, 1]; found 1 value breaking it, first on line 3 (1.5)
    """
    path, suffix = _existing_entity_table(path)
    text_columns = {c: str for c in ("doc_id", "field", "outcome", *_VALUE_COLUMNS)}
    try:
        if suffix == ".parquet":
            try:
                frame = pd.read_parquet(path)
            except ImportError:
                raise ValidationError(
                    f"{path}: reading Parquet needs pyarrow; found it not installed (pip "
                    "install 'confcal[cli]')", source=path) from None
            row, offset = "row", 0
        else:
            # only an empty cell is missing: the texts "NA", "None" or "null" are values
            frame = pd.read_csv(path, dtype=text_columns, keep_default_na=False,
                                na_values=[""])
            row, offset = "line", 2
    except ValidationError:
        raise
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise ValidationError(f"{path}: must be a readable {suffix} table; found {exc}",
                              source=path) from None
    for column in ("field", "outcome"):
        if column in frame and isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(object)
    frame = frame.reset_index(drop=True)
    try:
        return check_entities(frame, name=str(path), row=row, offset=offset)
    except ValidationError as exc:
        raise exc.with_location(source=path) from None


def iter_entities(path: str | os.PathLike[str], *, columns: Sequence[str] | None = None,
                  chunk_rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
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

    Yields
    ------
    pandas.DataFrame

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(models=["sim-calibrated"], tiers=["clean"]).entities
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_entities(entities, pathlib.Path(tmp) / "entities.csv")
    ...     sizes = [len(c.columns) for c in iter_entities(path, columns=["model"], chunk_rows=2_500)]
    >>> len(sizes), sizes[0]   # 6,155 rows in chunks of 2,500; 7 required columns and model
    (3, 8)
    """
    path, suffix = _existing_entity_table(path)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValidationError(f"chunk_rows must be an integer >= 1; found {chunk_rows!r}")
    wanted = None if columns is None else list(dict.fromkeys([*REQUIRED_ENTITY_COLUMNS, *columns]))
    text_columns = {c: str for c in ("doc_id", "field", "outcome", *_VALUE_COLUMNS)}
    try:
        if suffix == ".parquet":
            try:
                import pyarrow.parquet as pq
            except ImportError:
                raise ValidationError(
                    f"{path}: reading Parquet needs pyarrow; found it not installed (pip "
                    "install 'confcal[cli]')", source=path) from None
            parquet = pq.ParquetFile(path)
            names = parquet.schema_arrow.names
            absent = [c for c in (wanted or []) if c not in names]
            if absent:
                raise ValidationError(
                    f"{path} must have the columns {wanted}; found {len(absent)} missing: "
                    f"{absent}", source=path)
            attrs = json.loads((parquet.schema_arrow.metadata or {}).get(b"PANDAS_ATTRS", b"{}"))
            signature = attrs.get(SIGNATURE_ATTR) if isinstance(attrs, dict) else None

            def batches() -> Iterator[pd.DataFrame]:
                for batch in parquet.iter_batches(batch_size=chunk_rows, columns=wanted):
                    frame = batch.to_pandas()
                    if isinstance(signature, str):
                        frame.attrs[SIGNATURE_ATTR] = signature
                    yield frame

            chunks: Iterator[pd.DataFrame] = batches()
            row, base = "row", 0
        else:
            chunks = pd.read_csv(path, dtype=text_columns, keep_default_na=False, na_values=[""],
                                 usecols=(lambda c: c in wanted) if wanted else None,
                                 chunksize=chunk_rows)
            row, base = "line", 2
        seen = 0
        for frame in chunks:
            for column in ("field", "outcome"):
                if column in frame and isinstance(frame[column].dtype, pd.CategoricalDtype):
                    frame[column] = frame[column].astype(object)
            frame = frame.reset_index(drop=True)
            yield check_entities(frame, name=str(path), row=row, offset=base + seen)
            seen += len(frame)
    except ValidationError as exc:
        raise exc.with_location(source=path) from None
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        raise ValidationError(f"{path}: must be a readable {suffix} table; found {exc}",
                              source=path) from None


def _first(mask: np.ndarray, values: Any, row: str, offset: int) -> str:
    bad = np.flatnonzero(mask)
    value = values[int(bad[0])]
    if isinstance(value, np.generic):
        value = value.item()
    noun = "value" if bad.size == 1 else "values"
    return f"found {bad.size} {noun} breaking it, first on {row} {int(bad[0]) + offset} ({value!r})"


def _first_at(mask: np.ndarray, row: str, offset: int, column: str) -> dict[str, Any]:
    """The location attributes of the row :func:`_first` names: a CSV line, else a row."""
    number = int(np.flatnonzero(mask)[0]) + offset
    return {"line" if row == "line" else "index": number, "field": column}


def check_entities(entities: Any, *, name: str = "entities", row: str = "row",
                   offset: int = 0) -> pd.DataFrame:
    """Check an entity table for a report; returns it with ``correct`` as bool.

    Rules: the columns of :data:`REQUIRED_ENTITY_COLUMNS` are present; ``doc_id`` has no
    missing value; ``outcome`` is one of TP, FD, FA, FN, TN; ``correct`` is bool (or 0/1)
    and true exactly for TP and TN; ``confidence`` is empty or within [0, 1];
    ``similarity`` is within [0, 1]; ``weight`` is finite and > 0; at least one row.

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
    confcal.exceptions.ValidationError: entities: column correct must be true exactly for TP and TN outcomes; found 1 value breaking it, first on row 1 (True)
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
    doc_id = frame["doc_id"].to_numpy(dtype=object)
    bad = np.fromiter((is_missing(v) for v in doc_id), dtype=bool, count=len(doc_id))
    if bad.any():
        raise ValidationError(
            f"{name}: column doc_id must not be empty; {_first(bad, doc_id, row, offset)}",
            **_first_at(bad, row, offset, "doc_id"))
    outcome = frame["outcome"].astype(object).to_numpy()
    bad = ~np.isin(outcome, np.array(OUTCOMES, dtype=object))
    if bad.any():
        raise ValidationError(
            f"{name}: column outcome must be one of {', '.join(OUTCOMES)}; "
            f"{_first(bad, outcome, row, offset)}", **_first_at(bad, row, offset, "outcome"))
    correct = frame["correct"].to_numpy()
    if correct.dtype != bool:
        numeric = pd.to_numeric(frame["correct"], errors="coerce").to_numpy(dtype=float)
        bad = ~((numeric == 0) | (numeric == 1))
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
        ("weight", "must be finite and > 0", False, lambda x: np.isfinite(x) & (x > 0)),
    )
    numbers: dict[str, np.ndarray] = {}
    for column, rule, empty_ok, ok in checks:
        raw = frame[column]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
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
