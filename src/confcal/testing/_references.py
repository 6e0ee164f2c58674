"""Slow, obviously-correct references of the calibration metrics (exact arithmetic).

Re-exported by :mod:`confcal.testing`, whose docstring describes them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = [
    "check_option",
    "reference_aurc",
    "reference_auroc",
    "reference_bins",
    "reference_brier",
    "reference_delong",
    "reference_ecarb",
    "reference_ecarb_ceiling",
    "reference_ece",
    "reference_log_loss",
    "reference_mce",
    "reference_review_count",
]

# ``reference_ecarb(ties="expected")`` enumerates every order of the tied rows: n! at worst.
_MAX_EXPECTED_TIES_N = 8

_BINNINGS = ("quantile", "uniform")
_TIES = ("expected", "stable", "pessimistic", "optimistic")

# ---------------------------------------------------------------------------------------
# Input handling. Deliberately separate from confcal._validation: the references must not
# share code with the implementation they check. The checks are plain and strict, and every
# invalid input is a ValueError, wrong type included, as docs/scoring.md "Errors" asks of
# confcal.
# ---------------------------------------------------------------------------------------


def _labels(correct: Any) -> list[bool]:
    arr = np.asarray(correct)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"correct must be a non-empty 1-D array-like; found shape {arr.shape}")
    out = []
    for i, v in enumerate(arr.tolist()):
        if isinstance(v, str) or v not in (0, 1):  # True == 1 and False == 0
            raise ValueError(f"correct must be bool or 0/1; found {v!r} at index {i}")
        out.append(bool(v))
    return out


def _confidences(confidence: Any, n: int) -> list[float]:
    arr = np.asarray(confidence)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"confidence must be a non-empty 1-D array-like; found shape {arr.shape}"
        )
    if arr.size != n:
        raise ValueError(
            f"correct and confidence must have the same length; found {n} and {arr.size}"
        )
    out = []
    for i, v in enumerate(arr.tolist()):
        if isinstance(v, (bool, str)) or not isinstance(v, (int, float)):
            raise ValueError(  # noqa: TRY004
                f"confidence must be numbers; found {v!r} at index {i}"
            )
        v = float(v)
        if not 0.0 <= v <= 1.0:  # False for NaN too
            raise ValueError(
                f"confidence must be finite and within [0, 1]; found {v!r} at index {i}"
            )
        out.append(v + 0.0)  # -0.0 -> 0.0
    return out


def _weights(sample_weight: Any, n: int) -> list[Fraction]:
    """Exact weights; unit weights when None."""
    if sample_weight is None:
        return [Fraction(1)] * n
    arr = np.asarray(sample_weight)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"sample_weight must be 1-D with {n} values; found shape {arr.shape}")
    out = []
    for i, v in enumerate(arr.tolist()):
        if isinstance(v, (bool, str)) or not isinstance(v, (int, float)):
            raise ValueError(  # noqa: TRY004
                f"sample_weight must be numbers; found {v!r} at index {i}"
            )
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"sample_weight must be finite and >= 0; found {v!r} at index {i}")
        out.append(Fraction(v))  # exact: every finite float is a dyadic rational
    if sum(out) == 0:
        raise ValueError("sample_weight must have a positive total; found all weights zero")
    return out


def _data(
    correct: Any, confidence: Any, sample_weight: Any = None
) -> tuple[list[bool], list[float], list[Fraction]]:
    y = _labels(correct)
    c = _confidences(confidence, len(y))
    w = _weights(sample_weight, len(y))
    return y, c, w


def _check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; found {n_bins!r}")
    return int(n_bins)


def check_option(value: Any, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; found {value!r}")
    return str(value)


def _exact_budget(budget: Any) -> Fraction:
    """The budget as the exact value of its shortest decimal repr.

    b·n must be computed from the decimal the user wrote: float(0.29) is 0.28999999999999998,
    and floor(0.28999999999999998 * 100) = 28, but a budget of 0.29 must review 29 of 100.
    ``repr`` of a float is the shortest decimal that round-trips, i.e. "what was written".
    """
    real = (int, float, np.integer, np.floating)
    if isinstance(budget, (bool, np.bool_)) or not isinstance(budget, real):
        raise ValueError(f"budget must be a number in (0, 1]; found {budget!r}")  # noqa: TRY004
    b = float(budget)  # repr(np.float64(0.29)) is 'np.float64(0.29)' under numpy 2
    if not (math.isfinite(b) and 0.0 < b <= 1.0):
        raise ValueError(f"budget must be a number in (0, 1]; found {budget!r}")
    return Fraction(repr(b))


def _float(x: Fraction) -> float:
    return float(x)  # Fraction -> float is correctly rounded


def _whole_floor(x: Fraction) -> int:
    """floor(x), but x within a relative 1e-9 of a whole number counts as that number.

    confcal's one rule for a share of a total as a whole count (review budgets, error
    allowances, quantile bins), written out again here from its definition.
    """
    nearest = round(x)
    if abs(x - nearest) <= Fraction(1, 10**9) * max(Fraction(1), abs(x)):
        return int(nearest)
    return math.floor(x)


# ---------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------


def reference_auroc(correct: Any, confidence: Any, sample_weight: Any = None) -> float:
    """Pairwise AUROC: P(a random correct row is more confident than a random wrong one).

    Every (correct, wrong) pair is compared: a pair counts 1 when the correct row has the
    higher confidence, 1/2 when the confidences are equal, 0 otherwise; with
    ``sample_weight`` a pair counts ``w_i * w_j``. O(n^2), exact rational arithmetic.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
        1 where the extraction is right (the positive class).
    confidence : array-like of float in [0, 1], shape (n,)
    sample_weight : array-like of float >= 0, shape (n,), optional

    Returns
    -------
    float
        In [0, 1]; ``nan`` when one class is missing (or has zero total weight).

    Notes
    -----
    Equals ``sklearn.metrics.roc_auc_score(correct, confidence, sample_weight=...)``.

    Examples
    --------
    Pairs (correct, wrong): (0.9, 0.1) 1, (0.9, 0.4) 1, (0.4, 0.1) 1, (0.4, 0.4) 1/2,
    so 3.5 / 4:

    >>> reference_auroc([1, 0, 1, 0], [0.9, 0.1, 0.4, 0.4])
    0.875
    >>> reference_auroc([1, 1], [0.2, 0.7])
    nan
    """
    y, c, w = _data(correct, confidence, sample_weight)
    twice_won = Fraction(0)  # 2 x (sum of pair weights won), so ties add exactly 1 x
    for i in range(len(y)):
        if not y[i]:
            continue
        for j in range(len(y)):
            if y[j]:
                continue
            if c[i] > c[j]:
                twice_won += 2 * w[i] * w[j]
            elif c[i] == c[j]:
                twice_won += w[i] * w[j]
    w_pos = sum((w[i] for i in range(len(y)) if y[i]), Fraction(0))
    w_neg = sum((w[i] for i in range(len(y)) if not y[i]), Fraction(0))
    if w_pos == 0 or w_neg == 0:
        return math.nan
    return _float(twice_won / (2 * w_pos * w_neg))


def _uniform_bin(c: float, n_bins: int) -> int:
    """Bin i holds [i/M, (i+1)/M), edges computed as ``i / M`` in float; the last is closed."""
    for i in range(n_bins):
        lower = i / n_bins
        upper = (i + 1) / n_bins
        if lower <= c < upper:
            return i
    assert c == 1.0, c  # only 1.0 escapes the half-open bins: it goes to the last one
    return n_bins - 1


def _bin_members(
    c: list[float], w: list[Fraction], n_bins: int, binning: str
) -> dict[int, list[int]]:
    """Bin index -> row indices, for the bins that received at least one row."""
    members: dict[int, list[int]] = {}
    if binning == "uniform":
        for i in range(len(c)):
            members.setdefault(_uniform_bin(c[i], n_bins), []).append(i)
        return members
    # Quantile: walk the rows in increasing confidence. The element of rank r (of n) nominally
    # belongs to bin floor(r*M/n); with weights, r generalizes to the total weight strictly
    # before the element, floor(W_before*M/W_total). The floor is _whole_floor: a value
    # within a relative 1e-9 of a whole number counts as it, so the bin depends on the
    # ratio W_before/W_total only and scaling every weight moves no row (the plain floor of
    # the float-scaled weights did). A run of equal confidences is never split:
    # it goes wholly to the bin of its first (lowest-rank) element, whose W_before is the weight
    # of all strictly smaller confidences, so the order inside a run cannot matter.
    order = sorted(range(len(c)), key=lambda i: c[i])
    total = sum(w, Fraction(0))
    before = Fraction(0)
    run_bin = -1
    for position, i in enumerate(order):
        if position == 0 or c[i] != c[order[position - 1]]:
            # W_before within 1e-9 of W_total (a last run of tiny weight, or zero-weight
            # rows after all of the weight) gives bin M, which does not exist: the last bin.
            run_bin = min(_whole_floor(before * n_bins / total), n_bins - 1)
        members.setdefault(run_bin, []).append(i)
        before += w[i]
    return members


def _exact_bins(
    y: list[bool], c: list[float], w: list[Fraction], n_bins: int, binning: str
) -> list[tuple[int, int, Fraction, Fraction, Fraction]]:
    """(bin, rows of positive weight, weight, accuracy, mean confidence) per bin with
    positive weight, exact."""
    out = []
    for b, rows in sorted(_bin_members(c, w, n_bins, binning).items()):
        rows = [i for i in rows if w[i] > 0]  # a row of weight 0 is in no bin
        if not rows:  # only zero-weight rows: accuracy is undefined, the bin is empty
            continue
        weight = sum((w[i] for i in rows), Fraction(0))
        accuracy = sum((w[i] for i in rows if y[i]), Fraction(0)) / weight
        mean_confidence = sum((w[i] * Fraction(c[i]) for i in rows), Fraction(0)) / weight
        out.append((b, len(rows), weight, accuracy, mean_confidence))
    return out


def _bin_bounds(c: list[float], w: list[Fraction], n_bins: int, binning: str
                ) -> dict[int, tuple[float, float]]:
    """Bin index -> (lower, upper): the edges (uniform), or the smallest and largest
    confidence of the bin's rows of positive weight (quantile)."""
    out = {}
    for b, rows in _bin_members(c, w, n_bins, binning).items():
        live = [c[i] for i in rows if w[i] > 0]
        if binning == "uniform":
            out[b] = (b / n_bins, (b + 1) / n_bins)
        elif live:
            out[b] = (min(live), max(live))
    return out


