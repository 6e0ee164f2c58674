"""Reading answers for the rule judge: words, yes/no, declines, dates, quantities (with
their signs, durations and ranges), the words and years each number belongs to
(:func:`bind`), and how two numbers compare (:func:`compare`).

Private helpers of :mod:`confcal.qa.docqa`. Every reader here is deliberately narrow: it
recognises the forms listed in its docstring and nothing else, so that the rule judge can
say "undecided" instead of guessing when an answer is phrased some other way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeAlias

from rapidfuzz.distance import Levenshtein

from ..exceptions import ValidationError
from ..scoring.comparators import parse_date, parse_number
from ._names import currency_after, currency_of

__all__ = [
    "DIRECTION_PAIRS",
    "NEGATIONS",
    "Bound",
    "Dates",
    "Quantity",
    "bind",
    "close",
    "compare",
    "after_contrast",
    "content_words",
    "contrary",
    "dates_in",
    "declines",
    "direction",
    "is_direction_word",
    "negated",
    "opposed",
    "polarities_said",
    "polarity",
    "prepare",
    "quantities_in",
    "ranges_in",
    "share_question",
    "similarity",
    "stem",
    "strip_quantities",
    "words",
]


def prepare(text: str) -> str:
    """NFKC with typographic apostrophes, dashes and minus signs folded to ASCII."""
    s = unicodedata.normalize("NFKC", text)
    return (s.replace("\u2019", "'").replace("\u2018", "'").replace("\u2212", "-")
            .replace("\u2013", "-").replace("\u2014", " - "))


# ------------------------------------------------------------------------------ words
# A number keeps its decimal mark and digit groups ("5.5", "1,000"): the word "55" made by
# deleting punctuation would match "5.5" against "55".
# A minus glued to a number stays ("-3.5" is not "3.5"); the dash of "20-40" is no minus.
_WORD_RE = re.compile(r"(?:(?<![\w.)-])-)?\d+(?:[.,]\d+)*|[^\W_]+")
_ARTICLES = frozenset({"a", "an", "the"})
# Function words that carry no answer content. Negations are not here on purpose: "not
# Jane Smith" must not reduce to "jane smith".
_STOPWORDS = _ARTICLES | frozenset({
    "is", "are", "was", "were", "be", "been", "being", "am", "of", "in", "on", "at", "to",
    "for", "by", "with", "and", "or", "as", "it", "its", "this", "that", "these", "those",
    "from", "which", "who", "whom", "whose", "what", "when", "where", "why", "how", "there",
    "their", "they", "he", "she", "his", "her", "has", "have", "had", "do", "does", "did",
    "according", "document", "report", "paper", "article", "text", "answer", "s",
})
NEGATIONS = frozenset({"not", "no", "never", "none", "neither", "nor", "nothing", "t"})
"""The negation words :func:`negated` looks for ("t" is what is left of "n't")."""


def words(text: str) -> list[str]:
    """Casefolded words and numbers of a text, punctuation and articles dropped.

    >>> words("The CEO's name: Jane Smith, since 1,000.5 days.")
    ['ceo', 's', 'name', 'jane', 'smith', 'since', '1,000.5', 'days']
    >>> words("-3.5% (2015-2019)")
    ['-3.5', '2015', '2019']
    """
    return [w for w in _WORD_RE.findall(prepare(text).casefold()) if w not in _ARTICLES]


def content_words(text: str, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Words that carry content: not function words and not in ``exclude`` (the question).

    >>> content_words("The author is Jane Smith.", frozenset({"author"}))
    ['jane', 'smith']
    """
    return [w for w in words(text) if w not in _STOPWORDS and w not in exclude]


def negated(text: str) -> bool:
    """True when the text contains a negation word ("not", "no", "never", "n't", ...).

    >>> negated("It was not Jane Smith"), negated("Jane Smith"), negated("didn't")
    (True, False, True)
    """
    return any(w in NEGATIONS for w in words(text))


# --------------------------------------------------------------------------- yes / no
_YES = frozenset({"yes", "yeah", "yep", "yup", "correct", "true", "indeed", "affirmative"})
_NO = frozenset({"no", "nope", "incorrect", "false", "negative"})
_POLARITY_RE = re.compile(
    r"^[\W_]*(?:(?:the\s+)?answer\s*(?:is\s*)?:?\s*)?(?P<word>[a-z]+)\b(?P<rest>.*)$", re.DOTALL)
# A yes/no word counts only when it stands alone: at the end, before punctuation, or
# before the subject of a restating clause ("Yes it does", "No they did not"). "No
# information is given" starts with "no" and is not an answer "no"; "Yes-ish" is a word.
_POLARITY_REST_RE = re.compile(
    r"^(?:\s*$|\s*[,.;:!?)\]*\"']|\s*-(?:\s|$)"
    r"|\s+(?:it|its|they|their|he|his|she|her|this|that|there|the|we|i|you|both|all)\b)")


def polarity(text: str) -> bool | None:
    """True for a yes, False for a no, None when the text does not open with either.

    Recognised: "yes", "yeah", "yep", "yup", "correct", "true", "indeed", "affirmative",
    and "no", "nope", "incorrect", "false", "negative", as the first word (optionally after
    "Answer:" or "The answer is"), standing alone or followed by punctuation or a restating
    clause.

    >>> [polarity(t) for t in ("Yes, it does.", "No.", "Correct", "No information given",
    ...                        "The answer is no", "It does", "**Yes**")]
    [True, False, True, None, False, None, True]
    """
    m = _POLARITY_RE.match(prepare(text).casefold().strip())
    if m is None or not _POLARITY_REST_RE.match(m.group("rest")):
        return None
    word = m.group("word")
    if word in _YES:
        return True
    if word in _NO:
        return False
    return None


# --------------------------------------------------------------------------- declines
_VERBS = (r"mention|state|specify|say|provide|contain|include|indicate|disclose|report|"
          r"discuss|give|list|reveal|describe|address|cover|show|offer|present|name|"
          r"identify|detail|break\s+(?:out|down)|have|appear")
