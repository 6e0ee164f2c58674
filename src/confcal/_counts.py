"""The one rule that turns a share of a total into a whole count.

Review budgets (``k`` of ``n`` reviewed), error allowances (``target_error·n`` errors left)
and quantile bins (the bin of a prediction with weight ``W_before`` ranked before it is
``M·W_before/W``) all turn a real number into a whole one. They use one rule:

    a value within a relative 1e-9 of a whole number counts as that number;
    otherwise it is rounded down.

Why a tolerance and not the plain floor: the inputs are floats, so a share "on paper" a
whole number arrives a few ulps off — ``0.29 * 100 == 28.999999999999996``, the float 1/3
times 300 is 99.99999999999999, and 1.4 + 1.4 + 1.4 is 4.199999999999999, so 3 of 5 equal
weights fall short of 3/5 of the total — and the plain floor would drop one unit depending
on how the float happened to round.

Why it is scale-invariant: the rule reads ``before/total`` exactly, so an exact scaling
(a power of two) changes nothing at all. Scaling by any other s rounds each weight and each
prefix sum, moving the ratio by a relative ρ ≤ (2n + 2)·2^-53 (~2e-14 for n = 100). The
result can then change only if the exact ratio lies within ρ of where the rule switches,
a relative 1e-9 below a whole number; ratios that are whole on paper (equal weights,
integer weights, thirds) sit 1e-9 away from it, 10^4 times farther than ρ. No rule that is
a step function of floats can do better for every input (a ratio sitting exactly on the
switch moves either way under rounding); this one puts the switch where data does not sit.
1e-9 is ~10^7 times the rounding of one float operation and far below any share a person
would mean (0.2899 of 100 is still 28).

The rule is evaluated in exact rational arithmetic on the float values it is given, so it is
a function of the ratio alone: scaling both ``before`` and ``total`` by any factor leaves it
unchanged, and for integer inputs (unit weights, row counts) it is an integer comparison.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = ["RELATIVE_TOLERANCE", "bin_index", "share_count", "whole_floor",
           "whole_floor_array"]

RELATIVE_TOLERANCE = Fraction(1, 10**9)


def whole_floor(x: Fraction | float) -> int:
    """floor(x), except that x within a relative 1e-9 of a whole number counts as it.

    ``x`` is taken exactly (a float is the dyadic rational it stores).

    Examples
    --------
    >>> whole_floor(28.999999999999996), whole_floor(28.9), whole_floor(Fraction(-1, 10**12))
    (29, 28, 0)
    """
    q = Fraction(x)
    nearest = round(q)
    if abs(q - nearest) <= RELATIVE_TOLERANCE * max(Fraction(1), abs(q)):
        return int(nearest)
    return math.floor(q)


def share_count(share: float, total: float | Fraction) -> int:
    """The whole count a share of a total stands for: ``whole_floor(share·total)``.

    The product is exact (no float rounding before the rule is applied).

    Examples
    --------
    >>> share_count(0.29, 100), share_count(1 / 3, 300), share_count(0.2899, 100)
    (29, 100, 28)
    """
    return whole_floor(Fraction(share) * Fraction(total))


def bin_index(before: float, total: float, n_bins: int) -> int:
    """The quantile bin of a prediction: ``whole_floor(n_bins·before/total)``.

    ``before`` is the weight (or number of rows) ranked strictly before the prediction and
    ``total`` the total weight, > 0. A function of ``before/total`` only, evaluated exactly,
    so it is unchanged when every weight is scaled by the same factor; with unit weights it
    is the row-count rule.

    Examples
    --------
    >>> # five weights of 1.4: 5 * (1.4 + 1.4 + 1.4) / 7.0 = 2.9999999999999995... is bin 3,
    >>> # as 5 * 3 / 5 is; 5 * 2.99 / 5 = 2.99 is bin 2
    >>> bin_index(1.4 + 1.4 + 1.4, 7.0, 5), bin_index(3, 5, 5), bin_index(2.99, 5, 5)
    (3, 3, 2)
    """
    # Fast path: x in floats is within ~3 ulps (7e-16 relative) of the exact ratio, so when
    # it is clearly inside or clearly outside the 1e-9 band (a margin of 1e-3 of the band,
    # 10^6 ulps) the float answer is the exact one; only the rest is decided in Fractions.
    x = before * n_bins / total
    if math.isfinite(x):
        nearest = round(x)
        distance, band = abs(x - nearest), 1e-9 * max(1.0, abs(x))
        if distance > band * 1.001:
            return math.floor(x)
        if distance < band * 0.999:
            return int(nearest)
    return whole_floor(Fraction(before) * n_bins / Fraction(total))


def whole_floor_array(x: np.ndarray) -> np.ndarray:
    """:func:`whole_floor` elementwise, evaluated in float64 (for O(n) callers).

    Agrees with the exact rule except for values within a few ulps of the tolerance band's
    edge, 1e-9 (relative) away from a whole number.
    """
    nearest = np.rint(x)
    snap = np.abs(x - nearest) <= 1e-9 * np.maximum(1.0, np.abs(x))
    return np.where(snap, nearest, np.floor(x)).astype(np.int64)