def reference_bins(
    correct: Any,
    confidence: Any,
    *,
    n_bins: int = 5,
    binning: str = "quantile",
    sample_weight: Any = None,
) -> list[dict[str, Any]]:
    """The non-empty bins used by :func:`reference_ece` and :func:`reference_mce`.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    n_bins : int >= 1
        M, the nominal number of bins.
    binning : {"quantile", "uniform"}
        "quantile": equal-mass bins on the sorted confidences; the element of rank r (0-based,
        of n) nominally goes to bin floor(r·M/n), and a run of equal confidences goes wholly
        to the bin of its first (lowest-rank) element. With weights the rank is the total
        weight strictly before the element, floor(W_before·M/W_total), computed exactly;
        a nominal bin M (W_before within the tolerance below of W_total) is the last bin.
        Rows of zero weight are in no bin. Each floor counts a value within a relative
        1e-9 of a whole number as that number (as :func:`reference_review_count` does), so
        scaling every weight changes no bin.
        "uniform": bins [i/M, (i+1)/M) with edges ``i / M`` computed in float, the last bin
        closed at 1.0.
    sample_weight : array-like, optional

    Returns
    -------
    list of dict
        One dict per bin holding rows of positive total weight (a bin of zero-weight rows only
        has no accuracy and is dropped like an empty one), in increasing bin order, with
        keys ``bin`` (the nominal index i in 0..M-1), ``lower`` and ``upper`` (uniform: the
        edges i/M and (i+1)/M; quantile: the smallest and largest confidence of its rows of
        positive weight), ``count`` (number of rows of positive weight), ``weight`` (their
        total weight), ``mean_confidence`` and ``accuracy`` (weighted means) and ``gap`` =
        mean_confidence − accuracy (positive: overconfident). Empty bins are dropped.

    Examples
    --------
    Three rows tie at 0.25: their run starts at rank 0, so all three go to bin 0, and bin 1
    (nominally ranks 2 and 3) keeps only 0.75:

    >>> for b in reference_bins([1, 0, 1, 1], [0.25, 0.25, 0.25, 0.75], n_bins=2):
    ...     print(b["bin"], b["count"], b["mean_confidence"], round(b["accuracy"], 4))
    0 3 0.25 0.6667
    1 1 0.75 1.0
    """
    y, c, w = _data(correct, confidence, sample_weight)
    n_bins = _check_n_bins(n_bins)
    binning = check_option(binning, "binning", _BINNINGS)
    bounds = _bin_bounds(c, w, n_bins, binning)
    return [
        {
            "bin": b,
            "lower": bounds[b][0],
            "upper": bounds[b][1],
            "count": count,
            "weight": _float(weight),
            "mean_confidence": _float(conf),
            "accuracy": _float(acc),
            "gap": _float(conf - acc),
        }
        for b, count, weight, acc, conf in _exact_bins(y, c, w, n_bins, binning)
    ]


