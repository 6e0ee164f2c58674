"""Reading answers for the rule judge: words, yes/no, declines, dates and quantities.

Private helpers of :mod:`confcal.qa.docqa`. Every reader here is deliberately narrow: it
recognises the forms listed in its docstring and nothing else, so that the rule judge can
say "undecided" instead of guessing when an answer is phrased some other way.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from rapidfuzz.distance import Levenshtein

from ..exceptions import ValidationError
from ..scoring.comparators import parse_date, parse_number

__all__ = [
    "Dates",
    "Quantity",
    "close",
    "content_words",
    "dates_in",
    "declines",
    "negated",
    "polarity",
    "prepare",
    "quantities_in",
    "share_question",
    "similarity",
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
_WORD_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+")
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
_NEGATIONS = frozenset({"not", "no", "never", "none", "neither", "nor", "nothing", "t"})


def words(text: str) -> list[str]:
    """Casefolded words and numbers of a text, punctuation and articles dropped.

    >>> words("The CEO's name: Jane Smith, since 1,000.5 days.")
    ['ceo', 's', 'name', 'jane', 'smith', 'since', '1,000.5', 'days']
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
    return any(w in _NEGATIONS for w in words(text))


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
          r"discuss|give|list|reveal|describe|address|cover|show|offer|present")
_PARTICIPLES = (r"mentioned|stated|specified|provided|given|available|disclosed|reported|"
                r"included|indicated|listed|discussed|described|addressed|covered|found|"
                r"known|shown|present|offered|presented")
_ADVERB = r"(?:explicitly\s+|specifically\s+|directly\s+|clearly\s+)?"
_DECLINE_RE = re.compile(
    rf"\b(?:does|did|do)\s*(?:not|n't)\s+{_ADVERB}(?:{_VERBS})\b"
    rf"|\bnot\s+{_ADVERB}(?:{_PARTICIPLES})\b"
    r"|\bno\s+(?:specific\s+|explicit\s+|such\s+|relevant\s+)?(?:information|mention|data|"
    r"details?|indication|reference|record|evidence)\b"
    r"|\b(?:cannot|can't|can\s+not|unable\s+to|impossible\s+to|not\s+possible\s+to)\s+"
    r"(?:be\s+)?(?:determine[ds]?|answer(?:ed)?|find|found|tell|know|known|infer(?:red)?|"
    r"identif(?:y|ied))\b"
    r"|\b(?:insufficient|not\s+enough)\s+(?:information|data|details|context)\b"
    r"|\bunanswerable\b|\bnot\s+answerable\b|\bn/a\b|\bi\s+(?:do\s+not|don't)\s+know\b"
    r"|\bnone\s+(?:is\s+|are\s+)?(?:given|stated|mentioned|provided)\b",
)


def declines(text: str) -> bool:
    """True when the text says the document does not give the answer.

    Recognised: "does not / doesn't mention, state, specify, say, provide, ...", "not
    mentioned, stated, specified, provided, available, ...", "no information, mention,
    data, details", "cannot be determined / cannot find", "insufficient information",
    "unanswerable", "N/A", "I don't know".

    >>> [declines(t) for t in ("The document does not mention the CEO's salary.",
    ...                        "Not stated", "No information is provided.",
    ...                        "This cannot be determined from the report.",
    ...                        "No, it does.", "It is stated on page 3")]
    [True, True, True, True, False, False]
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


def dates_in(text: str, *, dayfirst: bool = False) -> Dates:
    """Full dates (any format :func:`confcal.parse_date` reads) and month-year dates.

    A numeric date such as 03/01/2024 is read month first, or day first with ``dayfirst``.
    A span that looks like a date but is not one (2024-13-45) is left in the text.

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
        last = m.end()
    pieces.append(text[last:])
    rest = " ".join(pieces)
    months: list[tuple[int, int]] = []

    def month_year(m: re.Match[str]) -> str:
        months.append((int(m.group("year")),
                       _MONTH_NAMES[m.group("month").rstrip(".").lower()]))
        return " "

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
_QUANTITY_RE = re.compile(
    rf"(?P<currency>{_CURRENCY})?"
    r"(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
    rf"|(?P<word>\b{_WORD_NUMBER})",
    re.IGNORECASE)
