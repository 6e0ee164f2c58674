"""Old module paths, kept working for one release: ``confcal.comparators`` is
:mod:`confcal.scoring.comparators`, and so on (docs/architecture.md has the table).

``import confcal.comparators`` (or ``from confcal.comparators import Text``) gives the very
module object of the new path, so classes, functions and ``unittest.mock.patch`` targets are
shared, with one :class:`DeprecationWarning` naming the new path. A meta path finder does
it: nothing is imported until an old path is asked for.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

MOVED: dict[str, str] = {
    "confcal.bootstrap": "confcal.metrics.bootstrap",
    "confcal.sketch": "confcal.metrics.sketch",
    "confcal.comparators": "confcal.scoring.comparators",
    "confcal.schema": "confcal.scoring.schema",
    "confcal.schemas": "confcal.scoring.presets",
    "confcal.matching": "confcal.scoring.matching",
    "confcal.predictions": "confcal.scoring.predictions",
    "confcal.io": "confcal.scoring.io",
    "confcal.calibrators": "confcal.calibration.calibrators",
    "confcal.routing": "confcal.calibration.routing",
    "confcal.confidence": "confcal.calibration.confidence",
    "confcal.plots": "confcal.report.plots",
    "confcal.degradation": "confcal.report.degradation",
    "confcal.docqa": "confcal.qa.docqa",
}
"""Old public module path -> the module it now is."""


def warn_moved(old: str, stacklevel: int) -> None:
    warnings.warn(f"{old} has moved to {MOVED[old]}; the old path goes in the next release",
                  DeprecationWarning, stacklevel=stacklevel)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias spec on the shared module; give it back its own
        module.__spec__ = sys.modules[self.target].__spec__ = _SPECS[self.target]


_SPECS: dict[str, Any] = {}


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        warn_moved(fullname, stacklevel=3)
        module = importlib.import_module(new)
        _SPECS[new] = module.__spec__
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
