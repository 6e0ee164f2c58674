"""The Augraphy worker: a process of its own that degrades pages, one request at a time.

:func:`confcal.extras.augment.degrade` starts ``python -m confcal.extras.augment._worker``
once and keeps it. A plain child process, not :mod:`multiprocessing`: its "spawn" start
re-runs the caller's main script, which fails in a script without an
``if __name__ == "__main__":`` guard. The protocol on the child's stdin and the copy of its
stdout it starts with (its own fd 1 is pointed at stderr, so that nothing Augraphy or numba
prints can corrupt a reply): 8-byte big-endian length, then a pickled request
``(array, steps, seed)``; the reply is ``("ok", array)`` or ``("error", exception)``.
Only the parent that started it talks to it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import random
import sys
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ._protocol import read_message, write_message

__all__ = ["main"]


@contextlib.contextmanager
def _scratch_directory() -> Iterator[str]:
    """A fresh working directory for one call (Augraphy's cache), removed afterwards."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="confcal-augment-") as scratch:
        os.chdir(scratch)
        try:
            yield scratch
        finally:
            os.chdir(previous)


def _degrade(array: np.ndarray, steps: Mapping[str, Any], seed: int) -> np.ndarray:
    """Seed every generator Augraphy draws from, build the pipeline, degrade one page."""
    import cv2

    from ._degrade import build_pipeline, match_input, numba_seeder

    with _scratch_directory():
        random.seed(seed)
        np.random.seed(seed)
        cv2.setRNGSeed(seed)
        numba_seeder()(seed)
        # built after seeding: OneOf draws its branch when it is constructed
        pipeline = build_pipeline(steps["ink"], steps["paper"], steps["post"])
        output = pipeline.augment(array)["output"]
    return match_input(np.asarray(output), array)


def main() -> int:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints go to stderr; replies keep the original stdout
    requests = sys.stdin.buffer
    import numba

    # the worker's own process: parallel loops would draw from numba's other threads'
    # unseeded generators, so one thread
    numba.set_num_threads(1)
    while True:
        try:
            array, steps, seed = read_message(requests)
        except EOFError:
            return 0
        try:
            reply: tuple[str, Any] = ("ok", _degrade(array, steps, seed))
        except Exception as exc:  # every failure goes back to the caller, who raises it
            try:
                pickle.dumps(exc)
                reply = ("error", exc)
            except Exception:
                reply = ("error", RuntimeError(f"{type(exc).__name__}: {exc}"))
        write_message(replies, reply)


if __name__ == "__main__":
    raise SystemExit(main())