_AFTER_RE = re.compile(
    r"(?P<glued>[kKMBmb]|bn|mn|tn)\b"
    r"|\s*(?P<pct>%|percent\b|per\s?cent\b|pct\b)"
    r"|\s*(?P<scale>thousand|million|billion|trillion|mln|bln|mn|bn|tn)\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number as stated: magnitude (scale words applied), percent or not, and precision.

    ``precision`` is the unit of the last digit written, scaled: 1 for "2019", 0.1 for
    "91.4", 100,000 for "5.5 million".
    """

    value: float
    percent: bool
    text: str
    precision: float = 1.0


def _quantity_matches(text: str) -> list[tuple[Quantity, int, int]]:
    found: list[tuple[Quantity, int, int]] = []
    for m in _QUANTITY_RE.finditer(text):
        if m.group("word"):
            value = _words_value(m.group("word"))
            precision = 1.0
        else:
            value = parse_number(m.group("number"))
            _, _, decimals = m.group("number").partition(".")
            precision = 10.0 ** -len(decimals)
        percent = False
        scale = 1.0
        after = _AFTER_RE.match(text, m.end())
        end = m.end()
        if after is not None:
            glued = after.group("glued")
            if glued is not None and m.group("word") is None:
                letter = (_LETTER_SCALES.get(glued) or _SCALES.get(glued.lower())
                          or (_MONEY_LETTER_SCALES.get(glued) if m.group("currency") else None))
                if letter is not None:
                    scale = letter
                    end = after.end()
            elif after.group("pct"):
                percent = True
                end = after.end()
            elif after.group("scale"):
                scale = _SCALES[after.group("scale").lower()]
                end = after.end()
        quantity = Quantity(value=value * scale, percent=percent,
                            text=text[m.start():end].strip(), precision=precision * scale)
        found.append((quantity, m.start(), end))
    return found


def strip_quantities(text: str) -> str:
    """The text with every number (and its scale word or percent sign) replaced by a space.

    >>> strip_quantities("about $5.5 million dollars, up 12%").split()
    ['about', 'dollars,', 'up']
    """
    pieces, last = [], 0
    for _, start, end in _quantity_matches(text):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return " ".join(pieces)


def quantities_in(text: str) -> list[Quantity]:
    """Numbers in a text, with scale words, percents and separators read.

    Recognised: digits with comma groups and a decimal point ("5,500,000", "5.5"); scale
    words after the number ("5.5 million", "3 bn"), glued scale letters ("5.5M", "$40k",
    and "$3m" after a currency sign); percent signs and words ("12%", "12 percent");
    English number words below a million ("forty-two", "two hundred and forty", "three
    thousand"). Signs are not read: "a loss of 2 million" and "-2 million" state the same
    magnitude.

    >>> [(q.value, q.percent) for q in quantities_in("$5.5 million, 12% and 5,500,000; three")]
    [(5500000.0, False), (12.0, True), (5500000.0, False), (3.0, False)]
    >>> [q.value for q in quantities_in("two hundred and forty cores, forty-two sites, "
    ...                                 "two and three, one thousand and five, five million")]
    [240.0, 42.0, 2.0, 3.0, 1005.0, 5000000.0]
    """
    return [q for q, _, _ in _quantity_matches(text)]


_SHARE_RE = re.compile(r"\b(?:share|proportion|fraction|percentage|percent|per\s?cent|ratio|"
                       r"rate|portion|what\s+part)\b|%", re.IGNORECASE)


def share_question(question: str) -> bool:
    """Does the question ask for a share, so that 12% and 0.12 state the same thing?

    >>> share_question("What share of revenue came from Asia?"), share_question("How many?")
    (True, False)
    """
    return _SHARE_RE.search(question) is not None


def _close(a: float, pa: float, b: float, pb: float, rel_tol: float) -> bool:
    # Half the coarser precision: the finer number rounds to the coarser as written. The
    # 1e-12 absorbs binary rounding in the scaled values (5.5 * 1e6).
    allowed = max(rel_tol * max(a, b), max(pa, pb) / 2) + 1e-12 * max(a, b)
    return abs(a - b) <= allowed


def close(q: Quantity, other: Quantity, rel_tol: float, share: bool) -> bool:
    """Do two quantities state the same number?

    They do when the more precise one, rounded to the precision the other is written
    with, gives the other ("5,512,000" and "5.5 million"; "2019" and "2009" do not), or
    when they differ by at most ``rel_tol`` of the larger. Magnitudes are compared (signs
    are not read). A percent and a plain number match as written (12% and 12); when the
    question asks for a share they also match as a fraction (12% and 0.12).

    >>> [q, r, s] = quantities_in("5.5 million, 5,512,000 and 5,600,000")
    >>> close(q, r, 0.0, False), close(q, s, 0.0, False), close(r, s, 0.02, False)
    (True, False, True)
    """
    a, b = abs(q.value), abs(other.value)
    if _close(a, q.precision, b, other.precision, rel_tol):
        return True
    if share and q.percent != other.percent:
        fa, fb = (100.0 if q.percent else 1.0), (100.0 if other.percent else 1.0)
        return _close(a / fa, q.precision / fa, b / fb, other.precision / fb, rel_tol)
    return False


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
