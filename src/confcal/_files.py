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
- **Only what a run wrote is ever removed.** Every published folder holds a manifest
  (:data:`MANIFEST_NAME`) listing each file and folder the run wrote, with each file's size
  and SHA-256. A later run into the same folder replaces it only when everything in it is
  listed there, of the listed kind and unchanged; anything else (a user's file, a folder
  named like an output file, a symlink, a file edited since, a manifest of another kind of
  output) makes it refuse, naming the entry, before any work and without removing
  anything. The manifest only ever answers "is this entry the run's?" for entries found by
  walking the folder itself (symlinks never followed), so no path it holds (``..``, an
  absolute path) can point a removal outside the folder.
- **Symbolic links are kept.** A destination that is a symlink to a folder (or a file) is
  resolved first: the output replaces the link's *target* and the link keeps pointing at
  it, rather than the link being replaced by a folder and the target left with the old
  output.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import hashlib
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, NamedTuple

import numpy as np

from ._validation import InputLimits
from .exceptions import ValidationError

__all__ = ["MANIFEST_FORMAT", "MANIFEST_NAME", "STALE_AFTER_SECONDS", "JsonNode",
           "JsonSyntaxError", "JsonTooDeep", "StagedFile", "atomic_write",
           "check_destination", "check_output_file", "clean_stale_staging", "new_file_mode",
           "output_path", "parse_json_nodes", "publish_folder", "read_json", "read_json_object",
           "staged_folder", "write_manifest"]

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


def check_destination(out: Path, what: str) -> None:
    """``out`` may be new, empty, or a previous ``what`` holding only what it wrote.

    A previous output is told by its manifest (:data:`MANIFEST_NAME`, written by
    :func:`publish_folder`): every entry of ``out`` must be listed there, of the kind
    listed (a file or a real folder, never a symlink or a FIFO), and a file must be
    unchanged since (size and SHA-256). Anything else -- a user's file, a folder named
    ``metrics.csv``, a report edited by hand, a manifest of another kind of output or one
    not written by confcal -- is the user's, and makes the check fail naming it, since
    publishing would delete it. Checked before any work: the parent folder must exist and
    be writable, ``out`` must not be the current folder or one that holds it, and stale
    staging beside it is cleaned first (:func:`clean_stale_staging`, which may put back a
    previous output). A symlink is resolved to its target (module docstring).

    Raises
    ------
    ValidationError
        ``<out>: the <what> folder must be new, empty or a previous confcal <what>; found
        N entries it did not write, first '<entry>' (<why>); nothing was removed``, or a
        bad manifest named.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "report"
    >>> with staged_folder(out, "report") as staging:
    ...     _ = (staging / "report.md").write_text("# one")
    >>> check_destination(out, "report")  # a previous report: it may be replaced
    >>> _ = (out / "notes.txt").write_text("mine")
    >>> check_destination(out, "report")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: ...: the report folder must be new, empty or a previous
    confcal report; found 1 entry it did not write, first 'notes.txt' (not in its manifest
    .confcal-manifest.json); nothing was removed
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
        raise ValidationError(f"{given}: the {what} folder must be a folder; found a file",
                              source=str(given))
    foreign = _foreign(out, _read_manifest(out, given, what))
    if foreign:
        name, why = foreign[0]
        raise ValidationError(
            f"{given}: the {what} folder must be new, empty or a previous confcal {what}; "
            f"found {len(foreign)} {'entry' if len(foreign) == 1 else 'entries'} it did "
            f"not write, first {name!r} ({why}); "
            "nothing was removed", source=str(given))


# ------------------------------------------------------------------- the output manifest
MANIFEST_NAME = ".confcal-manifest.json"
"""The file of an output folder listing what the run wrote there (:func:`publish_folder`)."""

MANIFEST_FORMAT = "confcal.output-manifest"
_MANIFEST_MAX_BYTES = 64 << 20  # a manifest lists names and digests: far below this
_KINDS = ("file", "folder")


class _Listed(NamedTuple):
    """One entry of a manifest: its kind, and a file's size and SHA-256."""

    kind: str
    size: int | None
    sha256: str | None


def _sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk(folder: Path) -> Iterator[tuple[str, os.DirEntry[str], str]]:
    """Every entry under ``folder`` but its manifest: its path relative to ``folder``
    (``/``-separated), the entry, and its kind (``file``, ``folder`` or what else it is),
    a folder before what it holds. Symlinks are never followed."""
    yield from _walk_listed(folder, None)


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if entry.is_file(follow_symlinks=False) else "special file"