_PARTICIPLES = (r"mentioned|stated|specified|provided|given|available|disclosed|reported|"
                r"included|indicated|listed|discussed|described|addressed|covered|found|"
                r"known|shown|present|offered|presented|named|identified|detailed")
_ADVERB = r"(?:explicitly\s+|specifically\s+|directly\s+|clearly\s+)?"
_SOURCE = (r"(?:document|paper|report|article|text|filing|study|source|material|statement|"
           r"agreement|contract|act|law|bill|file|page|pages|story|release|notice|table|"
           r"figure|provided\s+\w+|given\s+\w+)")
_DECLINE_RE = re.compile(
    rf"\b(?:does|did|do)\s*(?:not|n't)\s+{_ADVERB}(?:{_VERBS})\b"
    rf"|\b(?:is|are|was|were)\s*(?:not|n't)\s+{_ADVERB}(?:{_PARTICIPLES})\b"
    rf"|\bnot\s+{_ADVERB}(?:{_PARTICIPLES})\b"
    r"|\bno\s+(?:specific\s+|explicit\s+|such\s+|relevant\s+)?(?:information|mention|data|"
    r"details?|indication|reference|record|evidence)\b"
    # "there is no email address in the paper", "there are no appendices in the report"
    rf"|\bthere\s+(?:is|are|was|were)\s+no\b[^.;]{{0,80}}?\b(?:in|within|from|on)\s+"
    rf"(?:the|this|that)\s+{_SOURCE}\b"
    # "no funding source is given", "no phone number is listed in the document"
    # (not "no significant effect was found": a finding, not a decline)
    rf"|\bno\s+[\w\s'-]{{1,40}}?\b(?:is|are|was|were|has\s+been|have\s+been)\s+{_ADVERB}"
    r"(?:mentioned|stated|specified|provided|given|disclosed|reported|listed|named|"
    r"included|identified|indicated)\b"
    r"|\b(?:could|can|did|do|does)\s*(?:not|n't)\s+(?:find|locate|see|identify)\b"
    r"|\b(?:cannot|can't|can\s+not|unable\s+to|impossible\s+to|not\s+possible\s+to)\s+"
    r"(?:be\s+)?(?:determine[ds]?|answer(?:ed)?|find|found|tell|know|known|infer(?:red)?|"
    r"identif(?:y|ied)|locate[ds]?)\b"
    r"|\b(?:insufficient|not\s+enough)\s+(?:information|data|details|context)\b"
    r"|\bunanswerable\b|\bnot\s+answerable\b|\bn/a\b|\bi\s+(?:do\s+not|don't)\s+know\b"
    r"|\bnone\s+(?:is\s+|are\s+)?(?:given|stated|mentioned|provided)\b",
)


def declines(text: str) -> bool:
    """True when the text says the document does not give the answer.

    Recognised: "does not / doesn't mention, state, specify, say, provide, name, ...", "not
    mentioned, stated, specified, provided, available, named, ...", "no information,
    mention, data, details", "there is / are no ... in the document / paper / report /
    ...", "no ... is given / listed / mentioned / ...", "could not find", "cannot be
    determined / cannot find", "insufficient information", "unanswerable", "N/A", "I
    don't know".

    >>> [declines(t) for t in ("The document does not mention the CEO's salary.",
    ...                        "Not stated", "No information is provided.",
    ...                        "This cannot be determined from the report.",
    ...                        "No, it does.", "It is stated on page 3",
    ...                        "There is no email address in the paper.",
    ...                        "There is no significant effect.")]
    [True, True, True, True, False, False, True, False]
    """
    return _DECLINE_RE.search(prepare(text).casefold()) is not None


# ------------------------------------------------------------------------------ dates
_MONTH_NAMES = {
    name: i
    for i, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")),
        start=1)
    for name in names
}
_MONTH = r"(?:" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)?"
_FULL_DATE_RE = re.compile(
    r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b"  # 2024-03-01, 2024/03/01
    r"|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{4}\b"  # 03/01/2024
    rf"|\b{_MONTH}\s+\d{{1,2}}{_ORD},?\s+\d{{4}}\b"  # March 1, 2024
    rf"|\b\d{{1,2}}{_ORD}\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}\b"  # 1 March 2024, 1st of March 2024
    rf"|\b\d{{1,2}}-{_MONTH}-\d{{4}}\b",  # 01-Mar-2024
    re.IGNORECASE)
_MONTH_YEAR_RE = re.compile(rf"\b(?P<month>{_MONTH}),?\s+(?P<year>\d{{4}})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Dates:
    """Dates found in a text: full calendar dates and month-year dates ("March 2024")."""

    full: tuple[date, ...]
    months: tuple[tuple[int, int], ...]  # (year, month)
    rest: str  # the text with every date replaced by a space

    def __bool__(self) -> bool:
        return bool(self.full or self.months)

    def has(self, other: Dates, index: int, full: bool) -> bool:
        """Does this text state other's date ``index`` at that date's precision?"""
        if full:
            return other.full[index] in self.full
        year_month = other.months[index]
        return (year_month in self.months
                or any((d.year, d.month) == year_month for d in self.full))

    def describe(self) -> list[str]:
        return [d.isoformat() for d in self.full] + [f"{y}-{m:02d}" for y, m in self.months]


def dates_in(text: str, *, dayfirst: bool = False, keep_years: bool = False) -> Dates:
    """Full dates (any format :func:`confcal.parse_date` reads) and month-year dates.

    A numeric date such as 03/01/2024 is read month first, or day first with ``dayfirst``.
    A span that looks like a date but is not one (2024-13-45) is left in the text. With
    ``keep_years``, ``rest`` keeps each date's year in its place ("on March 1, 2024" ->
    "on 2024"), for reading which year a number belongs to.

    >>> found = dates_in("Signed on March 1, 2024 and filed 2024-03-05; due April 2025.")
    >>> found.describe()
    ['2024-03-01', '2024-03-05', '2025-04']
    """
    full: list[date] = []
    pieces: list[str] = []
    last = 0
    for m in _FULL_DATE_RE.finditer(text):
        span = re.sub(r"\s+of\s+", " ", m.group(0), flags=re.IGNORECASE)
        try:
            full.append(parse_date(span, dayfirst=dayfirst))
        except ValidationError:
            continue
        pieces.append(text[last:m.start()])
        if keep_years:
            pieces.append(str(full[-1].year))
        last = m.end()
    pieces.append(text[last:])
    rest = " ".join(pieces)
    months: list[tuple[int, int]] = []

    def month_year(m: re.Match[str]) -> str:
        months.append((int(m.group("year")),
                       _MONTH_NAMES[m.group("month").rstrip(".").lower()]))
        return f" {m.group('year')} " if keep_years else " "

    rest = _MONTH_YEAR_RE.sub(month_year, rest)
    return Dates(full=tuple(full), months=tuple(months), rest=rest)


# ------------------------------------------------------------------------- quantities
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
           "mn": 1e6, "mln": 1e6, "bn": 1e9, "bln": 1e9, "tn": 1e12}
