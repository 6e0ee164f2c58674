"""Dates: :func:`parse_date` and :class:`Date`. Public through
:mod:`confcal.scoring.comparators`."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, ClassVar

import numpy as np

from .._validation import is_missing
from ..exceptions import ValidationError
from ._kernels import CACHE_SIZE, BatchedMethods, check_bool
from ._text import Exact, Parsed, with_fallback

# --------------------------------------------------------------------------- dates

_YEAR_FIRST_RE = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})")
_COMPACT_ISO_RE = re.compile(r"(\d{4})(\d{2})(\d{2})")
_FIRST_NUMBER_RE = re.compile(r"\d+")
_NUMERIC_DATE_RE = re.compile(r"(\d{1,2})([-/.])(\d{1,2})\2(\d{4})")
_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_MONTH_NAME_RES = (
    re.compile(rf"{_MONTH}\s+{_DAY},?\s+(?P<year>\d{{4}})", re.IGNORECASE),  # March 1, 2024
    re.compile(rf"{_DAY}\s+{_MONTH},?\s+(?P<year>\d{{4}})", re.IGNORECASE),  # 1 Mar 2024
    re.compile(rf"{_DAY}-{_MONTH}-(?P<year>\d{{4}})", re.IGNORECASE),  # 01-Mar-2024
)
# Two defaults that differ in year, month and day: a component the text does not state is
# filled from the default, so the two parses disagree exactly when one is missing.
_DEFAULTS = (datetime(2000, 1, 1), datetime(2001, 2, 2))


def _valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _dateutil_date(text: str, dayfirst: bool, yearfirst: bool) -> date | None:
    from dateutil import parser  # import cost paid only by unusual formats

    results = []
    for default in _DEFAULTS:
        try:
            parsed = parser.parse(text, default=default, dayfirst=dayfirst, yearfirst=yearfirst)
        except (ValueError, OverflowError, TypeError):
            return None
        results.append(parsed.date())
    return results[0] if results[0] == results[1] else None


@functools.lru_cache(maxsize=CACHE_SIZE)
def _parse_date_cached(text: str, dayfirst: bool) -> date | None:
    """The calendar date a string writes, by the first rule whose form it has; None if not."""
    s = text if text.isascii() else unicodedata.normalize("NFKC", text)
    s = s.strip()
    if len(s) == 10 and s[4] == "-" and s[7] == "-":
        # Plain ISO, the commonest form, parsed in C; an invalid day falls through and is
        # refused below.
        try:
            return date.fromisoformat(s)
        except ValueError:
            pass
    if not s:
        return None
    m = _YEAR_FIRST_RE.match(s)
    if m:
        return _year_first_date(s, m)
    m = _COMPACT_ISO_RE.fullmatch(s)
    if m:
        return _valid_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _NUMERIC_DATE_RE.fullmatch(s)
    if m:
        return _numeric_date(int(m.group(1)), int(m.group(3)), int(m.group(4)), dayfirst)
    for pattern in _MONTH_NAME_RES:
        m = pattern.fullmatch(s)
        if m:
            month = _MONTHS[m.group("month").lower()]
            return _valid_date(int(m.group("year")), month, int(m.group("day")))
    return _other_date(s, dayfirst)


def _year_first_date(s: str, m: re.Match[str]) -> date | None:
    """A date that starts year, month, day ("2024-03-01", "2024/3/1", an ISO datetime).

    Year first fixes the order to year-month-day: dayfirst is never applied here (dateutil
    would read "2024-03-01" with dayfirst=True as 3 January).
    """
    if m.end() == len(s):
        return _valid_date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
    try:
        return datetime.fromisoformat(s).date()
    except ValueError:
        return _dateutil_date(s, dayfirst=False, yearfirst=True)


def _numeric_date(a: int, b: int, year: int, dayfirst: bool) -> date | None:
    """A numeric date "a/b/year" (or with "-" or "."): month first, or day first with
    ``dayfirst``.

    One reading, chosen by dayfirst; the other only when the first cannot be a date because
    a number exceeds 12 (then only one reading exists). This is dateutil's rule, never
    "whichever matches the other value".
    """
    first = _valid_date(year, b, a) if dayfirst else _valid_date(year, a, b)
    if first is not None or (a <= 12 and b <= 12):
        return first
    return _valid_date(year, a, b) if dayfirst else _valid_date(year, b, a)


def _other_date(s: str, dayfirst: bool) -> date | None:
    """Any other form, read by dateutil; a leading year (or yyyymmdd) is ISO order.

    "Fri 2024-03-01", "2024 03 01", "20240301T000000" are never re-read day-first.
    """
    leading = _FIRST_NUMBER_RE.search(s)
    if leading is not None and len(leading.group()) in (4, 8):
        return _dateutil_date(s, dayfirst=False, yearfirst=True)
    return _dateutil_date(s, dayfirst=dayfirst, yearfirst=False)


def _date_or_none(value: Any, dayfirst: bool) -> date | None:
    if isinstance(value, str):
        return _parse_date_cached(value, dayfirst)
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return None


@functools.lru_cache(maxsize=CACHE_SIZE)
def _ordinal_cached(text: str, dayfirst: bool) -> int:
    parsed = _parse_date_cached(text, dayfirst)
    return 0 if parsed is None else parsed.toordinal()


def _ordinal(value: Any, dayfirst: bool) -> int:
    parsed = _date_or_none(value, dayfirst)
    return 0 if parsed is None else parsed.toordinal()


def parse_date(text: Any, *, dayfirst: bool = False) -> date:
    """Parse a calendar date as written on a document.

    Year-first dates (``"2024-03-01"``, ``"2024/03/01"``, ``"20240301"``, ISO datetimes
    such as ``"2024-03-01T00:00:00"``) are always year-month-day, whatever ``dayfirst``
    says. ``"03/01/2024"`` is read one way only: month first, or day first with
    ``dayfirst=True``; the other order is used only when the first is impossible (a number
    above 12). Month names (English), weekday prefixes and other formats go through
    ``dateutil``. Text that leaves the year, month or day unstated (``"March 2024"``,
    ``"12"``) is not a date: nothing is filled in from today's date. Times and UTC offsets
    are ignored; the calendar date as written is returned. Two-digit years follow
    dateutil's window (within 50 years of today).

    Parameters
    ----------
    text : str, datetime.date or datetime.datetime
        The value to parse.
    dayfirst : bool, default False
        Read an ambiguous ``"01/03/2024"`` as 1 March rather than 3 January.

    Returns
    -------
    datetime.date

    Raises
    ------
    ValidationError
        If the text is not a complete calendar date.

    See Also
    --------
    Date : compares parsed dates.

    Examples
    --------
    >>> parse_date("03/01/2024")
    datetime.date(2024, 3, 1)
    >>> parse_date("03/01/2024", dayfirst=True)
    datetime.date(2024, 1, 3)
    >>> parse_date("2024-03-01", dayfirst=True)  # ISO is never read day-first
    datetime.date(2024, 3, 1)
    >>> parse_date("March 1, 2024") == parse_date("1 Mar 2024") == parse_date("2024-03-01T00:00:00")
    True
    >>> parse_date("March 2024")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: text must be a complete calendar date (year, month and day);
    found 'March 2024'
    """
    check_bool(dayfirst, "dayfirst")
    parsed = _date_or_none(text, dayfirst)
    if parsed is None:
        raise ValidationError(
            f"text must be a complete calendar date (year, month and day); found {text!r}"
        )
    return parsed


@dataclass(frozen=True)
class Date(BatchedMethods):
    """1.0 if both values are the same calendar date, else 0.0.

    Values are parsed with :func:`parse_date` (each distinct string once; the result is
    cached). A value that is not a date on either side makes the pair fall back to
    :class:`Exact` text comparison, so ``"TBD"`` equals ``"tbd"`` and a date never equals
    text that is not a date.

    Parameters
    ----------
    dayfirst : bool, default False
        Read ambiguous numeric dates day-first. Applied to both sides in the same way.

    Attributes
    ----------
    default_threshold : float
        1.0: the comparator is binary, so every threshold in (0, 1] means "same day".

    See Also
    --------
    parse_date : how a value is read as a date.
    Number : the comparator for numbers.

    Examples
    --------
    >>> same = Date()
    >>> [same("2024-03-01", p) for p in ("03/01/2024", "March 1, 2024", "1 Mar 2024",
    ...                                  "2024-03-01T00:00:00", "2024-03-02")]
    [1.0, 1.0, 1.0, 1.0, 0.0]
    >>> Date(dayfirst=True)("2024-03-01", "01/03/2024")
    1.0
    """

    dayfirst: bool = False
    default_threshold: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        check_bool(self.dayfirst, "dayfirst")

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        t = _date_or_none(truth, self.dayfirst)
        p = _date_or_none(prediction, self.dayfirst)
        if t is None or p is None:
            return Exact()(truth, prediction)
        return float(t == p)

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> Parsed:
        # Proleptic Gregorian ordinals (>= 1); 0 for missing values and non-dates.
        dayfirst, cached = self.dayfirst, _ordinal_cached
        ordinals = np.array([
            0 if miss else cached(v, dayfirst) if type(v) is str else _ordinal(v, dayfirst)
            for v, miss in zip(values, missing.tolist(), strict=True)
        ], dtype=np.int64).reshape(len(values))
        return Parsed(ordinals, (ordinals == 0) & ~missing, values, missing)

    def _pairs(self, pt: Parsed, pp: Parsed, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        sim = (pt.values[ti] == pp.values[pj]).astype(np.float64)
        return with_fallback(sim, pt, pp, ti, pj)


