"""Numbers: :func:`parse_number` and :class:`Number`. Public through
:mod:`confcal.scoring.comparators`."""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from typing import Any, ClassVar

import numpy as np

from .._validation import is_missing, is_real, shown
from ..exceptions import ValidationError
from ._kernels import CACHE_SIZE, BatchedMethods
from ._text import Parsed, with_fallback

# ------------------------------------------------------------------------- numbers

# Unicode currency symbols (category Sc) after NFKC, which already folds the full-width
# and small forms (U+FF04, U+FE69) into "$". A run of up to three capitals glued in front
# covers "US$", "C$", "HK$", "R$"; a free-standing three-capital word is an ISO 4217 code.
_CURRENCY_RE = re.compile(
    "[A-Z]{0,3}[$\u00a2-\u00a5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9"
    "\u0e3f\u17db\u20a0-\u20cf\ua838\ufdfc]"
    "|(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])"
)
_EXPONENT_RE = re.compile(r"[eE][+-]?\d+$")
_GROUP_SEPARATORS = " '\u2019"
_MAX_SLACK = 4 * np.finfo(np.float64).eps


def _number_error(text: Any, reason: str) -> ValidationError:
    return ValidationError(f"text must be a number ({reason}); found {shown(text)}")


def _parse_number_str(text: str, decimal: str) -> float:
    """The float of the number a string writes (an infinity of its sign beyond the float
    range); ValidationError if it writes none."""
    return float(_number_literal(text, decimal))


def _number_literal(text: str, decimal: str) -> str:
    """The number a string writes as a plain literal (``"-1234.5e3"``), by the rules below
    in turn; ValidationError if none.

    Each rule takes what the previous one left: currency stripped, then the sign (accounting
    parentheses, percent unit, leading sign), then the exponent, the decimal mark, the digit
    groups, and last the digits themselves.
    """
    s = _strip_currency(text)
    negative, s = _strip_parentheses(s)
    s = _strip_percent(s)
    negative, s = _strip_sign(s, negative, text)
    mantissa, exponent = _split_exponent(s)
    int_part, frac = _split_decimal_mark(mantissa, decimal, text)
    int_part = _join_digit_groups(int_part, decimal, text)
    return ("-" if negative else "") + _digits_literal(int_part, frac, exponent, text)


def _strip_currency(text: str) -> str:
    """NFKC-folded text (Unicode minus as "-") without currency symbols and ISO codes."""
    if text.isascii():
        # In ASCII the pattern needs a "$" or a capital letter: without either there is
        # nothing to strip, and the regular expression (most of a parse's time) is skipped.
        if "$" not in text and text == text.lower():
            return text.strip()
        s = text
    else:
        s = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    return _CURRENCY_RE.sub("", s).strip()


def _strip_parentheses(s: str) -> tuple[bool, str]:
    """Accounting parentheses: "(12.00)" is negative, the inside read on."""
    if s.startswith("(") and s.endswith(")"):
        return True, s[1:-1].strip()
    return False, s


def _strip_percent(s: str) -> str:
    """A trailing percent sign is dropped: "12%" is the number printed, 12, not 0.12.

    The percent sign is the document's unit, like a currency symbol, and stickler-eval
    reads it the same way.
    """
    return s[:-1].strip() if s.endswith("%") else s


def _strip_sign(s: str, negative: bool, text: str) -> tuple[bool, str]:
    """A leading "+" or "-"; refused inside accounting parentheses, which already sign."""
    if not s or s[0] not in "+-":
        return negative, s
    if negative:
        raise _number_error(text, "a sign inside accounting parentheses")
    return s[0] == "-", s[1:].strip()


def _split_exponent(s: str) -> tuple[str, str]:
    """The mantissa and a trailing exponent ("e3", "E-3"; "" when none)."""
    m = _EXPONENT_RE.search(s) if "e" in s or "E" in s else None  # most numbers have none
    return (s[: m.start()], m.group(0)) if m else (s, "")


def _split_decimal_mark(mantissa: str, decimal: str, text: str) -> tuple[str, str]:
    """The integer part and the fraction: at most one decimal mark, only digits after it."""
    if mantissa.count(decimal) > 1:
        raise _number_error(text, f"more than one decimal mark {decimal!r}")
    int_part, _, frac = mantissa.partition(decimal)
    if not frac.isdigit() and frac != "":
        raise _number_error(text, "non-digits after the decimal mark")
    return int_part, frac