def reference_ece(
    correct: Any,
    confidence: Any,
    *,
    n_bins: int = 5,
    binning: str = "quantile",
    sample_weight: Any = None,
) -> float:
    """Expected calibration error by explicit loops: Σ_B |B|/N · |acc(B) − conf(B)|.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    n_bins : int >= 1
    binning : {"quantile", "uniform"}
        See :func:`reference_bins` for the exact bin rules (ties never split; empty bins
        dropped).
    sample_weight : array-like, optional
        |B| and N become total weights; acc and conf weighted means.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    Quantile, M=2 on [0.25, 0.25, 0.5, 0.75]: bin 0 = ranks 0-1 (acc 1/2, conf 0.25),
    bin 1 = ranks 2-3 (acc 1, conf 0.625): 2/4·0.25 + 2/4·0.375 = 0.3125.

    >>> reference_ece([1, 0, 1, 1], [0.25, 0.25, 0.5, 0.75], n_bins=2)
    0.3125

    Uniform, M=2: 0.5 opens bin 1 = [0.5, 1.0], the same bins here.

    >>> reference_ece([1, 0, 1, 1], [0.25, 0.25, 0.5, 0.75], n_bins=2, binning="uniform")
    0.3125
    """
    y, c, w = _data(correct, confidence, sample_weight)
    n_bins = _check_n_bins(n_bins)
    binning = check_option(binning, "binning", _BINNINGS)
    total = sum(w, Fraction(0))
    ece = Fraction(0)
    for _, _, weight, acc, conf in _exact_bins(y, c, w, n_bins, binning):
        ece += weight / total * abs(acc - conf)
    return _float(ece)