# Glued one-letter scales: "5.5M", "$3bn", "$40k". A lower-case "m" or "b" is a unit
# (metres, bytes) unless a currency sign says the number is money.
_LETTER_SCALES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}
_MONEY_LETTER_SCALES = {"m": 1e6, "b": 1e9}
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_NUMBER_WORDS = ({w: float(i) for i, w in enumerate(_UNITS + _TEENS)}
                 | {w: 10.0 * i for i, w in enumerate(_TENS, start=2)})
# English number words as a grammar, so that "two hundred and forty" is one number (240),
# not the numbers 2 and 40, while "two and three" stays two numbers.
_BELOW_100 = (rf"(?:(?:{'|'.join(_TENS)})(?:[-\s](?:{'|'.join(_UNITS[1:])}))?"
              rf"|{'|'.join(_TEENS)}|{'|'.join(_UNITS)})")
_BELOW_1000 = (rf"(?:(?:{'|'.join(_UNITS[1:])})\s+hundred(?:\s+(?:and\s+)?{_BELOW_100}\b)?"
               rf"|{_BELOW_100})")
_WORD_NUMBER = (rf"{_BELOW_1000}\b(?:\s+thousand\b(?:\s+(?:and\s+)?{_BELOW_1000}\b)?)?")


def _words_value(text: str) -> float:
    """The value of a phrase matched by the number-word grammar."""
    total = current = 0.0
    for word in re.split(r"[\s-]+", text.lower()):
        if word == "hundred":
            current *= 100
        elif word == "thousand":
            total, current = total + current * 1000, 0.0
        elif word != "and":
            current += _NUMBER_WORDS[word]
    return total + current

_CURRENCY = (r"(?:[A-Z]{0,2}[$\u20ac\u00a3\u00a5\u20b9]"
             r"|\b(?:USD|EUR|GBP|JPY|CNY|RMB|INR|CAD|AUD|CHF)\s?)")
# A sign counts only when it is glued to the number (or its currency) and does not follow a
# word, a digit or a closing bracket: "-3.5%", "-$12.3 million", "$-12.3", "+2.1"; the dash
# of a range ("20-40", "2015-2019") or a name ("COVID-19") is no sign.
_QUANTITY_RE = re.compile(
    r"(?P<sign>(?<![\w%)\].,+-])[-+])?"
    rf"(?:(?P<currency>{_CURRENCY})(?P<csign>-)?)?"
    r"(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?|\.\d+)"
    r"(?![\d])"
    rf"|(?P<word>\b{_WORD_NUMBER})"
    r"|\bFY\s?'?(?P<fy>\d{4}|\d{2})\b",
    re.IGNORECASE)
_AFTER_RE = re.compile(
    r"(?P<glued>[kKMBmb]|bn|mn|tn)\b"
    r"|\s*(?P<pct>%|percent\b|per\s?cent\b|pct\b)"
    r"|\s*(?P<scale>thousand|million|billion|trillion|mln|bln|mn|bn|tn)\b",
    re.IGNORECASE)
_HALF_RE = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
# Units after a number, as (dimension, size in the dimension's base unit). Only exact
# conversions: a year is 12 months and a day 24 hours, but a month is no whole number of
# days, so months and days are different dimensions; a tonne is 1,000 kg and a foot
# 0.3048 m, while a "ton" (short, long or metric) and a "pound" (weight or money) are left
# unread.
_DURATIONS = {"year": ("month", 12.0), "yr": ("month", 12.0), "quarter": ("month", 3.0),
              "month": ("month", 1.0), "mo": ("month", 1.0), "week": ("minute", 10080.0),
              "day": ("minute", 1440.0), "hour": ("minute", 60.0), "hr": ("minute", 60.0),
              "minute": ("minute", 1.0), "min": ("minute", 1.0)}
_MEASURES = {
    "mg": ("gram", 1e-3), "milligram": ("gram", 1e-3), "g": ("gram", 1.0),
    "gram": ("gram", 1.0), "kg": ("gram", 1e3), "kilogram": ("gram", 1e3),
    "kilo": ("gram", 1e3), "tonne": ("gram", 1e6), "metric ton": ("gram", 1e6),
    "lb": ("gram", 453.59237), "mm": ("metre", 1e-3), "millimetre": ("metre", 1e-3),
    "millimeter": ("metre", 1e-3), "cm": ("metre", 1e-2), "centimetre": ("metre", 1e-2),
    "centimeter": ("metre", 1e-2), "m": ("metre", 1.0), "metre": ("metre", 1.0),
    "meter": ("metre", 1.0), "km": ("metre", 1e3), "kilometre": ("metre", 1e3),
    "kilometer": ("metre", 1e3), "ft": ("metre", 0.3048), "foot": ("metre", 0.3048),
    "feet": ("metre", 0.3048), "mile": ("metre", 1609.344)}
_DURATION_RE = re.compile(
    r"(?:\s+|-)(?P<unit>years?|yrs?|quarters?|months?|mos|weeks?|days?|hours?|hrs?|minutes?"
    r"|mins?)\b", re.IGNORECASE)