def _join_digit_groups(int_part: str, decimal: str, text: str) -> str:
    """The integer part without its digit-group separators, which must group correctly.

    The separators are the thousands mark (whichever of "," and "." is not the decimal
    mark), spaces and apostrophes, one kind per number. Western grouping is 1-3 digits then
    threes, Indian 1-3 then twos then a final three ("1,23,456"). Anything else is most
    likely the other decimal convention ("1,5" with decimal="."), which must not be read
    as fifteen.
    """
    if int_part.isdigit():  # no separator at all, the commonest case
        return int_part
    thousands = "," if decimal == "." else "."
    separators = {ch for ch in int_part if ch == thousands or ch in _GROUP_SEPARATORS}
    if not separators:
        return int_part
    if len(separators) > 1:
        raise _number_error(text, "mixed digit-group separators")
    groups = int_part.split(separators.pop())
    ok = (
        1 <= len(groups[0]) <= 3
        and len(groups[-1]) == 3
        and all(2 <= len(g) <= 3 for g in groups[1:-1])
        and all(g.isdigit() for g in groups)
    )
    if not ok:
        raise _number_error(
            text, f"digit groups must be separated every 3 digits with decimal={decimal!r}"
        )
    return "".join(groups)


def _digits_literal(int_part: str, frac: str, exponent: str, text: str) -> str:
    """Digits, fraction digits and exponent as one literal; digits on one side at least."""
    if not (int_part.isdigit() or (int_part == "" and frac != "")):
        raise _number_error(text, "not a number")
    # int_part/frac are ASCII digits only here (isdigit also accepts e.g. superscripts, but
    # NFKC has folded those), so float() and Decimal() read exactly what was written.
    return f"{int_part or '0'}.{frac or '0'}{exponent}"


