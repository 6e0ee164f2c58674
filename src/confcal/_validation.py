"""Boundary checks shared by every public function.

Public functions validate once, here; private kernels assume clean 1-D numpy arrays.
Every message follows one template: name the argument, the rule it must satisfy, and what
was found (how many values break it and the first offending index and value).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, overload

import numpy as np

from .exceptions import ValidationError

__all__ = [
    "MAX_WEIGHT",
    "MIN_WEIGHT",
    "MAX_DEPTH_CEILING",
    "InputLimits",
    "check_budget",
    "check_budgets",
    "check_calibration_data",
    "check_confidence",
    "check_consistent_length",
    "check_limits",
    "check_correct",
    "check_groups",
    "check_n_bins",
    "check_option",
    "check_positive_int",
    "check_probability",
    "check_sample_weight",
    "check_seed",
    "check_weights",
    "weight_ok",
    "is_missing",
    "is_real",
    "shown",
]


def is_missing(value: Any, *, blank: bool = True) -> bool:
    """True for the values confcal treats as "nothing extracted".

    None, float NaN (including numpy floats and ``Decimal("NaN")``), ``pandas.NA``/``NaT``
    (and numpy's ``NaT``), the empty string and empty lists/tuples are missing. A string of
    spaces is missing too: after whitespace normalisation it is the empty string; so is one
    of spaces and Unicode format characters (category ``Cf``: the zero-width space U+200B,
    U+FEFF, the soft hyphen U+00AD), which text comparison deletes. Zero and False are
    values, not missing.

    With ``blank=False`` only the "not available" scalars are missing, and blank strings
    and empty lists are values: the rule of ``pandas.isna`` on a scalar, which is what
    ``groupby(dropna=False)`` puts in one group (a run labelled ``""`` is its own group).

    Examples
    --------
    >>> [is_missing(v) for v in (None, "", "  ", float("nan"), [], 0, "0", False)]
    [True, True, True, True, True, False, False, False]
    >>> is_missing(" \u200b "), is_missing("\u200bA")
    (True, False)
    >>> [is_missing(v, blank=False) for v in (None, "", float("nan"), [])]
    [True, False, True, False]
    """
    if value is None:
        return True
    if isinstance(value, str):
        if not blank:
            return False
        text = value.strip()
        # invisible format characters (category Cf, e.g. U+200B) are no text either
        return text == "" or (not text.isascii() and all(
            ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text))
    if isinstance(value, (list, tuple)):
        return blank and len(value) == 0
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (np.floating,)):
        return bool(np.isnan(value))
    if isinstance(value, Decimal):
        return value.is_nan()
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    # pandas.NA and pandas.NaT without importing pandas at call time.
    type_name = type(value).__name__
    if type_name in ("NAType", "NaTType"):
        return True
    return False


SHOWN_CHARS = 60
"""The longest repr an error message quotes whole; a longer one keeps its two ends."""


def shown(value: Any) -> str:
    """``repr(value)`` for an error message, its middle elided past :data:`SHOWN_CHARS`.

    A 400-digit number stays readable and says how long it is; an int beyond Python's
    digit limit for text (4,300 digits by default), which has no repr, is named as such.

    Examples
    --------
    >>> shown(0.5)
    '0.5'
    >>> shown(10**400)
    '1000000000000000000000000...0000000000000000000000000 (401 characters)'
    >>> shown(10**5000)
    'an integer too long to write'
    """
    try:
        text = repr(value)
    except ValueError:  # int.__repr__ beyond sys.get_int_max_str_digits()
        return "an integer too long to write"
    if len(text) <= SHOWN_CHARS:
        return text
    keep = (SHOWN_CHARS - 10) // 2
    return f"{text[:keep]}...{text[-keep:]} ({len(text)} characters)"


def is_real(value: Any) -> bool:
    """True for a finite real number: an int, a float or a numpy integer or floating scalar.

    Bools are refused (``True`` is an int to Python, but a flag passed as a number is almost
    always a mistake), and so are NaN, infinities and an int too large for a float: every
    caller goes on to ``float(value)``.

    Examples
    --------
    >>> [is_real(v) for v in (1, 0.5, np.float32(2), np.int64(3))]
    [True, True, True, True]
    >>> [is_real(v) for v in (True, np.bool_(False), float("nan"), float("inf"), 10**400, "1")]
    [False, False, False, False, False, False]
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond the float range
        return False


@overload
def check_seed(seed: Any, name: str = ..., *, optional: Literal[False],
               limit: int | None = ...) -> int: ...
@overload
def check_seed(seed: Any, name: str = ..., *, optional: bool = ...,
               limit: int | None = ...) -> int | None: ...
def check_seed(seed: Any, name: str = "seed", *, optional: bool = True,
               limit: int | None = None) -> int | None:
    """A random seed: an integer >= 0 (and below ``limit`` when given), or None if optional.

    Negative seeds are refused here because ``numpy.random.default_rng`` refuses them with
    a bare ``ValueError`` only once the work has started. Bools are refused.

    Examples
    --------
    >>> check_seed(None), check_seed(np.int64(7))
    (None, 7)
    >>> check_seed(1.5)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: seed must be an int or None; found 1.5
    >>> check_seed(2**31, optional=False, limit=2**31)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: seed must be an integer in [0, 2**31); found 2147483648
    """
    if seed is None and optional:
        return None
    is_int = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))
    if is_int and seed >= 0 and (limit is None or seed < limit):
        return int(seed)
    if limit is not None:
        power = limit.bit_length() - 1
        rule = f"an integer in [0, {f'2**{power}' if limit == 1 << power else limit})"
    else:
        rule = "an int >= 0" if is_int else "an int"
    raise ValidationError(f"{name} must be {rule}{' or None' if optional else ''}; "
                          f"found {seed!r}")