# Abbreviations in lower case only and never before "/", "²" or "³" (a rate or an area is
# another dimension): "5 G" and "3 M" are no grams or metres.
_MEASURE_RE = re.compile(
    r"(?:\s*|-)(?:(?P<abbr>mg|g|kg|lbs?|mm|cm|m|km|ft)(?![\w/\u00b2\u00b3-]|\.\w)"
    r"|(?i:(?P<word>(?:milli|centi|kilo)?(?:grams?|metres?|meters?)|kilos?|tonnes?"
    r"|metric\s+tons?|feet|foot|miles?))\b(?![/\u00b2\u00b3]))")
# Basis points and percentage points are percents: "525 basis points" is 5.25%.
_POINTS_RE = re.compile(r"\s*(?P<bp>basis\s+points?|bps?\b)|\s+percentage\s+points?\b",
                        re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number as stated: magnitude (scale words applied), percent or not, and precision.

    ``precision`` is the unit of the last digit written, scaled: 1 for "2019", 0.1 for
    "91.4", 100,000 for "5.5 million". ``sign`` is -1 or +1 when a minus or plus sign is
    written, else 0 (the magnitude is ``value`` either way). ``unit`` is the dimension of a
    duration ("month" for years, quarters and months; "minute" for weeks, days, hours and
    minutes) and ``per_unit`` the size of the written unit in it (12 for years).
    ``currency`` is the set of currencies a written sign or code can mean ("$" any dollar,
    "US$" and "USD" the US dollar, "\u00a5" yen or yuan; or a word or code right after the
    number, "3 million euros": :func:`currency_after`), None when none is written or the
    sign is not one :func:`currency_of` knows.
    """

    value: float
    percent: bool
    text: str
    precision: float = 1.0
    sign: int = 0
    unit: str | None = None
    per_unit: float = 1.0
    currency: frozenset[str] | None = None

    @property
    def is_year(self) -> bool:
        """A calendar year as written: "2019", "FY2020", "FY23" (1800 to 2100)."""
        return (not self.percent and self.unit is None and self.precision == 1.0
                and re.fullmatch(r"(?:FY\s?'?)?\d{2}(?:\d{2})?", self.text, re.IGNORECASE)
                is not None and (self.text[:2].upper() == "FY" or len(self.text) == 4)
                and 1800 <= self.value <= 2100)


def _number_value(number: str) -> tuple[float, float]:
    """Value and precision of a digit string ("5,500.25", "3e-4")."""
    mantissa, _, exponent = number.lower().partition("e")
    _, _, decimals = mantissa.partition(".")
    if exponent:
        power = int(exponent) - len(decimals)
        if abs(power) > 300:  # beyond a float: no number that can be compared
            return math.inf, math.inf
        return float(number), 10.0 ** power
    return parse_number(number), 10.0 ** -len(decimals)


def _fiscal_year(m: re.Match[str]) -> Quantity:
    """The year of "FY2020" or "FY23" (two digits are this century's)."""
    digits = m.group("fy")
    year = float(digits) + (2000.0 if len(digits) == 2 else 0.0)
    return Quantity(year, False, m.group(0))


def _read_number(m: re.Match[str]) -> tuple[float, float] | None:
    """Value and precision of the digits or number words matched, None for no number."""
    if m.group("word"):
        return _words_value(m.group("word")), 1.0
    value, precision = _number_value(m.group("number"))
    if not (math.isfinite(value) and precision > 0):  # "1e999": no number to read
        return None
    return value, precision


def _scale_after(text: str, m: re.Match[str], end: int) -> tuple[float, bool, int]:
    """(scale, percent, end) of a number from what is written right after it: a glued
    scale letter ("5.5M", "$3m" after a currency sign), a percent sign or word, or a
    scale word ("5.5 million")."""
    after = _AFTER_RE.match(text, end)
    if after is None:
        return 1.0, False, end
    glued = after.group("glued")
    if glued is not None and m.group("word") is None:
        letter = (_LETTER_SCALES.get(glued) or _SCALES.get(glued.lower())
                  or (_MONEY_LETTER_SCALES.get(glued)
                      if m.group("currency") or currency_after(text, after.end()) else None))
        return (1.0, False, end) if letter is None else (letter, False, after.end())
    if after.group("pct"):
        return 1.0, True, after.end()
    if after.group("scale"):
        return _SCALES[after.group("scale").lower()], False, after.end()
    return 1.0, False, end


def _unit_after(text: str, end: int) -> tuple[str | None, float, int]:
    """(dimension, size of the unit in its base unit, end) of a unit written after a
    number: a duration ("24 months", "60-month"), a mass ("2,400 kg", "2.4 tonnes") or a
    length ("3.2 km", "3,200 metres"); (None, 1.0, end) for none."""
    duration = _DURATION_RE.match(text, end)
    if duration is not None:
        word = duration.group("unit").lower()
        unit, per_unit = _DURATIONS.get(word, _DURATIONS.get(word.rstrip("s"), (None, 1.0)))
        return unit, per_unit, (end if unit is None else duration.end())
    measure = _MEASURE_RE.match(text, end)
    if measure is None:
        return None, 1.0, end
    word = " ".join((measure.group("abbr") or measure.group("word")).lower().split())
    if word not in _MEASURES:
        word = "lb" if word == "lbs" else word.removesuffix("s")
    unit, per_unit = _MEASURES[word]
    return unit, per_unit, measure.end()


def _quantity_matches(text: str) -> list[tuple[Quantity, int, int]]:
    found: list[tuple[Quantity, int, int]] = []
    for m in _QUANTITY_RE.finditer(text):
        if m.group("fy"):
            found.append((_fiscal_year(m), m.start(), m.end()))
            continue
        number = _read_number(m)
        if number is None:
            continue
        value, precision = number
        sign = {"-": -1, "+": 1}.get(m.group("sign") or m.group("csign") or "", 0)
        end = m.end()
        half = _HALF_RE.match(text, end)
        if half is not None and precision >= 1.0:  # "one and a half years"
            value, precision, end = value + 0.5, 0.5, half.end()
        scale, percent, end = _scale_after(text, m, end)
        points = None if percent or scale != 1.0 else _POINTS_RE.match(text, end)
        if points is not None:  # 525 basis points = 5.25%; 1.5 percentage points = 1.5%
            bp = 0.01 if points.group("bp") else 1.0
            value, precision, percent, end = value * bp, precision * bp, True, points.end()
        money = m.group("currency") is not None or currency_after(text, end) is not None
        unit, per_unit, end = ((None, 1.0, end) if percent or money
                               else _unit_after(text, end))
        quantity = Quantity(value=value * scale, percent=percent,
                            text=text[m.start():end].strip(), precision=precision * scale,
                            sign=sign, unit=unit, per_unit=per_unit,
                            currency=currency_of(m.group("currency"))
                            or currency_after(text, end))
        found.append((quantity, m.start(), end))
    return found


def quantity_spans(text: str) -> list[tuple[Quantity, int, int]]:
    """The quantities of a text with where each is written (start, end) in
    ``prepare(text)``.

    >>> [(q.value, start, end) for q, start, end in quantity_spans("up to $5,000")]
    [(5000.0, 6, 12)]
    """
    return _quantity_matches(prepare(text))


def strip_quantities(text: str) -> str:
    """The text with every number (and its scale word or percent sign) replaced by a space.

    >>> strip_quantities("about $5.5 million dollars, up 12%").split()
    ['about', 'dollars,', 'up']
    """
    text = prepare(text)
    pieces, last = [], 0
    for _, start, end in _quantity_matches(text):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return " ".join(pieces)


def quantities_in(text: str) -> list[Quantity]:
    """Numbers in a text, with signs, scale words, percents, durations and separators read.

    Recognised: digits with comma groups, a decimal point or an exponent ("5,500,000",
    "5.5", "3e-4"); a minus or plus sign glued to the number or its currency ("-3.5%",
    "-$12.3 million", "+2.1"; not the dash of a range, "20-40"); scale words after the
    number ("5.5 million", "3 bn"), glued scale letters ("5.5M", "$40k", and "$3m" after a
    currency sign); percent signs and words ("12%", "12 percent"); a duration unit after it
    ("24 months", "60-month", "2 years"); "and a half"; fiscal years ("FY2020", "FY23");
    English number words below a million ("forty-two", "two hundred and forty", "three
    thousand"). Words of direction ("a loss of 2 million") are not signs here: the rule
    judge reads them around the number (:func:`bind`).

    >>> [(q.value, q.percent) for q in quantities_in("$5.5 million, 12% and 5,500,000; three")]
    [(5500000.0, False), (12.0, True), (5500000.0, False), (3.0, False)]
    >>> [q.value for q in quantities_in("two hundred and forty cores, forty-two sites, "
    ...                                 "two and three, one thousand and five, five million")]
    [240.0, 42.0, 2.0, 3.0, 1005.0, 5000000.0]
    >>> [(q.value, q.sign, q.unit) for q in quantities_in("-3.5%, 20-40, 2 years, FY23")]
    [(3.5, -1, None), (20.0, 0, None), (40.0, 0, None), (2.0, 0, 'month'), (2023.0, 0, None)]
    """
    return [q for q, _, _ in _quantity_matches(prepare(text))]


_RANGE_JOIN_RE = re.compile(r"\s*(?:-|to|through|until|and)\s*", re.IGNORECASE)
_RANGE_OPEN_RE = re.compile(r"(?:between|from|range[sd]?\s+from|ranging\s+from)\s*$",
                            re.IGNORECASE)


def _range_pairs(text: str, spans: list[tuple[Quantity, int, int]]) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(spans) - 1):
        (a, _, a_end), (b, b_start, _) = spans[i], spans[i + 1]
        join = text[a_end:b_start]
        if not _RANGE_JOIN_RE.fullmatch(join) or a.is_year != b.is_year:
            continue
        word = join.strip().lower()
        opened = _RANGE_OPEN_RE.search(text[:spans[i][1]]) is not None
        # "between X and Y" is a range, "X and Y" a list; "from X to Y" with X > Y a change.
        if (word == "and" and not opened) or a.sign or b.sign or not a.value < b.value:
            continue
        pairs.append((i, i + 1))
    return pairs


def ranges_in(text: str) -> list[tuple[Quantity, Quantity]]:
    """Ranges: "20-40", "18 to 34", "between 20 and 40", "from 2015 to 2019", low to high.

    A falling "from 4,100 to 3,200" is a change, not a range; "20 and 40" is a list.

    >>> [(a.value, b.value) for a, b in ranges_in("between 20 and 40 mg, from 9 to 3, 5-10%")]
    [(20.0, 40.0), (5.0, 10.0)]
    """
    text = prepare(text)
    spans = _quantity_matches(text)
    return [(spans[i][0], spans[j][0]) for i, j in _range_pairs(text, spans)]


# ----------------------------------------------------------------- numbers in context
def stem(word: str) -> str:
    """A crude English stem, enough to equate "votes"/"vote", "testing"/"test".

    >>> [stem(w) for w in ("votes", "vote", "testing", "received", "receive", "men")]
    ['vot', 'vot', 'test', 'receiv', 'receiv', 'men']
    """
    w = word.casefold()
    for suffix in ("ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            return w[:-len(suffix)]
    return w


# Words that separate the clauses a number belongs to, and what crossing one costs: a
# number's words are the nearest ones on its side of "and", a comma or "while"; "to" and
# "from" open a phrase ("3,200 in 2021 to 4,100": 2021 is the 3,200's).
_BOUNDARY_COST = {",": 3, ";": 3, ":": 3, "(": 3, ")": 3, ".": 6, "!": 6, "?": 6,
                  "and": 2, "while": 3, "whereas": 3, "but": 3, "compared": 3, "versus": 3,
                  "vs": 3, "than": 3, "however": 3, "although": 3, "though": 3, "before": 3,
                  "after": 3, "to": 1, "from": 1}
_LABEL_STOPWORDS = _ARTICLES | frozenset({
    "is", "are", "was", "were", "be", "been", "being", "of", "in", "on", "at", "to", "by",
    "with", "from", "as", "it", "its", "this", "that", "these", "those", "there", "their",
    "they", "which", "who", "has", "have", "had", "s", "into", "about", "around",
    "approximately", "roughly", "nearly", "almost", "some", "exactly", "only", "just",
    "total", "dollars", "dollar", "usd", "per", "cent", "percent", "points", "point",
    "percentage", "an", "also", "respectively", "each", "other", "while", "whereas", "but",
    "compared", "versus", "vs", "than", "however", "although", "though", "before", "after",
    "and", "up", "down",
})
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?|[,;:.!?()]")
_HEDGE_BEFORE_RE = re.compile(
    r"(?:\b(?:about|around|approximately|approx\.?|roughly|nearly|almost|some|circa|ca\.|"
    r"close\s+to|an\s+estimated|estimated(?:\s+at)?)\s+|[~\u2248]\s*)$", re.IGNORECASE)
DIRECTION_PAIRS: tuple[tuple[tuple[str, ...], tuple[str, ...], bool], ...] = (
    (("decrease", "decreased", "decline", "declined", "reduced", "reduction"),
     ("increase", "increased"), True),
    (("fell", "fall", "fallen", "drop", "dropped", "slid", "slipped", "plunged"),
     ("rose", "rise", "risen", "climbed", "jumped"), True),
    (("shrank", "shrink", "shrunk", "contracted", "contraction"),
     ("grew", "grow", "grows", "grown", "expanded"), True),
    (("lower", "below", "down", "minus", "negative"),
     ("higher", "above", "up", "plus", "positive"), True),
    (("loss", "losses", "lost"), ("gain", "gained", "profit", "profits"), True),
    (("deficit",), ("surplus",), True),
    (("deteriorated", "worsened"), ("improved", "improvement"), True),
    (("less", "fewer"), ("more",), False),
    (("downgrade", "downgraded"), ("upgrade", "upgraded"), False),
    (("cut", "cuts", "slashed"), ("raised", "hiked"), False),
)
"""Words of direction as antonym pairs: (down words, up words, signed).

A signed pair says which way a number went ("a net loss of $3.2 million" is -3.2 million;
"profit" and "gain" +), and :func:`direction` reads it. Every pair, signed or not, is what
:func:`contrary` looks for: an answer with words from both sides of one pair ("more
effective at first, less effective later") says two opposite things.
"""
_DECREASE = frozenset(stem(w) for down, _, signed in DIRECTION_PAIRS if signed for w in down)
_INCREASE = frozenset(stem(w) for _, up, signed in DIRECTION_PAIRS if signed for w in up)


@dataclass(frozen=True)
class Bound:
    """A number with the words and years that belong to it in its sentence.

    ``labels`` are the stems of the nearest content words (each word belongs to the number
    it is closest to, counting words and clause boundaries between); ``years`` the years
    written next to it; ``direction`` -1 or +1 when its words say it fell or rose, else 0;
    ``index`` its order in the text; ``range_with`` the index of the other end when it is
    one end of a range; ``hedged`` whether a word of approximation comes right before it
    ("about 62%", "roughly $12.5 million", "~5,000").
    """

    quantity: Quantity
    labels: frozenset[str]
    years: frozenset[int]
    direction: int
    index: int
    range_with: int | None = None
    hedged: bool = False


def _direction(stems: frozenset[str] | set[str]) -> int:
    down, up = bool(stems & _DECREASE), bool(stems & _INCREASE)
    return -1 if down and not up else 1 if up and not down else 0


def is_direction_word(word: str) -> bool:
    """Is the word one of those :func:`direction` reads ("fell", "rose", "loss", ...)?"""
    return stem(word) in _DECREASE or stem(word) in _INCREASE


def direction(text: str) -> int:
    """-1 when the text's words say down ("fell", "loss", "deficit"), +1 up, else 0.

    >>> direction("a net loss"), direction("revenue rose"), direction("rose, then fell")
    (-1, 1, 0)
    """
    return _direction({stem(t) for t in _TOKEN_RE.findall(prepare(text).casefold())})


# Words that take back or overturn what came before them.
_CORRECTION_RE = re.compile(
    r"\b(?:actually|in\s+fact|correction|or\s+rather|wait(?=\s*[,.;:!-]|\s+(?:no|yes)\b)"
    r"|i\s+mean|on\s+second\s+thought"
    r"|on\s+closer\s+(?:reading|inspection|look)|strictly\s+speaking|to\s+be\s+precise"
    r"|that\s+is\s+wrong|i\s+was\s+wrong|scratch\s+that)\b", re.IGNORECASE)
_CONTRAST_AFTER_RE = re.compile(
    r"\b(?:however|but|although|though|yet|nevertheless|nonetheless|on\s+the\s+other\s+hand"
    r"|that\s+said|even\s+so|whereas)\b", re.IGNORECASE)
# A yes or no standing alone later in the text: "No. Actually yes.", "yes and no".
_LATE_POLARITY_RE = re.compile(
    r"\b(?P<word>yes|yeah|yep|no|nope)\b(?=\s*$|\s*[,.;:!?)\]*\"']|\s+-\s"
    r"|\s+(?:and|or)\s+(?:yes|no)\b"
    r"|\s+(?:it|its|they|he|she|this|that|there|we|i|you)\b)", re.IGNORECASE)


def polarities_said(text: str) -> set[bool]:
    """The yes (True) and no (False) words that stand alone anywhere in the text (at the
    end, before punctuation or a restating clause, or in "yes and no").

    >>> sorted(polarities_said("No. Actually yes.")), polarities_said("No information")
    ([False, True], set())
    """
    return {m.group("word").casefold() in _YES
            for m in _LATE_POLARITY_RE.finditer(prepare(text))}


def after_contrast(text: str) -> str:
    """What follows the first "however", "but", "although", "on the other hand", ... of the
    text, or "" when it has none.

    >>> after_contrast("42 seats; however, a recount put it at 40.")
    ', a recount put it at 40.'
    """
    m = _CONTRAST_AFTER_RE.search(prepare(text))
    return "" if m is None else prepare(text)[m.end():]


def opposed(stems: set[str] | frozenset[str], reference_stems: set[str] | frozenset[str]
            = frozenset()) -> tuple[str, str] | None:
    """The first pair of :data:`DIRECTION_PAIRS` both of whose sides are among ``stems``
    (words as :func:`stem` gives them) but not both among ``reference_stems``, as one word
    of each side; None when there is none.

    >>> opposed({stem("more"), stem("effective"), stem("less")})
    ('less', 'more')
    """
    for down, up, _ in DIRECTION_PAIRS:
        said_down = next((w for w in down if stem(w) in stems), None)
        said_up = next((w for w in up if stem(w) in stems), None)
        if (said_down and said_up
                and not ({stem(w) for w in down} & reference_stems
                         and {stem(w) for w in up} & reference_stems)):
            return said_down, said_up
    return None


def contrary(text: str, reference: str = "", *, pairs: bool = True) -> str | None:
    """Why the text says two opposite things, or None: a correction that takes back what
    came before ("actually", "in fact", "or rather", "correction", "strictly speaking",
    "wait" as an interjection, not "the wait time", ...) or, with ``pairs``, words from
    both sides of one pair of :data:`DIRECTION_PAIRS` ("a profit ... or a loss"), where the
    reference has neither.

    >>> contrary("A net profit of $3.2 million, or a loss after tax.")
    "it says both 'loss' and 'profit'"
    >>> contrary("It closed in 2019, or rather in 2020."), contrary("It closed in 2019.")
    ("it takes back what it said ('or rather')", None)
    """
    text, reference = prepare(text), prepare(reference)
    given = {" ".join(m.group(0).casefold().split()) for m in _CORRECTION_RE.finditer(reference)}
    for m in _CORRECTION_RE.finditer(text):
        said = " ".join(m.group(0).casefold().split())
        if said not in given:
            return f"it takes back what it said ({said!r})"
    if not pairs:
        return None
    both = opposed({stem(t) for t in _TOKEN_RE.findall(text.casefold())},
                   {stem(t) for t in _TOKEN_RE.findall(reference.casefold())})
    return None if both is None else f"it says both {both[0]!r} and {both[1]!r}"


_Token: TypeAlias = "tuple[str, Any]"  # ("q", index) | ("w", stem) | ("b", cost)


def _add_words(piece: str, tokens: list[_Token]) -> None:
    """Append the words (stems) and clause boundaries (costs) of a piece of text."""
    previous = ""
    for tok in _TOKEN_RE.findall(piece.casefold()):
        if tok in _BOUNDARY_COST and _BOUNDARY_COST[tok]:
            tokens.append(("b", _BOUNDARY_COST[tok]))
        if tok[0].isalnum() and tok not in _LABEL_STOPWORDS:
            tokens.append(("w", stem(tok.removesuffix("'s"))))
        elif tok in ("to", "from") and is_direction_word(previous):
            # "fell to 3.5%", "up to $100,000", "rose from 3,200": a level, not a change
            k = len(tokens) - (2 if tokens and tokens[-1][0] == "b" else 1)
            if k >= 0 and tokens[k] == ("w", stem(previous)):
                tokens[k] = ("w", "=" + stem(previous))
        previous = tok


def _tokens(text: str, spans: list[tuple[Quantity, int, int]]) -> list[_Token]:
    """The text as numbers (their index in ``spans``), words and clause boundaries."""
    tokens: list[_Token] = []
    last = 0
    for i, (_, start, end) in enumerate(spans):
        _add_words(text[last:start], tokens)
        tokens.append(("q", i))
        last = end
    _add_words(text[last:], tokens)
    return tokens


def _nearest(tokens: list[_Token], pos: int, owner: Callable[[int], bool],
             reach: float = math.inf) -> int | None:
    """The number nearest to token ``pos`` among those ``owner`` accepts, within
    ``reach``; None for none, or a tie between the one before and the one after."""
    found = []
    for step in (-1, 1):
        cost, j = 1, pos + step
        while 0 <= j < len(tokens):
            kind, value = tokens[j]
            if kind == "q" and owner(value):
                if cost <= reach:
                    found.append((cost, value))
                break
            cost += value if kind == "b" else 1
            j += step
    found.sort()
    if not found or (len(found) == 2 and found[0][0] == found[1][0]):
        return None  # no number, or a tie: the word belongs to neither
    return int(found[0][1])


def bind(text: str) -> list[Bound]:
    """Every number of the text with the words and years closest to it.

    Each content word goes to the nearer of the numbers before and after it; a comma,
    "and", "while", "compared" and the like between them add to the distance, a full stop
    more (ties go to neither). A year is a label of the nearest number that is not a year;
    a year's own labels are the words near it (for questions whose answer is a year).

    >>> [(b.quantity.text, sorted(b.labels), sorted(b.years)) for b in
    ...  bind("52 for and 48 against; revenue of $4.2 billion in 2022")]
    [('52', ['for'], []), ('48', ['against'], []), ('$4.2 billion', ['revenu'], [2022]), \
('2022', ['revenu'], [])]
    """
    text = prepare(text)
    spans = _quantity_matches(text)
    tokens = _tokens(text, spans)
    labels: list[set[str]] = [set() for _ in spans]
    years: list[set[int]] = [set() for _ in spans]
    is_year = [q.is_year for q, _, _ in spans]

    # Words and years go to the nearest number that is not a year; a year's own words (for
    # a question whose answer is a year) are those nearest to it among the years.
    for pos, (kind, value) in enumerate(tokens):
        if kind == "b" or (kind == "q" and not is_year[value]):
            continue
        owner = _nearest(tokens, pos, lambda k: not is_year[k])
        if owner is not None and kind == "w":
            labels[owner].add(value)
        elif owner is not None:
            years[owner].add(int(spans[value][0].value))
        if kind == "w":
            owner = _nearest(tokens, pos, lambda k: is_year[k], reach=4)
            if owner is not None:
                labels[owner].add(value)
    ranges = dict(_range_pairs(text, spans))
    ranges |= {j: i for i, j in list(ranges.items())}
    return [Bound(q, frozenset(labels[i]), frozenset(years[i]), _direction(labels[i]), i,
                  ranges.get(i), _HEDGE_BEFORE_RE.search(text[max(0, start - 30):start])
                  is not None)
            for i, (q, start, _) in enumerate(spans)]


# ------------------------------------------------------------------ comparing numbers
_SHARE_RE = re.compile(r"\b(?:share|proportion|fraction|percentage|percent|per\s?cent|ratio|"
                       r"rate|portion|what\s+part|margin|yield|accuracy|precision|recall|"
                       r"probability|turnout)\b|%", re.IGNORECASE)
def share_question(question: str) -> bool:
    """Does the question ask for a share, so that 12% and 0.12 state the same thing?

    >>> share_question("What share of revenue came from Asia?"), share_question("How many?")
    (True, False)
    """
    return _SHARE_RE.search(question) is not None


def _in_unit(q: Quantity, convert: bool) -> tuple[float, float]:
    if convert:
        return q.value * q.per_unit, q.precision * q.per_unit
    return q.value, q.precision


def _readings(reference: Quantity, answer: Quantity, share: bool
              ) -> list[tuple[float, float, float, float]]:
    """The ways two numbers can be compared, each as (value, precision) of both.

    Durations in a common unit when both are durations. A percent and a plain number: as
    written unless a share is asked and one is at most 1 (12% and 12), and as a fraction
    when a share is asked or the fraction has three significant digits, and is at most 1
    (12% and 0.12; 12.4% and 0.124).
    """
    convert = bool(reference.unit and answer.unit)  # "18 to 34 years" vs "18-34": as written
    a, pa = _in_unit(reference, convert)
    b, pb = _in_unit(answer, convert)
    if reference.percent == answer.percent:
        return [(a, pa, b, pb)]
    candidates = []
    fraction = answer if reference.percent else reference
    if not share or min(a, b) > 1:
        candidates.append((a, pa, b, pb))
    if (share or fraction.precision * 100 <= fraction.value) and fraction.value <= 1:
        fa, fb = (100.0 if reference.percent else 1.0), (100.0 if answer.percent else 1.0)
        candidates.append((a / fa, pa / fa, b / fb, pb / fb))
    return candidates


def compare(reference: Quantity, answer: Quantity, rel_tol: float, share: bool) -> str | None:
    """How an answer's number states a reference number: ``"same"``, ``"rounded"``,
    ``"coarser"`` or None.

    ``"same"``: equal at the finer of the two precisions as written, or within ``rel_tol``
    of the larger ("5.5 million" and "5,500,000"; "24 months" and "2 years"). ``"rounded"``:
    the reference is the coarser and the answer rounds to it ("5.5 million" stated as
    "5,512,000"). ``"coarser"``: the answer is the coarser and the reference rounds to it
    ("4.25%" stated as "4.3%"). The rule judge decides what to accept of the last two
    (:attr:`Bound.hedged`). Magnitudes are compared (signs are the
    judge's own rule). Durations compare in a common unit; a duration and a plain number as
    written; durations of different dimensions never. A percent and a plain number above 1
    match as written (12% and 12); as a fraction (12% and 0.12) when the question asks for
    a share or the fraction has three significant digits (12.4% and 0.124). Amounts in
    different currencies written as signs, codes or words ("EUR 3 million", "$3 million",
    "3 million pounds") never.

    >>> [q, r, s, t] = quantities_in("4.25%, 4.3%, 24 months, 2 years")
    >>> compare(q, r, 0.0, False), compare(r, q, 0.0, False), compare(s, t, 0.0, False)
    ('coarser', 'rounded', 'same')
    """
    if reference.unit and answer.unit and reference.unit != answer.unit:
        return None
    if reference.currency and answer.currency and not reference.currency & answer.currency:
        return None  # "EUR 3 million" is not "$3 million"
    best = None
    for x, px, y, py in _readings(reference, answer, share):
        slack = 1e-9 * max(x, y, 1e-300)  # binary rounding of scaled values (5.5 * 1e6)
        diff = abs(x - y)
        if diff <= rel_tol * max(x, y) + slack:
            return "same"
        if diff <= max(px, py) / 2 + slack:
            best = "coarser" if py > px else "rounded"
    return best


def close(q: Quantity, other: Quantity, rel_tol: float, share: bool) -> bool:
    """Do two quantities state the same number, up to the precision either is written with?

    True for every outcome of :func:`compare` but None: "5.5 million" and "5,512,000" are
    close, "2019" and "2009" are not.

    >>> [q, r, s] = quantities_in("5.5 million, 5,512,000 and 5,600,000")
    >>> close(q, r, 0.0, False), close(q, s, 0.0, False), close(r, s, 0.02, False)
    (True, False, True)
    """
    return compare(q, other, rel_tol, share) is not None


def similarity(target: list[str], candidate: list[str]) -> float:
    """Best normalized Levenshtein similarity of ``target`` to a window of ``candidate``.

    ANLS-style (Biten et al., 2019): similarity = 1 - normalized edit distance, here taken
    over every run of ``len(target) - 1`` to ``len(target) + 1`` consecutive candidate
    words, so that a short reference is found inside a longer answer.

    >>> similarity(["jane", "smith"], ["written", "by", "jane", "smyth"])
    0.9
    """
    if not target or not candidate:
        return 0.0
    joined = " ".join(target)
    k = len(target)
    best = 0.0
    n = len(candidate)
    for size in range(min(max(1, k - 1), n), min(k + 1, n) + 1):
        for i in range(n - size + 1):
            window = " ".join(candidate[i:i + size])
            best = max(best, Levenshtein.normalized_similarity(joined, window))
    return best
