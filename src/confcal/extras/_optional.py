"""Helpers the extras share: an optional dependency, an optional progress bar, a thread pool."""

from __future__ import annotations

import concurrent.futures
import importlib
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["progress", "require", "run_concurrently"]

K = TypeVar("K")


def require(module: str, *, user: str, extra: str) -> Any:
    """Import an optional dependency, naming the extra that installs it when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{user} needs {module.split('.')[0]}; install the {extra!r} extra: in a "
            f"confcal checkout, `pip install -e '.[{extra}]'` ({exc})") from exc


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress(total: int, desc: str, enabled: bool, *, unit: str, user: str, extra: str) -> Any:
    """A tqdm bar when enabled (tqdm required then), else an object that ignores updates."""
    if not enabled:
        return _NoBar()
    tqdm = require("tqdm", user=user, extra=extra)
    # the command's stderr escapes control characters; the bar's carriage returns are its own
    return tqdm.tqdm(total=total, desc=desc, unit=unit, file=getattr(sys.stderr, "raw", None))


def run_concurrently(work: Callable[[K], Any], keys: Iterable[K], *, concurrency: int, bar: Any,
                     catch: type[BaseException] | tuple[type[BaseException], ...]
                     ) -> dict[K, Any]:
    """``work(key)`` for every key on a pool of ``concurrency`` threads; one bar tick each.

    Returns key -> result, or the exception of type ``catch`` that ``work`` raised for it
    (one failure is one entry; the run goes on). Any other exception, and an interrupt,
    stop handing out work at once and propagate: what ``work`` stored as it went (the
    answer caches) is kept, nothing is asked twice on the next run. The bar is closed
    either way.
    """
    results: dict[K, Any] = {}
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
    try:
        futures = {executor.submit(work, key): key for key in keys}
        for future in concurrent.futures.as_completed(futures):
            try:
                results[futures[future]] = future.result()
            except catch as exc:
                results[futures[future]] = exc
            bar.update(1)
    except BaseException:
        executor.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        bar.close()
    executor.shutdown(wait=True)
    return results
