"""Writing outputs atomically, with the permissions a user expects.

Outputs are built under a temporary name and moved into place, so a failure never leaves a
half-written file or folder. ``tempfile`` creates those with mode 0600/0700, which
``os.replace`` would keep: a report written for a team would be unreadable to it. Here the
staged output gets the mode the user's umask gives a new file or folder, or, when it
replaces a previous output folder, that folder's own mode (a shared ``chmod 2775`` folder
stays shared).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Collection
from pathlib import Path

from .exceptions import ValidationError

__all__ = ["check_destination", "new_file_mode", "publish_folder"]


def _umask() -> int:
    # os.umask can only be read by setting it; set it straight back.
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
