"""Typed comparators: how similar a predicted value is to the ground truth.

A comparator is any callable ``(truth, prediction) -> float`` in [0, 1] (:class:`Comparator`).
One that also offers the two batched forms of :class:`BatchedComparator`

* ``pairwise(truths, predictions)`` -> ``(m, n)`` similarity matrix (line-item matching),
* ``elementwise(truths, predictions)`` -> ``(k,)`` similarities of aligned pairs,

is compared in batches by the scorer and by line-item matching, whatever its type; a plain
callable is called once per pair. The four built-in comparators are frozen dataclasses that
satisfy :class:`BatchedComparator`, vectorized: rapidfuzz ``process.cdist``/``cpdist`` for
text, numpy broadcasting on parsed numbers and calendar ordinals, and every string is
normalized or parsed once (``functools.lru_cache`` on the string), so a value that appears
in many pairs costs one parse.

Missing values (``None``, ``""``, NaN, ``[]``; see :func:`confcal._validation.is_missing`)
are handled the same way by every comparator: two missing values agree (1.0), a missing
value against a present one disagrees (0.0). The scorer turns those cases into the TN, FN
and FA outcomes. Line-item matching does not count an empty cell on both sides as agreement
(:func:`confcal.scoring.matching.item_similarity`): two empty cells carry no evidence that two items
are the same record.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from .._validation import is_missing
from ..exceptions import ValidationError

__all__ = [
    "ANLS_THRESHOLD",
    "NEAR_EXACT_THRESHOLD",
    "BatchedComparator",
    "Comparator",
    "Date",
    "Exact",
    "Number",
    "Text",
    "normalize_text",
    "parse_date",
    "parse_number",
]

_CACHE_SIZE = 1 << 16

NEAR_EXACT_THRESHOLD: float = 0.9
"""The default :class:`Text` threshold: the ConfBench paper's near-exact acceptance."""

ANLS_THRESHOLD: float = 0.5
"""The lenient ANLS cut-off of document VQA (Biten et al., 2019), the threshold that
stickler-eval 1.0.0 applies to text: a similarity below 0.5 means another value was read.
Not a default anywhere; ask for it with ``Field(Text(), threshold=ANLS_THRESHOLD)`` or
:func:`confcal.scoring.presets.fcc_invoice` ``(text_threshold=ANLS_THRESHOLD)``."""


@runtime_checkable
class Comparator(Protocol):
    """Anything callable as ``(truth, prediction) -> float`` in [0, 1].

    Built-in comparators also provide the batched methods of :class:`BatchedComparator` and
    a ``default_threshold``; a custom callable needs neither (give its
    :class:`~confcal.scoring.schema.Field` an explicit ``threshold``, or give the comparator
    a ``default_threshold`` attribute).
    """

    def __call__(self, truth: Any, prediction: Any, /) -> float: ...


