"""Scoring under stickler-eval 1.0.0's conventions: ``score_documents(...,
conventions="stickler-1.0")``.

stickler-eval 1.0.0 is the scorer the ConfBench paper used. This module reproduces, for a
confcal :class:`~confcal.scoring.schema.Schema`, what stickler's FCC-equivalent models report:
the TP/FD/FA/FN/TN counts of ``compare_with(..., include_confusion_matrix=True)`` (the
leaf-level ``confusion_matrix["aggregate"]``) and the calibration pairs of its
``ConfidenceCalculator`` (one ``(match, confidence)`` per field comparison whose predicted
leaf carries a confidence). The rules were read from stickler-eval 1.0.0's behaviour and
each one is checked against the installed package (``tests/scoring/test_stickler.py``); none of its
code is used. They are, with the stickler module each one lives in:

* **Settings** of the paper's stickler model, whatever the schema's thresholds say: text
  accepted at similarity >= 0.5, numbers and dates at 1.0, line items paired when their item
  similarity is >= 0.7 (``StructuredModel.match_threshold``). The schema supplies the fields,
  comparator types, ``rel_tol``/``abs_tol``, ``dayfirst`` and weights.
* **Text** (``comparators/levenshtein.py``): ``str()``, strip, lower-case (not casefold, no
  NFKC), collapse whitespace; ``1 - distance / max(len)``; two empty strings are 1.0.
* **Numbers** (``comparators/numeric.py``): a value wrapped in parentheses is negated, then
  every character but digits, ``.`` and ``-`` is deleted and the rest read as a Decimal, or
  is not a number (similarity 0): ``"$1,234.50"`` is 1234.50, ``"(12.00)"`` -12,
  ``"12%"`` 12, ``"1e3"`` **13**, ``"1.2.3"`` and ``"abc"`` nothing. The tolerance is
  relative to the truth, ``|t - p| / |t| <= rel_tol`` in Decimal arithmetic, and at truth 0
  it becomes absolute: ``|p| <= rel_tol`` (``"0.00"`` matches ``"0.009"``).
* **Dates** (``comparators/date.py``): dateutil parses each side twice with different
  default dates, so a component the text leaves out is detected; both sides must state the
  same components (``"March 2024"`` never equals ``"2024-03-01"``); ``"X to Y"``,
  ``"X through Y"`` and ``"X - Y"`` are ranges (a single date inside a range scores 0.5,
  two ranges their Jaccard overlap in days); unparseable text scores 0.
* **Missing** values: ``None`` and ``""`` (not whitespace) for comparisons; the line-item
  confusion matrix also treats whitespace-only strings as missing.
* **Line items** (``structured_list_comparator.py``, ``algorithms/hungarian.py``): the item
  similarity is the weighted mean of the raw sub-field similarities over the sub-fields that
  are not missing on both sides (1.0 when every one is); the pairing minimizes the total
  ``1 - similarity`` over every pairable item (Munkres), and only then is the threshold
  applied. A pair at or above 0.7 is scored leaf by leaf; a pair below it is **gated**: one
  item-level FD and none of its sub-fields. Unpaired items produce no leaves either. When no
  pair of a list reaches 0.7, the list's counts are its item counts (FD per gated pair, FA
  per unpaired predicted item, FN per unpaired truth item); when at least one does, only the
  leaves of the pairs that reach it are counted. An empty list on one side counts one FA or
  FN per item on the other; empty on both, one TN.
* **Labels** (``field_comparison_collector.py``, ``field_comparison_helper.py``): a leaf is
  correct when its score reaches the field threshold, except that a ``None`` prediction of a
  truth that is not ``None`` (even ``""``), or the reverse, is always incorrect: ``""`` vs
  ``None`` is a TN in the counts and a wrong answer in calibration. A line-item leaf below
  its threshold has its score zeroed (``clip_under_threshold``); a top-level one keeps it.
"""

from __future__ import annotations

import decimal
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from ..exceptions import ValidationError
from ._inputs import NameCheck
from .comparators import Date, Number, Text
from .predictions import LeafError, check_scalar, unwrap_leaf
from .schema import Field, Items, Schema

CONVENTIONS: tuple[str, ...] = ("confcal", "stickler-1.0")
"""The values of ``score_documents(conventions=...)``."""

TEXT_THRESHOLD = 0.5
"""Text acceptance threshold of the paper's stickler model (its FCC ComparableFields)."""

MATCH_THRESHOLD = 0.7
"""stickler-eval 1.0.0's default ``match_threshold`` for pairing line items."""