def _walk_listed(folder: Path, listed: dict[str, _Listed] | None
                 ) -> Iterator[tuple[str, os.DirEntry[str], str]]:
    """:func:`_walk`, descending only into folders ``listed`` as folders (all real
    folders when ``listed`` is None); an explicit stack, so depth costs no recursion."""
    stack: list[tuple[str, str]] = [("", os.fspath(folder))]
    while stack:
        prefix, path = stack.pop()
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
        below = []
        for entry in entries:
            rel = prefix + entry.name
            if rel == MANIFEST_NAME:
                continue
            kind = _kind(entry)
            yield rel, entry, kind
            held = listed is None or (listed.get(rel, _Listed("", None, None)).kind
                                      == "folder")
            if kind == "folder" and held:
                below.append((rel + "/", entry.path))
        stack.extend(reversed(below))


def write_manifest(folder: Path, what: str) -> Path:
    """Write the manifest of a finished output folder: every entry in it, with its kind,
    and a file's size and SHA-256. :func:`publish_folder` calls it; a later run replaces
    only what it lists (:func:`check_destination`)."""
    entries = []
    for rel, entry, kind in _walk(folder):
        if kind not in _KINDS:  # a programming error: a writer made a link or a FIFO
            raise AssertionError(f"an output may hold files and folders only; found {rel} "
                                 f"a {kind}")
        item: dict[str, Any] = {"path": rel, "kind": kind}
        if kind == "file":
            item.update(size=entry.stat(follow_symlinks=False).st_size,
                        sha256=_sha256(entry.path))
        entries.append(item)
    entries.sort(key=lambda item: item["path"])
    text = json.dumps({"format": MANIFEST_FORMAT, "version": 1, "what": what,
                       "entries": entries}, indent=1, ensure_ascii=False)
    path = folder / MANIFEST_NAME
    path.write_text(text + "\n", encoding="utf-8", errors="surrogateescape")
    return path


def _read_manifest(out: Path, given: Path, what: str) -> dict[str, _Listed] | None:
    """The entries ``out``'s manifest lists, None when it has none; a manifest that is no
    regular file, too large, or not one a ``what`` wrote is an error naming why."""
    path = out / MANIFEST_NAME
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    where = f"{given}/{MANIFEST_NAME}:"

    def bad(found: str) -> ValidationError:
        return ValidationError(
            f"{where} must be the manifest of a previous confcal {what} (it lists what "
            f"the {what} wrote, the only entries a new one may replace); found {found}; "
            "nothing was removed", source=str(path))

    if not stat.S_ISREG(info.st_mode):
        raise bad("no regular file")
    if info.st_size > _MANIFEST_MAX_BYTES:
        raise bad(f"{info.st_size:,} bytes (at most {_MANIFEST_MAX_BYTES:,})")
    data = read_json_object(path.read_bytes(), where=where, source=path)
    if data.get("format") != MANIFEST_FORMAT or data.get("version") != 1:
        raise bad(f"format {data.get('format')!r} version {data.get('version')!r} (expected "
                  f"{MANIFEST_FORMAT!r} version 1)")
    if data.get("what") != what:
        raise bad(f"the manifest of a confcal {data.get('what')!r}")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise bad(f"entries of type {type(entries).__name__} (expected a list)")
    listed: dict[str, _Listed] = {}
    for i, item in enumerate(entries):
        rel, entry = _manifest_entry(item)
        if isinstance(entry, str):
            raise bad(f"entry {i} {entry}")
        if rel in listed:
            raise bad(f"entry {i} repeating the path {rel!r}")
        listed[rel] = entry
    return listed


def _manifest_entry(item: Any) -> tuple[str, _Listed | str]:
    """A manifest entry's path and what it lists, or the reason it is invalid. A path
    must stay inside the folder: relative, ``/``-separated, no empty, ``.`` or ``..``
    part, no NUL."""
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        return "", f"{item!r:.80} (expected an object with a string path)"
    rel, kind = item["path"], item.get("kind")
    parts = rel.split("/")
    if (rel.startswith("/") or "\0" in rel or "\\" in rel
            or any(p in ("", ".", "..") for p in parts)):
        return rel, (f"with the path {rel!r} (a path must stay inside the folder: relative, "
                     "without empty, '.' or '..' parts)")
    if kind not in _KINDS:
        return rel, f"{rel!r} of kind {kind!r} (expected 'file' or 'folder')"
    if kind == "folder":
        return rel, _Listed("folder", None, None)
    size, digest = item.get("size"), item.get("sha256")
    if (isinstance(size, bool) or not isinstance(size, int) or size < 0
            or not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest)):
        return rel, f"{rel!r} without a size and a SHA-256"
    return rel, _Listed("file", size, digest)


