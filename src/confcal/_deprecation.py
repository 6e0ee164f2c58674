"""Renamed keywords and changed calls, kept working for one release.

confcal speaks one vocabulary (``confidence_level``, ``n_resamples``, ``groups=`` for an
array of group labels, ``by=`` for grouping columns; docs/api.md). Where a public keyword
changed name, the old one keeps working for one release: :func:`renamed_keywords` wraps the
function, maps the old keyword to the new one and emits one :class:`DeprecationWarning`
naming both. Every such warning is worded by :func:`warn_deprecated`, so one
``filterwarnings`` entry (pyproject.toml) turns a use of an old name inside the project
into an error:

    ``<call> is deprecated; <what to do instead> (the old form goes in the next release)``

Examples
--------
>>> import warnings
>>> @renamed_keywords(level="confidence_level")
... def interval(*, confidence_level=0.95):
...     return confidence_level
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     interval(level=0.9)
0.9
>>> print(caught[0].message)
interval(level=...) is deprecated; use interval(confidence_level=...) instead (the old form goes in
the next release)
>>> interval.__renamed_keywords__
{'level': 'confidence_level'}
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["renamed_keywords", "warn_deprecated"]

_F = TypeVar("_F", bound=Callable[..., Any])


def warn_deprecated(call: str, instead: str, *, stacklevel: int = 2) -> None:
    """One :class:`DeprecationWarning` in confcal's wording.

    ``call`` is the old form (``"compare_runs(bootstrap=...)"``), ``instead`` what to
    write now (``"use compare_runs(n_resamples=...) instead"``). ``stacklevel`` counts
    from the caller of this function, as :func:`warnings.warn` does.
    """
    warnings.warn(f"{call} is deprecated; {instead} (the old form goes in the next release)",
                  DeprecationWarning, stacklevel=stacklevel + 1)


def renamed_keywords(**renames: str) -> Callable[[_F], _F]:
    """Decorator: ``old="new"`` keyword renames that keep the old keyword for one release.

    The wrapped function has the signature of the new names only (``inspect.signature``
    follows ``__wrapped__``); a call with an old keyword warns once per call and passes the
    value on under the new name. Passing both the old and the new keyword is a
    :class:`TypeError`, as passing one keyword twice is. The renames are recorded in the
    wrapper's ``__renamed_keywords__`` (tests/test_api.py reads it).
    """

    def decorate(func: _F) -> _F:
        name = func.__qualname__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old}= (its deprecated name) and "
                                        f"{new}=; pass {new}= only")
                    warn_deprecated(f"{name}({old}=...)", f"use {name}({new}=...) instead",
                                    stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed_keywords__ = dict(renames)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