_BINARY_THRESHOLD = 1.0  # NumericComparator and DateComparator: "equal"
_CACHE = 1 << 16
# stickler's Decimal arithmetic runs in the default context (28 significant digits).
_DECIMAL = decimal.Context(prec=28)
_NUMERIC_JUNK = re.compile(r"[^0-9.-]")
_RANGE_DELIMITERS = (" to ", " through ", " - ")
_YEAR_FIRST = re.compile(r"^\d{4}[-/.]")
_MAX_DATE_LENGTH = 256
_RANGE_INSIDE_SCORE = 0.5
# Two default dates that differ in year, month and day: a component dateutil fills in
# from the default differs between the two parses.
_LOW_DEFAULT, _HIGH_DEFAULT = datetime(1900, 1, 1), datetime(2099, 6, 15)
_ABSENT = object()


# ------------------------------------------------------------------ missing values


def absent(value: Any) -> bool:
    """Missing for comparisons and labels: ``None``, ``""`` or ``{}`` (not whitespace)."""
    return value is None or (isinstance(value, (str, dict)) and len(value) == 0)


def _absent_in_items(value: Any) -> bool:
    # The confusion matrix of a line-item leaf also strips strings: "  " is missing there.
    if value is None:
        return True
    if isinstance(value, (str, bytes)):
        return len(value.strip()) == 0
    return hasattr(value, "__len__") and len(value) == 0


# --------------------------------------------------------------------- comparators


@functools.lru_cache(maxsize=_CACHE)
def _text_key(value: str) -> str:
    return " ".join(value.strip().lower().split())


def _text_norm(value: Any) -> str:
    return _text_key(value if isinstance(value, str) else str(value))


def _text_similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    return 1.0 - float(Levenshtein.distance(a, b)) / float(max(len(a), len(b)))


def read_number(value: Any) -> Decimal | None:
    """stickler-eval 1.0.0's reading of a value as a number, or None when it has none.

    Examples
    --------
    >>> [read_number(v) for v in ("$1,234.50", "(12.00)", "12%", "1e3", "abc", "1.2.3")]
    [Decimal('1234.50'), Decimal('-12.00'), Decimal('12'), Decimal('13'), None, None]
    """
    if isinstance(value, bool):
        return None  # stickler raises on a bool (Decimal("True")); never a number here
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    return _read_number_str(value if isinstance(value, str) else str(value))


@functools.lru_cache(maxsize=_CACHE)
def _read_number_str(text: str) -> Decimal | None:
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    digits = _NUMERIC_JUNK.sub("", text)
    if not digits:
        return None
    try:
        number = Decimal(digits)
    except decimal.InvalidOperation:
        return None
    return -number if negative else number


def _numbers_match(t: Decimal, p: Decimal, rel_tol: float, abs_tol: float) -> bool:
    if t.is_nan() or p.is_nan():
        return False
    if t.is_infinite() or p.is_infinite():
        return t == p
    if t == p:
        return True
    # Relative to the truth, not symmetric; a Decimal compared with the float tolerance
    # exactly, as stickler does.
    if rel_tol > 0:
        if t == 0:
            if _DECIMAL.abs(p) <= rel_tol:
                return True
        elif _DECIMAL.divide(_DECIMAL.abs(_DECIMAL.subtract(t, p)), _DECIMAL.abs(t)) <= rel_tol:
            return True
    return abs_tol > 0 and _DECIMAL.abs(_DECIMAL.subtract(t, p)) <= abs_tol


@dataclass(frozen=True)
class _Single:
    """A parsed date and the components its text states."""

    dt: datetime
    year: bool
    month: bool = True
    day: bool = True

    @property
    def grain(self) -> int:  # 0: year only, 1: month, 2: day
        return 0 if not self.month else (2 if self.day else 1)


@dataclass(frozen=True)
class _Range:
    start: _Single
    end: _Single


def _same_zone(a: datetime, b: datetime) -> tuple[datetime, datetime]:
    if a.tzinfo is not None and b.tzinfo is not None:
        return a.astimezone(timezone.utc), b.astimezone(timezone.utc)
    if a.tzinfo is not None:
        return a, b.replace(tzinfo=a.tzinfo)
    if b.tzinfo is not None:
        return a.replace(tzinfo=b.tzinfo), b
    return a, b


