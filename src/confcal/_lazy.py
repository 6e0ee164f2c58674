"""A package facade that imports its modules on first use (Scientific Python SPEC 1).

``__getattr__, __dir__ = facade(__name__, ("calibrators", "routing"))`` in a package's
``__init__`` makes every name of those modules' ``__all__`` an attribute of the package,
imported from its module when first asked for; ``__all__`` is their union, read on first
use too. A package uses it where importing every module up front would cost (scikit-learn's
fits) or would break ``python -m package.module`` (runpy refuses a module that its package
already imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["facade"]


def facade(package: str, modules: Sequence[str]
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` re-exporting ``modules``' names."""
    namespace = importlib.import_module(package).__dict__

    def public_names() -> list[str]:
        names: list[str] = []
        for module in modules:
            names.extend(importlib.import_module(f"{package}.{module}").__all__)
        return names

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            namespace["__all__"] = public_names()
            return namespace["__all__"]
        if name in modules and not name.startswith("_"):  # a public module, by attribute
            return importlib.import_module(f"{package}.{name}")
        for module in modules:
            loaded = importlib.import_module(f"{package}.{module}")
            if name in loaded.__all__:
                namespace[name] = value = getattr(loaded, name)
                return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*public_names(), *modules})

    return __getattr__, __dir__