def _unchanged(entry: os.DirEntry[str], listed: _Listed) -> str | None:
    """None when a file is as the manifest lists it, else how it changed."""
    size = entry.stat(follow_symlinks=False).st_size
    if size != listed.size:
        return f"changed since the run wrote it: {size:,} bytes, written {listed.size:,}"
    if _sha256(entry.path) != listed.sha256:
        return "changed since the run wrote it: another SHA-256"
    return None


def _foreign(out: Path, listed: dict[str, _Listed] | None) -> list[tuple[str, str]]:
    """The entries of ``out`` no previous run wrote, each with why: not listed, of
    another kind, or a file changed since; a folder that is not the run's is one entry."""
    foreign: list[tuple[str, str]] = []
    for rel, entry, kind in _walk_listed(out, listed or {}):
        shown = rel + "/" if kind == "folder" else rel
        mine = (listed or {}).get(rel)
        if listed is None:
            foreign.append((shown, f"no manifest {MANIFEST_NAME} lists what is in the "
                                   "folder"))
        elif mine is None:
            foreign.append((shown, f"not in its manifest {MANIFEST_NAME}"))
        elif mine.kind != kind:
            foreign.append((shown, f"a {kind} where the run wrote a {mine.kind}"))
        elif kind == "file":
            changed = _unchanged(entry, mine)
            if changed:
                foreign.append((shown, changed))
    return foreign


def _remove_owned(folder: Path, listed: dict[str, _Listed]) -> bool:
    """Remove from a previous output what its manifest lists and is unchanged, children
    first, then the manifest and the folder; True when nothing else was left. Anything
    not the run's (written after the check) is kept."""
    kept = False
    for rel, entry, kind in reversed(list(_walk_listed(folder, listed))):
        mine = listed.get(rel)
        if mine is None or mine.kind != kind:
            kept = True
        elif kind == "folder":
            try:
                os.rmdir(entry.path)
            except OSError:  # it holds what is kept
                kept = True
        elif _unchanged(entry, mine) is None:
            os.unlink(entry.path)
        else:
            kept = True
    if kept:
        return False
    manifest = folder / MANIFEST_NAME
    try:
        if stat.S_ISREG(os.lstat(manifest).st_mode):
            manifest.unlink()
        os.rmdir(folder)
    except OSError:  # gone meanwhile, or something beside it: kept
        return False
    return True


def _retire(previous: Path, out: Path, listed: dict[str, _Listed] | None) -> None:
    """Remove the previous output ``previous`` (moved out of ``out``'s place) as far as
    it is the run's; what appeared in it after the last check is kept beside ``out`` in
    a visible ``<name>.kept-*`` folder, with a warning naming it."""
    if listed is None:  # the previous output was an empty folder
        try:
            os.rmdir(previous)
            return
        except OSError:  # no longer empty
            pass
    if listed is not None and _remove_owned(previous, listed):
        return
    kept = Path(tempfile.mkdtemp(prefix=f"{out.name}.kept-", dir=out.parent))
    os.replace(previous, kept / out.name)
    warnings.warn(f"{out}: entries that appeared in the previous output while it was "
                  f"replaced are kept in {kept / out.name}", RuntimeWarning, stacklevel=3)


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


def publish_folder(staging: Path, out: Path, what: str) -> None:
    """Move a finished staging folder into place, replacing only a previous output.

    The staging folder gets its manifest (:func:`write_manifest`); ``out`` is checked once
    more (:func:`check_destination`: it may have changed meanwhile). An existing ``out``
    is then swapped with ``staging`` in one atomic step where the system allows it, so
    ``out`` is never missing, even if the process is killed; of the previous output only
    what its manifest lists, unchanged, is removed (what appeared in it since the check is
    kept in a ``<name>.kept-*`` folder beside ``out``, with a warning). Elsewhere two
    renames are used, and a kill between them is repaired by the next run (module
    docstring).
    """
    if os.path.lexists(staging / MANIFEST_NAME):  # a programming error: the name is ours
        raise AssertionError(f"an output must not write {MANIFEST_NAME} itself")
    write_manifest(staging, what)
    check_destination(out, what)
    given, out = out, output_path(out)
    listed = _read_manifest(out, given, what) if out.exists() else None
    mode = (out.stat().st_mode & 0o7777) if out.exists() else new_file_mode(directory=True)
    os.chmod(staging, mode)
    if not out.exists():
        os.replace(staging, out)
    elif _exchange(staging, out):
        _retire(staging, out, listed)  # staging now holds the previous output
    else:
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{_owner()}", dir=out.parent))
        os.replace(out, old / out.name)
        try:
            os.replace(staging, out)
        except BaseException:
            os.replace(old / out.name, out)  # put the previous output back
            os.rmdir(old)
            raise
        _retire(old / out.name, out, listed)
        os.rmdir(old)