def first_bad(mask: np.ndarray, values: np.ndarray) -> str:
    """'N values ..., first at index i (v)' for the True entries of mask."""
    bad = np.flatnonzero(mask)
    first = int(bad[0])
    value = values[first]
    if isinstance(value, np.generic):
        value = value.item()
    noun = "value" if bad.size == 1 else "values"
    return f"found {bad.size} {noun} breaking it, first at index {first} ({shown(value)})"


def _as_1d(x: Any, name: str) -> np.ndarray:
    if x is None:
        raise ValidationError(f"{name} must be an array-like of numbers; found None")
    if isinstance(x, (str, bytes)):
        raise ValidationError(f"{name} must be an array-like of numbers; found a string {x!r}")
    arr = np.asarray(x)
    if arr.ndim == 0:
        raise ValidationError(
            f"{name} must be a 1-D array-like; found a scalar ({arr.item()!r})"
        )
    if arr.ndim != 1:
        raise ValidationError(f"{name} must be a 1-D array-like; found shape {arr.shape}")
    if arr.size == 0:
        raise ValidationError(f"{name} must not be empty; found 0 values")
    return arr


def check_correct(correct: Any, name: str = "correct") -> np.ndarray:
    """Return correct as a bool array; labels must be bool or numbers equal to 0 or 1.

    Examples
    --------
    >>> check_correct([1, 0, True, 1.0]).tolist()
    [True, False, True, True]
    >>> check_correct([1, 2])
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: correct must be bool or 0/1; found 1 value breaking it,
    first at index 1 (2)
    """
    arr = _as_1d(correct, name)
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iuf":
        ok = (arr == 0) | (arr == 1)
        if not ok.all():
            raise ValidationError(f"{name} must be bool or 0/1; {first_bad(~ok, arr)}")
        return arr == 1
    if arr.dtype.kind == "O":
        ok = np.array(
            [isinstance(v, (bool, np.bool_, int, np.integer, float, np.floating))
             and not isinstance(v, str) and (v == 0 or v == 1) for v in arr],
            dtype=bool,
        )
        if not ok.all():
            raise ValidationError(f"{name} must be bool or 0/1; {first_bad(~ok, arr)}")
        return arr.astype(float) == 1
    raise ValidationError(f"{name} must be bool or 0/1; found an array of dtype {arr.dtype}")


