"""The example count of a property under the loaded Hypothesis profile (tests/conftest.py)."""

from __future__ import annotations

import math

from hypothesis import settings

__all__ = ["examples"]

_FULL = 100  # the ci profile's max_examples: a test's named count is its full strength


def examples(full: int) -> int:
    """``full`` under the ci profile, scaled with the loaded profile's strength otherwise.

    Never fewer than 10, so a quick run still reaches Hypothesis's shrinking and a few
    edge cases, and never more than ``full``.

    >>> examples(300) == min(300, max(10, math.ceil(300 * settings.default.max_examples / 100)))
    True
    """
    scaled = math.ceil(full * settings.default.max_examples / _FULL)
    return min(full, max(10, scaled))
