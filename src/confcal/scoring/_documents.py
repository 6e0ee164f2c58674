"""Reading documents (JSONL files and folders) and pairing truth with predictions.

What ``confcal score`` reads: JSONL files (one ``{"doc_id": ..., "document": {...}}`` per
line, gzip allowed) or folders of per-document JSON files. Every error names the file and
the line (JSONL) or file (folder) where it was found. The public names are re-exported by
:mod:`confcal.scoring.io`.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .._files import read_json_object
from .._validation import InputLimits, check_limits, is_missing
from ..exceptions import ValidationError
from ._inputs import case_hint

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


_BLOCK = 1 << 20  # bytes read at a time
_BLANK = b" \t\r\n\x0b\x0c"
_BOM = b"\xef\xbb\xbf"


def _skip_blank(buf: bytearray, pos: int) -> int:
    """The position of the first non-blank byte of ``buf`` from ``pos``, or ``len(buf)``.

    ``lstrip`` runs in C at memory speed (a regular-expression search is ten times slower
    per byte); windows growing fourfold keep the copies it makes proportional to the blank
    run, never to the rest of the buffer.
    """
    size, end = 256, len(buf)
    while pos < end:
        window = buf[pos:pos + size]
        rest = window.lstrip(_BLANK)
        if rest:
            return pos + len(window) - len(rest)
        pos += len(window)
        size = min(size * 4, _BLOCK)
    return end


def _limit_hint(name: str) -> str:
    flag = "--" + name.replace("_", "-")
    return f" (InputLimits.{name}, {flag} on the command line)"


def _records(path: Path, limits: InputLimits) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, bytes) of every non-blank line of a text file, gunzipped
    when the name ends in .gz; a UTF-8 byte-order mark at the start is skipped.

    Read in blocks of 1 MiB: a run of blank lines costs a strip and a newline count in C
    (about a nanosecond per line, against 250 ns for a Python loop over lines), a record
    longer than ``limits.max_line_bytes`` is an error before more of it is read, and a
    ``.gz`` file that decompresses to more than ``limits.max_decompressed_bytes`` is an
    error when that much has been read. Offsets are in the decompressed text.
    """
    gz = path.name.endswith(".gz")
    max_line, max_total = limits.max_line_bytes, limits.max_decompressed_bytes
    buf = bytearray()
    base = 0  # offset of buf[0] in the (decompressed) text
    number = 1  # line number at buf[0]
    total = 0
    scanned = 0  # buf[:scanned] of a pending record holds no newline
    first = True

    def too_long(line: int) -> ValidationError:
        return _invalid(Where(str(path), line), f"must hold lines of at most {max_line:,} "
                        f"bytes{_limit_hint('max_line_bytes')}; found a longer one")

    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            while True:
                block = fh.read(_BLOCK)
                total += len(block)
                if gz and total > max_total:
                    raise _invalid(
                        Where(str(path), number), f"must decompress to at most {max_total:,} "
                        f"bytes{_limit_hint('max_decompressed_bytes')}; found more by this "
                        "line")
                buf += block
                if first:  # a byte-order mark is no data (decided once 3 bytes are in)
                    if len(buf) < len(_BOM) and block:
                        continue
                    first = False
                    if buf.startswith(_BOM):
                        del buf[:len(_BOM)]
                        base = len(_BOM)
                pos = 0
                while True:
                    if scanned:  # a record continued from the last block
                        start, end = 0, buf.find(b"\n", scanned)
                    else:
                        start = _skip_blank(buf, pos)
                        number += buf.count(b"\n", pos, start)
                        if start == len(buf):
                            pos = start
                            break
                        end = buf.find(b"\n", start)
                    if end < 0:
                        if len(buf) - start > max_line:
                            raise too_long(number)
                        pos, scanned = start, len(buf) - start
                        break
                    scanned = 0
                    if end - start > max_line:
                        raise too_long(number)
                    yield number, base + start, bytes(buf[start:end])
                    number += 1
                    pos = end + 1
                if not block:
                    if pos < len(buf):  # a last record without a line ending
                        yield number, base + pos, bytes(buf[pos:])
                    return
                del buf[:pos]
                base += pos
                scanned = min(scanned, len(buf))
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise _invalid(Where(str(path)), f"must be a readable gzip file; found {exc}") from None