# The shapes most amounts take ("1234.5", "$1,234.50", "-$12"), read without the general
# parser: once the whole text has this shape, deleting "$" and "," leaves a literal that
# float() reads as the general parser would; tests check both paths agree.
_PLAIN_AMOUNT_RE = re.compile(r"-?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


@functools.lru_cache(maxsize=CACHE_SIZE)
def _parse_number_cached(text: str, decimal: str) -> float:
    """Parsed value, or NaN when the text is not a number (cached either way); an infinity
    of its sign when the number is beyond the float range."""
    if decimal == "." and _PLAIN_AMOUNT_RE.fullmatch(text):
        return float(text.replace("$", "").replace(",", ""))
    try:
        return _parse_number_str(text, decimal)
    except ValidationError:
        return math.nan


def _check_decimal(decimal: Any) -> None:
    if decimal not in (".", ","):
        raise ValidationError(f"decimal must be one of '.', ','; found {decimal!r}")


def parse_number(text: Any, *, decimal: str = ".") -> float:
    """Parse a number as written on a document.

    Accepts Python numbers and strings with currency symbols and ISO codes (``"$"``,
    ``"US$"``, ``"€"``, ``"USD"``), digit-group separators (``","`` or ``"."`` -- whichever
    is not the decimal mark --, spaces, apostrophes), accounting parentheses for negatives,
    a leading sign, a trailing percent sign (``"12%"`` is 12, the number printed), and
    exponents (``"1e3"``).

    Parameters
    ----------
    text : str or number
        The value to parse. Booleans are refused.
    decimal : {".", ","}, default "."
        The decimal mark. With ``","`` the text ``"1.234,56"`` is 1234.56.

    Returns
    -------
    float

    Raises
    ------
    ValidationError
        If the text is not a finite number, or writes one beyond the float range (above
        about 1.8e308 in magnitude; :class:`Number` compares those exactly as decimals).
        Digit groups must be three digits (after a
        first group of 1-3; two-digit Indian groups are accepted before the last three):
        ``"1,5"`` with ``decimal="."`` is refused rather than read as 15.

    See Also
    --------
    Number : compares parsed numbers.

    Examples
    --------
    >>> parse_number("$1,234.50")
    1234.5
    >>> parse_number("(12.00)")
    -12.0
    >>> parse_number("1.234,56", decimal=",")
    1234.56
    >>> [parse_number(s) for s in ("1e3", "12%", "USD 1 000", "-€3.5", "1,23,456")]
    [1000.0, 12.0, 1000.0, -3.5, 123456.0]
    >>> parse_number("1,5")
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: text must be a number (digit groups must be separated every
    3 digits with decimal='.'); found '1,5'
    """
    _check_decimal(decimal)
    if isinstance(text, (bool, np.bool_)):
        raise _number_error(text, "a bool is not a number")
    if isinstance(text, (int, float, Decimal, np.integer, np.floating)):
        try:
            value = float(text)
        except OverflowError:  # 10**400
            raise _number_error(text, "beyond the float range") from None
        except ValueError:  # Decimal("sNaN")
            raise _number_error(text, "not finite") from None
        if not math.isfinite(value):
            raise _number_error(text, "not finite")
        return value
    if not isinstance(text, str):
        raise _number_error(text, f"expected a string or a number, not {type(text).__name__}")
    value = _parse_number_cached(text, decimal)
    if math.isnan(value):
        _parse_number_str(text, decimal)  # re-run uncached to raise the specific reason
    if math.isinf(value):
        raise _number_error(text, "beyond the float range")
    return value


def _number_or_nan(value: Any, decimal: str) -> float:
    """The float a value writes: NaN if none, an infinity of its sign beyond the float range."""
    if isinstance(value, str):
        return _parse_number_cached(value, decimal)
    if isinstance(value, (int, Decimal, np.integer)) and not isinstance(value, (bool, np.bool_)):
        try:
            return float(value)  # an overflowing Decimal is an infinity already
        except OverflowError:  # an int of 310+ digits
            return math.inf if value > 0 else -math.inf
        except ValueError:  # Decimal("sNaN")
            return math.nan
    try:
        return parse_number(value, decimal=decimal)
    except ValidationError:
        return math.nan


# ----------------------------------------------------- beyond the float range

_NORMAL_MIN = float(np.finfo(np.float64).tiny)  # 2.2e-308, the smallest normal float
_MAX_EXPONENT = 4300
"""Numbers of magnitude 10**4300 and beyond (or 10**-4300 and below, zero aside) are not read
as numbers: exact decimal arithmetic on them costs digits in proportion to the exponent
(4,300 is Python's own limit on the digits of an int written as text)."""


def _unfaithful(values: np.ndarray) -> np.ndarray:
    """Where a parsed float may not be the written number: infinite (beyond the float
    range), or below the normal range (a 1e-400 rounds to 0.0, a 3e-320 keeps few bits)."""
    return np.isinf(values) | (np.abs(values) < _NORMAL_MIN)


def _exact(value: Any, decimal: str) -> Decimal | None:
    """The number a value writes, exactly, as a Decimal; None if it writes none, or one beyond
    10**±:data:`_MAX_EXPONENT`."""
    try:
        if isinstance(value, str):
            number = Decimal(_number_literal(value, decimal))
        elif isinstance(value, (int, float, Decimal, np.integer, np.floating)):
            number = Decimal(value.item() if isinstance(value, np.generic) else value)
        else:
            return None
    except (ValidationError, ArithmeticError, ValueError, TypeError):
        return None
    if not number.is_finite():
        return None
    if number and not -_MAX_EXPONENT < number.adjusted() < _MAX_EXPONENT:
        return None
    return number


def _exact_within(t: Decimal, p: Decimal, rel_tol: float, abs_tol: float) -> bool:
    """``|p - t| <= max(abs_tol, rel_tol * max(|p|, |t|))`` in exact decimal arithmetic.

    Every operation is exact: the context holds as many digits as the difference and the
    product need (at most some 10,000 with both exponents within 10**±4300), so only the
    comparison decides, and two equal numbers always agree.
    """
    rel, absolute = Decimal(rel_tol), Decimal(abs_tol)  # a float converts exactly
    scale = max(abs(t), abs(p))
    exponents = [x.as_tuple().exponent for x in (t, p)]
    span = max(t.adjusted(), p.adjusted()) - min(int(e) for e in exponents) + 2
    product = len(rel.as_tuple().digits) + len(scale.as_tuple().digits) + 2
    context = Context(prec=max(span, product, 28), Emax=MAX_EMAX, Emin=MIN_EMIN)
    difference = context.abs(context.subtract(p, t))
    return bool(difference <= max(absolute, context.multiply(rel, scale)))


def _check_tol(value: Any, name: str) -> None:
    # is_real refuses an int of 310+ digits (a tolerance no float holds) as it refuses inf
    if not (is_real(value) and float(value) >= 0):
        huge = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        raise ValidationError(f"{name} must be a finite number >= 0; found {shown(value)}"
                              + (" (beyond the float range)" if huge else ""))


@dataclass(frozen=True)
class Number(BatchedMethods):
    """1.0 if the parsed numbers agree within tolerance, else 0.0.

    The tolerance is symmetric in truth and prediction:
    ``|p - t| <= max(abs_tol, rel_tol * max(|p|, |t|))``. Values are parsed with
    :func:`parse_number`; a value that is not a number on either side makes the pair fall
    back to :class:`Exact` text comparison (``"N/A"`` equals ``"n/a"``).

    Parameters
    ----------
    rel_tol : float, default 0.01
        Relative tolerance; 1% is the ConfBench paper's tolerance comparator.
    abs_tol : float, default 0.0
        Absolute tolerance.
    decimal : {".", ","}, default "."
        Decimal mark used when parsing strings.

    Attributes
    ----------
    default_threshold : float
        1.0: the comparator is binary, so every threshold in (0, 1] means "within tolerance".

    See Also
    --------
    parse_number : how a value is read as a number.
    Text : the comparator for text.

    Notes
    -----
    Binary floating point rounds the difference of two parsed decimals: ``1.24 - 1.23`` is
    ``0.010000000000000009``. A slack of four units in the last place of the larger
    magnitude is added to the tolerance so that ``abs_tol=0.01`` accepts a one-cent
    difference, as a decimal reading of the documents would.

    Examples
    --------
    >>> Number()("$1,234.50", 1234.5)
    1.0
    >>> Number()(100, 100.9), Number()(100.9, 100)  # symmetric: 0.9 <= 0.01 * 100.9
    (1.0, 1.0)
    >>> Number()(100, 102)
    0.0
    >>> Number(rel_tol=0.0, abs_tol=0.01)("1.23", "1.24")
    1.0
    >>> Number()("N/A", "n/a")  # not numbers: compared as Exact text
    1.0
    """

    rel_tol: float = 0.01
    abs_tol: float = 0.0
    decimal: str = "."
    default_threshold: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        _check_tol(self.rel_tol, "rel_tol")
        _check_tol(self.abs_tol, "abs_tol")
        _check_decimal(self.decimal)

    def _within(self, t: np.ndarray, p: np.ndarray) -> np.ndarray:
        scale = np.maximum(np.abs(t), np.abs(p))
        slack = _MAX_SLACK * scale
        tol = np.maximum(self.abs_tol + slack, (self.rel_tol + _MAX_SLACK) * scale)
        with np.errstate(invalid="ignore"):
            return np.abs(p - t) <= tol  # False wherever a side is NaN

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        pair = np.zeros(1, dtype=np.intp)
        no = np.zeros(1, dtype=bool)
        return float(self._pairs(self._prepare([truth], no), self._prepare([prediction], no),
                                 pair, pair)[0])

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> Parsed:
        dec, cached = self.decimal, _parse_number_cached
        parsed = np.array([
            math.nan if miss else cached(v, dec) if type(v) is str else _number_or_nan(v, dec)
            for v, miss in zip(values, missing.tolist(), strict=True)
        ], dtype=np.float64).reshape(len(values))
        exact: dict[int, Decimal] = {}
        for i in np.flatnonzero(_unfaithful(parsed) & ~missing).tolist():
            number = _exact(values[i], dec)
            if number is None:
                parsed[i] = math.nan  # beyond 10**4300: compared as text
            elif number:  # a written zero is a faithful 0.0
                exact[i] = number
        return _NumberParsed(parsed, np.isnan(parsed) & ~missing, values, missing, exact)

    def _pairs(self, pt: Parsed, pp: Parsed, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        sim = self._within(pt.values[ti], pp.values[pj]).astype(np.float64)
        exact_t, exact_p = getattr(pt, "exact", {}), getattr(pp, "exact", {})
        if exact_t or exact_p:
            sim = self._exact_pairs(sim, (pt, exact_t), (pp, exact_p), ti, pj)
        return with_fallback(sim, pt, pp, ti, pj)

    def _exact_pairs(self, sim: np.ndarray, truth: tuple[Parsed, dict[int, Decimal]],
                     pred: tuple[Parsed, dict[int, Decimal]], ti: np.ndarray,
                     pj: np.ndarray) -> np.ndarray:
        """Pairs with a side beyond the normal float range, compared exactly as decimals."""
        (pt, exact_t), (pp, exact_p) = truth, pred
        flagged = np.isin(ti, list(exact_t)) | np.isin(pj, list(exact_p))
        usable = ~(np.isnan(pt.values[ti]) | np.isnan(pp.values[pj]))  # missing or text
        for k in np.flatnonzero(flagged & usable).tolist():
            i, j = int(ti[k]), int(pj[k])
            t = exact_t.get(i) or _exact(pt.raw[i], self.decimal)
            p = exact_p.get(j) or _exact(pp.raw[j], self.decimal)
            if t is not None and p is not None:
                sim[k] = float(_exact_within(t, p, self.rel_tol, self.abs_tol))
        return sim


class _NumberParsed(Parsed):
    """Parsed numbers with, for those beyond the normal float range, their exact decimal."""

    __slots__ = ("exact",)

    def __init__(self, values: np.ndarray, unparsed: np.ndarray, raw: Sequence[Any],
                 missing: np.ndarray, exact: dict[int, Decimal]) -> None:
        super().__init__(values, unparsed, raw, missing)
        self.exact = exact
