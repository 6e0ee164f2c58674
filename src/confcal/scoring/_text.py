"""Text comparison: normalization, :class:`Text` and :class:`Exact`, and the text fallback
that :class:`~confcal.scoring.comparators.Number` and :class:`Date` use for values that do
not parse. Public through :mod:`confcal.scoring.comparators`."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from .._validation import is_missing
from ..exceptions import ValidationError
from ._kernels import CACHE_SIZE, BatchedMethods, check_bool, codes

NEAR_EXACT_THRESHOLD: float = 0.9
"""The default :class:`Text` threshold: the ConfBench paper's near-exact acceptance."""

ANLS_THRESHOLD: float = 0.5
"""The lenient ANLS cut-off of document VQA (Biten et al., 2019), the threshold that
stickler-eval 1.0.0 applies to text: a similarity below 0.5 means another value was read.
Not a default anywhere; ask for it with ``Field(Text(), threshold=ANLS_THRESHOLD)`` or
:func:`confcal.scoring.presets.fcc_invoice` ``(text_threshold=ANLS_THRESHOLD)``."""


# --------------------------------------------------------------------------- text


@functools.lru_cache(maxsize=CACHE_SIZE)
def _normalize_str(text: str, ignore_punctuation: bool) -> str:
    # NFKC is the identity on ASCII; skipping it halves the cost on typical invoices.
    s = text
    if not s.isascii():
        # Format characters (category Cf: U+200B zero-width space, U+FEFF, U+00AD soft
        # hyphen, bidi marks) are invisible, and NFKC keeps them: a PDF text layer's
        # U+200B is no edit. Deleted before NFKC so that what they separated composes.
        s = unicodedata.normalize(
            "NFKC", "".join(ch for ch in s if unicodedata.category(ch) != "Cf"))
    s = s.casefold()
    if ignore_punctuation:
        # Unicode categories Pc, Pd, Ps, Pe, Pi, Pf, Po: punctuation, not symbols ($, +, ©),
        # which carry meaning. Deleted rather than replaced by a space, as in the SQuAD
        # answer normalization: "A.C.M.E." -> "acme".
        s = "".join(ch for ch in s if not unicodedata.category(ch).startswith("P"))
    return " ".join(s.split())


def normalize_text(value: Any, *, ignore_punctuation: bool = False) -> str:
    """Normalize a value for text comparison.

    Unicode format characters (category ``Cf``: zero-width space U+200B, byte-order mark
    U+FEFF, soft hyphen U+00AD, bidirectional marks) deleted, Unicode NFKC, casefold,
    whitespace runs collapsed to one space and stripped. With ``ignore_punctuation=True``
    Unicode punctuation (categories ``P*``) is deleted as well.
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

    See Also
    --------
    Text : compares normalised text.

    Examples
    --------
    >>> normalize_text("  ACME\\u00a0 Media,  Inc. ")
    'acme media, inc.'
    >>> normalize_text("A.C.M.E. Media", ignore_punctuation=True)
    'acme media'
    >>> normalize_text("ﬁle №1")  # NFKC folds ligatures and compatibility characters
    'file no1'
    >>> normalize_text("\ufeffACME\u200b Me\u00addia")  # format characters are invisible
    'acme media'
    """
    if is_missing(value):
        return ""
    return _normalize_str(value if isinstance(value, str) else str(value), ignore_punctuation)


def normalized(values: Sequence[Any], missing: np.ndarray, ignore_punctuation: bool) -> list[str]:
    norm = _normalize_str
    return [
        "" if miss else norm(v if type(v) is str else str(v), ignore_punctuation)
        for v, miss in zip(values, missing.tolist(), strict=True)
    ]


# --------------------------------------------------------------------------- text


