"""Reading documents (JSONL files and folders) and pairing truth with predictions.

What ``confcal score`` reads: JSONL files (one ``{"doc_id": ..., "document": {...}}`` per
line, gzip allowed) or folders of per-document JSON files. Every error names the file and
the line (JSONL) or file (folder) where it was found. The public names are re-exported by
:mod:`confcal.scoring.io`.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .._files import read_json_object
from .._validation import is_missing
from ..exceptions import ValidationError

__all__ = ["Read", "Where", "iter_documents", "open_text", "paired_documents", "read_documents"]

_DOCUMENT_KEYS = frozenset({"doc_id", "document"})


class Where(NamedTuple):
    """Where a document was read: a file and, for JSONL, the line. Its text starts the
    messages (``truth.jsonl, line 17``); its fields are the errors' ``source`` and ``line``."""

    source: str
    line: int | None = None

    def __str__(self) -> str:
        return self.source if self.line is None else f"{self.source}, line {self.line}"


def _invalid(where: Where, rule: str, **location: Any) -> ValidationError:
    """The error ``"<where>: <rule>"``, its location also in the attributes."""
    return ValidationError(f"{where}: {rule}", source=where.source, line=where.line, **location)


def open_text(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, gunzipped when the name ends in .gz."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:  # type: ignore[operator]
            for number, raw in enumerate(fh, start=1):
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _invalid(
                        Where(str(path), number), "must be UTF-8 text; found an undecodable "
                        f"byte at position {exc.start}") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise _invalid(Where(str(path)), f"must be a readable gzip file; found {exc}") from None


def _check_doc_id(doc_id: Any, where: Where) -> None:
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or is_missing(doc_id):
        raise _invalid(where, f"doc_id must be a non-empty string or an integer; found {doc_id!r}")


def _iter_jsonl(path: Path) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    """(doc_id, document, where) per non-blank line, read one line at a time.

    Repeated doc ids are not checked here: the callers keep the set of ids (whole-file
    readers) or leave it to the scorer (streaming), whichever holds the ids anyway.
    """
    return _iter_lines(path, open_text(path))


def _iter_lines(path: Path, lines: Iterable[tuple[int, str]]
                ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    hint = (" (a .json file is read as JSONL, one document per line; for one JSON file per "
            "document, give their folder)") if path.suffix == ".json" else ""
    for number, line in lines:
        if not line.strip():
            continue  # blank lines carry no data
        where = Where(str(path), number)
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


def _read_jsonl(path: Path) -> tuple[dict[Any, Any], dict[Any, Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, Where] = {}
    for doc_id, document, where in _iter_jsonl(path):
        if doc_id in documents:
            raise _invalid(
                where, f"doc_id must be unique; found {doc_id!r} again (first at line "
                f"{where_of[doc_id].line})", doc_id=doc_id)
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_folder(path: Path) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    """(doc_id, document, where) per ``<doc_id>.json`` file, in sorted file-name order."""
    # The listing is checked first so that a stray entry fails before any document is used.
    return _iter_folder_files(path, _folder_entries(path))


def _folder_entries(path: Path) -> list[Path]:
    entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    others = [p.name for p in entries if not (p.is_file() and p.suffix == ".json")]
    if others:
        raise _invalid(
            Where(str(path)), "a folder of documents must hold only <doc_id>.json files "
            f"(hidden files aside); found {len(others)} other entries, first {others[0]!r}")
    return entries


def _iter_folder_names(path: Path) -> Iterator[tuple[Any, None, Where]]:
    for file in _folder_entries(path):
        yield file.stem, None, Where(str(file))


def _iter_folder_files(path: Path, entries: Iterable[Path]
                       ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    for file in entries:
        where = Where(str(file))
        document = read_json_object(file.read_bytes(), where=f"{where}:",
                                    what="one JSON object (the document)",
                                    source=where.source, doc_id=file.stem)
        yield file.stem, document, where


def _read_folder(path: Path) -> tuple[dict[Any, Any], dict[Any, Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, Where] = {}
    for doc_id, document, where in _iter_folder(path):
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_documents(path: str | os.PathLike[str]
                    ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    path = Path(path)
    if path.is_dir():
        yield from _iter_folder(path)
    elif path.is_file():
        yield from _iter_jsonl(path)
    else:
        raise _invalid(Where(str(path)), "must be a JSONL file or a folder of JSON files; "
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
                    ) -> tuple[dict[Any, Any], dict[Any, Where]]:
    """Documents by doc id, and where each was read (file and line) for messages."""
    path = Path(path)
    if path.is_dir():
        documents, where_of = _read_folder(path)
    elif path.is_file():
        documents, where_of = _read_jsonl(path)
    else:
        raise _invalid(Where(str(path)), "must be a JSONL file or a folder of JSON files; "
                       "found nothing at that path")
    if not documents:
        raise _invalid(Where(str(path)), "must contain at least one document; found none")
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
    confcal.exceptions.ValidationError: .../truth.jsonl, line 2: must be valid JSON; found an error
    at column 53: Expecting ',' delimiter
    """
    return _read_documents(path)[0]


class _PredictionIndex:
    """doc_id -> where its document is in a prediction file, to fetch documents one by one.

    Used by :func:`paired_documents` when the prediction file is not in truth order. A
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
                    Where(str(path), number), f"doc_id must be unique; found {doc_id!r} again "
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
                Where(str(self.path), number), "must be UTF-8 text; found an undecodable "
                f"byte at position {exc.start}") from None
        doc_id, document, _ = next(_iter_lines(self.path, [(number, line)]))
        return doc_id, document

    def get(self, doc_id: Any) -> tuple[dict[str, Any], Where] | None:
        """The document and where it was read, or None when the file has no such id."""
        entry = self.entries.get(doc_id)
        if entry is None:
            return None
        offset, number, ordinal = entry
        self.used[ordinal] = 1
        if self.folder:
            file = self.path / f"{doc_id}.json"
            return next(_iter_folder_files(self.path, [file]))[1], Where(str(file))
        self._fh.seek(offset)
        return self._parse(self._fh.readline(), number)[1], Where(str(self.path), number)

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


class Read(NamedTuple):
    """Where :func:`paired_documents` read a document: its truth, its prediction (None
    without one), and its position among the truth documents (0-based)."""

    truth: Where
    prediction: Where | None
    ordinal: int


def paired_documents(
    truth_path: str | os.PathLike[str], pred_path: str | os.PathLike[str],
    recent: dict[Any, Read] | None = None, keep: int = 10_000,
) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any] | None]]:
    """(doc_id, truth, prediction or None) for every truth document, streaming both files.

    Predictions in the truth's order (what a pipeline usually writes) are read in lockstep:
    one document of each file in memory. At the first out-of-order or absent prediction,
    the prediction file is indexed (:class:`_PredictionIndex`) and read by seeking; the
    documents read in lockstep so far stay valid. A prediction whose doc id is not in the
    truth (or is repeated) is an error naming its file and line, and so are a truth file
    without documents and a truth doc id repeated within the last ``keep`` documents (one
    repeated further apart is the scorer's to find: it keeps every id, this keeps a window).

    ``recent``, when given, receives doc_id -> :class:`Read` of the last ``keep``
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
            p_where: Where | None = None
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
            recent[doc_id] = Read(t_where, p_where, ordinal)
            if len(recent) > keep:
                del recent[next(iter(recent))]
            yield doc_id, truth, pred
        if ordinal < 0:
            raise _invalid(Where(str(truth_path)), "must hold at least one document; found none")
        if index is None and pending is not None:
            # Left over after lockstep pairing: strays or repeats; the index tells which.
            index = _PredictionIndex(pred_path)
        if index is not None:
            count, stray, line = index.unused(consumed)
            if count:
                where = (Where(str(pred_path), line) if line
                         else Where(str(pred_path / f"{stray}.json")))
                raise _invalid(
                    where, f"every predicted doc_id must be in the truth ({truth_path}); "
                    f"found {count} that are not, first {stray!r}", doc_id=stray)
    finally:
        if index is not None:
            index.close()
