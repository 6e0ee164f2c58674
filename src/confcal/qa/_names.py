"""Reading the names, contrasts and currencies of an answer for the rule judge.

Private helpers of :mod:`confcal.qa.docqa`, beside :mod:`confcal.qa._text`: which
capitalised words of an answer are names (:func:`names_in`), whether it sets one thing
against another (:func:`contrasted`), and which currencies a written sign or code can mean
(:func:`currency_of`). Like the readers of ``_text``, each recognises the forms its
docstring lists and nothing else.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["contrasted", "currency_after", "currency_of", "names_in"]


def _prepare(text: str) -> str:
    # the folding of _text.prepare that matters here: NFKC and typographic apostrophes
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")


_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN"})
_CURRENCY_SIGNS = {"$": _DOLLARS, "\u20ac": frozenset({"EUR"}), "\u00a3": frozenset({"GBP"}),
                   "\u00a5": frozenset({"JPY", "CNY"}), "\u20b9": frozenset({"INR"})}
_DOLLAR_PREFIXES = {"US": "USD", "C": "CAD", "CA": "CAD", "A": "AUD", "AU": "AUD",
                    "NZ": "NZD", "HK": "HKD", "S": "SGD", "NT": "TWD", "MX": "MXN"}
_CURRENCY_CODES = {"USD": "USD", "EUR": "EUR", "GBP": "GBP", "JPY": "JPY", "CNY": "CNY",
                   "RMB": "CNY", "INR": "INR", "CAD": "CAD", "AUD": "AUD", "CHF": "CHF"}


def currency_of(written: str | None) -> frozenset[str] | None:
    """The currencies a written sign or code can mean; None for none or an unknown one.

    >>> sorted(currency_of("\u00a5")), sorted(currency_of("US$")), currency_of("R$")
    (['CNY', 'JPY'], ['USD'], None)
    """
    if not written:
        return None
    written = written.strip().upper()
    if written in _CURRENCY_CODES:
        return frozenset({_CURRENCY_CODES[written]})
    prefix, sign = written[:-1], written[-1:]
    if sign not in _CURRENCY_SIGNS:
        return None
    if not prefix:
        return _CURRENCY_SIGNS[sign]
    code = _DOLLAR_PREFIXES.get(prefix) if sign == "$" else None
    return None if code is None else frozenset({code})


_CURRENCY_WORDS = {"dollar": _DOLLARS, "us dollar": frozenset({"USD"}),
                   "euro": frozenset({"EUR"}), "pound": frozenset({"GBP"}),
                   "pound sterling": frozenset({"GBP"}), "yen": frozenset({"JPY"}),
                   "yuan": frozenset({"CNY"}), "renminbi": frozenset({"CNY"}),
                   "rupee": frozenset({"INR"})}
_CURRENCY_AFTER_RE = re.compile(
    r"\s*(?:(?P<word>(?:us\s+)?dollars?|euros?|pounds?(?:\s+sterling)?|yen|yuan|renminbi|"
    r"rupees?)|(?P<code>USD|EUR|GBP|JPY|CNY|RMB|INR|CAD|AUD|CHF))\b", re.IGNORECASE)


def currency_after(text: str, end: int) -> frozenset[str] | None:
    """The currency a word or code right after a number names ("3 million euros", "500
    USD"), or None.

    >>> sorted(currency_after("3 million euros", 9)), currency_after("3 million tons", 9)
    (['EUR'], None)
    """
    m = _CURRENCY_AFTER_RE.match(text, end)
    if m is None:
        return None
    if m.group("code"):
        return currency_of(m.group("code"))
    word = " ".join(m.group("word").casefold().split()).removesuffix("s")
    return _CURRENCY_WORDS[word.replace("pounds sterling", "pound sterling")]


_CONTRAST_RE = re.compile(r"\b(?:rather\s+than|instead\s+of|as\s+opposed\s+to|unlike|"
                          r"in\s+contrast\s+to|in\s+place\s+of|other\s+than)\b",
                          re.IGNORECASE)


def contrasted(text: str) -> bool:
    """True when the text sets one thing against another ("an LSTM rather than a
    Transformer", "instead of", "unlike"): what it names may be the one it rejects.

    >>> contrasted("an LSTM rather than a Transformer"), contrasted("a Transformer")
    (True, False)
    """
    return _CONTRAST_RE.search(_prepare(text)) is not None


_WORD_RE = re.compile(r"(?<![\w'-])[^\W\d_]\w*(?:['-]\w+)*")
_SENTENCE_OPENERS = frozenset(".!?:;\"(*\u2022-")
_CALENDAR = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "i"})


def names_in(text: str) -> list[str]:
    """The capitalised words of a text that do not open a sentence (names, mostly),
    casefolded; month and weekday names left out. A text in capitals throughout says
    nothing by its capitals: it has none.

    >>> names_in("The first author is Yoshua Bengio; Yann LeCun is last. In March, ACL.")
    ['yoshua', 'bengio', 'lecun', 'acl']
    >>> names_in("WHAT WAS THE RATE IN TEXAS?")
    []
    """
    text = _prepare(text)
    if len(text.split()) > 1 and not any(ch.islower() for ch in text):
        return []
    return [m.group(0).casefold() for m in _WORD_RE.finditer(text)
            if m.group(0)[0].isupper()
            and text[:m.start()].rstrip()[-1:] not in _SENTENCE_OPENERS | {""}
            and m.group(0).casefold() not in _CALENDAR]