def reference_mce(
    correct: Any,
    confidence: Any,
    *,
    n_bins: int = 5,
    binning: str = "quantile",
    sample_weight: Any = None,
) -> float:
    """Maximum calibration error: the largest |acc(B) − conf(B)| over the non-empty bins.

    Same bins and parameters as :func:`reference_ece` (see :func:`reference_bins`).

    Examples
    --------
    Bins as in :func:`reference_ece`: gaps 0.25 and 0.375.

    >>> reference_mce([1, 0, 1, 1], [0.25, 0.25, 0.5, 0.75], n_bins=2)
    0.375
    """
    y, c, w = _data(correct, confidence, sample_weight)
    n_bins = _check_n_bins(n_bins)
    binning = check_option(binning, "binning", _BINNINGS)
    bins = _exact_bins(y, c, w, n_bins, binning)
    return _float(max(abs(acc - conf) for _, _, _, acc, conf in bins))


def reference_brier(correct: Any, confidence: Any, sample_weight: Any = None) -> float:
    """Brier score: the (weighted) mean of (confidence − correct)².

    Examples
    --------
    (0.75 − 1)² = 1/16 and (0.5 − 0)² = 1/4, mean 5/32:

    >>> reference_brier([1, 0], [0.75, 0.5])
    0.15625
    """
    y, c, w = _data(correct, confidence, sample_weight)
    total = sum(w, Fraction(0))
    loss = sum((w[i] * (Fraction(c[i]) - int(y[i])) ** 2 for i in range(len(y))), Fraction(0))
    return _float(loss / total)