@runtime_checkable
class BatchedComparator(Protocol):
    """A comparator that also compares many values per call: the scorer's fast path.

    Besides ``__call__(truth, prediction) -> float`` it offers

    * ``pairwise(truths, predictions)`` -> array of shape ``(len(truths), len(predictions))``
      whose entry ``[i, j]`` is the similarity of ``truths[i]`` and ``predictions[j]``;
    * ``elementwise(truths, predictions)`` -> array of shape ``(len(truths),)`` whose entry
      ``[i]`` is the similarity of ``truths[i]`` and ``predictions[i]`` (equal lengths).

    :func:`~confcal.scoring.score_documents`, :func:`~confcal.scoring.score_documents_iter`
    and :func:`~confcal.scoring.matching.match_items` use these methods for every comparator
    that has them, whatever its type: the path is chosen by capability (STYLE rule 17, as
    RapidFuzz scorers advertise theirs), and the four built-in comparators take it the same
    way. A comparator without them is called once per pair.

    Notes
    -----
    The contract, as the scorer and line-item matching keep it and check it:

    * **Present values only.** The caller applies the missing-value rule itself (two
      missing values agree, one missing value disagrees; module docstring), so both
      methods receive only present values -- never ``None``, ``""``, whitespace, NaN,
      ``pandas.NA`` or ``[]`` (:func:`~confcal._validation.is_missing`) -- as non-empty
      Python lists of the values as written in the documents (a predicted leaf's value,
      never its confidence). A method need not handle missing values, nor empty input.
    * **The same numbers as ``__call__``.** Entry for entry, both methods return what
      ``__call__`` returns on that pair, to floating-point rounding (rapidfuzz's ``cdist``
      and its scalar scorers may differ in the last bit). ``__call__`` itself is only ever
      given present values by the scorer. Which form is used for which pairs is the
      caller's choice, so a comparator whose batched and scalar forms disagree scores
      inconsistently.
    * **Checked, never clipped.** A result must be an array (or array-like) of real
      numbers -- integers or floats, not bools, as ``__call__`` may not return ``True``
      -- of exactly the stated shape, every value finite and within [0, 1]. Anything else
      raises :class:`~confcal.exceptions.ValidationError` naming the field (also as its
      ``field`` attribute when the call served one field), the comparator, the method and
      what was found.
    * **How often it is called.** Top-level fields: one ``elementwise`` call per comparator
      for all the documents of a call (fields with equal comparators share it;
      :func:`~confcal.scoring.score_documents_iter` makes one per chunk). Line items: one
      ``pairwise`` call per sub-field and document, on that document's truth items x
      predicted items that have a value in the sub-field.
      :func:`~confcal.scoring.matching.match_items`: one ``pairwise`` call per sub-field.
      Never once per pair.
    * A comparator with only one of the two methods uses it where it applies (``pairwise``
      for line items, ``elementwise`` for top-level fields; line items fall back to
      ``elementwise`` on the gathered pairs) and is called pair by pair elsewhere.

    The built-in comparators also carry private kernel steps (``_prepare``, ``_pairs``,
    ``_blocks``) that the scorer uses when present, again by capability; they are not part
    of this protocol. A subclass of a built-in inherits them (and its ``pairwise`` and
    ``elementwise``), so overriding only ``__call__`` in a subclass changes nothing the
    scorer computes: write a class of its own that implements this protocol instead.

    Examples
    --------
    >>> import numpy as np
    >>> def lengths(values):
    ...     return np.array([len(str(v)) for v in values])
    >>> class SameLength:
    ...     '''1.0 if the two values are written with the same number of characters.'''
    ...     default_threshold = 1.0
    ...     def __call__(self, truth, prediction):
    ...         return float(len(str(truth)) == len(str(prediction)))
    ...     def pairwise(self, truths, predictions):
    ...         return (lengths(truths)[:, None] == lengths(predictions)[None, :]).astype(float)
    ...     def elementwise(self, truths, predictions):
    ...         return (lengths(truths) == lengths(predictions)).astype(float)
    >>> isinstance(SameLength(), BatchedComparator), isinstance(Text(), BatchedComparator)
    (True, True)
    >>> isinstance(lambda truth, prediction: 1.0, BatchedComparator)
    False
    >>> from confcal.scoring.matching import match_items
    >>> from confcal.scoring.schema import Field
    >>> match_items([{"Code": "AB-1"}, {"Code": "A"}], [{"Code": "Z"}, {"Code": "XY-9"}],
    ...             {"Code": Field(SameLength())})  # one pairwise call
    [(0, 1, 1.0), (1, 0, 1.0)]
    """

    def __call__(self, truth: Any, prediction: Any, /) -> float: ...

    def pairwise(self, truths: Sequence[Any], predictions: Sequence[Any], /) -> np.ndarray: ...

    def elementwise(self, truths: Sequence[Any], predictions: Sequence[Any], /) -> np.ndarray: ...


# --------------------------------------------------------------------------- text


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _normalize_str(text: str, ignore_punctuation: bool) -> str:
    # NFKC is the identity on ASCII; skipping it halves the cost on typical invoices.
    s = text if text.isascii() else unicodedata.normalize("NFKC", text)
    s = s.casefold()
    if ignore_punctuation:
        # Unicode categories Pc, Pd, Ps, Pe, Pi, Pf, Po: punctuation, not symbols ($, +, ©),
        # which carry meaning. Deleted rather than replaced by a space, as in the SQuAD
        # answer normalization: "A.C.M.E." -> "acme".
        s = "".join(ch for ch in s if not unicodedata.category(ch).startswith("P"))
    return " ".join(s.split())


def normalize_text(value: Any, *, ignore_punctuation: bool = False) -> str:
    """Normalize a value for text comparison.

    Unicode NFKC, casefold, whitespace runs collapsed to one space and stripped. With
    ``ignore_punctuation=True`` Unicode punctuation (categories ``P*``) is deleted as well.
    Non-string values are compared through ``str(value)``; a missing value becomes ``""``.

    Parameters
    ----------
    value : Any
        The value to normalize.
    ignore_punctuation : bool, default False
        Delete punctuation characters before comparing.

    Returns
    -------
    str

    Examples
    --------
    >>> normalize_text("  ACME\\u00a0 Media,  Inc. ")
    'acme media, inc.'
    >>> normalize_text("A.C.M.E. Media", ignore_punctuation=True)
    'acme media'
    >>> normalize_text("ﬁle №1")  # NFKC folds ligatures and compatibility characters
    'file no1'
    """
    if is_missing(value):
        return ""
    return _normalize_str(value if isinstance(value, str) else str(value), ignore_punctuation)