def check_confidence(confidence: Any, name: str = "confidence") -> np.ndarray:
    """Return confidence as a float64 array; values must be finite and within [0, 1].

    Booleans are refused rather than read as 0/1: a bool confidence is almost always the
    labels passed in the wrong position.

    Examples
    --------
    >>> check_confidence([0.2, 1.5, float("nan")])
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: confidence must be finite and within [0, 1]; found 2 values
    breaking it, first at index 1 (1.5)
    """
    arr = _as_1d(confidence, name)
    if arr.dtype == bool:
        raise ValidationError(
            f"{name} must be numbers within [0, 1]; found a bool array "
            "(were correct and confidence passed in swapped positions?)"
        )
    if arr.dtype.kind not in "iuf":
        if arr.dtype.kind == "O":
            try:
                arr = arr.astype(np.float64)
            except OverflowError:  # an int of 310+ digits: outside [0, 1] whatever it is
                first = next(i for i, v in enumerate(arr) if not is_real(v))
                raise ValidationError(
                    f"{name} must be finite and within [0, 1]; found an integer beyond the "
                    f"float range at index {first} ({shown(arr[first])})", index=first
                ) from None
            except (TypeError, ValueError):
                raise ValidationError(
                    f"{name} must be numbers within [0, 1]; found non-numeric values "
                    f"(first: {next(v for v in arr if not isinstance(v, (int, float)))!r})"
                ) from None
        else:
            raise ValidationError(
                f"{name} must be numbers within [0, 1]; found an array of dtype {arr.dtype}"
            )
    arr = np.asarray(arr, dtype=np.float64)
    # Fast path: min and max propagate NaN, so one pair of reductions proves the rule.
    # (-0.0 passes; the metrics' packed sort keys drop the sign bit.)
    if not (arr.min() >= 0.0 and arr.max() <= 1.0):
        ok = (arr >= 0.0) & (arr <= 1.0)  # False for NaN as well
        raise ValidationError(
            f"{name} must be finite and within [0, 1]; {first_bad(~ok, arr)}"
        )
    return arr


MIN_WEIGHT: float = 1e-100
"""The smallest weight accepted in an entity table (schema weights, the ``weight`` column)."""

MAX_WEIGHT: float = 1e100
"""The largest weight accepted in an entity table (schema weights, the ``weight`` column).

Every sum confcal forms over weights stays finite and exact to float64 rounding with
weights in [:data:`MIN_WEIGHT`, :data:`MAX_WEIGHT`]: a sum over n <= 2**63 rows, each weight
times a similarity <= 1 and a bootstrap multiplicity <= 2**63, is at most
1e100 * 2**126 ~ 8.5e137, far below the float64 maximum (1.8e308), and a product of two
weights (1e-200 to 1e200) stays a normal float. A weight of 1e308 would make the sums
infinite (WOA inf/inf = NaN), one of 1e-320 would lose its digits to underflow."""

WEIGHT_RULE = f"finite and within [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]"


def weight_ok(values: np.ndarray, *, zero: bool = False) -> np.ndarray:
    """True where a float64 weight is within [MIN_WEIGHT, MAX_WEIGHT] (or 0 with ``zero``)."""
    ok = (values >= MIN_WEIGHT) & (values <= MAX_WEIGHT)  # False for NaN and infinities
    return ok | (values == 0) if zero else ok


