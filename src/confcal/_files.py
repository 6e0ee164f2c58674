"""Reading and writing files at the boundary: JSON objects, atomic files, staged folders.

Outputs are built under a temporary name and moved into place, so a failure never leaves a
half-written file or folder. ``tempfile`` creates those with mode 0600/0700, which
``os.replace`` would keep: a report written for a team would be unreadable to it. Here the
staged output gets the mode the user's umask gives a new file or folder, or, when it
replaces a previous output folder, that folder's own mode (a shared ``chmod 2775`` folder
stays shared). Every writer of the package, the extras' included, goes through
:func:`atomic_write`, :class:`StagedFile` or :func:`staged_folder`; ``tests/test_files.py``
fails on an ``os.replace`` or a ``tempfile.mkdtemp`` anywhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from .exceptions import ValidationError

__all__ = ["StagedFile", "atomic_write", "check_destination", "new_file_mode",
           "publish_folder", "read_json_object", "staged_folder"]


def _umask() -> int:
    # Linux (4.7+) shows the umask in /proc without changing it. os.umask can only read it
    # by setting it, and a file another thread creates in that instant (the extraction
    # cache writes from worker threads) would get the wrong mode; it is the fallback.
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(*, directory: bool = False) -> int:
    """The mode a newly created file (or folder) gets under the current umask."""
    return (0o777 if directory else 0o666) & ~_umask()


def check_destination(out: Path, known: Collection[str], what: str) -> None:
    """``out`` may be new, empty, or a previous output holding only ``known`` files."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ValidationError(f"{out}: the {what} folder must be a folder; found a file")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in known)
    if foreign:
        raise ValidationError(
            f"{out}: the {what} folder must be new, empty or a previous confcal {what}; "
            f"found {len(foreign)} other entries, first {foreign[0]!r}")


def publish_folder(staging: Path, out: Path, known: Collection[str], what: str) -> None:
    """Move a finished staging folder into place, replacing only a previous output."""
    check_destination(out, known, what)  # again: the folder may have changed meanwhile
    mode = (out.stat().st_mode & 0o7777) if out.exists() else new_file_mode(directory=True)
    os.chmod(staging, mode)
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / out.name)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old / out.name, out)  # put the previous output back
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, out)


