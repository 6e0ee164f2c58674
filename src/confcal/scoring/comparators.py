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

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._dates import Date, parse_date
from ._numbers import Number, parse_number
from ._text import ANLS_THRESHOLD, NEAR_EXACT_THRESHOLD, Exact, Text, normalize_text

__all__ = [
    "ANLS_THRESHOLD",
    "NEAR_EXACT_THRESHOLD",
    "BatchedComparator",
    "Comparator",
    "Date",
    "Exact",
    "Number",
    "Text",
    "clear_caches",
    "normalize_text",
    "parse_date",
    "parse_number",
]


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
    that has them, whatever its type: the path is chosen by capability (as
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


def clear_caches() -> None:
    """Empty the per-string parse caches (for benchmarks that time a cold start)."""
    from . import _dates, _numbers, _text

    for cached in (_text._normalize_str, _numbers._parse_number_cached,
                   _dates._parse_date_cached, _dates._ordinal_cached):
        cached.cache_clear()
