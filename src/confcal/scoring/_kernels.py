"""The batched evaluation of comparators: missing values, pair blocks and the dispatch.

Shared by the comparator modules, the scorer and line-item matching (names without a
leading underscore are used across modules; see docs/architecture.md). The dispatch picks
how a comparator is evaluated by what it can do, never by its type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import is_missing
from ..exceptions import ValidationError

CACHE_SIZE = 1 << 16
"""Entries of each per-string parse cache (``functools.lru_cache``)."""


def missing_flags(values: Sequence[Any]) -> list[bool]:
    """``[is_missing(v) for v in values]``, with the common types decided inline.

    The scorer calls this on every value; the inline cases are exactly those of
    :func:`~confcal._validation.is_missing` (``isspace`` and ``strip`` agree on what
    whitespace is, and an ASCII or printable string has no format character), and
    everything else, a string of spaces and format characters among them, is delegated to
    it.
    """
    isnan = math.isnan
    return [
        (not v or v.isspace() or (not v.isascii() and not v.isprintable() and is_missing(v)))
        if type(v) is str
        else v is None or (
            isnan(v) if type(v) is float
            else (type(v) is not int and type(v) is not bool and is_missing(v))
        )
        for v in values
    ]


def missing_mask(values: Sequence[Any]) -> np.ndarray:
    return np.array(missing_flags(values), dtype=bool).reshape(len(values))


def codes(a: Sequence[str], b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes shared by two string lists: equal strings <=> equal codes.

    Comparing codes with numpy replaces Python string comparisons pair by pair.
    """
    table: dict[str, int] = {}
    ca = np.fromiter((table.setdefault(s, len(table)) for s in a), dtype=np.int64, count=len(a))
    cb = np.fromiter((table.setdefault(s, len(table)) for s in b), dtype=np.int64, count=len(b))
    return ca, cb


def check_lengths(truths: Sequence[Any], predictions: Sequence[Any]) -> None:
    if len(truths) != len(predictions):
        raise ValidationError(
            "truths, predictions must have the same length; "
            f"truths has {len(truths)} and predictions has {len(predictions)}"
        )


def check_bool(value: Any, name: str) -> None:
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
# :func:`fix_missing` applies the missing-value rule afterwards.


