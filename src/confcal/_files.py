"""Reading and writing files at the boundary: JSON objects, atomic files, staged folders.

Outputs are built under a temporary name and moved into place, so a failure never leaves a
half-written file or folder. ``tempfile`` creates those with mode 0600/0700, which
``os.replace`` would keep: a report written for a team would be unreadable to it. Here the
staged output gets the mode the user's umask gives a new file or folder, or, when it
replaces a previous output folder, that folder's own mode (a shared ``chmod 2775`` folder
stays shared). Every writer of the package, the extras' included, goes through
:func:`atomic_write`, :class:`StagedFile` or :func:`staged_folder`; ``tests/test_files.py``
fails on an ``os.replace`` or a ``tempfile.mkdtemp`` anywhere else.

Crash safety (what a ``kill -9`` or a power cut at any instant leaves):

- **The destination is never missing.** :func:`publish_folder` swaps the finished staging
  folder and the previous output in one atomic ``renameat2(RENAME_EXCHANGE)`` on Linux. Where
  that call does not exist (other systems, some file systems) it falls back to two renames;
  a kill between them leaves the previous output in a ``.<name>.old-*`` folder beside
  ``out``, and the next run puts it back before doing anything else
  (:func:`clean_stale_staging`).
- **Stale staging is cleaned by the next run for the same destination.** Staging names
  carry the writer's host and process id: ``.<name>.tmp-<host>-<pid>-<random>`` and
  ``.<name>.old-<host>-<pid>-<random>`` for folders, ``.<name>.<host>-<pid>-<random>.tmp``
  for files (``<host>`` is 8 hex digits of a hash of the host name). The next
  :func:`staged_folder`, :func:`check_destination` or :class:`StagedFile` for the same
  ``out`` removes one when it matches that pattern exactly and its writer is gone: same host
  and the process id no longer runs, or older than :data:`STALE_AFTER_SECONDS` (another
  host's, a reused process id, or a name written by confcal before this scheme, which has no
  id). A live writer's staging -- another process, or another thread of this one -- is
  never touched. :func:`atomic_write` does not scan (it is the caches' one-call writer and a
  folder scan per entry would make a cache of n files cost n squared).
- **Outputs are checked before any work** (:func:`check_destination`,
  :func:`check_output_file`): the parent folder must exist (it is never created silently),
  a file destination must not be a folder, and a folder destination must be new, empty or
  a previous output, and must not be the current folder or hold it (replacing it would
  pull the folder out from under the shell that runs the command).
- **Symbolic links are kept.** A destination that is a symlink to a folder (or a file) is
  resolved first: the output replaces the link's *target* and the link keeps pointing at
  it, rather than the link being replaced by a folder and the target left with the old
  output.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ._validation import InputLimits
from .exceptions import ValidationError

__all__ = ["STALE_AFTER_SECONDS", "StagedFile", "atomic_write", "check_destination",
           "check_output_file", "clean_stale_staging", "new_file_mode", "output_path",
           "publish_folder", "read_json_object", "staged_folder"]

STALE_AFTER_SECONDS = 7 * 24 * 3600
"""Staging whose writer cannot be checked (another host, no process id) is stale after this."""


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


def _host() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _owner() -> str:
    """``<host>-<pid>-``: who wrote a staging entry, in its name."""
    return f"{_host()}-{os.getpid()}-"


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this process: another thread's staging, or ours
    if os.name == "nt":  # os.kill would terminate the process there: assume it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # another user's process: it exists
    return True


def _stale(entry: os.DirEntry[str], host: str | None, pid: str | None) -> bool:
    try:
        age = time.time() - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return False  # gone meanwhile
    if host == _host() and pid is not None and not _running(int(pid)):
        return True
    return age > STALE_AFTER_SECONDS


def clean_stale_staging(out: str | os.PathLike[str]) -> list[Path]:
    """Remove the staging a killed run left beside ``out``; put back an output it had moved.

    Only entries of the exact staging patterns of ``out``'s name (module docstring) are
    looked at, and only stale ones -- writer gone, or older than
    :data:`STALE_AFTER_SECONDS` -- are touched. When ``out`` is missing and a stale
    ``.<name>.old-*`` folder holds the previous output (a kill between the two renames of
    the fallback publish), that output is moved back to ``out`` first.

    Parameters
    ----------
    out : path-like
        The destination (file or folder) whose staging to clean; a symlink is resolved.

    Returns
    -------
    list of pathlib.Path
        The entries removed or restored from.

    Examples
    --------
    >>> import tempfile
    >>> parent = Path(tempfile.mkdtemp())
    >>> killed = f".report.tmp-{_host()}-{2**22 + 1}-abcd1234"  # above any Linux pid_max
    >>> (parent / killed).mkdir()
    >>> (parent / ".report.tmp-keep").mkdir()  # not confcal's pattern: never touched
    >>> [p.name for p in clean_stale_staging(parent / "report")] == [killed]
    True
    >>> sorted(p.name for p in parent.iterdir())
    ['.report.tmp-keep']
    """
    out = output_path(out)
    name = re.escape(out.name)
    owner = r"(?:([0-9a-f]{8})-(\d+)-)?"
    folder = re.compile(rf"\.{name}\.(tmp|old)-{owner}[a-z0-9_]{{8}}")
    file = re.compile(rf"\.{name}\.{owner}[a-z0-9_]{{8}}\.tmp")
    prefix = f".{out.name}."
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(out.parent) if e.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in sorted(entries, key=lambda e: e.name):
        as_folder, as_file = folder.fullmatch(entry.name), file.fullmatch(entry.name)
        if as_folder and entry.is_dir(follow_symlinks=False):
            kind, host, pid = as_folder.groups()
        elif as_file and entry.is_file(follow_symlinks=False):
            kind, (host, pid) = "file", as_file.groups()
        else:
            continue
        if not _stale(entry, host, pid):
            continue
        path = Path(entry.path)
        previous = path / out.name
        if kind == "old" and not os.path.lexists(out) and previous.is_dir():
            os.replace(previous, out)  # the previous output, put back
        if kind == "file":
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def output_path(out: str | os.PathLike[str]) -> Path:
    """``out`` as an absolute path, a symbolic link resolved to its target.

    Writing replaces the target and keeps the link (module docstring); ``.`` and ``..``
    become the folders they name, so a staging name is never ``..tmp-``.
    """
    path = Path(os.path.abspath(out))
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    return path


def _check_parent(out: Path, what: str) -> None:
    parent = out.parent
    if not parent.is_dir():
        found = "a file" if parent.exists() else "nothing there"
        raise ValidationError(
            f"{out}: the folder of the {what} must exist (it is not created for you, so a "
            f"typo cannot make a folder); found {found} at {parent}", source=str(out))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValidationError(
            f"{out}: the folder of the {what} must be writable; found {parent} read-only "
            "for this user", source=str(out))


def check_output_file(out: str | os.PathLike[str], what: str = "output") -> Path:
    """Check, before any work, that a file can be written at ``out``; return its path.

    ``out`` must not be a folder, and its folder must exist and be writable. Stale staging
    files of ``out`` (a killed writer's) are removed (:func:`clean_stale_staging`).

    Raises
    ------
    ValidationError
        ``<out>: the <what> must be a file; found a folder``, or the parent folder missing
        or read-only.

    Examples
    --------
    >>> import tempfile
    >>> check_output_file(Path(tempfile.mkdtemp()), "entity table")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: ...: the entity table must be a file; found a folder
    """
    path = output_path(out)
    if path.is_dir():
        raise ValidationError(f"{out}: the {what} must be a file; found a folder",
                              source=str(out))
    _check_parent(path, what)
    clean_stale_staging(path)
    return path


def check_destination(out: Path, known: Collection[str], what: str) -> None:
    """``out`` may be new, empty, or a previous output holding only ``known`` files.

    Checked before any work: the parent folder must exist and be writable, ``out`` must not
    be the current folder or one that holds it, and stale staging beside it is cleaned
    first (:func:`clean_stale_staging`, which may put back a previous output). A symlink is
    resolved to its target (module docstring).
    """
    given, out = out, output_path(out)
    cwd = Path(os.path.abspath(os.getcwd()))
    if out == cwd or out in cwd.parents:
        raise ValidationError(
            f"{given}: the {what} folder must not be the current folder or hold it (the "
            f"folder is replaced as a whole); found {out}; name a folder inside it, such as "
            f"-o {what.split()[0]}", source=str(given))
    _check_parent(out, f"{what} folder")
    clean_stale_staging(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise ValidationError(f"{given}: the {what} folder must be a folder; found a file")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in known)
    if foreign:
        raise ValidationError(
            f"{given}: the {what} folder must be new, empty or a previous confcal {what}; "
            f"found {len(foreign)} other entries, first {foreign[0]!r}")


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where that is unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # the kernel or the file system cannot: two renames instead
    raise OSError(code, os.strerror(code), str(b))


def publish_folder(staging: Path, out: Path, known: Collection[str], what: str) -> None:
    """Move a finished staging folder into place, replacing only a previous output.

    An existing ``out`` is swapped with ``staging`` in one atomic step where the system
    allows it, so ``out`` is never missing, even if the process is killed; the previous
    output is then removed. Elsewhere two renames are used, and a kill between them is
    repaired by the next run (module docstring).
    """
    check_destination(out, known, what)  # again: the folder may have changed meanwhile
    out = output_path(out)
    mode = (out.stat().st_mode & 0o7777) if out.exists() else new_file_mode(directory=True)
    os.chmod(staging, mode)
    if not out.exists():
        os.replace(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # staging now holds the previous output
    else:
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{_owner()}", dir=out.parent))
        os.replace(out, old / out.name)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old / out.name, out)  # put the previous output back
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)


@contextmanager
def staged_folder(out: str | os.PathLike[str], known: Collection[str], what: str
                  ) -> Iterator[Path]:
    """A staging folder beside ``out`` that replaces it when the block succeeds.

    The block writes the output's files into the folder it is given; at the end the folder
    is moved onto ``out`` by :func:`publish_folder`, which refuses an ``out`` holding
    anything but ``known`` files (messages name the ``what``: "report", "qa output"). On an
    error, in the block or while publishing, the staging folder is removed and ``out`` is
    left as it was. ``out`` is checked first (:func:`check_destination`: its parent must
    exist, stale staging of a killed run is cleaned); a symlink is resolved to its target.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "report"
    >>> with staged_folder(out, ["a.txt"], "report") as staging:
    ...     _ = (staging / "a.txt").write_text("new")
    >>> (out / "a.txt").read_text(), sorted(p.name for p in out.parent.iterdir())
    ('new', ['report'])
    """
    check_destination(Path(out), known, what)
    out = output_path(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{_owner()}", dir=out.parent))
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
    the folder of ``path`` must exist. Its name carries this process's host and id, and the
    stale temporary files a killed writer left for the same ``path`` are removed first
    (``clean_stale=False`` skips that folder scan; module docstring). A ``path`` that is a
    symbolic link is written through: its target is replaced, the link kept.

    Attributes
    ----------
    path : pathlib.Path
        The destination.
    tmp : pathlib.Path
        The temporary file (``.<name>.<random>.tmp`` in the same folder, so that the final
        rename stays on one file system and is atomic).
    """

    def __init__(self, path: str | os.PathLike[str], *, clean_stale: bool = True) -> None:
        self.path = Path(path)
        target = output_path(self.path) if self.path.is_symlink() else self.path
        if clean_stale:
            clean_stale_staging(target)
        self._target = target
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{_owner()}", suffix=".tmp",
                                   dir=target.parent)
        os.close(fd)
        self.tmp = Path(tmp)

    def commit(self) -> Path:
        """Flush the temporary file to disk, give it the umask's mode, move it onto path.

        On a failure the temporary file is removed and the destination is left as it was.
        """
        try:
            _fsync(self.tmp)  # the data is on disk before the rename makes it visible
            os.chmod(self.tmp, new_file_mode())  # mkstemp makes 0600; follow the umask
            os.replace(self.tmp, self._target)
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
    with StagedFile(path, clean_stale=False) as staged:
        staged.tmp.write_bytes(raw)
    return staged.path


