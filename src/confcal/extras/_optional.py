"""Helpers the extras share: importing an optional dependency, and an optional progress bar."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["progress", "require"]


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
    return tqdm.tqdm(total=total, desc=desc, unit=unit)