def _decode(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(Where(str(path), number), "must be UTF-8 text; found an undecodable "
                       f"byte at position {exc.start}") from None


def open_text(path: Path, limits: InputLimits | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line) of every non-blank line of a text file, gunzipped when the name
    ends in .gz, within ``limits`` (:func:`_records`); a leading byte-order mark skipped."""
    limits = check_limits(limits)
    for number, _, raw in _records(path, limits):
        yield number, _decode(raw, path, number)


def _check_doc_id(doc_id: Any, where: Where) -> None:
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or is_missing(doc_id):
        raise _invalid(where, f"doc_id must be a non-empty string or an integer; found {doc_id!r}")


def _iter_jsonl(path: Path, limits: InputLimits
                ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    """(doc_id, document, where) per non-blank line, read one line at a time.

    Repeated doc ids are not checked here: the callers keep the set of ids (whole-file
    readers) or leave it to the scorer (streaming), whichever holds the ids anyway.
    """
    return _iter_lines(path, open_text(path, limits), limits)


def _iter_lines(path: Path, lines: Iterable[tuple[int, str]], limits: InputLimits
                ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    hint = (" (a .json file is read as JSONL, one document per line; for one JSON file per "
            "document, give their folder)") if path.suffix == ".json" else ""
    for number, line in lines:
        if not line.strip():
            continue  # blank lines carry no data
        where = Where(str(path), number)
        shape = 'an object with exactly the keys "doc_id" and "document"'
        record = read_json_object(line, where=f"{where}:", what=shape, hint=hint,
                                  source=where.source, line=where.line, limits=limits)
        if record.keys() != _DOCUMENT_KEYS:
            raise _invalid(where, f"must be {shape}; found keys {sorted(record)}{hint}")
        doc_id, document = record["doc_id"], record["document"]
        _check_doc_id(doc_id, where)
        if not isinstance(document, dict):
            raise _invalid(
                where, "document must be a JSON object of field names to values; found a "
                f"JSON {type(document).__name__}", doc_id=doc_id)
        yield doc_id, document, where


def _read_jsonl(path: Path, limits: InputLimits) -> tuple[dict[Any, Any], dict[Any, Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, Where] = {}
    for doc_id, document, where in _iter_jsonl(path, limits):
        if doc_id in documents:
            raise _invalid(
                where, f"doc_id must be unique; found {doc_id!r} again (first at line "
                f"{where_of[doc_id].line})", doc_id=doc_id)
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_folder(path: Path, limits: InputLimits
                 ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    """(doc_id, document, where) per ``<doc_id>.json`` file, in sorted file-name order."""
    # The listing is checked first so that a stray entry fails before any document is used.
    return _iter_folder_files(path, _folder_entries(path), limits)


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


def _read_file(file: Path, limits: InputLimits) -> bytes:
    """The bytes of a per-document JSON file, at most ``limits.max_line_bytes`` of them."""
    with open(file, "rb") as fh:
        data = fh.read(limits.max_line_bytes + 1)  # never more than the limit in memory
    if len(data) > limits.max_line_bytes:
        raise _invalid(Where(str(file)), f"must be a JSON file of at most "
                       f"{limits.max_line_bytes:,} bytes{_limit_hint('max_line_bytes')}; "
                       "found a larger one", doc_id=file.stem)
    return data


def _iter_folder_files(path: Path, entries: Iterable[Path], limits: InputLimits
                       ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    for file in entries:
        where = Where(str(file))
        document = read_json_object(_read_file(file, limits), where=f"{where}:",
                                    what="one JSON object (the document)",
                                    source=where.source, doc_id=file.stem, limits=limits)
        yield file.stem, document, where


def _read_folder(path: Path, limits: InputLimits) -> tuple[dict[Any, Any], dict[Any, Where]]:
    documents: dict[Any, Any] = {}
    where_of: dict[Any, Where] = {}
    for doc_id, document, where in _iter_folder(path, limits):
        documents[doc_id] = document
        where_of[doc_id] = where
    return documents, where_of


def _iter_documents(path: str | os.PathLike[str], limits: InputLimits
                    ) -> Iterator[tuple[Any, dict[str, Any], Where]]:
    path = Path(path)
    if path.is_dir():
        yield from _iter_folder(path, limits)
    elif path.is_file():
        yield from _iter_jsonl(path, limits)
    else:
        raise _invalid(Where(str(path)), "must be a JSONL file or a folder of JSON files; "
                       "found nothing at that path")


def iter_documents(path: str | os.PathLike[str], *, limits: InputLimits | None = None
                   ) -> Iterator[tuple[Any, dict[str, Any]]]:
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
    limits : InputLimits, optional
        Bounds on line length, decompressed size and nesting depth (defaults:
        :class:`~confcal.scoring.io.InputLimits`); input beyond one is an error naming the
        file and line.

    Yields
    ------
    (doc_id, document)

    See Also
    --------
    confcal.scoring.io.read_documents : everything at once.
    score_documents_iter : scores the stream.

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
    limits = check_limits(limits)
    for doc_id, document, _ in _iter_documents(path, limits):
        yield doc_id, document


def _read_documents(path: str | os.PathLike[str], limits: InputLimits, allow_empty: bool
                    ) -> tuple[dict[Any, Any], dict[Any, Where]]:
    """Documents by doc id, and where each was read (file and line) for messages."""
    path = Path(path)
    if path.is_dir():
        documents, where_of = _read_folder(path, limits)
    elif path.is_file():
        documents, where_of = _read_jsonl(path, limits)
    else:
        raise _invalid(Where(str(path)), "must be a JSONL file or a folder of JSON files; "
                       "found nothing at that path")
    if not documents and not allow_empty:
        raise _invalid(Where(str(path)), "must contain at least one document; found none "
                       "(allow_empty=True reads an empty input)")
    return documents, where_of


def read_documents(path: str | os.PathLike[str], *, allow_empty: bool = False,
                   limits: InputLimits | None = None) -> dict[Any, dict[str, Any]]:
    """Read documents from a JSONL file or a folder of per-document JSON files.

    Parameters
    ----------
    path : path-like
        A JSONL file (gzip-compressed when the name ends in ``.gz``) whose every non-blank
        line is ``{"doc_id": ..., "document": {...}}``, or a folder of ``<doc_id>.json``
        files each holding one document (hidden files are skipped; any other entry is an
        error, so nothing is skipped silently).
    allow_empty : bool, default False
        Return ``{}`` for a file without documents (or an empty folder) instead of raising:
        an empty prediction file would otherwise score every truth value as missing
        without a word.
    limits : InputLimits, optional
        Bounds on line length, decompressed size and nesting depth (defaults:
        :class:`~confcal.scoring.io.InputLimits`).

    Returns
    -------
    dict
        doc_id -> document, in file (or sorted file-name) order; ready for
        :func:`confcal.scoring.score_documents`.

    Raises
    ------
    ValidationError
        Naming the file and line: invalid JSON, a key repeated in one object, a line that
        is not an object with exactly the keys ``doc_id`` and ``document``, a doc id that
        is not a non-empty string or an integer, a repeated doc id, a document that is not
        an object, no documents (unless ``allow_empty``), input beyond ``limits``. The
        error's ``source`` and ``line`` attributes say the same (and ``doc_id`` once the
        line's doc id is known).

    See Also
    --------
    confcal.scoring.io.iter_documents : the same pairs streamed.
    score_documents : scores them.

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
    if not isinstance(allow_empty, bool):
        raise ValidationError(f"allow_empty must be True or False; found {allow_empty!r}")
    return _read_documents(path, check_limits(limits), allow_empty)[0]


class _PredictionIndex:
    """doc_id -> where its document is in a prediction file, to fetch documents one by one.

    Used by :func:`paired_documents` when the prediction file is not in truth order. A
    JSONL file is indexed by byte offset and length of each record; a ``.gz`` file has its
    records (only them: blank lines and whatever surrounds them are dropped) copied once to
    a temporary file (re-serialised compactly), because seeking backwards in gzip re-reads
    from the start, so the copy is never larger than the documents themselves, and the
    reading is bounded by ``limits`` as any other. A folder needs no index (each document
    is its own file). Memory: about 270 bytes per document (267 measured with tracemalloc
    for 100,000 ids like ``inv-0000001``).
    """

    def __init__(self, path: Path, limits: InputLimits) -> None:
        self.path = path
        self.limits = limits
        self.folder = path.is_dir()
        # id -> (offset, length, line, ordinal)
        self.entries: dict[Any, tuple[int, int, int, int]] = {}
        self.used = bytearray()
        if self.folder:
            for ordinal, (doc_id, _, where) in enumerate(_iter_folder_names(path)):
                self.entries[doc_id] = (0, 0, 0, ordinal)
            self.used = bytearray(len(self.entries))
            return
        gz = path.name.endswith(".gz")
        # closed in close(), after the last seek; the temporary file lives as long as the index
        self._fh = tempfile.TemporaryFile() if gz else open(path, "rb")  # noqa: SIM115
        try:
            self._index(gz)
        except BaseException:
            self._fh.close()
            raise

    def _index(self, gz: bool) -> None:
        ordinal, written = 0, 0
        for number, offset, raw in _records(self.path, self.limits):
            doc_id, document = self._parse(raw, number)
            if doc_id in self.entries:
                raise _invalid(
                    Where(str(self.path), number), f"doc_id must be unique; found {doc_id!r} "
                    f"again (first at line {self.entries[doc_id][2]})", doc_id=doc_id)
            if gz:
                # the record as parsed, written compactly: whitespace padding (which
                # gzip shrinks 1000-fold) is not copied, so the copy is no larger than the
                # documents; the line was checked in full above, and reads back the same
                raw = json.dumps({"doc_id": doc_id, "document": document}, ensure_ascii=False,
                                 separators=(",", ":")).encode("utf-8")
                self._fh.write(raw)
                offset, written = written, written + len(raw)
            self.entries[doc_id] = (offset, len(raw), number, ordinal)
            ordinal += 1
        self.used = bytearray(ordinal)

    def _parse(self, raw: bytes, number: int) -> tuple[Any, dict[str, Any]]:
        # The same checks and messages as the streaming reader, for one line.
        line = _decode(raw, self.path, number)
        doc_id, document, _ = next(_iter_lines(self.path, [(number, line)], self.limits))
        return doc_id, document

    def get(self, doc_id: Any) -> tuple[dict[str, Any], Where] | None:
        """The document and where it was read, or None when the file has no such id."""
        entry = self.entries.get(doc_id)
        if entry is None:
            return None
        offset, length, number, ordinal = entry
        self.used[ordinal] = 1
        if self.folder:
            file = self.path / f"{doc_id}.json"
            return (next(_iter_folder_files(self.path, [file], self.limits))[1],
                    Where(str(file)))
        self._fh.seek(offset)
        return self._parse(self._fh.read(length), number)[1], Where(str(self.path), number)

    def unused(self, consumed: int) -> tuple[int, Any, int]:
        """How many records past the ``consumed`` read in order were never fetched, and the
        first of them (doc_id, line)."""
        count, first = 0, (None, 0)
        for doc_id, (_, _, number, ordinal) in self.entries.items():
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
    recent: dict[Any, Read] | None = None, keep: int = 10_000, *,
    allow_empty: bool = False, limits: InputLimits | None = None,
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

    A prediction file (or folder) without any document is an error naming it, unless
    ``allow_empty`` (``--allow-empty``): every truth value would otherwise be scored as
    missing without a word. Both inputs are read within ``limits``.
    """
    recent = {} if recent is None else recent
    limits = check_limits(limits)
    truth_path, pred_path = Path(truth_path), Path(pred_path)
    predictions = _PairedPredictions(pred_path, limits, allow_empty)
    ordinal = -1
    try:
        for ordinal, (doc_id, truth, t_where) in enumerate(_iter_documents(truth_path,
                                                                           limits)):
            if doc_id in recent:
                raise _invalid(
                    t_where, f"doc_id must be unique; found {doc_id!r} again (first as "
                    f"document {recent[doc_id].ordinal + 1} of {truth_path.name})",
                    doc_id=doc_id, index=ordinal)
            pred, p_where = predictions.pair(doc_id)
            recent[doc_id] = Read(t_where, p_where, ordinal)
            if len(recent) > keep:
                del recent[next(iter(recent))]
            yield doc_id, truth, pred
        if ordinal < 0:
            raise _invalid(Where(str(truth_path)), "must hold at least one document; found none")
        predictions.check_all_paired(truth_path)
    finally:
        predictions.close()


class _PairedPredictions:
    """The predictions of a file or folder, handed out for the truth doc ids in turn.

    Read in lockstep, one record in memory, while they come in the truth's order; at the
    first out-of-order or absent prediction, indexed (:class:`_PredictionIndex`) and read
    by seeking. The records paired in lockstep so far stay valid.
    """

    def __init__(self, path: Path, limits: InputLimits, allow_empty: bool) -> None:
        self.path = path
        self.limits = limits
        self._records = _iter_documents(path, limits)
        self._pending = next(self._records, None)
        if self._pending is None and not allow_empty:
            kind = "folder" if path.is_dir() else "file"
            raise _invalid(Where(str(path)), f"the prediction {kind} must hold at least one "
                           "document; found none (allow_empty=True, --allow-empty on the "
                           "command line, scores every truth value as missing)")
        self._consumed = 0  # records paired in lockstep, read in file order
        self._index: _PredictionIndex | None = None

    def pair(self, doc_id: Any) -> tuple[dict[str, Any] | None, Where | None]:
        """The prediction of ``doc_id`` and where it was read; (None, None) without one."""
        pending = self._pending
        if self._index is None and pending is not None:
            if pending[0] == doc_id:
                self._pending = next(self._records, None)
                self._consumed += 1
                return pending[1], pending[2]
            self._index = _PredictionIndex(self.path, self.limits)
        if self._index is None:
            return None, None
        hit = self._index.get(doc_id)
        return (None, None) if hit is None else hit

    def check_all_paired(self, truth_path: Path) -> None:
        """Every prediction was handed out: none with a doc id absent from the truth."""
        if self._index is None and self._pending is not None:
            # Left over after lockstep pairing: strays or repeats; the index tells which.
            self._index = _PredictionIndex(self.path, self.limits)
        if self._index is None:
            return
        count, stray, line = self._index.unused(self._consumed)
        if count:
            where = (Where(str(self.path), line) if line
                     else Where(str(self.path / f"{stray}.json")))
            # the truth is read again for the hint: an error path, once
            hint = case_hint(stray, (doc_id for doc_id, _, _ in
                                     _iter_documents(truth_path, self.limits)))
            raise _invalid(
                where, f"every predicted doc_id must be in the truth ({truth_path}); "
                f"found {count} that are not, first {stray!r}{hint}", doc_id=stray)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