_DEFAULT_LIMITS = InputLimits()


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):  # the rare case: find the first repeated key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


# One decoder for every read: a repeated key is an error, never "the last one wins".
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)
_HIGH = r"\\u[dD][89abAB][0-9a-fA-F]{2}"
_LOW = r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE_SURROGATE = re.compile(rf"{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW}")


def _position(text: str, pos: int, line: int | None) -> tuple[str, int]:
    """("[line L, ]column C", L) of character ``pos`` of ``text``, which starts on ``line``."""
    lineno = text.count("\n", 0, pos)
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    at = f"column {column}"
    if "\n" in text:
        at = f"line {(line or 1) + lineno}, {at}"
    return at, (line or 1) + lineno


_DEPTH_CHUNK = 1 << 20  # bytes of text checked at a time


def _too_deep(text: str, max_depth: int) -> int | None:
    """The position of the first bracket nested deeper than ``max_depth``, or None.

    Counting brackets is enough for almost every document (fewer opening brackets than the
    limit); otherwise the brackets outside strings are found with numpy on the UTF-8 bytes,
    a MiB at a time (the depth and whether a string is open carried over), so the check
    costs a few passes in C and a few MiB of memory however long the text is.
    """
    if text.count("{") + text.count("[") <= max_depth:
        return None
    raw = text.encode("utf-8", "surrogatepass")
    arr = np.frombuffer(raw, dtype=np.uint8)
    depth, inside, step = 0, False, _DEPTH_CHUNK
    for lo in range(0, arr.size, step):
        part = arr[lo:lo + step]
        quotes = np.flatnonzero(part == 0x22)
        # a quote preceded by an odd run of backslashes is escaped (inside a string)
        after_backslash = quotes[(quotes + lo > 0) & (arr[np.maximum(quotes + lo - 1, 0)] == 0x5C)]
        escaped = []
        for q in (after_backslash + lo).tolist():
            run = 0
            while q - run - 1 >= 0 and raw[q - run - 1] == 0x5C:
                run += 1
            if run % 2:
                escaped.append(q - lo)
        if escaped:
            quotes = np.setdiff1d(quotes, np.array(escaped, dtype=quotes.dtype))
        opens = (part == 0x7B) | (part == 0x5B)
        brackets = np.flatnonzero(opens | (part == 0x7D) | (part == 0x5D))
        # outside strings: an even number of real quotes before it (odd if one was open)
        brackets = brackets[(np.searchsorted(quotes, brackets) % 2 == 1) == inside]
        levels = depth + np.cumsum(np.where(opens[brackets], 1, -1), dtype=np.int64)
        deep = np.flatnonzero(levels > max_depth)
        if deep.size:
            return len(raw[:lo + int(brackets[deep[0]])].decode("utf-8", "surrogatepass"))
        if levels.size:
            depth = int(levels[-1])
        inside ^= quotes.size % 2 == 1
    return None