def _midnight(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _naive_midnight(dt: datetime) -> datetime:
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
    return _midnight(dt)


def _same_day(a: datetime, b: datetime) -> bool:
    a, b = _same_zone(a, b)
    return _midnight(a) == _midnight(b)


def _parse_single(text: str, dayfirst: bool) -> _Single | None:
    from dateutil import parser  # imported on first use, as by confcal.scoring.comparators

    if not text:
        return None
    if _YEAR_FIRST.match(text):
        dayfirst = False
    try:
        low = parser.parse(text, default=_LOW_DEFAULT, dayfirst=dayfirst)
        high = parser.parse(text, default=_HIGH_DEFAULT, dayfirst=dayfirst)
    except (ValueError, OverflowError, TypeError):
        return None
    stated = (low.year == high.year, low.month == high.month, low.day == high.day)
    if not any(stated):
        return None
    return _Single(low, *stated)


@functools.lru_cache(maxsize=_CACHE)
def _parse_date_str(text: str, dayfirst: bool) -> _Single | _Range | None:
    s = text.strip()
    if not s or len(s) > _MAX_DATE_LENGTH:
        return None
    for delimiter in _RANGE_DELIMITERS:
        if delimiter not in s:
            continue
        left, _, right = s.partition(delimiter)
        start, end = _parse_single(left.strip(), dayfirst), _parse_single(right.strip(), dayfirst)
        if start is None or end is None:
            continue
        a, b = _same_zone(start.dt, end.dt)
        if a > b:
            return None
        if _same_day(start.dt, end.dt) and start.year == end.year:
            return start  # a one-day range is that day
        return _Range(start, end)
    # Text that looks like a range but is not one is no date at all.
    if any(d in s for d in _RANGE_DELIMITERS) or s.startswith("-") or s.endswith("-"):
        return None
    return _parse_single(s, dayfirst)


def _parse_date(value: Any, dayfirst: bool) -> _Single | _Range | None:
    if isinstance(value, datetime):
        return _Single(value, True)
    if isinstance(value, date):
        return _Single(datetime(value.year, value.month, value.day), True)
    return _parse_date_str(value if isinstance(value, str) else str(value), dayfirst)


def _singles_score(a: _Single, b: _Single) -> float:
    if a.grain != b.grain or a.year != b.year:
        return 0.0
    if a.year and a.grain == 2:
        return float(_same_day(a.dt, b.dt))
    if a.year and a.dt.year != b.dt.year:
        return 0.0
    if a.month and b.month and a.dt.month != b.dt.month:
        return 0.0
    if a.day and b.day and a.dt.day != b.dt.day:
        return 0.0
    return 1.0


def _range_single_score(rng: _Range, single: _Single) -> float:
    if rng.start.grain != single.grain or rng.end.grain != single.grain:
        return 0.0
    if rng.start.year != rng.end.year or rng.start.year != single.year:
        return 0.0
    inside = (
        _naive_midnight(rng.start.dt) <= _naive_midnight(single.dt) <= _naive_midnight(rng.end.dt)
    )
    return _RANGE_INSIDE_SCORE if inside else 0.0


def _ranges_score(a: _Range, b: _Range) -> float:
    if a.start.year != a.end.year or b.start.year != b.end.year:
        return 0.0
    if a.start.grain != b.start.grain or a.end.grain != b.end.grain:
        return 0.0
    if a.start.year != b.start.year:
        return 0.0
    lo_a, hi_a = _naive_midnight(a.start.dt), _naive_midnight(a.end.dt)
    lo_b, hi_b = _naive_midnight(b.start.dt), _naive_midnight(b.end.dt)
    lo, hi = max(lo_a, lo_b), min(hi_a, hi_b)
    if hi < lo:
        return 0.0
    return ((hi - lo).days + 1) / ((max(hi_a, hi_b) - min(lo_a, lo_b)).days + 1)


def _date_similarity(t: Any, p: Any, dayfirst: bool) -> float:
    try:
        a, b = _parse_date(t, dayfirst), _parse_date(p, dayfirst)
        if a is None or b is None:
            return 0.0
        if isinstance(a, _Range) and isinstance(b, _Range):
            return _ranges_score(a, b)
        if isinstance(a, _Range):
            return _range_single_score(a, b)  # type: ignore[arg-type]
        if isinstance(b, _Range):
            return _range_single_score(b, a)
        return _singles_score(a, b)
    except TypeError:  # naive against aware datetimes; stickler scores those 0
        return 0.0


@dataclass(frozen=True)
class _Leaf:
    """How one schema field is compared under stickler's rules."""

    kind: str  # "text", "number", "date"
    threshold: float
    weight: float
    rel_tol: float = 0.0
    abs_tol: float = 0.0
    dayfirst: bool = False

    def similarity(self, t: Any, p: Any) -> float:
        """stickler's comparator on two present values (``compare`` after its None rule)."""
        if t is None and p is None:
            return 1.0
        if t is None or p is None:
            return 0.0
        if self.kind == "text":
            return _text_similarity(_text_norm(t), _text_norm(p))
        if self.kind == "number":
            a, b = read_number(t), read_number(p)
            if a is None or b is None:
                return 0.0
            return float(_numbers_match(a, b, self.rel_tol, self.abs_tol))
        return _date_similarity(t, p, self.dayfirst)


def _leaf_spec(field: Field, where: str) -> _Leaf:
    comparator = field.comparator
    if type(comparator) is Text:
        if comparator.ignore_punctuation:
            raise ValidationError(
                f"conventions='stickler-1.0' compares text as stickler-eval's "
                f"LevenshteinComparator, which keeps punctuation; found {where} with "
                "Text(ignore_punctuation=True)", field=where)
        return _Leaf("text", TEXT_THRESHOLD, field.weight)
    if type(comparator) is Number:
        if comparator.decimal != ".":
            raise ValidationError(
                "conventions='stickler-1.0' reads numbers as stickler-eval does, with '.' as "
                f"the decimal mark; found {where} with Number(decimal={comparator.decimal!r})",
                field=where)
        return _Leaf("number", _BINARY_THRESHOLD, field.weight,
                     rel_tol=comparator.rel_tol, abs_tol=comparator.abs_tol)
    if type(comparator) is Date:
        return _Leaf("date", _BINARY_THRESHOLD, field.weight, dayfirst=comparator.dayfirst)
    raise ValidationError(
        "conventions='stickler-1.0' needs a Text, Number or Date comparator (stickler-eval's "
        f"Levenshtein, Numeric and Date comparators) for every field; found {where} with "
        f"{comparator!r}", field=where)


# ------------------------------------------------------------------------- leaves

_TP, _FD, _FA, _FN, _TN = range(5)
_PRIMITIVES = (str, int, float)


def top_leaf(spec: _Leaf, t: Any, p: Any) -> tuple[int, bool, float]:
    """(outcome, correct, score) of a top-level field, as stickler reports it."""
    t_absent, p_absent = absent(t), absent(p)
    if t_absent and p_absent:
        outcome, raw = _TN, 1.0
    elif t_absent:
        outcome, raw = _FA, 0.0
    elif p_absent:
        outcome, raw = _FN, 0.0
    elif isinstance(t, _PRIMITIVES) and isinstance(p, _PRIMITIVES):
        raw = spec.similarity(t, p)
        outcome = _TP if raw >= spec.threshold else _FD
    else:  # not a str/int/float pair: stickler's "not comparable", an FD at 0
        outcome, raw = _FD, 0.0
    return (outcome, *_label(t, p, raw >= spec.threshold, raw))


def item_leaf(spec: _Leaf, t: Any, p: Any) -> tuple[int, bool, float]:
    """(outcome, correct, score) of a sub-field of a line-item pair that passed the gate."""
    t_absent, p_absent = _absent_in_items(t), _absent_in_items(p)
    if t_absent and p_absent:
        outcome = _TN
    elif t_absent:
        outcome = _FA
    elif p_absent:
        outcome = _FN
    else:
        outcome = _TP if spec.similarity(t, p) >= spec.threshold else _FD
    # The label and score come from the pair's own comparison, where a score under the
    # threshold is zeroed (clip_under_threshold) and absence is the comparison kind.
    t_absent, p_absent = absent(t), absent(p)
    if t_absent or p_absent:
        score = float(t_absent and p_absent)
    elif isinstance(t, _PRIMITIVES) and isinstance(p, _PRIMITIVES):
        raw = spec.similarity(t, p)
        score = raw if raw >= spec.threshold else 0.0
    else:
        score = 0.0
    return (outcome, *_label(t, p, score >= spec.threshold, score))


def _label(t: Any, p: Any, correct: bool, score: float) -> tuple[bool, float]:
    # A None on exactly one side is always a miss, even against "" (a TN in the counts).
    if (p is None) != (t is None):
        return False, 0.0
    return correct, score


# --------------------------------------------------------------------- line items


def _item_similarity(
    specs: Sequence[_Leaf], truth_cols: Sequence[Sequence[Any]], pred_cols: Sequence[Sequence[Any]]
) -> np.ndarray:
    """(m, n) item similarities: the weighted mean over sub-fields not absent on both sides.

    Accumulated sub-field by sub-field in schema order, as stickler sums them, so that the
    floats (and so the gate at 0.7) are the same to the last bit.
    """
    m, n = len(truth_cols[0]), len(pred_cols[0])
    total = np.zeros((m, n))
    weight = np.zeros((m, n))
    for spec, tc, pc in zip(specs, truth_cols, pred_cols, strict=True):
        ta = np.array([absent(v) for v in tc], dtype=bool)
        pa = np.array([absent(v) for v in pc], dtype=bool)
        both = ta[:, None] & pa[None, :]
        either = ta[:, None] | pa[None, :]
        scores = np.zeros((m, n))
        rows, cols = np.flatnonzero(~ta), np.flatnonzero(~pa)
        if len(rows) and len(cols):
            scores[np.ix_(rows, cols)] = _pairwise(
                spec, [tc[i] for i in rows.tolist()], [pc[j] for j in cols.tolist()])
        scores[either] = 0.0
        total = total + np.where(both, 0.0, scores * spec.weight)
        weight = weight + np.where(both, 0.0, spec.weight)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, total / weight, 1.0)