def block_pairs(
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


def fix_missing(sim: np.ndarray, tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    """Both missing -> 1.0, exactly one missing -> 0.0 (module docstring); broadcasts."""
    either = tm | pm
    if either.any():
        sim[np.broadcast_to(either, sim.shape)] = 0.0
        sim[np.broadcast_to(tm & pm, sim.shape)] = 1.0
    return sim


def kernel_pairwise(kernel: Any, truths: Sequence[Any], predictions: Sequence[Any],
              tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    m, n = len(truths), len(predictions)
    pt, pp = kernel._prepare(truths, tm), kernel._prepare(predictions, pm)
    start, rows, cols = np.zeros(1, dtype=np.int64), np.array([m]), np.array([n])
    ti, pj = block_pairs(start, rows, start, cols)
    sim = kernel._blocks(pt, pp, start, rows, start, cols, ti, pj).reshape(m, n)
    return fix_missing(sim, tm[:, None], pm[None, :])


def kernel_elementwise(kernel: Any, truths: Sequence[Any], predictions: Sequence[Any],
                 tm: np.ndarray, pm: np.ndarray) -> np.ndarray:
    pt, pp = kernel._prepare(truths, tm), kernel._prepare(predictions, pm)
    index = np.arange(len(truths))
    return fix_missing(kernel._pairs(pt, pp, index, index), tm, pm)


class BatchedMethods:
    """``pairwise`` and ``elementwise`` for the built-in comparators, from their kernels.

    Shared code of the four built-ins, not an extension point: a custom comparator is a
    plain callable (:class:`Comparator`) or a class of its own that implements
    :class:`BatchedComparator`, never a subclass.
    """

    def pairwise(self, truths: Sequence[Any], predictions: Sequence[Any]) -> np.ndarray:
        """``(len(truths), len(predictions))`` similarity matrix."""
        return kernel_pairwise(self, truths, predictions, missing_mask(truths),
                               missing_mask(predictions))

    def elementwise(self, truths: Sequence[Any], predictions: Sequence[Any]) -> np.ndarray:
        """Similarity of ``truths[i]`` and ``predictions[i]`` for every i."""
        check_lengths(truths, predictions)
        return kernel_elementwise(
            self, truths, predictions, missing_mask(truths), missing_mask(predictions)
        )

    def _blocks(self, pt: Any, pp: Any, t_start: np.ndarray, m: np.ndarray,
                p_start: np.ndarray, n: np.ndarray, ti: np.ndarray, pj: np.ndarray) -> np.ndarray:
        """Similarities of every pair of every block; ``ti, pj`` from :func:`block_pairs`."""
        return self._pairs(pt, pp, ti, pj)  # type: ignore[attr-defined, no-any-return]


# ------------------------------------------------------- dispatch (private)
#
# The scorer and line-item matching evaluate every comparator through a kernel (the
# ``_prepare``/``_pairs``/``_blocks`` steps above), chosen by what the comparator can do and
# never by its type (a protocol is what an object can do, not what it is):
#
#   has the private kernel steps (the built-ins)  -> the comparator itself
#   has ``pairwise`` and/or ``elementwise``        -> BatchedKernel: batches of present
#                                                     values, every result checked
#   a plain callable                               -> CallableKernel: once per pair of
#                                                     present values, every result checked
#
# ``fields`` (``("LineItems.Rate",)``; several for top-level fields sharing a comparator) is
# the location an error names, in its message and, for one field, its ``field`` attribute.

KERNEL_STEPS = ("_prepare", "_pairs", "_blocks")


def _location(fields: Sequence[str]) -> tuple[str, dict[str, Any]]:
    """The message prefix and the ValidationError location of an error in ``fields``."""
    if not fields:
        return "", {}
    prefix = ("field " if len(fields) == 1 else "fields ") + ", ".join(fields) + ": "
    return prefix, ({"field": fields[0]} if len(fields) == 1 else {})


class CallableKernel:
    """A custom comparator: a plain callable, called once per pair of present values."""

    def __init__(self, comparator: Any, fields: Sequence[str] = ()) -> None:
        self.comparator = comparator
        self.fields = tuple(fields)

    def _prepare(self, values: Sequence[Any],
                 missing: np.ndarray) -> tuple[Sequence[Any], np.ndarray]:
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


def check_batch(
    result: Any, shape: tuple[int, ...], comparator: Any, method: str, fields: Sequence[str],
    truths: Sequence[Any], predictions: Sequence[Any],
) -> np.ndarray:
    """A batched comparator's result as float64 of ``shape``, else a ValidationError.

    The boundary check of :class:`BatchedComparator` results, the batched twin of
    :meth:`CallableKernel._call`: real numbers (bools refused, as there), finite, within
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


class BatchedKernel:
    """A comparator with ``pairwise`` and/or ``elementwise`` (:class:`BatchedComparator`) but
    no private kernel steps: it is given present values only, in batches, and every result
    is checked (:func:`check_batch`). A method it lacks is replaced by pair-by-pair calls
    (``elementwise``) or by ``elementwise`` on the gathered pairs (``pairwise``)."""

    def __init__(self, comparator: Any, fields: Sequence[str] = ()) -> None:
        self.comparator = comparator
        self.fields = tuple(fields)
        pairwise = getattr(comparator, "pairwise", None)
        elementwise = getattr(comparator, "elementwise", None)
        self.pairwise = pairwise if callable(pairwise) else None
        self.elementwise = elementwise if callable(elementwise) else None
        self.scalar = CallableKernel(comparator, fields)

    def _prepare(self, values: Sequence[Any], missing: np.ndarray) -> tuple[list[Any], np.ndarray]:
        # A list, so that a block of values is one slice (and the protocol promises lists);
        # the methods only ever get slices or new lists, never the scorer's own pool.
        return (values if type(values) is list else list(values)), missing

    def _checked(self, result: Any, shape: tuple[int, ...], method: str,
                 truths: list[Any], predictions: list[Any]) -> np.ndarray:
        return check_batch(result, shape, self.comparator, method, self.fields, truths,
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
        out = np.zeros(int((m * n).sum()))  # cells with a missing side: fix_missing
        at = 0
        for ts, mm, ps, nn in zip(t_start.tolist(), m.tolist(), p_start.tolist(), n.tolist(),
                                  strict=True):
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


def kernel(comparator: Any, fields: Sequence[str] = ()) -> Any:
    """How a comparator is evaluated, chosen by what it can do (table above)."""
    if all(callable(getattr(comparator, step, None)) for step in KERNEL_STEPS):
        return comparator
    if callable(getattr(comparator, "pairwise", None)) or callable(
        getattr(comparator, "elementwise", None)
    ):
        return BatchedKernel(comparator, fields)
    return CallableKernel(comparator, fields)


def elementwise_similarity(
    comparator: Any, truths: Sequence[Any], predictions: Sequence[Any],
    tm: np.ndarray | None = None, pm: np.ndarray | None = None, *, fields: Sequence[str] = (),
) -> np.ndarray:
    """``(k,)`` similarities of aligned pairs from any comparator."""
    check_lengths(truths, predictions)
    tm = missing_mask(truths) if tm is None else tm
    pm = missing_mask(predictions) if pm is None else pm
    return kernel_elementwise(kernel(comparator, fields), truths, predictions, tm, pm)