def _normalized(values: Sequence[Any], missing: np.ndarray, ignore_punctuation: bool) -> list[str]:
    norm = _normalize_str
    return [
        "" if miss else norm(v if type(v) is str else str(v), ignore_punctuation)
        for v, miss in zip(values, missing.tolist())
    ]


def _missing_flags(values: Sequence[Any]) -> list[bool]:
    """``[is_missing(v) for v in values]``, with the common types decided inline.

    The scorer calls this on every value; the inline cases are exactly those of
    :func:`~confcal._validation.is_missing` (``isspace`` and ``strip`` agree on what
    whitespace is), and everything else is delegated to it.
    """
    isnan = math.isnan
    return [
        (not v or v.isspace()) if type(v) is str
        else v is None or (
            isnan(v) if type(v) is float
            else (type(v) is not int and type(v) is not bool and is_missing(v))
        )
        for v in values
    ]


def _missing_mask(values: Sequence[Any]) -> np.ndarray:
    return np.array(_missing_flags(values), dtype=bool).reshape(len(values))


def _codes(a: Sequence[str], b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes shared by two string lists: equal strings <=> equal codes.

    Comparing codes with numpy replaces Python string comparisons pair by pair.
    """
    table: dict[str, int] = {}
    ca = np.fromiter((table.setdefault(s, len(table)) for s in a), dtype=np.int64, count=len(a))
    cb = np.fromiter((table.setdefault(s, len(table)) for s in b), dtype=np.int64, count=len(b))
    return ca, cb


def _check_lengths(truths: Sequence[Any], predictions: Sequence[Any]) -> None:
    if len(truths) != len(predictions):
        raise ValidationError(
            "truths, predictions must have the same length; "
            f"truths has {len(truths)} and predictions has {len(predictions)}"
        )


def _check_bool(value: Any, name: str) -> None:
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be True or False; found {value!r}")


# ------------------------------------------------------------------ the kernels
#
# Every comparator is evaluated through two private steps, so that each distinct value is
# normalized or parsed once however many pairs it takes part in:
#
#   prepared = kernel._prepare(values, missing)      once per list of values
#   sims     = kernel._pairs(pt, pp, ti, pj)         similarity of pt[ti[k]] vs pp[pj[k]]
#
# ``_blocks`` evaluates all pairs of several (truth slice x prediction slice) blocks -- the
# line items of many documents -- in one call, by default as one ``_pairs`` call on the
# gathered indices; Text instead runs one rapidfuzz ``cdist`` per block, which compares a
# query against many choices with a cached bit-parallel pattern and is several times faster
# per pair than ``cpdist`` on gathered pairs. Kernels ignore missing values;
# :func:`_fix_missing` applies the missing-value rule afterwards.


def _block_pairs(
    t_start: np.ndarray, m: np.ndarray, p_start: np.ndarray, n: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of every pair of every block, block after block, row-major within a block."""
    sizes = m * n
    total = int(sizes.sum())
    block = np.repeat(np.arange(len(sizes)), sizes)
    offset = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    width = n[block]
    i = offset // np.maximum(width, 1)
    return t_start[block] + i, p_start[block] + (offset - i * width)


def _fix_missing(sim: np.ndarray, tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    """Both missing -> 1.0, exactly one missing -> 0.0 (module docstring); broadcasts."""
    either = tm | pm
    if either.any():
        sim[np.broadcast_to(either, sim.shape)] = 0.0
        sim[np.broadcast_to(tm & pm, sim.shape)] = 1.0
    return sim


def _pairwise(kernel: Any, truths: Sequence[Any], predictions: Sequence[Any],
              tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    m, n = len(truths), len(predictions)
    pt, pp = kernel._prepare(truths, tm), kernel._prepare(predictions, pm)
    start, rows, cols = np.zeros(1, dtype=np.int64), np.array([m]), np.array([n])
    ti, pj = _block_pairs(start, rows, start, cols)
    sim = kernel._blocks(pt, pp, start, rows, start, cols, ti, pj).reshape(m, n)
    return _fix_missing(sim, tm[:, None], pm[None, :])


def _elementwise(kernel: Any, truths: Sequence[Any], predictions: Sequence[Any],
                 tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    pt, pp = kernel._prepare(truths, tm), kernel._prepare(predictions, pm)
    index = np.arange(len(truths))
    return _fix_missing(kernel._pairs(pt, pp, index, index), tm, pm)


class _BatchedMethods:
    """``pairwise`` and ``elementwise`` for the built-in comparators, from their kernels.

    Shared code of the four built-ins, not an extension point: a custom comparator is a
    plain callable (:class:`Comparator`) or a class of its own that implements
    :class:`BatchedComparator`, never a subclass.
    """

    def pairwise(self, truths: Sequence[Any], predictions: Sequence[Any]) -> np.ndarray:
        """``(len(truths), len(predictions))`` similarity matrix."""
        return _pairwise(self, truths, predictions, _missing_mask(truths), _missing_mask(predictions))

    def elementwise(self, truths: Sequence[Any], predictions: Sequence[Any]) -> np.ndarray:
        """Similarity of ``truths[i]`` and ``predictions[i]`` for every i."""
        _check_lengths(truths, predictions)
        return _elementwise(
            self, truths, predictions, _missing_mask(truths), _missing_mask(predictions)
        )

    def _blocks(self, pt: Any, pp: Any, t_start: np.ndarray, m: np.ndarray,
                p_start: np.ndarray, n: np.ndarray, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        """Similarities of every pair of every block; ``ti, pj`` from :func:`_block_pairs`."""
        return self._pairs(pt, pp, ti, pj)  # type: ignore[attr-defined, no-any-return]


# --------------------------------------------------------------------------- text


@dataclass(frozen=True)
class Text(_BatchedMethods):
    """Normalized Levenshtein similarity, ``1 - distance / max(len(truth), len(prediction))``.

    Both values go through :func:`normalize_text` first (NFKC, casefold, whitespace
    collapse; punctuation kept unless ``ignore_punctuation=True``). The distance is
    RapidFuzz's ``Levenshtein.normalized_similarity`` (unit costs), the measure behind ANLS.

    Parameters
    ----------
    ignore_punctuation : bool, default False
        Delete Unicode punctuation before comparing.

    Attributes
    ----------
    default_threshold : float
        0.9, used by :class:`~confcal.scoring.schema.Field` when no threshold is given: the
        near-exact acceptance of the ConfBench paper (F1 "counts only exact or near-exact
        matches"). After normalization, case and spacing already compare equal, so 0.9
        accepts at most one edit per ten characters (a stray comma in "Buying Time, LLC")
        and no edit at all in a value shorter than ten characters, where one character is
        the value ("Net 30" vs "Net 60": 0.83). The lenient ANLS cut-off of document VQA,
        0.5 (:data:`ANLS_THRESHOLD`), is there to ask for explicitly.

    Examples
    --------
    >>> Text()("ACME Media", "acme  media")
    1.0
    >>> Text()("ACME Media", "ACME Medla")  # one substitution in ten characters
    0.9
    >>> Text(ignore_punctuation=True)("Net-30", "net 30")  # "net30" vs "net 30": one insertion
    0.8333333333333334
    >>> Text().pairwise(["abc", None], ["abd", None]).tolist()
    [[0.6666666666666667, 0.0], [0.0, 1.0]]
    """

    ignore_punctuation: bool = False
    default_threshold: ClassVar[float] = NEAR_EXACT_THRESHOLD

    def __post_init__(self) -> None:
        _check_bool(self.ignore_punctuation, "ignore_punctuation")

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        t = normalize_text(truth, ignore_punctuation=self.ignore_punctuation)
        p = normalize_text(prediction, ignore_punctuation=self.ignore_punctuation)
        return float(Levenshtein.normalized_similarity(t, p))

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> list[str]:
        return _normalized(values, missing, self.ignore_punctuation)

    def _pairs(self, pt: list[str], pp: list[str], ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        if len(ti) == 0:
            return np.zeros(0)
        sim = process.cpdist(
            [pt[i] for i in ti.tolist()], [pp[j] for j in pj.tolist()],
            scorer=Levenshtein.normalized_similarity, dtype=np.float64,
        )
        return np.asarray(sim, dtype=np.float64).reshape(len(ti))

    def _blocks(self, pt: list[str], pp: list[str], t_start: np.ndarray, m: np.ndarray,
                p_start: np.ndarray, n: np.ndarray, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        sizes = m * n
        out = np.empty(int(sizes.sum()))
        at = 0
        for ts, mm, ps, nn in zip(t_start.tolist(), m.tolist(), p_start.tolist(), n.tolist()):
            if mm and nn:
                block = process.cdist(pt[ts:ts + mm], pp[ps:ps + nn],
                                      scorer=Levenshtein.normalized_similarity, dtype=np.float64)
                out[at:at + mm * nn] = np.asarray(block).ravel()
                at += mm * nn
        return out


@dataclass(frozen=True)
class Exact(_BatchedMethods):
    """1.0 if the values are equal after :func:`normalize_text`, else 0.0.

    Attributes
    ----------
    default_threshold : float
        1.0: the comparator is binary, so every threshold in (0, 1] means "equal".

    Examples
    --------
    >>> Exact()("INV-0017", " inv-0017 ")
    1.0
    >>> Exact()("INV-0017", "INV-0018")
    0.0
    """

    default_threshold: ClassVar[float] = 1.0

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        return float(normalize_text(truth) == normalize_text(prediction))

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> list[str]:
        return _normalized(values, missing, False)

    def _pairs(self, pt: list[str], pp: list[str], ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        ct, cp = _codes(pt, pp)
        return (ct[ti] == cp[pj]).astype(np.float64)


class _Parsed:
    """Parsed values (float or calendar ordinal) and, lazily, the normalized texts of the
    values that did not parse, for the Exact fallback."""

    __slots__ = ("_text", "missing", "raw", "unparsed", "values")

    def __init__(self, values: np.ndarray, unparsed: np.ndarray, raw: Sequence[Any],
                 missing: np.ndarray) -> None:
        self.values, self.unparsed, self.raw, self.missing = values, unparsed, raw, missing
        self._text: list[str] | None = None

    @property
    def text(self) -> list[str]:
        if self._text is None:
            self._text = _normalized(self.raw, self.missing, False)
        return self._text


def _with_fallback(sim: np.ndarray, pt: _Parsed, pp: _Parsed, ti: np.ndarray,
                   pj: np.ndarray) -> np.ndarray:
    """Pairs where a side did not parse are compared as Exact text instead."""
    if pt.unparsed.any() or pp.unparsed.any():
        fallback = np.flatnonzero(pt.unparsed[ti] | pp.unparsed[pj])
        if fallback.size:
            ct, cp = _codes(pt.text, pp.text)
            sim[fallback] = ct[ti[fallback]] == cp[pj[fallback]]
    return sim


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
    return ValidationError(f"text must be a number ({reason}); found {text!r}")


def _parse_number_str(text: str, decimal: str) -> float:
    s = text if text.isascii() else unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    s = _CURRENCY_RE.sub("", s).strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative = True
        s = s[1:-1].strip()
    if s.endswith("%"):
        # "12%" is read as the number printed, 12, not 0.12: the percent sign is the
        # document's unit, like a currency symbol, and stickler-eval reads it the same way.
        s = s[:-1].strip()
    if s and s[0] in "+-":
        if negative:
            raise _number_error(text, "a sign inside accounting parentheses")
        negative = s[0] == "-"
        s = s[1:].strip()
    m = _EXPONENT_RE.search(s)
    exponent = m.group(0) if m else ""
    mantissa = s[: m.start()] if m else s
    thousands = "," if decimal == "." else "."
    if mantissa.count(decimal) > 1:
        raise _number_error(text, f"more than one decimal mark {decimal!r}")
    int_part, _, frac = mantissa.partition(decimal)
    if not frac.isdigit() and frac != "":
        raise _number_error(text, "non-digits after the decimal mark")
    separators = {ch for ch in int_part if ch == thousands or ch in _GROUP_SEPARATORS}
    if separators:
        if len(separators) > 1:
            raise _number_error(text, "mixed digit-group separators")
        groups = int_part.split(separators.pop())
        # Western grouping is 1-3 digits then threes, Indian 1-3 then twos then a final
        # three ("1,23,456"). Anything else is most likely the other decimal convention
        # ("1,5" with decimal="."), which must not be read as fifteen.
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
        int_part = "".join(groups)
    if not (int_part.isdigit() or (int_part == "" and frac != "")):
        raise _number_error(text, "not a number")
    # int_part/frac are ASCII digits only here (isdigit also accepts e.g. superscripts, but
    # NFKC has folded those), so float() reads exactly what was written.
    value = float(f"{int_part or '0'}.{frac or '0'}{exponent}")
    if not math.isfinite(value):
        raise _number_error(text, "not finite")
    return -value if negative else value


# The shapes most amounts take ("1234.5", "$1,234.50", "-$12"), read without the general
# parser; tests check both paths agree.
_PLAIN_AMOUNT_RE = re.compile(r"(-?)\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parse_number_cached(text: str, decimal: str) -> float:
    """Parsed value, or NaN when the text is not a number (cached either way)."""
    if decimal == ".":
        m = _PLAIN_AMOUNT_RE.fullmatch(text)
        if m:
            value = float(m.group(2).replace(",", "") + (m.group(3) or ""))
            return -value if m.group(1) else value
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
        If the text is not a finite number. Digit groups must be three digits (after a
        first group of 1-3; two-digit Indian groups are accepted before the last three):
        ``"1,5"`` with ``decimal="."`` is refused rather than read as 15.

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
    confcal.exceptions.ValidationError: text must be a number (digit groups must be separated every 3 digits with decimal='.'); found '1,5'
    """
    _check_decimal(decimal)
    if isinstance(text, (bool, np.bool_)):
        raise _number_error(text, "a bool is not a number")
    if isinstance(text, (int, float, Decimal, np.integer, np.floating)):
        try:
            value = float(text)
        except (OverflowError, ValueError):  # 10**400; Decimal("sNaN")
            raise _number_error(text, "not finite") from None
        if not math.isfinite(value):
            raise _number_error(text, "not finite")
        return value
    if not isinstance(text, str):
        raise _number_error(text, f"expected a string or a number, not {type(text).__name__}")
    value = _parse_number_cached(text, decimal)
    if math.isnan(value):
        _parse_number_str(text, decimal)  # re-run uncached to raise the specific reason
    return value


def _number_or_nan(value: Any, decimal: str) -> float:
    if isinstance(value, str):
        return _parse_number_cached(value, decimal)
    try:
        return parse_number(value, decimal=decimal)
    except ValidationError:
        return math.nan


def _check_tol(value: Any, name: str) -> None:
    ok = (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_))
        and math.isfinite(float(value))
        and float(value) >= 0
    )
    if not ok:
        raise ValidationError(f"{name} must be a finite number >= 0; found {value!r}")


@dataclass(frozen=True)
class Number(_BatchedMethods):
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
        t = _number_or_nan(truth, self.decimal)
        p = _number_or_nan(prediction, self.decimal)
        if math.isnan(t) or math.isnan(p):
            return Exact()(truth, prediction)
        return float(self._within(np.float64(t), np.float64(p)))

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> _Parsed:
        dec, cached = self.decimal, _parse_number_cached
        parsed = np.array([
            math.nan if miss else cached(v, dec) if type(v) is str else _number_or_nan(v, dec)
            for v, miss in zip(values, missing.tolist())
        ], dtype=np.float64).reshape(len(values))
        return _Parsed(parsed, np.isnan(parsed) & ~missing, values, missing)

    def _pairs(self, pt: _Parsed, pp: _Parsed, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        sim = self._within(pt.values[ti], pp.values[pj]).astype(np.float64)
        return _with_fallback(sim, pt, pp, ti, pj)


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


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parse_date_cached(text: str, dayfirst: bool) -> date | None:
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
        # Year first fixes the order to year-month-day: dayfirst is never applied here
        # (dateutil would read "2024-03-01" with dayfirst=True as 3 January).
        rest = s[m.end():]
        if not rest:
            return _valid_date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
        try:
            return datetime.fromisoformat(s).date()
        except ValueError:
            return _dateutil_date(s, dayfirst=False, yearfirst=True)
    m = _COMPACT_ISO_RE.fullmatch(s)
    if m:
        return _valid_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _NUMERIC_DATE_RE.fullmatch(s)
    if m:
        a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
        # One reading, chosen by dayfirst; the other only when the first cannot be a date
        # because a number exceeds 12 (then only one reading exists). This is dateutil's
        # rule, never "whichever matches the other value".
        first = _valid_date(year, b, a) if dayfirst else _valid_date(year, a, b)
        if first is not None or (a <= 12 and b <= 12):
            return first
        return _valid_date(year, a, b) if dayfirst else _valid_date(year, b, a)
    for pattern in _MONTH_NAME_RES:
        m = pattern.fullmatch(s)
        if m:
            month = _MONTHS[m.group("month").lower()]
            return _valid_date(int(m.group("year")), month, int(m.group("day")))
    leading = _FIRST_NUMBER_RE.search(s)
    if leading is not None and len(leading.group()) in (4, 8):
        # A leading year (or yyyymmdd) is ISO order whatever surrounds it ("Fri 2024-03-01",
        # "2024 03 01", "20240301T000000"): never re-read day-first.
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


@functools.lru_cache(maxsize=_CACHE_SIZE)
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
    confcal.exceptions.ValidationError: text must be a complete calendar date (year, month and day); found 'March 2024'
    """
    _check_bool(dayfirst, "dayfirst")
    parsed = _date_or_none(text, dayfirst)
    if parsed is None:
        raise ValidationError(
            f"text must be a complete calendar date (year, month and day); found {text!r}"
        )
    return parsed


@dataclass(frozen=True)
class Date(_BatchedMethods):
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
        _check_bool(self.dayfirst, "dayfirst")

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        t = _date_or_none(truth, self.dayfirst)
        p = _date_or_none(prediction, self.dayfirst)
        if t is None or p is None:
            return Exact()(truth, prediction)
        return float(t == p)

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> _Parsed:
        # Proleptic Gregorian ordinals (>= 1); 0 for missing values and non-dates.
        dayfirst, cached = self.dayfirst, _ordinal_cached
        ordinals = np.array([
            0 if miss else cached(v, dayfirst) if type(v) is str else _ordinal(v, dayfirst)
            for v, miss in zip(values, missing.tolist())
        ], dtype=np.int64).reshape(len(values))
        return _Parsed(ordinals, (ordinals == 0) & ~missing, values, missing)

    def _pairs(self, pt: _Parsed, pp: _Parsed, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        sim = (pt.values[ti] == pp.values[pj]).astype(np.float64)
        return _with_fallback(sim, pt, pp, ti, pj)


# ------------------------------------------------------- dispatch (private)
#
# The scorer and line-item matching evaluate every comparator through a kernel (the
# ``_prepare``/``_pairs``/``_blocks`` steps above), chosen by what the comparator can do and
# never by its type (STYLE rule 17):
#
#   has the private kernel steps (the built-ins)  -> the comparator itself
#   has ``pairwise`` and/or ``elementwise``        -> _BatchedKernel: batches of present
#                                                     values, every result checked
#   a plain callable                               -> _CallableKernel: once per pair of
#                                                     present values, every result checked
#
# ``fields`` (``("LineItems.Rate",)``; several for top-level fields sharing a comparator) is
# the location an error names, in its message and, for one field, its ``field`` attribute.

_KERNEL_STEPS = ("_prepare", "_pairs", "_blocks")


def _location(fields: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The message prefix and the ValidationError location of an error in ``fields``."""
    if not fields:
        return "", {}
    prefix = ("field " if len(fields) == 1 else "fields ") + ", ".join(fields) + ": "
    return prefix, ({"field": fields[0]} if len(fields) == 1 else {})


class _CallableKernel:
    """A custom comparator: a plain callable, called once per pair of present values."""

    def __init__(self, comparator: Any, fields: Sequence[str] = ()) -> None:
        self.comparator = comparator
        self.fields = tuple(fields)

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> tuple[Sequence[Any], np.ndarray]:
        return values, missing

    def _pairs(self, pt: tuple[Sequence[Any], np.ndarray], pp: tuple[Sequence[Any], np.ndarray],
               ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        (tv, tm), (pv, pm) = pt, pp
        sim = np.zeros(len(ti))
        for k in np.flatnonzero(~(tm[ti] | pm[pj])).tolist():
            sim[k] = self._call(tv[ti[k]], pv[pj[k]])
        return sim

    def _blocks(self, pt: Any, pp: Any, t_start: np.ndarray, m: np.ndarray,
                p_start: np.ndarray, n: np.ndarray, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        return self._pairs(pt, pp, ti, pj)

    def _call(self, truth: Any, prediction: Any) -> float:
        value = self.comparator(truth, prediction)
        ok = (
            isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_))
            and 0.0 <= float(value) <= 1.0
        )
        if not ok:
            prefix, location = _location(self.fields)
            raise ValidationError(
                f"{prefix}comparator {self.comparator!r} must return a number within [0, 1]; "
                f"found {value!r} for truth {truth!r} and prediction {prediction!r}", **location
            )
        return float(value)


def _check_batch(
    result: Any, shape: tuple[int, ...], comparator: Any, method: str, fields: Sequence[str],
    truths: Sequence[Any], predictions: Sequence[Any],
) -> np.ndarray:
    """A batched comparator's result as float64 of ``shape``, else a ValidationError.

    The boundary check of :class:`BatchedComparator` results, the batched twin of
    :meth:`_CallableKernel._call`: real numbers (bools refused, as there), finite, within
    [0, 1]. Nothing is clipped: a similarity out of range is a bug in the comparator, and
    clipping would hide it in the scores.
    """
    prefix, location = _location(fields)
    rule = (f"{prefix}comparator {comparator!r} {method} must return an array of shape {shape} "
            "of finite numbers within [0, 1]")
    try:
        arr = np.asarray(result)
    except (TypeError, ValueError):  # ragged nested lists
        raise ValidationError(f"{rule}; found {type(result).__name__} {result!r:.80}",
                              **location) from None
    if arr.shape != shape:
        raise ValidationError(f"{rule}; found {type(result).__name__} of shape {arr.shape}",
                              **location)
    if arr.dtype.kind not in "iuf":
        found = "bools" if arr.dtype.kind == "b" else f"dtype {arr.dtype}"
        raise ValidationError(f"{rule}; found an array of {found}", **location)
    arr = arr.astype(np.float64, copy=False)
    # min and max propagate NaN, so one pair of reductions proves the rule (as in
    # confcal._validation.check_confidence).
    if arr.size and not (arr.min() >= 0.0 and arr.max() <= 1.0):
        bad = np.flatnonzero(~((arr >= 0.0) & (arr <= 1.0)))  # NaN is bad too
        index = np.unravel_index(int(bad[0]), shape)
        value = float(arr[index])
        noun = "value" if bad.size == 1 else "values"
        raise ValidationError(
            f"{rule}; found {bad.size} {noun} breaking it, first {value!r} for truth "
            f"{truths[int(index[0])]!r} and prediction {predictions[int(index[-1])]!r}",
            **location,
        )
    return arr


class _BatchedKernel:
    """A comparator with ``pairwise`` and/or ``elementwise`` (:class:`BatchedComparator`) but
    no private kernel steps: it is given present values only, in batches, and every result
    is checked (:func:`_check_batch`). A method it lacks is replaced by pair-by-pair calls
    (``elementwise``) or by ``elementwise`` on the gathered pairs (``pairwise``)."""

    def __init__(self, comparator: Any, fields: Sequence[str] = ()) -> None:
        self.comparator = comparator
        self.fields = tuple(fields)
        pairwise = getattr(comparator, "pairwise", None)
        elementwise = getattr(comparator, "elementwise", None)
        self.pairwise = pairwise if callable(pairwise) else None
        self.elementwise = elementwise if callable(elementwise) else None
        self.scalar = _CallableKernel(comparator, fields)

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> tuple[list[Any], np.ndarray]:
        # A list, so that a block of values is one slice (and the protocol promises lists);
        # the methods only ever get slices or new lists, never the scorer's own pool.
        return (values if type(values) is list else list(values)), missing

    def _checked(self, result: Any, shape: tuple[int, ...], method: str,
                 truths: list[Any], predictions: list[Any]) -> np.ndarray:
        return _check_batch(result, shape, self.comparator, method, self.fields, truths,
                            predictions)

    def _pairs(self, pt: tuple[list[Any], np.ndarray], pp: tuple[list[Any], np.ndarray],
               ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        if self.elementwise is None:
            return self.scalar._pairs(pt, pp, ti, pj)
        (tv, tm), (pv, pm) = pt, pp
        sim = np.zeros(len(ti))
        present = np.flatnonzero(~(tm[ti] | pm[pj]))
        if present.size:
            truths = [tv[i] for i in ti[present].tolist()]
            predictions = [pv[j] for j in pj[present].tolist()]
            sim[present] = self._checked(self.elementwise(truths, predictions), (present.size,),
                                         "elementwise", truths, predictions)
        return sim

    def _blocks(self, pt: tuple[list[Any], np.ndarray], pp: tuple[list[Any], np.ndarray],
                t_start: np.ndarray, m: np.ndarray, p_start: np.ndarray, n: np.ndarray,
                ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        if self.pairwise is None:
            return self._pairs(pt, pp, ti, pj)
        (tv, tm), (pv, pm) = pt, pp
        out = np.zeros(int((m * n).sum()))  # cells with a missing side: _fix_missing
        at = 0
        for ts, mm, ps, nn in zip(t_start.tolist(), m.tolist(), p_start.tolist(), n.tolist()):
            size = mm * nn
            rows = np.flatnonzero(~tm[ts:ts + mm])
            cols = np.flatnonzero(~pm[ps:ps + nn])
            if rows.size and cols.size:
                full = rows.size == mm and cols.size == nn
                truths = (tv[ts:ts + mm] if rows.size == mm
                          else [tv[ts + i] for i in rows.tolist()])
                predictions = (pv[ps:ps + nn] if cols.size == nn
                               else [pv[ps + j] for j in cols.tolist()])
                block = self._checked(self.pairwise(truths, predictions), (rows.size, cols.size),
                                      "pairwise", truths, predictions)
                view = out[at:at + size].reshape(mm, nn)
                if full:
                    view[...] = block
                else:
                    view[np.ix_(rows, cols)] = block
            at += size
        return out


def _kernel(comparator: Any, fields: Sequence[str] = ()) -> Any:
    """How a comparator is evaluated, chosen by what it can do (table above)."""
    if all(callable(getattr(comparator, step, None)) for step in _KERNEL_STEPS):
        return comparator
    if callable(getattr(comparator, "pairwise", None)) or callable(
        getattr(comparator, "elementwise", None)
    ):
        return _BatchedKernel(comparator, fields)
    return _CallableKernel(comparator, fields)


def _pairwise_similarity(
    comparator: Any, truths: Sequence[Any], predictions: Sequence[Any],
    tm: np.ndarray | None = None, pm: np.ndarray | None = None, *, fields: Sequence[str] = (),
) -> np.ndarray:
    """``(m, n)`` similarities from any comparator; masks may be passed when already known."""
    tm = _missing_mask(truths) if tm is None else tm
    pm = _missing_mask(predictions) if pm is None else pm
    return _pairwise(_kernel(comparator, fields), truths, predictions, tm, pm)


def _elementwise_similarity(
    comparator: Any, truths: Sequence[Any], predictions: Sequence[Any],
    tm: np.ndarray | None = None, pm: np.ndarray | None = None, *, fields: Sequence[str] = (),
) -> np.ndarray:
    """``(k,)`` similarities of aligned pairs from any comparator."""
    _check_lengths(truths, predictions)
    tm = _missing_mask(truths) if tm is None else tm
    pm = _missing_mask(predictions) if pm is None else pm
    return _elementwise(_kernel(comparator, fields), truths, predictions, tm, pm)