def _pairwise(spec: _Leaf, truths: list[Any], preds: list[Any]) -> np.ndarray:
    if spec.kind == "text":
        a = [_text_norm(v) for v in truths]
        b = [_text_norm(v) for v in preds]
        dist = process.cdist(a, b, scorer=Levenshtein.distance, dtype=np.int64).astype(np.float64)
        longest = np.maximum.outer(np.array([len(s) for s in a]), np.array([len(s) for s in b]))
        with np.errstate(invalid="ignore", divide="ignore"):
            sim = 1.0 - dist / longest.astype(np.float64)
        sim[longest == 0] = 1.0
        return sim
    cache: dict[tuple[Any, Any], float] = {}
    out = np.empty((len(truths), len(preds)))
    for i, t in enumerate(truths):
        for j, p in enumerate(preds):
            try:
                key = (t, p)
                value = cache.get(key)
            except TypeError:  # an unhashable value: compare without the cache
                key, value = None, None
            if value is None:
                value = spec.similarity(t, p)
                if key is not None:
                    cache[key] = value
            out[i, j] = value
    return out


def assign(sim: np.ndarray) -> list[tuple[int, int]]:
    """Pairs (truth, pred), by truth index, minimizing the total cost ``1 - similarity``.

    Every item of the shorter list is paired; the match threshold is applied afterwards.
    Among equally good pairings the one stickler-eval 1.0.0 gets from its assignment solver
    (``munkres`` 3.0.0) is returned, which ``scipy.optimize.linear_sum_assignment`` does not
    promise: with duplicated items the choice decides which predicted item's confidences
    are paired with the truth. munkres ties one way below 16 cells
    (:func:`_augmenting_paths`) and another from 16 on (:func:`_compiled_kernel`).
    """
    m, n = sim.shape
    if m == 0 or n == 0:
        return []
    if m == 1 and n == 1:
        return [(0, 0)]
    cost = 1.0 - sim
    # munkres 3.0.0 solves a problem of 16 cells or more with its compiled kernel and a
    # smaller one in Python; the two break ties differently, so both are reproduced.
    solve = _compiled_kernel if m * n >= _KERNEL_MIN_CELLS else _augmenting_paths
    if m > n:  # the solver assigns the shorter side
        return sorted((i, j) for j, i in solve(np.ascontiguousarray(cost.T)))
    return sorted(solve(cost))