def _lone_surrogate(text: str) -> int | None:
    """The position of a ``\\uD800``-style escape that is half of no surrogate pair."""
    if "\\u" not in text:
        return None
    for match in _LONE_SURROGATE.finditer(text):
        run = 0  # the backslash of \u is itself escaped after an odd run of backslashes
        while match.start() - run - 1 >= 0 and text[match.start() - run - 1] == "\\":
            run += 1
        if run % 2 == 0:
            return match.start()
    return None


def read_json_object(text: str | bytes | bytearray, *, where: str,
                     what: str = "a JSON object", hint: str = "",
                     source: str | os.PathLike[str] | None = None, line: int | None = None,
                     doc_id: Any = None, limits: InputLimits | None = None) -> dict[str, Any]:
    """Parse JSON text that must hold one object, or raise a located ValidationError.

    Parameters
    ----------
    text : str or bytes
        The JSON text. Bytes are decoded as JSON allows (UTF-8, with or without a BOM, or
        UTF-16/32 told by their zero bytes). A text starting a file (``line`` None or 1) may
        start with a byte-order mark, which is skipped.
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
        for an error inside the text the error's ``line`` is the line of the mistake (from
        1 when ``line`` is not given).
    limits : InputLimits, optional
        Its ``max_depth`` bounds the nesting of objects and lists (default 64).

    Returns
    -------
    dict
        The object. ``NaN``/``Infinity`` are read, as :func:`json.loads` does.

    Raises
    ------
    ValidationError
        ``<where> must be valid JSON; found an error at [line L, ]column C: <reason>``
        (the line only for text of several lines); the same location for a key repeated
        in one object (``must not repeat a key in one object; found "doc_id" again at
        ...``), nesting deeper than ``limits.max_depth``, an integer longer than Python
        converts (:func:`sys.get_int_max_str_digits`) and a lone UTF-16 surrogate escape
        (``"\\ud800"``, which no UTF-8 file can hold); ``<where> must be <what>; found a
        JSON list``, ``<where> must be UTF-8 text; found an undecodable byte at position
        P``, or ``<where> must be a JSON string; found <type>`` for another type of ``text``.

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
    >>> read_json_object('{"doc_id": "a", "doc_id": "b"}', where="p.jsonl, line 2:", line=2)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: p.jsonl, line 2: must not repeat a key in one object; found
    'doc_id' again at column 17
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
    if text.startswith("\ufeff") and line in (None, 1):
        text = text[1:]  # a UTF-8 byte-order mark (Windows editors write one) is no data
    if text.endswith(("\n", "\r")):
        # a record's line ending is no part of it: an error at its end is on its own line
        text = text.rstrip("\r\n")

    def located(rule: str, pos: int) -> ValidationError:
        at, number = _position(text, pos, line)
        return ValidationError(f"{where} {rule.replace('{at}', at)}{hint}", line=number,
                               **location)

    max_depth = (limits or _DEFAULT_LIMITS).max_depth
    deep = _too_deep(text, max_depth)
    if deep is not None:
        raise located(f"must nest objects and lists at most {max_depth} deep "
                      "(InputLimits.max_depth, --max-depth); found deeper nesting at {at}",
                      deep)
    try:
        data = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}"
        if "\n" in text:
            at = f"line {(line or 1) + exc.lineno - 1}, {at}"
        raise ValidationError(
            f"{where} must be valid JSON; found an error at {at}: {exc.msg}{hint}",
            line=(line or 1) + exc.lineno - 1, **location) from None
    except _DuplicateKey as exc:
        raise located(f"must not repeat a key in one object; found {exc.key!r} again at "
                      "{at}", _repeated_key(text, exc.key)) from None
    except RecursionError:  # pragma: no cover - the depth check above comes first
        raise ValidationError(f"{where} must nest objects and lists less deeply; found "
                              f"nesting Python cannot parse{hint}", line=line,
                              **location) from None
    except ValueError:  # int("1" * 5000): Python's guard against quadratic int()
        digits = sys.get_int_max_str_digits()
        match = re.search(rf"\d{{{digits + 1},}}", text)
        raise located(f"must hold integers of at most {digits} digits; found "
                      f"{len(match.group()) if match else 'more'} digits at {{at}}",
                      match.start() if match else 0) from None
    lone = _lone_surrogate(text)
    if lone is not None:
        raise located(f"must be valid Unicode; found a lone surrogate escape "
                      f"{text[lone:lone + 6]!r} (half of a UTF-16 pair) at {{at}}", lone)
    if not isinstance(data, dict):
        raise ValidationError(f"{where} must be {what}; found a JSON {type(data).__name__}"
                              f"{hint}", line=line, **location)
    return data


def _repeated_key(text: str, key: str) -> int:
    """Where ``key`` is repeated in one object: the object whose keys repeat first in the
    decoder's order (inner objects close first), walked once more with positions."""
    scanner = json.scanner.py_make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
    ws = re.compile(r"[ \t\n\r]*")

    def skip(pos: int) -> int:  # past the whitespace at pos
        match = ws.match(text, pos)
        return pos if match is None else match.end()

    def walk(pos: int) -> tuple[int, int | None]:
        pos = skip(pos)
        char = text[pos:pos + 1]
        if char == "{" or char == "[":
            close = "}" if char == "{" else "]"
            pos = skip(pos + 1)
            seen = False  # the key met once in this object (only it is tracked)
            repeated: int | None = None
            while text[pos:pos + 1] != close:
                if char == "{":
                    name, end = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                    if name == key:
                        if seen and repeated is None:
                            repeated = pos
                        seen = True
                    pos = skip(end) + 1  # past the colon
                pos, inner = walk(pos)
                if inner is not None:
                    return pos, inner
                pos = skip(pos)
                if text[pos:pos + 1] == ",":
                    pos = skip(pos + 1)
            if repeated is not None:
                return pos + 1, repeated
            return pos + 1, None
        _, end = scanner(text, pos)
        return end, None

    try:
        return walk(0)[1] or 0
    except (ValueError, StopIteration, IndexError):  # pragma: no cover - parsed once already
        return 0