def check_weights(weights: Any, name: str = "weight") -> np.ndarray:
    """Return weights as float64; every one finite and within [MIN_WEIGHT, MAX_WEIGHT].

    Examples
    --------
    >>> check_weights([1.0, 2.5]).tolist()
    [1.0, 2.5]
    >>> check_weights([1.0, 1e308])
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: weight must be finite and within [1e-100, 1e+100]; found 1
    value breaking it, first at index 1 (1e+308)
    """
    arr = _as_1d(weights, name)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValidationError(f"{name} must be numbers; found dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    ok = weight_ok(arr)
    if not ok.all():
        raise ValidationError(f"{name} must be {WEIGHT_RULE}; {first_bad(~ok, arr)}")
    return arr


def check_sample_weight(sample_weight: Any, n: int, name: str = "sample_weight", *,
                        positive_total: bool = True) -> np.ndarray:
    """Return weights as float64; finite, >= 0, length n, with a positive total (unless
    ``positive_total`` is False: a chunk of data may carry no weight).

    No :data:`MAX_WEIGHT` bound here: the metrics rescale weights by their largest before
    summing, so they are scale-free over the whole float range (``tests/test_common.py``
    checks 2**600 and 2**-600); the bound is for the sums over entity rows (WOA), which
    are not rescaled."""
    arr = _as_1d(sample_weight, name)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValidationError(f"{name} must be non-negative numbers; found dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.shape[0] != n:
        raise ValidationError(
            f"{name} must have one weight per prediction ({n}); found {arr.shape[0]}"
        )
    ok = np.isfinite(arr) & (arr >= 0)
    if not ok.all():
        raise ValidationError(f"{name} must be finite and >= 0; {first_bad(~ok, arr)}")
    if positive_total and not arr.sum() > 0:
        raise ValidationError(f"{name} must have a positive total; found all {n} weights zero")
    return arr


def check_groups(groups: Any, n: int, name: str = "groups") -> np.ndarray:
    """Return integer codes 0..G-1 for group labels (any hashable, one per row, no missing)."""
    if groups is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(groups, (str, bytes)):
        raise ValidationError(f"{name} must be an array-like of group ids; found a string")
    arr = np.asarray(groups)
    if arr.ndim != 1:
        raise ValidationError(f"{name} must be 1-D; found shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValidationError(f"{name} must have one id per prediction ({n}); found {arr.shape[0]}")
    if arr.dtype.kind == "O":
        missing = np.fromiter((is_missing(v) for v in arr), dtype=bool, count=n)
        if missing.any():
            raise ValidationError(f"{name} must not contain missing ids; {first_bad(missing, arr)}")
    elif arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            raise ValidationError(f"{name} must not contain missing ids; {first_bad(nan, arr)}")
    import pandas as pd  # factorize is order-stable and handles mixed object ids

    codes, _ = pd.factorize(arr, sort=False)
    return codes.astype(np.int64)


def _pandas_index(value: Any) -> Any:
    """The index of a pandas Series or DataFrame, None for anything else (read without
    importing pandas: a metric on numpy arrays costs what numpy costs)."""
    if not type(value).__module__.startswith("pandas"):
        return None
    return getattr(value, "index", None)


def align_pandas(**arrays: Any) -> list[Any]:
    """The arguments, in order, with the pandas ones aligned by index label to the first.

    Two pandas Series (or DataFrames) are matched by label, as pandas matches them, never
    by position: when their indexes hold the same unique labels in another order, the
    later ones are reindexed to the order of the first; when the labels differ, or repeat,
    matching is ambiguous and a :class:`ValidationError` names both arguments. Any other
    argument (a list, a numpy array, None) is read by position and left as it is.

    Examples
    --------
    >>> import pandas as pd
    >>> correct = pd.Series([1, 0, 1], index=["a", "b", "c"])
    >>> confidence = pd.Series([0.2, 0.9, 0.8], index=["b", "c", "a"])
    >>> align_pandas(correct=correct, confidence=confidence)[1].tolist()
    [0.8, 0.2, 0.9]
    >>> align_pandas(correct=correct, confidence=confidence.set_axis(["b", "c", "x"]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: correct and confidence must have the same index ...; found
    1 label of confidence not in correct, first 'x'
    """
    names, values = list(arrays), list(arrays.values())
    indexed = [(i, ix) for i, ix in enumerate(map(_pandas_index, values)) if ix is not None]
    if len(indexed) < 2:
        return values
    first, reference = indexed[0]
    for i, index in indexed[1:]:
        if index.equals(reference):
            continue
        a, b = names[first], names[i]
        rule = (f"{a} and {b} must have the same index labels when both are pandas objects "
                "(they are matched by label)")
        for name, ix in ((a, reference), (b, index)):
            if not ix.is_unique:
                label = ix[ix.duplicated()][0]
                raise ValidationError(f"{rule}; found labels repeated in {name}, first {label!r}")
        for this, that, other in ((b, index, reference), (a, reference, index)):
            absent = ~that.isin(other)
            if absent.any():
                label = that[absent][0]
                noun = "label" if int(absent.sum()) == 1 else "labels"
                raise ValidationError(f"{rule}; found {int(absent.sum())} {noun} of {this} not "
                                      f"in {a if this == b else b}, first {label!r}")
        values[i] = values[i].reindex(reference)
    return values


def check_calibration_data(correct: Any, confidence: Any, sample_weight: Any = None, *,
                           positive_total: bool = True
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The boundary check of every (correct, confidence[, sample_weight]) function.

    Returns ``(correct as bool, confidence as float64, weights as float64 or None)``.
    Pandas inputs are matched by index label (:func:`align_pandas`).
    ``positive_total=False`` accepts weights that are all zero (a chunk of a sketch).
    """
    correct, confidence, sample_weight = align_pandas(
        correct=correct, confidence=confidence, sample_weight=sample_weight)
    y = check_correct(correct)
    c = check_confidence(confidence)
    check_consistent_length(correct=y, confidence=c)
    w = None if sample_weight is None else check_sample_weight(
        sample_weight, c.shape[0], positive_total=positive_total)
    return y, c, w


def check_consistent_length(**arrays: np.ndarray) -> None:
    """All arrays have the same length; the message names each argument and its length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = " and ".join(f"{name} has {k}" for name, k in lengths.items())
        raise ValidationError(f"{', '.join(lengths)} must have the same length; {described}")


def check_option(value: Any, name: str, allowed: Collection[str]) -> str:
    """value must be one of the allowed strings."""
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValidationError(f"{name} must be one of {choices}; found {value!r}")
    return value


def check_budget(budget: Any, name: str = "budget") -> float:
    """A review budget: a real number in (0, 1]."""
    if not is_real(budget) or not (0.0 < float(budget) <= 1.0):
        raise ValidationError(f"{name} must be a number in (0, 1]; found {budget!r}")
    return float(budget)


def check_budgets(budgets: Any, name: str = "budgets") -> tuple[float, ...]:
    """A non-empty sequence of distinct budgets, each in (0, 1]; order is kept."""
    if is_real(budgets) or isinstance(budgets, (float, np.floating)):
        budgets = (budgets,)  # one budget; check_budget names a NaN or an inf as budgets[0]
    if not isinstance(budgets, (Sequence, np.ndarray)) or isinstance(budgets, str):
        raise ValidationError(f"{name} must be a sequence of numbers in (0, 1]; found {budgets!r}")
    if len(budgets) == 0:
        raise ValidationError(f"{name} must not be empty; found 0 budgets")
    out = tuple(check_budget(b, f"{name}[{i}]") for i, b in enumerate(budgets))
    if len(set(out)) != len(out):
        raise ValidationError(f"{name} must not repeat a budget; found {list(out)}")
    return out


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """An int >= minimum (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValidationError(f"{name} must be an integer >= {minimum}; found {value!r}")
    if value < minimum:
        raise ValidationError(f"{name} must be an integer >= {minimum}; found {value!r}")
    return int(value)


def check_n_bins(n_bins: Any, name: str = "n_bins") -> int:
    """The number of bins: an integer >= 1."""
    return check_positive_int(n_bins, name, 1)


def check_probability(value: Any, name: str, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    """A real number strictly inside (0, 1) by default (confidence levels)."""
    ok = is_real(value)
    if ok:
        v = float(value)
        ok = (v > 0 if open_low else v >= 0) and (v < 1 if open_high else v <= 1)
    if not ok:
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValidationError(f"{name} must be a number in {lo}0, 1{hi}; found {value!r}")
    return float(value)


MAX_DEPTH_CEILING = 500
"""The deepest JSON nesting :class:`InputLimits` can allow: Python's JSON parser recurses on
the C stack, and deeper input would need a recursion limit that can crash the process."""


@dataclass(frozen=True)
class InputLimits:
    """Bounds on what confcal reads, so that hostile input costs bounded memory and time.

    Every reader of documents (:func:`confcal.scoring.io.read_documents`,
    :func:`~confcal.scoring.io.iter_documents`, ``confcal score``) and the scorer
    (:func:`confcal.scoring.score_documents`) take ``limits=InputLimits(...)``; input beyond a
    limit is an error naming the file and line (or document and field) and the limit, never
    truncated. The defaults are far above what extraction data needs; raise one when a real
    input needs it (the CLI's ``--max-line-bytes``, ``--max-decompressed-bytes``,
    ``--max-depth``, ``--max-value-chars``, ``--max-pair-chars``, ``--max-item-pairs``).

    Parameters
    ----------
    max_line_bytes : int, default 16 MiB
        The longest JSONL record (one line, in bytes, without its line ending) and the
        largest per-document JSON file. At most this much of one record is held in memory.
    max_decompressed_bytes : int, default 4 GiB
        The most bytes a ``.gz`` input may decompress to (a gzip bomb expands 1,000-fold),
        and the most an entity table may hold as text (CSV) or as decoded columns (Parquet).
    max_depth : int, default 64
        The deepest nesting of JSON objects and lists (an invoice needs 4); at most
        :data:`MAX_DEPTH_CEILING`.
    max_value_chars : int, default 10,000
        The longest string value the scorer compares. Text similarity is quadratic in the
        length (RapidFuzz's bit-parallel Levenshtein: about 2 ms for two values of 10,000
        characters, 0.2 s at 100,000, 22 s at a million).
    max_pair_chars : int, default 10**11
        The most work one document's line items may cost: every truth item is compared
        with every predicted item, so the cost of a line-item field is, summed over its
        text sub-fields, (characters in the truth items) x (characters in the predicted
        items). About 4e10 such character pairs are compared per second on one core, so
        the default bounds a document at a few seconds; an invoice of 50 items with
        60-character descriptions costs 9e6.
    max_item_pairs : int, default 10**6
        The most pairs of items one document's line-item field may make (truth items x
        predicted items). Characters do not bound this work: items with empty or
        one-character values pass ``max_pair_chars`` while the pairing still fills a
        similarity matrix per sub-field and solves an assignment on it, about 120 bytes
        and 0.4 microseconds a pair (1,000 x 1,000 items: 0.4 s, 120 MB; 2,000 x 2,000:
        1.8 s, 480 MB). An invoice of 300 items a side makes 9e4.
    max_rows : int, default 10**7
        The most rows of an entity table read whole (:func:`confcal.scoring.io.read_entities`,
        ``confcal report``): a table in memory costs a few hundred bytes a row, so a small
        ``.csv.gz`` or Parquet file of short repeated rows can expand to many gigabytes.
        The streamed readers (:func:`~confcal.scoring.io.iter_entities`, ``confcal report
        --sketch``) hold one chunk at a time and are not bound by it.

    Examples
    --------
    >>> InputLimits().max_depth
    64
    >>> InputLimits(max_line_bytes=0)
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: max_line_bytes must be an integer >= 1; found 0
    """

    max_line_bytes: int = 16 << 20
    max_decompressed_bytes: int = 4 << 30
    max_depth: int = 64
    max_value_chars: int = 10_000
    max_pair_chars: int = 10**11
    max_item_pairs: int = 10**6
    max_rows: int = 10**7

    def __post_init__(self) -> None:
        for name in ("max_line_bytes", "max_decompressed_bytes", "max_depth",
                     "max_value_chars", "max_pair_chars", "max_item_pairs", "max_rows"):
            object.__setattr__(self, name, check_positive_int(getattr(self, name), name))
        if self.max_depth > MAX_DEPTH_CEILING:
            raise ValidationError(f"max_depth must be at most {MAX_DEPTH_CEILING} (Python's "
                                  f"JSON parser recurses); found {self.max_depth}")


def check_limits(limits: Any) -> InputLimits:
    """``limits`` as given, or the defaults for None."""
    if limits is None:
        return InputLimits()
    if not isinstance(limits, InputLimits):
        raise ValidationError(f"limits must be an InputLimits or None; found "
                              f"{type(limits).__name__}")
    return limits
