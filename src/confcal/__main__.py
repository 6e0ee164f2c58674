"""``python -m confcal``: the ``confcal`` command (see :mod:`confcal.cli`)."""

from __future__ import annotations

from .cli._main import main

if __name__ == "__main__":
    raise SystemExit(main())