@contextmanager
def staged_folder(out: str | os.PathLike[str], what: str) -> Iterator[Path]:
    """A staging folder beside ``out`` that replaces it when the block succeeds.

    The block writes the output's files into the folder it is given; at the end the folder
    gets its manifest and is moved onto ``out`` by :func:`publish_folder`, which replaces
    only what a previous ``what`` listed in its manifest (messages name the ``what``:
    "report", "qa output"). On an error, in the block or while publishing, the staging
    folder is removed and ``out`` is left as it was. ``out`` is checked first
    (:func:`check_destination`: its parent must exist, stale staging of a killed run is
    cleaned); a symlink is resolved to its target.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "report"
    >>> with staged_folder(out, "report") as staging:
    ...     _ = (staging / "a.txt").write_text("new")
    >>> (out / "a.txt").read_text(), sorted(p.name for p in out.parent.iterdir())
    ('new', ['report'])
    >>> sorted(p.name for p in out.iterdir())
    ['.confcal-manifest.json', 'a.txt']
    """
    check_destination(Path(out), what)
    out = output_path(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{_owner()}", dir=out.parent))
    try:
        yield staging
        publish_folder(staging, out, what)
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
    symbolic link is written through: its target is replaced, the link kept; with
    ``follow_symlinks=False`` the link itself is replaced (a cache entry pointing at
    ``/dev/zero`` or at a file of the user's becomes a regular file, its target untouched).

    Attributes
    ----------
    path : pathlib.Path
        The destination.
    tmp : pathlib.Path
        The temporary file (``.<name>.<random>.tmp`` in the same folder, so that the final
        rename stays on one file system and is atomic).
    """

    def __init__(self, path: str | os.PathLike[str], *, clean_stale: bool = True,
                 follow_symlinks: bool = True) -> None:
        self.path = Path(path)
        target = output_path(self.path) if follow_symlinks and self.path.is_symlink() \
            else self.path
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
                 encoding: str = "utf-8", follow_symlinks: bool = True) -> Path:
    """Write ``data`` to ``path`` all at once: readers see the old file or the new one.

    The data goes to a temporary file in the same folder, which is flushed to disk, given
    the mode of a new file under the umask (as ``open`` would) and renamed onto ``path``.
    On an error the temporary file is removed and ``path`` is left as it was. Text is
    encoded with ``encoding`` and written as it is (no newline translation). A symbolic
    link at ``path`` is written through, or replaced itself with
    ``follow_symlinks=False`` (as is a FIFO or any other file that is not a folder).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "answer.json"
    >>> atomic_write(path, '{"a": 1}\\n').read_text()
    '{"a": 1}\\n'
    """
    raw = data.encode(encoding) if isinstance(data, str) else data
    with StagedFile(path, clean_stale=False, follow_symlinks=follow_symlinks) as staged:
        staged.tmp.write_bytes(raw)
    return staged.path


# ------------------------------------------------------------------------------ JSON text
# One reader for every JSON text the package takes in (documents, schemas, records,
# calibrators, chat files, model answers), built on the standard library's decoder:
#
# - read_json_object decodes with the C decoder, whose object_pairs_hook refuses a repeated
#   key, after a linear bracket count that bounds the nesting (the decoder recurses); an
#   error is located by the decoder's own position (JSONDecodeError.pos).
# - parse_json_nodes reads the same grammar and keeps the position of every value, for what
#   must point into the text: the tokens that spell a value of a model's answer, the place
#   of a repeated key. It is the standard library's own object and array parsers
#   (json.decoder.JSONObject, JSONArray) driven by a scan function that notes where each
#   value starts and ends and hands scalars to the C scanner; nothing is tokenized here.

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
_JSON_OBJECT = json.decoder.JSONObject  # type: ignore[attr-defined]
_JSON_ARRAY = json.decoder.JSONArray  # type: ignore[attr-defined]
_WHITESPACE = json.decoder.WHITESPACE  # type: ignore[attr-defined]
_HIGH = r"\\u[dD][89abAB][0-9a-fA-F]{2}"
_LOW = r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE_SURROGATE = re.compile(rf"{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW}")


class JsonNode(NamedTuple):
    """A JSON value and where it is in its text (character offsets).

    Attributes
    ----------
    kind : str
        ``"object"``, ``"array"``, ``"string"``, ``"number"``, ``"bool"`` or ``"null"``.
    start, end : int
        A string's content between its quotes (escapes as written), another scalar's
        literal, a container's brackets: ``text[start:end]``.
    value : object
        A scalar's decoded value (None for a container).
    members : sequence of (str, JsonNode)
        An object's keys and values in order, a repeated key kept (empty otherwise).
    items : sequence of JsonNode
        An array's values (empty otherwise).
    """

    kind: str
    start: int
    end: int
    value: Any = None
    members: Sequence[tuple[str, JsonNode]] = ()
    items: Sequence[JsonNode] = ()

    def key_start(self, k: int, text: str) -> int:
        """Where the key of member ``k`` starts (its opening quote) in ``text``, the text
        the object was read from.

        Found backwards from the value, in time proportional to the key's length: before
        a value lie whitespace, a colon and the key's closing quote; inside a key, a quote
        is escaped (an odd run of backslashes before it), and its opening quote is not.
        """
        child: Any = self.members[k][1]  # an int: where a scalar starts (_parse_nodes)
        value_at = (child if isinstance(child, int)
                    else child.start - (child.kind == "string"))
        close = text.rindex('"', self.start, value_at)
        quote = text.rindex('"', self.start, close)
        while _backslashes_before(text, quote) % 2:
            quote = text.rindex('"', self.start, quote)
        return quote


# A record holds many scalars: their nodes are made by tuple.__new__ (no Python call of
# the named tuple's __new__), which halves the cost of reading with positions.
_node = tuple.__new__


class JsonSyntaxError(ValueError):
    """Text that :func:`parse_json_nodes` cannot read as JSON.

    Attributes
    ----------
    msg : str
        The standard library's reason (``"Expecting ',' delimiter"``), as
        :class:`json.JSONDecodeError` gives it.
    pos : int
        The character position of the mistake.
    inside : str or None
        ``"object"`` or ``"array"``: the innermost container being read (None at the top).
    """

    def __init__(self, msg: str, pos: int, inside: str | None) -> None:
        super().__init__(f"{msg} at character {pos}")
        self.msg, self.pos, self.inside = msg, pos, inside


class JsonTooDeep(JsonSyntaxError):
    """Nesting deeper than :func:`parse_json_nodes` was asked to read; ``pos`` is the
    first bracket too deep."""


class _Constant(Exception):
    """NaN or Infinity in a text read without them."""


def _no_constant(name: str) -> Any:
    raise _Constant(name)


# The C scanner for scalars, by (strict, constants): strict=False lets a raw control
# character (a newline a model wrote) stand in a string; constants=False refuses NaN.
_SCALARS = {(strict, constants): json.JSONDecoder(
    strict=strict, parse_constant=None if constants else _no_constant
).scan_once  # type: ignore[attr-defined]
    for strict in (True, False) for constants in (True, False)}


def parse_json_nodes(text: str, start: int = 0, *, max_depth: int = 64, strict: bool = True,
                     constants: bool = True) -> tuple[JsonNode, int]:
    """The JSON value at ``text[start]``, with the position of every value in it.

    The grammar and the values are the standard library's (:mod:`json`): its object and
    array parsers read the containers and its C scanner the scalars, so a text this
    accepts :func:`json.loads` accepts too and decodes to the same values. Text after the
    value is not looked at.

    Parameters
    ----------
    text : str
    start : int
        Where the value starts (whitespace before it is not skipped).
    max_depth : int, default 64
        The deepest nesting of objects and lists read, checked (in linear time) before
        anything is parsed; at most :data:`~confcal._validation.MAX_DEPTH_CEILING`.
    strict : bool, default True
        As in :func:`json.loads`: False accepts control characters inside strings.
    constants : bool, default True
        Whether ``NaN``, ``Infinity`` and ``-Infinity`` are values.

    Returns
    -------
    node : JsonNode
    end : int
        The position just after the value.

    Raises
    ------
    JsonSyntaxError
        With the standard library's reason and the position of the mistake;
        :class:`JsonTooDeep`, a subclass, for nesting deeper than ``max_depth``.

    See Also
    --------
    read_json_object : a JSON object read from a file's text, with located errors.

    Examples
    --------
    >>> text = '{"a": [1, "xy"], "b": null}'
    >>> node, end = parse_json_nodes(text)
    >>> [(key, child.kind, text[child.start:child.end]) for key, child in node.members]
    [('a', 'array', '[1, "xy"]'), ('b', 'null', 'null')]
    >>> string = node.members[0][1].items[1]
    >>> string.value, text[string.start:string.end], node.key_start(1, text), end
    ('xy', 'xy', 17, 27)
    >>> parse_json_nodes('{"a": 1 "b": 2}')
    Traceback (most recent call last):
    ...
    confcal._files.JsonSyntaxError: Expecting ',' delimiter at character 8
    >>> parse_json_nodes('{"a": [[]]} [[[[', max_depth=3)[1]  # what follows is not read
    11
    >>> parse_json_nodes('{"a": [[[]]]}', max_depth=3)
    Traceback (most recent call last):
    ...
    confcal._files.JsonTooDeep: Nesting deeper than 3 levels at character 8
    """
    deep = _too_deep(text[start:] if start else text, max_depth)
    # a bracket too deep after the value is no concern of it: read up to the bracket only
    read = text if deep is None else text[:start + deep]
    try:
        with _recursion_room(2 * max_depth + 10), _no_gc():  # two frames a level
            return _parse_nodes(read, start, strict, constants)
    except JsonSyntaxError as exc:
        if deep is not None and exc.pos >= len(read):
            raise JsonTooDeep(f"Nesting deeper than {max_depth} levels", len(read),
                              exc.inside) from None
        raise


def _parse_nodes(text: str, start: int, strict: bool, constants: bool,
                 scalars: bool = True) -> tuple[Any, int]:
    """parse_json_nodes without the depth check; ``scalars=False`` puts where a scalar
    starts (an int) in place of its node, a third of the memory, for the containers'
    shape and the keys' places only."""
    scalar = _SCALARS[strict, constants]
    memo: dict[str, str] = {}

    def scan(s: str, i: int) -> tuple[Any, int]:
        char = s[i:i + 1]
        if char == "{":
            try:
                pairs, end = _JSON_OBJECT((s, i + 1), strict, scan, None, list, memo)
            except json.JSONDecodeError as exc:
                raise JsonSyntaxError(exc.msg, exc.pos, "object") from None
            return _node(JsonNode, ("object", i, end, None, pairs, ())), end
        if char == "[":
            try:
                values, end = _JSON_ARRAY((s, i + 1), scan)
            except json.JSONDecodeError as exc:
                raise JsonSyntaxError(exc.msg, exc.pos, "array") from None
            return _node(JsonNode, ("array", i, end, None, (), values)), end
        try:
            value, end = scalar(s, i)  # StopIteration(i) for no value, as the parsers expect
        except _Constant:
            raise StopIteration(i) from None
        if not scalars:
            return i, end
        if isinstance(value, str):
            return _node(JsonNode, ("string", i + 1, end - 1, value, (), ())), end
        kind = "null" if value is None else "bool" if isinstance(value, bool) else "number"
        return _node(JsonNode, (kind, i, end, value, (), ())), end

    try:
        return scan(text, start)
    except StopIteration as stop:
        raise JsonSyntaxError("Expecting value", stop.value, None) from None
    except json.JSONDecodeError as exc:  # a scalar at the top: an unterminated string
        raise JsonSyntaxError(exc.msg, exc.pos, None) from None


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused for the block: a tree of nodes has no cycles, and
    collections triggered by its many small tuples would take half the time of reading a
    large record (measured on 800,000 keys)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_ROOM_LOCK = threading.Lock()
_ROOM = {"blocks": 0, "saved": 0}


@contextmanager
def _recursion_room(frames: int) -> Iterator[None]:
    """Room for ``frames`` more Python frames than the caller's during the block.

    :func:`parse_json_nodes` costs two frames a nesting level, so the deepest nesting
    :class:`~confcal._validation.InputLimits` allows (500) needs more than the
    interpreter's default limit of 1,000. The limit is raised for the block when needed
    and put back when the last such block (of any thread) ends.
    """
    depth = 0
    caller: FrameType | None = sys._getframe()
    while caller is not None:
        depth, caller = depth + 1, caller.f_back
    need = depth + frames + 50
    with _ROOM_LOCK:
        if _ROOM["blocks"] == 0:
            _ROOM["saved"] = sys.getrecursionlimit()
        _ROOM["blocks"] += 1
        if need > sys.getrecursionlimit():
            sys.setrecursionlimit(need)
    try:
        yield
    finally:
        with _ROOM_LOCK:
            _ROOM["blocks"] -= 1
            if _ROOM["blocks"] == 0:
                sys.setrecursionlimit(_ROOM["saved"])


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
    a MiB at a time (the depth, whether a string is open and the backslashes the chunk ends
    with carried over), so the check costs a few passes in C and a few MiB of memory
    however long the text is.
    """
    if text.count("{") + text.count("[") <= max_depth:
        return None
    raw = text.encode("utf-8", "surrogatepass")
    arr = np.frombuffer(raw, dtype=np.uint8)
    depth, inside, run = 0, False, 0
    for lo in range(0, arr.size, _DEPTH_CHUNK):
        part = arr[lo:lo + _DEPTH_CHUNK]
        quotes = np.flatnonzero(part == 0x22)
        backslash = part == 0x5C
        if run or backslash.any():
            quotes, run = _unescaped(quotes, backslash, run)
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


def _unescaped(quotes: np.ndarray, backslash: np.ndarray, run: int) -> tuple[np.ndarray, int]:
    """The quotes of a chunk that no backslash escapes, and the backslashes ending it.

    A quote is escaped when an odd run of backslashes precedes it; ``run`` backslashes
    ended the previous chunk, so a run may start there.
    """
    n = backslash.size
    # for each position, the last one at or before it that is not a backslash (-1: none)
    last = np.maximum.accumulate(np.where(backslash, -1, np.arange(n)))
    before = last[np.maximum(quotes - 1, 0)]
    length = np.where(quotes == 0, run, np.where(before >= 0, quotes - 1 - before, quotes + run))
    ending = n - 1 - int(last[-1]) if last[-1] >= 0 else n + run
    return quotes[length % 2 == 0], ending


def _lone_surrogate(text: str) -> int | None:
    """The position of a ``\\uD800``-style escape that is half of no surrogate pair."""
    if "\\u" not in text:
        return None
    for match in _LONE_SURROGATE.finditer(text):
        # the backslash of \u is itself escaped after an odd run of backslashes
        if _backslashes_before(text, match.start()) % 2 == 0:
            return match.start()
    return None


def _backslashes_before(text: str, pos: int) -> int:
    """The length of the run of backslashes that ends just before ``text[pos]``."""
    run = 0
    while pos - run - 1 >= 0 and text[pos - run - 1] == "\\":
        run += 1
    return run


def _first_repeat(node: JsonNode, text: str) -> tuple[str, int] | None:
    """The first key repeated in one object and where its repeat starts, in the decoder's
    order: an object is checked when it closes, so inner objects come before theirs."""
    children = node.items or [child for _, child in node.members]
    for child in children:
        if isinstance(child, JsonNode) and (child.items or child.members):  # not empty
            found = _first_repeat(child, text)
            if found is not None:
                return found
    keys = [key for key, _ in node.members]
    if len(set(keys)) == len(keys):
        return None
    seen: set[str] = set()
    for k, key in enumerate(keys):
        if key in seen:
            return key, node.key_start(k, text)
        seen.add(key)
    raise AssertionError("unreachable: a key repeats")  # pragma: no cover


def _repeated_key(text: str, max_depth: int) -> tuple[str, int] | None:
    """The key the decoder found repeated and its position: the text read once more, with
    positions (only on this error path)."""
    # the tree is dropped before the collector runs again: it would only walk it
    # the depth is checked already; scalars are left out of the tree
    with _no_gc(), _recursion_room(3 * max_depth + 10):
        node, _ = _parse_nodes(text, _WHITESPACE.match(text, 0).end(), True, True, False)
        found = _first_repeat(node, text)
        del node
    return found


@dataclass(frozen=True)
class _Place:
    """Where a JSON text came from, for its errors: the messages' start and end, the
    error's location attributes."""

    where: str
    hint: str
    line: int | None
    location: dict[str, Any]

    def error(self, rule: str, line: int | None = None) -> ValidationError:
        return ValidationError(f"{self.where} {rule}{self.hint}",
                               line=self.line if line is None else line, **self.location)

    def at(self, text: str, pos: int, rule: str) -> ValidationError:
        """The error for character ``pos`` of ``text``: ``{at}`` in ``rule`` is its place."""
        at, number = _position(text, pos, self.line)
        return self.error(rule.replace("{at}", at), line=number)


def _json_str(text: Any, place: _Place) -> str:
    """``text`` as a str: bytes decoded as JSON allows, a byte-order mark that starts a file
    and the line ending of a record removed."""
    if isinstance(text, (bytes, bytearray)):
        encoding = json.detect_encoding(text)
        try:
            text = bytes(text).decode(encoding)
        except UnicodeDecodeError as exc:
            name = "UTF-8" if encoding.startswith("utf-8") else encoding.upper()
            raise place.error(f"must be {name} text; found an undecodable byte at position "
                              f"{exc.start}") from None
    elif not isinstance(text, str):
        raise ValidationError(f"{place.where} must be a JSON string; found "
                              f"{type(text).__name__}", line=place.line, **place.location)
    if text.startswith("\ufeff") and place.line in (None, 1):
        text = text[1:]  # a UTF-8 byte-order mark (Windows editors write one) is no data
    # a record's line ending is no part of it: an error at its end is on its own line
    return text.rstrip("\r\n") if text.endswith(("\n", "\r")) else text


def _decode(text: str, place: _Place, max_depth: int) -> Any:
    """The decoded text; a repeated key, bad JSON or an over-long integer located."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise place.at(text, exc.pos, f"must be valid JSON; found an error at {{at}}: "
                                      f"{exc.msg}") from None
    except _DuplicateKey as exc:
        key, pos = _repeated_key(text, max_depth) or (exc.key, 0)
        raise place.at(text, pos, f"must not repeat a key in one object; found {key!r} "
                                  "again at {at}") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise place.error("must nest objects and lists less deeply; found nesting Python "
                          "cannot parse") from None
    except ValueError:  # int("1" * 5000): Python's guard against quadratic int()
        digits = sys.get_int_max_str_digits()
        match = re.search(rf"\d{{{digits + 1},}}", text)
        raise place.at(text, match.start() if match else 0,
                       f"must hold integers of at most {digits} digits; found "
                       f"{len(match.group()) if match else 'more'} digits at {{at}}") from None


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

    See Also
    --------
    read_json : the same, for text holding any JSON value.
    parse_json_nodes : the same grammar, with the position of every value.

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
    data = read_json(text, where=where, hint=hint, source=source, line=line, doc_id=doc_id,
                     limits=limits)
    if not isinstance(data, dict):
        place = _Place(where, hint, line, {"source": source, "doc_id": doc_id})
        raise place.error(f"must be {what}; found a JSON {type(data).__name__}")
    return data


def read_json(text: str | bytes | bytearray, *, where: str, hint: str = "",
              source: str | os.PathLike[str] | None = None, line: int | None = None,
              doc_id: Any = None, limits: InputLimits | None = None,
              lone_surrogates: bool = False) -> Any:
    """Parse JSON text holding any value, or raise a located ValidationError.

    :func:`read_json_object` without the rule that the value is an object: the same
    decoding, bounds and messages (parameters as there). ``lone_surrogates=True`` keeps a
    ``"\\ud800"`` escape as the lone surrogate it stands for (as :func:`json.loads` does),
    for text confcal wrote from a Python string that held one.

    See Also
    --------
    read_json_object : the same, for text that must hold an object.

    Examples
    --------
    >>> read_json('[1, "a", null]', where="cell")
    [1, 'a', None]
    >>> read_json('[1, 2', where="e.csv: column truth, line 3:")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: e.csv: column truth, line 3: must be valid JSON; found an
    error at column 6: Expecting ',' delimiter
    """
    place = _Place(where, hint, line, {"source": source, "doc_id": doc_id})
    text = _json_str(text, place)
    max_depth = (limits or _DEFAULT_LIMITS).max_depth
    deep = _too_deep(text, max_depth)
    if deep is not None:
        raise place.at(text, deep, f"must nest objects and lists at most {max_depth} deep "
                                   "(InputLimits.max_depth, --max-depth); found deeper "
                                   "nesting at {at}")
    data = _decode(text, place, max_depth)
    lone = None if lone_surrogates else _lone_surrogate(text)
    if lone is not None:
        raise place.at(text, lone, f"must be valid Unicode; found a lone surrogate escape "
                                   f"{text[lone:lone + 6]!r} (half of a UTF-16 pair) at {{at}}")
    return data