def reference_review_count(budget: float, n: int) -> int:
    """k, the number of rows reviewed at a budget: min(n, max(1, floor(b·n))).

    b·n is evaluated exactly (``Fraction(b) * n``, the float's true binary value), and a
    product within a relative 1e-9 of a whole number counts as that number: the float
    0.29 is 0.28999999999999998..., but 0.29 of 100 reviews 29, and a budget computed as
    2/6 reviews 2 of 6. Only a budget that is deliberately a hair below a whole count
    (0.2899 of 100) is floored.

    Parameters
    ----------
    budget : float in (0, 1]
    n : int >= 1
        The number of rows.

    Returns
    -------
    int in [1, n]

    Examples
    --------
    >>> reference_review_count(0.29, 100)  # float 0.29 * 100 = 28.999999999999996
    29
    >>> reference_review_count(2 / 6, 6)  # the float 1/3 times 6 is 1.9999999999999998...
    2
    >>> reference_review_count(0.1, 3)  # at least one row is reviewed
    1
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1; found {n!r}")
    exact = Fraction(float(_exact_budget(budget))) * int(n)
    return min(int(n), max(1, _whole_floor(exact)))


def _review_weight(budget: Any, total: Fraction) -> Fraction:
    """K = min(W, max(1, floor(b·W))) with the floor of :func:`reference_review_count`."""
    exact = Fraction(float(_exact_budget(budget))) * total
    return min(total, Fraction(max(1, _whole_floor(exact))))


def _reference_weighted_ecarb(
    y: list[bool], c: list[float], w: list[Fraction], budget: Any, ties: str
) -> float:
    """ECARB with frequency weights: a row of weight w is w predictions (see the caller)."""
    total = sum(w, Fraction(0))
    n_errors = sum((w[i] for i in range(len(y)) if not y[i]), Fraction(0))
    if n_errors == 0:
        return math.nan
    k = _review_weight(budget, total)
    caught = Fraction(0)
    left = k
    if ties == "expected":
        # Runs of equal confidence, lowest first. A run reviewed for a share s of its weight
        # catches s of its error weight: every unit of weight in the run is equally likely
        # to come first (the rows' copies, shuffled).
        values = sorted(set(c))
        for value in values:
            if left <= 0:
                break
            rows = [i for i in range(len(c)) if c[i] == value]
            run = sum((w[i] for i in rows), Fraction(0))
            errors = sum((w[i] for i in rows if not y[i]), Fraction(0))
            if run == 0:
                continue
            take = min(left, run)
            caught += errors * take / run
            left -= take
    else:
        def key(i: int) -> tuple[float, bool]:
            if ties == "pessimistic":
                return (c[i], not y[i])  # errors last within a run
            if ties == "optimistic":
                return (c[i], bool(y[i]))  # errors first
            return (c[i], False)  # "stable": Python's sort is stable

        for i in sorted(range(len(c)), key=key):  # review rows in turn, the last in part
            take = min(left, w[i])
            if not y[i]:
                caught += take
            left -= take
            if left <= 0:
                break
    return _float(caught * total / (k * n_errors))


def reference_ecarb(
    correct: Any, confidence: Any, *, budget: float = 0.3, ties: str = "expected",
    sample_weight: Any = None,
) -> float:
    """ECARB by brute force: errors caught in the k least confident / ((k/n)·E).

    Rows are sorted by increasing confidence and the k = min(n, max(1, floor(b·n))) lowest
    are reviewed (b·n exact, see :func:`reference_review_count`). E is the number of errors.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    budget : float in (0, 1]
    ties : {"expected", "stable", "pessimistic", "optimistic"}
        How rows with equal confidence are ordered. "expected": the average, over **every**
        distinct ordering of the labels inside each run of equal confidences (enumerated with
        :func:`itertools.permutations`), of the errors caught; every distinct ordering is
        equally likely under a uniformly random order of the rows, so this is the exact
        expectation. Only for n <= 8. "stable": ties keep their row order. "pessimistic":
        errors last within ties. "optimistic": errors first.
    sample_weight : array-like of float >= 0, shape (n,), optional
        Frequency weights: a row of weight w is w predictions. n and E become the total
        weight W and the errors' weight, k = min(W, max(1, floor(b·W))) units of weight are
        reviewed, walking the rows in the order above and taking the last one in part.
        With "expected", a run of equal confidences of which a share s is reviewed
        contributes s of its error weight (the expectation when the units of weight, the
        rows' copies, are shuffled; no enumeration, so any n). Integer weights give the
        ECARB of the repeated rows.

    Returns
    -------
    float
        ``nan`` when there are no errors (E = 0).

    Raises
    ------
    ValueError
        ``ties="expected"`` with n > 8 and no ``sample_weight`` (the enumeration is
        factorial).

    Examples
    --------
    The paper's example: n=100, E=20, b=0.3, 15 errors among the 30 least confident:
    15 / (30/100 · 20) = 2.5.

    >>> import numpy as np
    >>> correct = np.ones(100, dtype=bool)
    >>> correct[:30:2] = False  # 15 errors among the 30 lowest
    >>> correct[95:] = False  # 5 more, among the most confident
    >>> reference_ecarb(correct, np.arange(100) / 100, budget=0.3, ties="stable")
    2.5

    Ties: three rows tie at 0.5 with one error, b=0.5 reviews k=2 of n=4, E=1. Expected
    errors among the first two of the run: 2/3, so (2/3) / (2/4 · 1) = 4/3.

    >>> correct, confidence = [0, 1, 1, 1], [0.5, 0.5, 0.5, 0.9]
    >>> round(reference_ecarb(correct, confidence, budget=0.5), 6)
    1.333333
    >>> [reference_ecarb(correct, confidence, budget=0.5, ties=t)
    ...  for t in ("stable", "pessimistic", "optimistic")]
    [2.0, 0.0, 2.0]

    Weights 2, 1, 1 on the same run, 1 for 0.9: W = 5, E = 2, b = 0.5 reviews K = 2 of
    the run's 4 units, half its error weight: 1 / (2/5 · 2) = 1.25.

    >>> reference_ecarb(correct, confidence, budget=0.5, sample_weight=[2, 1, 1, 1])
    1.25
    """
    y, c, w = _data(correct, confidence, sample_weight)
    ties = check_option(ties, "ties", _TIES)
    if sample_weight is not None:
        return _reference_weighted_ecarb(y, c, w, budget, ties)
    n = len(y)
    k = reference_review_count(budget, n)
    errors = [not v for v in y]
    n_errors = sum(errors)
    if n_errors == 0:
        return math.nan

    if ties == "expected":
        if n > _MAX_EXPECTED_TIES_N:
            raise ValueError(
                f"reference_ecarb with ties='expected' enumerates every order of tied rows; "
                f"n must be <= {_MAX_EXPECTED_TIES_N}; found n={n}"
            )
        order = sorted(range(n), key=lambda i: c[i])
        runs: list[list[bool]] = []  # error flags of each run of equal confidences, in order
        for position, i in enumerate(order):
            if position == 0 or c[i] != c[order[position - 1]]:
                runs.append([])
            runs[-1].append(errors[i])
        orderings = [sorted(set(itertools.permutations(run))) for run in runs]
        caught_total = 0
        n_orderings = 0
        for combination in itertools.product(*orderings):
            sequence = [e for run in combination for e in run]
            caught_total += sum(sequence[:k])
            n_orderings += 1
        caught = Fraction(caught_total, n_orderings)
    else:
        def key(i: int) -> tuple[float, bool]:
            if ties == "pessimistic":
                return (c[i], errors[i])  # False < True: errors last within a run
            if ties == "optimistic":
                return (c[i], not errors[i])  # errors first
            return (c[i], False)  # "stable": Python's sort is stable, row order stays

        order = sorted(range(n), key=key)
        caught = Fraction(sum(errors[i] for i in order[:k]))
    return _float(caught / (Fraction(k, n) * n_errors))


def reference_ecarb_ceiling(correct: Any, *, budget: float = 0.3,
                            sample_weight: Any = None) -> float:
    """The best ECARB achievable at budget b: min(k, E)·n / (k·E).

    With ``sample_weight``, n, E and k are weights as in :func:`reference_ecarb`.

    Examples
    --------
    n=100, E=20, b=0.3: k=30, min(30, 20)·100 / (30·20) = 10/3.

    >>> round(reference_ecarb_ceiling([0] * 20 + [1] * 80, budget=0.3), 4)
    3.3333
    """
    y = _labels(correct)
    if sample_weight is not None:
        w = _weights(sample_weight, len(y))
        total = sum(w, Fraction(0))
        errors = sum((w[i] for i in range(len(y)) if not y[i]), Fraction(0))
        if errors == 0:
            return math.nan
        reviewed = _review_weight(budget, total)
        return _float(min(reviewed, errors) * total / (reviewed * errors))
    n = len(y)
    k = reference_review_count(budget, n)
    n_errors = sum(not v for v in y)
    if n_errors == 0:
        return math.nan
    return _float(Fraction(min(k, n_errors) * n, k * n_errors))


def reference_delong(correct: Any, confidence_a: Any, confidence_b: Any,
                     sample_weight: Any = None) -> tuple[float, float, float, float]:
    """DeLong's variance of a difference of two AUROCs, from the structural components.

    The placement values are computed by explicit double loops, in exact rational
    arithmetic: for a correct row i and score k, V10_i = Σ_j w_j ψ(x_i, y_j) / n over the
    wrong rows j, and for a wrong row j, V01_j = Σ_i w_i ψ(x_i, y_j) / m, with ψ = 1 if the
    correct row scores higher, 1/2 if equal, 0 if lower, and m, n the total weights of the
    correct and the wrong rows. With d = placement under a minus under b, the variance is
    Σ w (d10 - mean)^2 / (m - 1) / m + Σ w (d01 - mean)^2 / (n - 1) / n (frequency weights).
    O(n^2).

    Returns
    -------
    (auroc_a, auroc_b, difference, standard_error) : tuple of float
        ``nan`` where undefined (one class; the standard error when m <= 1 or n <= 1).

    Examples
    --------
    Correct rows score (0.9, 0.8) under a and (0.9, 0.4) under b; wrong ones (0.3, 0.5)
    and (0.7, 0.2). V10: a (1, 1), b (1, 1/2); V01: a (1, 1), b (1/2, 1). Differences
    (0, 1/2) and (1/2, 0) have variance 1/8 each: 1/8 / 2 + 1/8 / 2 = 1/8.

    >>> a, b, d, se = reference_delong([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.5], [0.9, 0.4, 0.7, 0.2])
    >>> a, b, d, round(se ** 2, 12)
    (1.0, 0.75, 0.25, 0.125)
    """
    y, ca, w = _data(correct, confidence_a, sample_weight)
    cb = _confidences(confidence_b, len(y))
    pos = [i for i in range(len(y)) if y[i] and w[i] > 0]
    neg = [j for j in range(len(y)) if not y[j] and w[j] > 0]
    m = sum((w[i] for i in pos), Fraction(0))
    n = sum((w[j] for j in neg), Fraction(0))
    nan = math.nan
    if m == 0 or n == 0:
        return nan, nan, nan, nan
    v10a, v01a = _placements(ca, w, pos, neg)
    v10b, v01b = _placements(cb, w, pos, neg)
    auc_a = sum((w[i] * v for i, v in zip(pos, v10a, strict=True)), Fraction(0)) / m
    auc_b = sum((w[i] * v for i, v in zip(pos, v10b, strict=True)), Fraction(0)) / m
    if m <= 1 or n <= 1:
        return _float(auc_a), _float(auc_b), _float(auc_a - auc_b), nan
    var = (_weighted_variance(pos, w, v10a, v10b) / m
           + _weighted_variance(neg, w, v01a, v01b) / n)
    return _float(auc_a), _float(auc_b), _float(auc_a - auc_b), math.sqrt(_float(var))


def _psi(x: float, z: float) -> Fraction:
    """1 if the correct row scores higher, 1/2 if equal, 0 if lower."""
    return Fraction(1) if x > z else Fraction(1, 2) if x == z else Fraction(0)


def _placements(c: Any, w: Any, pos: list[int], neg: list[int]
                ) -> tuple[list[Fraction], list[Fraction]]:
    """DeLong's placement values of one score: V10 per correct row, V01 per wrong row."""
    m = sum((w[i] for i in pos), Fraction(0))
    n = sum((w[j] for j in neg), Fraction(0))
    v10 = [sum((w[j] * _psi(c[i], c[j]) for j in neg), Fraction(0)) / n for i in pos]
    v01 = [sum((w[i] * _psi(c[i], c[j]) for i in pos), Fraction(0)) / m for j in neg]
    return v10, v01


def _weighted_variance(rows: list[int], w: Any, values_a: list[Fraction],
                       values_b: list[Fraction]) -> Fraction:
    """The frequency-weighted sample variance of the placement differences a - b."""
    total = sum((w[r] for r in rows), Fraction(0))
    d = [va - vb for va, vb in zip(values_a, values_b, strict=True)]
    mean = sum((w[r] * x for r, x in zip(rows, d, strict=True)), Fraction(0)) / total
    return sum((w[r] * (x - mean) ** 2 for r, x in zip(rows, d, strict=True)),
               Fraction(0)) / (total - 1)


def reference_aurc(correct: Any, confidence: Any, *, excess: bool = False,
                   sample_weight: Any = None) -> float:
    """Area under the risk–coverage curve by explicit loops: (1/n) Σ_{k=1..n} E_k / k.

    E_k is the expected number of errors among the k most confident predictions, the
    expectation taken over every order of tied confidences: inside a run of equal
    confidence holding weight m and error weight e, every unit of weight covered brings
    e/m errors. With weights, a row of weight w is w units: k runs over 1..⌊W⌋ (a value
    within a relative 1e-9 of a whole number counts as it), with a last term
    (W − ⌊W⌋)·E_W/W when W is not whole, and the sum is divided by W. ``excess=True``
    subtracts the same sum for the best order (every correct prediction first).

    Examples
    --------
    Right, wrong, right, wrong from the most confident: (0 + 1/2 + 1/3 + 2/4)/4 = 1/3.

    >>> round(reference_aurc([1, 0, 1, 0], [0.9, 0.7, 0.6, 0.2]), 12)
    0.333333333333
    """
    y, c, w = _data(correct, confidence, sample_weight)
    runs: list[tuple[Fraction, Fraction]] = []  # (weight, error weight), most confident first
    for level in sorted(set(c), reverse=True):
        rows = [i for i in range(len(y)) if c[i] == level]
        weight = sum((w[i] for i in rows), Fraction(0))
        if weight > 0:
            runs.append((weight, sum((w[i] for i in rows if not y[i]), Fraction(0))))
    total = sum((weight for weight, _ in runs), Fraction(0))

    def area(runs: list[tuple[Fraction, Fraction]]) -> Fraction:
        def errors_at(k: Fraction) -> Fraction:
            covered, errors = Fraction(0), Fraction(0)
            for weight, err in runs:
                if k <= covered + weight:
                    return errors + err * (k - covered) / weight
                covered, errors = covered + weight, errors + err
            return errors

        whole = _whole_floor(total)
        out = sum((errors_at(Fraction(k)) / k for k in range(1, whole + 1)), Fraction(0))
        if total > whole:
            out += (total - whole) * errors_at(total) / total
        return out / total

    value = area(runs)
    if excess:
        n_errors = sum((err for _, err in runs), Fraction(0))
        best = [(total - n_errors, Fraction(0)), (n_errors, n_errors)]
        value -= area([run for run in best if run[0] > 0])
    return _float(value)


def reference_log_loss(correct: Any, confidence: Any, sample_weight: Any = None) -> float:
    """Log loss by an explicit loop: −Σ w_i log(p_i) / Σ w_i, p_i the probability the
    confidence gives to the outcome (c if correct, 1 − c if not); ``inf`` when some p_i = 0
    on a row of positive weight.

    Examples
    --------
    >>> round(reference_log_loss([1, 0], [0.5, 0.5]), 12) == round(math.log(2), 12)
    True
    """
    y, c, w = _data(correct, confidence, sample_weight)
    total = sum(w, Fraction(0))
    terms = []
    for yi, ci, wi in zip(y, c, w, strict=True):
        if wi == 0:
            continue
        p = Fraction(ci) if yi else 1 - Fraction(ci)
        if p == 0:
            return math.inf
        terms.append(float(wi / total) * -math.log(float(p)))
    return math.fsum(terms)