_KERNEL_MIN_CELLS = 16
"""From this many cells on, munkres 3.0.0 hands a problem to its compiled kernel."""


def _compiled_kernel(cost: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-cost assignment of every row (rows <= columns), tied as munkres 3.0.0's
    compiled kernel ties.

    The same greedy start as :func:`_augmenting_paths` (each row, in order, takes its
    first free column at the row minimum), then, for each row left unmatched, a
    shortest-path search over the columns not yet reached. That search is where the two
    solvers differ, and what decides between equally good pairings:

    - the columns are scanned in a list that starts from the last column and loses each
      column as it is reached (the last one of the list takes its place);
    - a path length is ``((minval + cost) - u[row]) - v[col]``, in that order of float
      operations, and replaces a column's shortest length only when strictly shorter;
    - among the columns at the shortest length, the last free one in scan order is taken,
      else the first one;
    - once a free column is reached, the potentials change (the start row by the path
      length, every row reached through a column by the difference) and the path is
      flipped.
    """
    r, c = cost.shape
    u = np.zeros(r)
    v = np.zeros(c)
    row4col = np.full(c, -1, dtype=np.int64)
    col4row = np.full(r, -1, dtype=np.int64)
    for i in range(r):
        low = cost[i].min()
        u[i] = low
        free = np.flatnonzero((row4col == -1) & (cost[i] == low))
        if len(free):
            row4col[free[0]] = i
            col4row[i] = free[0]
    path = np.zeros(c, dtype=np.int64)
    for start in np.flatnonzero(col4row < 0).tolist():
        remaining = np.arange(c - 1, -1, -1, dtype=np.int64)
        n_left = c
        shortest = np.full(c, np.inf)
        reached: list[int] = []
        minval = 0.0
        i = start
        while True:
            cols = remaining[:n_left]
            length = ((minval + cost[i, cols]) - u[i]) - v[cols]
            better = length < shortest[cols]
            path[cols[better]] = i
            shortest[cols[better]] = length[better]
            known = shortest[cols]
            lowest = known.min()
            ties = np.flatnonzero(known == lowest)
            free = ties[row4col[cols[ties]] < 0]
            index = int(free[-1] if len(free) else ties[0])
            minval = float(lowest)
            j = int(cols[index])
            if row4col[j] < 0:
                sink = j
                break
            i = int(row4col[j])
            reached.append(j)
            remaining[index] = remaining[n_left - 1]
            n_left -= 1
        u[start] += minval
        if reached:
            via = np.array(reached, dtype=np.int64)
            step = minval - shortest[via]
            u[row4col[via]] += step
            v[via] -= step
        j = sink
        while True:  # flip the path
            i = int(path[j])
            row4col[j] = i
            j, col4row[i] = int(col4row[i]), j
            if i == start:
                break
    return [(int(i), int(j)) for i, j in enumerate(col4row)]


def _augmenting_paths(cost: np.ndarray) -> list[tuple[int, int]]:
    """Minimum-cost assignment of every row (rows <= columns), tied as munkres 3.0.0's
    Python solver ties (the one it uses below 16 cells).

    The shortest-augmenting-path Hungarian method with row and column potentials, after a
    greedy start that gives each row, in order, its first free column at the row minimum.
    Ties go to the lowest column index (first minimum), and the potentials are updated in
    the same order of float operations as that solver, so equal costs resolve as it
    resolves them (checked against munkres and stickler-eval in
    tests/scoring/test_stickler.py).
    """
    r, c = cost.shape
    u = np.zeros(r)
    v = np.zeros(c + 1)
    owner = np.full(c + 1, -1, dtype=np.int64)  # owner[c]: the row being augmented
    way = np.zeros(c + 1, dtype=np.int64)
    matched = np.zeros(r, dtype=bool)
    for i in range(r):
        low = cost[i].min()
        u[i] = low
        free = np.flatnonzero((owner[:c] == -1) & (cost[i] == low))
        if len(free):
            owner[free[0]] = i
            matched[i] = True
    for i in np.flatnonzero(~matched).tolist():
        owner[c] = i
        j0 = c
        minv = np.full(c + 1, np.inf)
        used = np.zeros(c + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = owner[j0]
            reduced = (cost[i0] - u[i0]) - v[:c]
            better = ~used[:c] & (reduced < minv[:c])
            minv[:c][better] = reduced[better]
            way[:c][better] = j0
            candidates = np.where(used[:c], np.inf, minv[:c])
            j1 = int(np.argmin(candidates))
            delta = candidates[j1]
            held = np.flatnonzero(used)
            u[owner[held]] += delta
            v[held] -= delta
            minv[~used] = minv[~used] - delta
            j0 = j1
            if owner[j0] == -1:
                break
        while j0 != c:  # flip the path
            j1 = int(way[j0])
            owner[j0] = owner[j1]
            j0 = j1
    return [(int(owner[j]), j) for j in range(c) if owner[j] >= 0]


# ------------------------------------------------------------------------ scoring


class _Table:
    """Entity rows as column lists, plus stickler's counts."""

    def __init__(self) -> None:
        self.doc: list[int] = []
        self.field: list[int] = []
        self.truth_index: list[int] = []
        self.pred_index: list[int] = []
        self.truth: list[Any] = []
        self.prediction: list[Any] = []
        self.similarity: list[float] = []
        self.threshold: list[float] = []
        self.correct: list[bool] = []
        self.outcome: list[int] = []
        self.confidence: list[float] = []
        self.weight: list[float] = []
        self.whole: list[int] = [0] * 5  # item- and list-level outcomes: no row
        self.excluded = 0

    def add(self, doc: int, field: int, ti: int, pj: int, t: Any, p: Any, c: float,
            leaf: tuple[int, bool, float], spec: _Leaf, weight: float) -> None:
        outcome, correct, score = leaf
        self.doc.append(doc)
        self.field.append(field)
        self.truth_index.append(ti)
        self.pred_index.append(pj)
        self.truth.append(t)
        self.prediction.append(p)
        self.similarity.append(score)
        self.threshold.append(spec.threshold)
        self.correct.append(correct)
        self.outcome.append(outcome)
        self.confidence.append(c)
        self.weight.append(weight)


def _where(doc_id: Any, path: str) -> str:
    return f"doc {doc_id!r}, field {path}"


def _truth_value(value: Any, doc_id: Any, path: str) -> Any:
    try:
        check_scalar(value, "truth value")
    except LeafError as exc:
        raise ValidationError(f"{_where(doc_id, path)}: {exc}", doc_id=doc_id,
                              field=path) from None
    return value


def _pred_value(leaf: Any, doc_id: Any, path: str) -> tuple[Any, float]:
    try:
        return unwrap_leaf(leaf)
    except LeafError as exc:
        raise ValidationError(f"{_where(doc_id, path)}: {exc}", doc_id=doc_id,
                              field=path) from None


def _item_list(value: Any, doc_id: Any, name: str, side: str) -> list[Any] | None:
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        return None
    if not isinstance(value, (list, tuple)):
        raise ValidationError(
            f"doc {doc_id!r}, field {name}: {side} must be a list of items (mappings); found "
            f"{type(value).__name__} {value!r:.80}", doc_id=doc_id, field=name)
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValidationError(
                f"doc {doc_id!r}, field {name}[{i}]: {side} item must be a mapping of "
                f"sub-fields; found {type(item).__name__} {item!r:.80}", doc_id=doc_id,
                field=f"{name}[{i}]")
    return list(value)


def _score_items(
    table: _Table, pos: int, doc_id: Any, name: str, items: Items, specs: list[_Leaf],
    codes: list[int], truth_doc: Mapping[str, Any], pred_doc: Mapping[str, Any],
    tally: dict[str, int], names: NameCheck,
) -> None:
    subs = list(items.fields)
    truth_items = _item_list(truth_doc.get(name), doc_id, name, "the truth value")
    pred_items = _item_list(pred_doc.get(name), doc_id, name, "the prediction")
    _tally_item_fields(truth_items, pred_items, frozenset(subs), doc_id, name, tally, names)
    if truth_items is None or pred_items is None:
        _count_whole_lists(table, truth_items, pred_items, len(subs))
        return
    truth_cols = [
        [_truth_value(item.get(s), doc_id, f"{name}[{i}].{s}")
         for i, item in enumerate(truth_items)]
        for s in subs
    ]
    pred_cols, conf_cols = _pred_item_columns(pred_items, subs, doc_id, name)
    sim = _item_similarity(specs, truth_cols, pred_cols)
    good = _gated_pairs(table, sim, len(subs))
    for i, j in good:
        for k_sub, (spec, code) in enumerate(zip(specs, codes, strict=True)):
            t, p = truth_cols[k_sub][i], pred_cols[k_sub][j]
            table.add(pos, code, i, j, t, p, conf_cols[k_sub][j], item_leaf(spec, t, p), spec,
                      items.weight * spec.weight)


def _tally_item_fields(truth_items: list[Any] | None, pred_items: list[Any] | None,
                       known: frozenset[str], doc_id: Any, name: str, tally: dict[str, int],
                       names: NameCheck) -> None:
    """Count the item sub-fields the schema does not define (or refuse predicted ones:
    :class:`NameCheck`)."""
    for item in truth_items or ():
        tally["unscored_truth_fields"] += len(item.keys() - known)
    for j, item in enumerate(pred_items or ()):
        tally["unknown_fields"] += names.unknown(item.keys(), known, doc_id, name, f"[{j}]")


def _count_whole_lists(table: _Table, truth_items: list[Any] | None,
                       pred_items: list[Any] | None, k: int) -> None:
    """An empty list on one side: the other side's items are counted whole, not by leaf."""
    if truth_items is None and pred_items is None:
        table.whole[_TN] += 1
    elif truth_items is None:
        table.whole[_FA] += len(pred_items or ())
        table.excluded += k * len(pred_items or ())
    else:
        table.whole[_FN] += len(truth_items)
        table.excluded += k * len(truth_items)


def _pred_item_columns(pred_items: list[Any], subs: list[str], doc_id: Any,
                       name: str) -> tuple[list[list[Any]], list[list[float]]]:
    """Per sub-field, the predicted items' values and confidences."""
    pred_cols, conf_cols = [], []
    for s in subs:
        parsed = [_pred_value(item.get(s), doc_id, f"{name}[{j}].{s}")
                  for j, item in enumerate(pred_items)]
        pred_cols.append([v for v, _ in parsed])
        conf_cols.append([c for _, c in parsed])
    return pred_cols, conf_cols


def _gated_pairs(table: _Table, sim: np.ndarray, k: int) -> list[tuple[int, int]]:
    """The assigned pairs at or above the match gate; the rest counted as excluded leaves.

    When no pair passes the gate the list is counted by items, not leaves, and no pair is
    returned.
    """
    m, n = sim.shape
    pairs = assign(sim)
    good = [(i, j) for i, j in pairs if sim[i, j] >= MATCH_THRESHOLD]
    dropped = len(pairs) - len(good) + (m - len(pairs)) + (n - len(pairs))
    table.excluded += k * dropped
    if not good:
        table.whole[_FD] += len(pairs)
        table.whole[_FA] += n - len(pairs)
        table.whole[_FN] += m - len(pairs)
    return good


def score(
    schema: Schema, truth_docs: list[tuple[Any, Any]], pred_docs: dict[Any, Any],
    doc_ids: list[Any], meta: dict[str, np.ndarray], check: NameCheck,
) -> Any:
    """The ExtractionResult of already validated inputs under stickler-1.0 conventions."""
    from ._columns import object_array
    from ._result import OUTCOMES, ExtractionResult
    from ._scoring import field_dtype, nullable_index

    names = schema.entity_fields
    code = {name: i for i, name in enumerate(names)}
    fields: list[tuple[str, Field | Items, Any]] = []
    for name, spec in schema.fields.items():
        if isinstance(spec, Items):
            fields.append((name, spec, [_leaf_spec(f, f"{name}.{s}")
                                        for s, f in spec.fields.items()]))
        else:
            fields.append((name, spec, _leaf_spec(spec, name)))
    known = frozenset(schema.fields)
    tally = {"docs_missing_prediction": 0, "unknown_fields": 0, "unscored_truth_fields": 0}
    table = _Table()
    for pos, (doc_id, truth_doc) in enumerate(truth_docs):
        if not isinstance(truth_doc, Mapping):
            raise ValidationError(
                f"doc {doc_id!r}: the truth document must be a mapping of field names to "
                f"values; found {type(truth_doc).__name__}", doc_id=doc_id)
        pred_doc = pred_docs.get(doc_id, _ABSENT)
        if pred_doc is _ABSENT:
            if check.strict:
                raise ValidationError(
                    f"doc {doc_id!r}: every truth document must have a prediction "
                    "({option}); found none", doc_id=doc_id, option=("strict", True))
            tally["docs_missing_prediction"] += 1
            pred_doc = {}
        elif not isinstance(pred_doc, Mapping):
            raise ValidationError(
                f"doc {doc_id!r}: the predicted document must be a mapping of field names to "
                f"leaves; found {type(pred_doc).__name__}", doc_id=doc_id)
        tally["unknown_fields"] += check.unknown(pred_doc.keys(), known, doc_id)
        tally["unscored_truth_fields"] += len(truth_doc.keys() - known)
        for name, spec, leaf in fields:
            if isinstance(spec, Items):
                first = code[f"{name}.{next(iter(spec.fields))}"]
                _score_items(table, pos, doc_id, name, spec, leaf,
                             list(range(first, first + len(spec.fields))),
                             truth_doc, pred_doc, tally, check)
                continue
            t = _truth_value(truth_doc.get(name), doc_id, name)
            p, c = _pred_value(pred_doc.get(name), doc_id, name)
            table.add(pos, code[name], -1, -1, t, p, c, top_leaf(leaf, t, p), leaf, spec.weight)

    doc = np.array(table.doc, dtype=np.int64)
    outcome = np.array(table.outcome, dtype=np.int8)
    confidence = np.array(table.confidence, dtype=np.float64)
    columns: dict[str, Any] = {
        "doc_id": object_array(doc_ids)[doc],
        "field": pd.Categorical.from_codes(np.array(table.field, dtype=np.int64),
                                           dtype=field_dtype(names)),
        "truth_index": nullable_index(np.array(table.truth_index, dtype=np.int64)),
        "pred_index": nullable_index(np.array(table.pred_index, dtype=np.int64)),
        "truth": pd.Series(object_array(table.truth), dtype=object),
        "prediction": pd.Series(object_array(table.prediction), dtype=object),
        "similarity": np.array(table.similarity, dtype=np.float64),
        "threshold": np.array(table.threshold, dtype=np.float64),
        "correct": np.array(table.correct, dtype=bool),
        "outcome": pd.Categorical.from_codes(outcome, dtype=pd.CategoricalDtype(list(OUTCOMES))),
        "confidence": confidence,
        "weight": np.array(table.weight, dtype=np.float64),
    }
    for column, values in meta.items():
        columns[column] = pd.Series(values[doc], dtype=object).infer_objects()
    entities = pd.DataFrame(columns, copy=False)
    row_counts = np.bincount(outcome, minlength=5)
    counts = {label: int(row_counts[i]) + table.whole[i] for i, label in enumerate(OUTCOMES)}
    counts["documents"] = len(doc_ids)
    counts.update(tally)
    counts["without_confidence"] = int(np.isnan(confidence).sum())
    counts["whole_item_outcomes"] = sum(table.whole)
    counts["excluded_by_conventions"] = table.excluded
    return ExtractionResult(entities=entities, counts=counts,
                            unknown_field_names=tuple(check.seen))


def check_conventions(conventions: Any) -> str:
    """The validated ``conventions`` argument."""
    if not isinstance(conventions, str) or conventions not in CONVENTIONS:
        raise ValidationError(
            f"conventions must be one of {list(CONVENTIONS)}; found {conventions!r}")
    return conventions