@contextmanager
def staged_folder(out: str | os.PathLike[str], known: Collection[str], what: str
                  ) -> Iterator[Path]:
    """A staging folder beside ``out`` that replaces it when the block succeeds.

    The block writes the output's files into the folder it is given; at the end the folder
    is moved onto ``out`` by :func:`publish_folder`, which refuses an ``out`` holding
    anything but ``known`` files (messages name the ``what``: "report", "qa output"). On an
    error, in the block or while publishing, the staging folder is removed and ``out`` is
    left as it was. The parent of ``out`` is created if need be.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "report"
    >>> with staged_folder(out, ["a.txt"], "report") as staging:
    ...     _ = (staging / "a.txt").write_text("new")
    >>> (out / "a.txt").read_text(), sorted(p.name for p in out.parent.iterdir())
    ('new', ['report'])
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield staging
        publish_folder(staging, out, known, what)
    finally:
        if staging.exists():  # not published: the block or the move failed
            shutil.rmtree(staging, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDWR)  # Windows cannot flush a read-only descriptor
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class StagedFile:
    """A temporary file beside ``path`` that becomes ``path`` once it is complete.

    For writers that need a file name (pandas, pyarrow) or write across several calls:
    write to :attr:`tmp`, then :meth:`commit` or :meth:`discard`. As a context manager it
    commits when the block succeeds and discards otherwise. For data already in memory,
    :func:`atomic_write` is the one-call form.

    The temporary file is created at once (``mkstemp``, so two writers never share one);
    the folder of ``path`` must exist.

    Attributes
    ----------
    path : pathlib.Path
        The destination.
    tmp : pathlib.Path
        The temporary file (``.<name>.<random>.tmp`` in the same folder, so that the final
        rename stays on one file system and is atomic).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                   dir=self.path.parent)
        os.close(fd)
        self.tmp = Path(tmp)

    def commit(self) -> Path:
        """Flush the temporary file to disk, give it the umask's mode, move it onto path.

        On a failure the temporary file is removed and the destination is left as it was.
        """
        try:
            _fsync(self.tmp)  # the data is on disk before the rename makes it visible
            os.chmod(self.tmp, new_file_mode())  # mkstemp makes 0600; follow the umask
            os.replace(self.tmp, self.path)
        except BaseException:
            self.discard()
            raise
        return self.path

    def discard(self) -> None:
        """Remove the temporary file; the destination is untouched."""
        self.tmp.unlink(missing_ok=True)

    def __enter__(self) -> StagedFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *,
                 encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` all at once: readers see the old file or the new one.

    The data goes to a temporary file in the same folder, which is flushed to disk, given
    the mode of a new file under the umask (as ``open`` would) and renamed onto ``path``.
    On an error the temporary file is removed and ``path`` is left as it was. Text is
    encoded with ``encoding`` and written as it is (no newline translation).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "answer.json"
    >>> atomic_write(path, '{"a": 1}\\n').read_text()
    '{"a": 1}\\n'
    """
    raw = data.encode(encoding) if isinstance(data, str) else data
    with StagedFile(path) as staged:
        staged.tmp.write_bytes(raw)
    return staged.path


def read_json_object(text: str | bytes | bytearray, *, where: str,
                     what: str = "a JSON object", hint: str = "",
                     source: str | os.PathLike[str] | None = None, line: int | None = None,
                     doc_id: Any = None) -> dict[str, Any]:
    """Parse JSON text that must hold one object, or raise a located ValidationError.

    Parameters
    ----------
    text : str or bytes
        The JSON text. Bytes are decoded as JSON allows (UTF-8, with or without a BOM, or
        UTF-16/32 told by their zero bytes).
    where : str
        The start of every message: a name (``"text"``, ``"truths document"``) or a
        location, which then ends with its colon (``"truth.jsonl, line 3:"``).
    what : str
        What the text must hold, for the message when it is JSON of another type.
    hint : str
        Appended to the messages (a likely cause, an excerpt of the input).
    source, line, doc_id
        The error's location attributes (:class:`~confcal.exceptions.ValidationError`).
        ``line`` is the line of ``source`` the text starts on (a JSONL record's line);
        for invalid JSON the error's ``line`` is the line of the mistake (from 1 when
        ``line`` is not given).

    Returns
    -------
    dict
        The object. Duplicate keys keep the last value and ``NaN``/``Infinity`` are read,
        as :func:`json.loads` does.

    Raises
    ------
    ValidationError
        ``<where> must be valid JSON; found an error at [line L, ]column C: <reason>``
        (the line only for text of several lines), ``<where> must be <what>; found a JSON
        list``, ``<where> must be UTF-8 text; found an undecodable byte at position P``,
        or ``<where> must be a JSON string; found <type>`` for another type of ``text``.

    Examples
    --------
    >>> read_json_object('{"a": 1}', where="text")
    {'a': 1}
    >>> read_json_object("[1, 2]", where="r.jsonl, line 4:", what="a JSON object (one record)")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: r.jsonl, line 4: must be a JSON object (one record); found a
    JSON list
    >>> try:
    ...     read_json_object('{"a": 1,\\n "b"}', where="schema.json:", source="schema.json")
    ... except ValidationError as exc:
    ...     print(exc, exc.location, sep="\\n")
    schema.json: must be valid JSON; found an error at line 2, column 5: Expecting ':' delimiter
    {'source': 'schema.json', 'line': 2}
    """
    location = {"source": source, "doc_id": doc_id}
    if isinstance(text, (bytes, bytearray)):
        encoding = json.detect_encoding(text)
        try:
            text = bytes(text).decode(encoding)
        except UnicodeDecodeError as exc:
            name = "UTF-8" if encoding.startswith("utf-8") else encoding.upper()
            raise ValidationError(
                f"{where} must be {name} text; found an undecodable byte at position "
                f"{exc.start}{hint}", line=line, **location) from None
    elif not isinstance(text, str):
        raise ValidationError(f"{where} must be a JSON string; found {type(text).__name__}",
                              line=line, **location)
    if text.endswith(("\n", "\r")):
        # a record's line ending is no part of it: an error at its end is on its own line
        text = text.rstrip("\r\n")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}"
        if "\n" in text:
            at = f"line {(line or 1) + exc.lineno - 1}, {at}"
        raise ValidationError(
            f"{where} must be valid JSON; found an error at {at}: {exc.msg}{hint}",
            line=(line or 1) + exc.lineno - 1, **location) from None
    if not isinstance(data, dict):
        raise ValidationError(f"{where} must be {what}; found a JSON {type(data).__name__}"
                              f"{hint}", line=line, **location)
    return data