@dataclass(frozen=True)
class Text(BatchedMethods):
    """Normalized Levenshtein similarity, ``1 - distance / max(len(truth), len(prediction))``.

    Both values go through :func:`normalize_text` first (format characters deleted, NFKC,
    casefold, whitespace collapse; punctuation kept unless ``ignore_punctuation=True``).
    The distance is RapidFuzz's ``Levenshtein.normalized_similarity`` (unit costs), the
    measure behind ANLS.

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

    See Also
    --------
    Exact : equality after normalisation only.
    normalize_text : the normalisation both apply.

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
        check_bool(self.ignore_punctuation, "ignore_punctuation")

    def __call__(self, truth: Any, prediction: Any) -> float:
        tm, pm = is_missing(truth), is_missing(prediction)
        if tm or pm:
            return float(tm and pm)
        t = normalize_text(truth, ignore_punctuation=self.ignore_punctuation)
        p = normalize_text(prediction, ignore_punctuation=self.ignore_punctuation)
        return float(Levenshtein.normalized_similarity(t, p))

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> list[str]:
        return normalized(values, missing, self.ignore_punctuation)

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
        for ts, mm, ps, nn in zip(t_start.tolist(), m.tolist(), p_start.tolist(), n.tolist(),
                                  strict=True):
            if mm and nn:
                block = process.cdist(pt[ts:ts + mm], pp[ps:ps + nn],
                                      scorer=Levenshtein.normalized_similarity, dtype=np.float64)
                out[at:at + mm * nn] = np.asarray(block).ravel()
                at += mm * nn
        return out


@dataclass(frozen=True)
class Exact(BatchedMethods):
    """1.0 if the values are equal after :func:`normalize_text`, else 0.0.

    Attributes
    ----------
    default_threshold : float
        1.0: the comparator is binary, so every threshold in (0, 1] means "equal".

    See Also
    --------
    Text : similarity with an acceptance threshold.

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
        return normalized(values, missing, False)

    def _pairs(self, pt: list[str], pp: list[str], ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        ct, cp = codes(pt, pp)
        return (ct[ti] == cp[pj]).astype(np.float64)


class Parsed:
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
            self._text = normalized(self.raw, self.missing, False)
        return self._text


def with_fallback(sim: np.ndarray, pt: Parsed, pp: Parsed, ti: np.ndarray,
                   pj: np.ndarray) -> np.ndarray:
    """Pairs where a side did not parse are compared as Exact text instead."""
    if pt.unparsed.any() or pp.unparsed.any():
        fallback = np.flatnonzero(pt.unparsed[ti] | pp.unparsed[pj])
        if fallback.size:
            ct, cp = codes(pt.text, pp.text)
            sim[fallback] = ct[ti[fallback]] == cp[pj[fallback]]
    return sim


# ------------------------------------------------------------------ value lengths


def value_lengths(values: list[Any]) -> np.ndarray:
    """The length of every string value, 0 for any other value."""
    # a column of plain strings (the common case) is measured by C-level builtins alone
    return np.fromiter(
        map(len, values) if _STR.issuperset(map(type, values))
        else (len(v) if isinstance(v, str) else 0 for v in values),
        dtype=np.int64, count=len(values))


def check_value_lengths(values: list[Any], where: Callable[[int], tuple[Any, str]],
                        what: str, max_chars: int) -> np.ndarray:
    """The length of every string value (0 for any other value), once no string value is
    longer than ``max_chars``: text similarity is quadratic in the length
    (:class:`~confcal.scoring.io.InputLimits`), so a longer one is refused, never cut
    short."""
    lengths = value_lengths(values)
    if not len(values) or int(lengths.max()) <= max_chars:
        return lengths
    k = int(np.argmax(lengths > max_chars))
    doc_id, field = where(k)
    raise ValidationError(
        f"doc {doc_id!r}, field {field}: {what} must be at most {max_chars:,} characters "
        "long (InputLimits.max_value_chars, --max-value-chars on the command line; text "
        f"comparison is quadratic in length); found {len(values[k]):,}",
        doc_id=doc_id, field=field)


_STR = frozenset({str})


def _compared_chars(leaves: list[Any]) -> int:
    """``sum(_compared_text(leaf) for leaf in leaves)``, with a plain string and a
    ``{"value": ...}`` leaf decided inline (the same rule) and anything else delegated."""
    total = 0
    for leaf in leaves:
        kind = type(leaf)
        if kind is str:
            total += len(leaf)
        elif kind is dict and "value" in leaf:
            value = leaf["value"]
            if isinstance(value, str):
                total += len(value)
        elif leaf is not None:
            total += _compared_text(leaf)
    return total


def _compared_text(leaf: Any) -> int:
    """Characters of the text a leaf is compared by (a top-K leaf: its longest candidate)."""
    if isinstance(leaf, Mapping):
        if "value" in leaf:
            leaf = leaf["value"]
        elif isinstance(leaf.get("candidates"), (list, tuple)):
            return max((_compared_text(c) for c in leaf["candidates"]), default=0)
    return len(leaf) if isinstance(leaf, str) else 0


def compared_chars(leaves: list[Any]) -> np.ndarray:
    """The characters each predicted leaf is compared by (:func:`_compared_text`)."""
    return np.fromiter(map(_compared_text, leaves), dtype=np.int64, count=len(leaves))


def check_block_work(doc_ids: list[Any], name: str, k: int, m: np.ndarray, n: np.ndarray,
                     chars: Callable[[], list[tuple[np.ndarray, np.ndarray]]],
                     limits: Any) -> None:
    """:func:`check_item_work` for one Items field of ``k`` sub-fields, over the documents
    that have line items, from the columns the scorer reads.

    Document ``b`` has ``m[b]`` truth and ``n[b]`` predicted items; ``chars()`` gives, per
    sub-field, the compared characters of every truth and of every predicted item, the
    documents' items one after another (called only when some document is not cleared by
    its item counts). The first document beyond a bound is refused, the item-pair bound
    before the character-pair bound, as :func:`check_item_work` does.
    """
    max_items, max_pairs, max_chars = (limits.max_item_pairs, limits.max_pair_chars,
                                       limits.max_value_chars)
    pairs = (m * n).tolist()
    # No value is longer than max_chars, so k m n max_chars^2 bounds a document's work and
    # clears most documents without their lengths (Python ints: no overflow).
    suspect = [k * p * max_chars ** 2 > max_pairs for p in pairs]
    work = [0] * len(pairs)
    if any(suspect):
        t_start, p_start = np.cumsum(m) - m, np.cumsum(n) - n
        for t_chars, p_chars in chars():
            t_sum = np.concatenate(([0], np.cumsum(t_chars)))
            p_sum = np.concatenate(([0], np.cumsum(p_chars)))
            t_doc = (t_sum[t_start + m] - t_sum[t_start]).tolist()
            p_doc = (p_sum[p_start + n] - p_sum[p_start]).tolist()
            work = [w + t * p for w, t, p in zip(work, t_doc, p_doc, strict=True)]
    for b, (p, s, w) in enumerate(zip(pairs, suspect, work, strict=True)):
        if p > max_items or (s and w > max_pairs):
            _check_item_pairs(doc_ids[b], name, [int(m[b]), int(n[b])], max_items)
            raise _work_error(doc_ids[b], name, max_pairs, w)


def _work_error(doc_id: Any, name: str, max_pairs: int, work: int) -> ValidationError:
    return ValidationError(
        f"doc {doc_id!r}, field {name}: comparing the line items must cost at most "
        f"{max_pairs:,} character pairs (InputLimits.max_pair_chars, "
        f"--max-pair-chars on the command line; every truth item is compared with "
        f"every predicted item); found {work:,}", doc_id=doc_id, field=name)


def _check_item_pairs(doc_id: Any, name: str, counts: list[int], max_items: int) -> None:
    if counts[0] * counts[1] > max_items:
        raise ValidationError(
            f"doc {doc_id!r}, field {name}: the line items must make at most {max_items:,} "
            f"pairs of truth and predicted items (InputLimits.max_item_pairs, "
            f"--max-item-pairs on the command line; every pair costs a similarity per "
            f"sub-field and a place in the assignment); found {counts[0] * counts[1]:,} "
            f"({counts[0]:,} truth x {counts[1]:,} predicted items)", doc_id=doc_id, field=name)


def check_item_work(schema: Any, truth_docs: list[tuple[Any, Any]],
                    pred_docs: Mapping[Any, Any], max_pairs: int, max_chars: int,
                    max_items: int) -> None:
    """No document's line items cost more than ``max_pairs`` character pairs or
    ``max_items`` item pairs to compare.

    Items are compared all against all, so the text work of a line-item field in one
    document is, summed over its sub-fields, (truth characters) x (predicted characters)
    (:class:`~confcal.scoring.io.InputLimits`, ``max_pair_chars``), and its memory and
    assignment work grow with (truth items) x (predicted items) whatever the values'
    lengths (``max_item_pairs``). A document beyond either is refused before any
    comparison, never cut short. ``max_chars`` is the longest value allowed, which clears
    most documents by their item counts alone.
    """
    from .schema import Items  # the schema module imports this one

    fields = [(name, spec) for name, spec in schema.fields.items() if isinstance(spec, Items)]
    for doc_id, truth in truth_docs:
        pred = pred_docs.get(doc_id)
        for name, spec in fields:
            # No value is longer than max_chars (check_value_lengths refuses one that is), so
            # k sub-fields of m x n items cost at most k m n max_chars^2: most documents are
            # cleared by their item counts alone, without reading a value.
            counts = [len(doc.get(name) or ()) if isinstance(doc, Mapping)
                      and isinstance(doc.get(name), (list, tuple)) else 0
                      for doc in (truth, pred)]
            _check_item_pairs(doc_id, name, counts, max_items)
            if len(spec.fields) * counts[0] * counts[1] * max_chars ** 2 <= max_pairs:
                continue
            sides = []
            for doc in (truth, pred):
                value = doc.get(name) if isinstance(doc, Mapping) else None
                items = [i for i in value if isinstance(i, Mapping)] \
                    if isinstance(value, (list, tuple)) else []
                sides.append([_compared_chars([item.get(sub) for item in items])
                              for sub in spec.fields])
            work = sum(t * p for t, p in zip(sides[0], sides[1], strict=True))
            if work > max_pairs:
                raise _work_error(doc_id, name, max_pairs, work)


def check_document_lengths(schema: Any, truth_docs: list[tuple[Any, Any]],
                            pred_docs: Mapping[Any, Any], max_chars: int) -> None:
    """:func:`check_value_lengths` document by document, for the
    ``stickler-1.0`` scorer (which reads documents its own way)."""
    from .schema import Items  # the schema module imports this one

    for doc_id, truth in truth_docs:
        for side, doc in (("the truth value", truth), ("the predicted value",
                                                        pred_docs.get(doc_id))):
            if not isinstance(doc, Mapping):
                continue
            for name, spec in schema.fields.items():
                value = doc.get(name)
                if isinstance(spec, Items):
                    items = value if isinstance(value, (list, tuple)) else ()
                    cells = [(f"{name}[{i}].{sub}", item.get(sub))
                             for i, item in enumerate(items) if isinstance(item, Mapping)
                             for sub in spec.fields]
                else:
                    cells = [(name, value)]
                for path, cell in cells:
                    if isinstance(cell, Mapping):
                        cell = cell.get("value")

                    def where(_k: int, path: str = path) -> tuple[Any, str]:
                        return doc_id, path

                    check_value_lengths([cell], where, side, max_chars)
