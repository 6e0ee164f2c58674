"""The one sort every calibration metric reads.

Every order-dependent metric in confcal (AUROC, quantile and uniform bins, ECARB) is a
function of the predictions sorted by confidence, with ties handled per *run* of equal
confidences. This module builds that sorted view once and answers the questions the metrics
ask of it, in O(log n) each after the sort.

The trick that keeps the sort cheap: confidences are finite and non-negative, so the bit
pattern of a float64 read as an int64 is ordered like the float. Shifting it left one bit and
storing the label in the free low bit gives one int64 key per prediction that carries both
the confidence and the label, so a plain ``np.sort`` (SIMD-accelerated) replaces an
``argsort`` plus two gathers (7x slower). Within a run of equal confidences the key puts
errors (label 0) before correct predictions (label 1); the metrics correct for that order
explicitly, so no result depends on it (or on row order).

Weights are carried as two arrays, the weights of the correct and of the incorrect
predictions, each in sorted order; the document bootstrap swaps them per resample without
sorting again. Unit weights are represented by ``None`` and never materialised.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from .._counts import bin_index


def dot_no_blas(a: np.ndarray, b: np.ndarray):
    """Inner product without BLAS.

    BLAS ddot runs multi-threaded; on a busy machine its threads spin and one call on 500k
    values took 3-8 ms instead of 0.35 ms (measured here). einsum stays on one core.
    """
    return np.einsum("i,i->", a, b)


_BLOCK = 1 << 16  # 512 KiB of float64: the block buffer stays in cache


def accurate_dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a·b with an error that does not grow with n: numpy's pairwise sum of the products
    inside blocks of 65536 (~log2(65536)·eps of the block) and math.fsum across the
    blocks; one reused buffer, no BLAS (see dot_no_blas)."""
    n = a.shape[0]
    buf = np.empty(min(n, _BLOCK))
    parts = []
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        d = buf[:stop - start]
        np.multiply(a[start:stop], b[start:stop], out=d)
        parts.append(float(d.sum()))
    return math.fsum(parts)


_SPLIT = 30  # a weight's integer mantissa is cut into bits >= 30 and bits < 30
_BAND = 8  # weights within 2**8 of each other (in exponent) share one integer scale
_CHUNK = 1 << 24  # rows per exact_sum chunk: 2**24 halves below 2**27 stay below 2**53


def _integer_bands(w: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """Non-negative finite weights as exact integers, one band of _BAND + 1 binades at a
    time.

    Each band is (W, shift) with W an int64 per row, zero outside the band, and the band's
    weights equal to W · 2**shift. Weights of exponents lo..lo+_BAND are 53-bit integers
    times 2**(exponent - 53), so times 2**(53 - lo) they are whole numbers below
    2**(53 + _BAND + 1): exact in int64. Usual weights (within 2**8 of each other) are one
    band, found from the minimum and maximum alone; weights spread wider cost one O(n)
    pass per band present (1e-300..1e300: some 220). One band is held at a time.
    """
    if not w.shape[0] or float(w.max()) == 0.0:
        yield np.zeros(w.shape[0], dtype=np.int64), 0
        return
    lo = math.frexp(float(w.min(initial=np.inf, where=w > 0)))[1]
    hi = math.frexp(float(w.max()))[1]
    if hi - lo <= _BAND:  # one band (the usual case): no masks
        yield np.ldexp(w, 53 - lo).astype(np.int64), lo - 53
        return
    _, exponent = np.frexp(w)
    live = w > 0
    band = (exponent - lo) // (_BAND + 1)
    for b in np.unique(band[live]):
        inside = live & (band == b)
        shift = lo + int(b) * (_BAND + 1) - 53
        m = np.zeros(w.shape[0], dtype=np.int64)
        m[inside] = np.ldexp(w[inside], -shift).astype(np.int64)
        yield m, shift


class _CompensatedSum:
    """Elementwise running Σ of non-negative exact floats, within about one ulp of the
    exact sum: compensated summation, vectorised over the elements (each addition's
    rounding error is recovered exactly by TwoSum and the errors are added back once at
    the end; with non-negative terms their sum is below the total's ulp)."""

    def __init__(self) -> None:
        self.total: np.ndarray | None = None
        self.error: np.ndarray | None = None

    def add(self, x: np.ndarray) -> None:
        """Add ``x`` (an array of our own, overwritten)."""
        if self.total is None:
            self.total = x
            return
        a = self.total
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowing total stays inf
            # Knuth's TwoSum, in place: (a - (t - back)) + (x - back) is exactly
            # (a + x) - t, whichever term is larger
            t = a + x
            back = t - a
            np.subtract(x, back, out=x)  # x - back
            np.subtract(t, back, out=back)  # t - back
            np.subtract(a, back, out=a)  # a - (t - back)
            a += x
        if self.error is None:
            self.error = a
        else:
            self.error += a
        self.total = t

    def result(self) -> np.ndarray:
        assert self.total is not None
        if self.error is None:
            return self.total
        with np.errstate(over="ignore", invalid="ignore"):
            out: np.ndarray = self.total + self.error
        return out


def _halves(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return m >> _SPLIT, m & ((1 << _SPLIT) - 1)


def exact_sum(w: np.ndarray) -> Fraction:
    """The exact sum of non-negative finite float64 weights, as a Fraction.

    Each float is an integer times a power of two: the integers of each binary exponent
    are cut into a high and a low half and summed per exponent by ``np.bincount``, whose
    float64 running sums of integers below 2**53 are exact; the few per-exponent sums are
    then added as Python integers. O(n) numpy passes, no Python loop over the rows.
    """
    total = Fraction(0)
    for start in range(0, w.shape[0], _CHUNK):
        mant, exp = np.frexp(w[start:start + _CHUNK])
        m = np.ldexp(mant, 53).astype(np.int64)
        offset = exp - int(exp.min())
        high = np.bincount(offset, weights=(m >> 26).astype(np.float64))
        low = np.bincount(offset, weights=(m & ((1 << 26) - 1)).astype(np.float64))
        base = int(exp.min()) - 53
        for i in np.flatnonzero((high != 0) | (low != 0)):
            whole = (int(high[i]) << 26) + int(low[i])
            total += Fraction(whole) * Fraction(2) ** (base + int(i))
    return total


def _band_sum(w: np.ndarray, parts: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]]
              ) -> np.ndarray:
    """Σ over the bands of ``w`` of the two exact floats ``parts(W, shift)`` gives for each:
    one band's two added once, several bands' by compensated summation."""
    bands = _integer_bands(w)
    first = parts(*next(bands))
    second = next(bands, None)
    if second is None:
        with np.errstate(over="ignore", invalid="ignore"):
            out: np.ndarray = first[0] + first[1]
        return out
    # each band's two floats are added first (one rounding, at most half an ulp of the
    # band's sum; the bands' sums add up to the total, so these errors stay within about
    # an ulp of it), then the bands by compensated summation
    acc = _CompensatedSum()
    with np.errstate(over="ignore", invalid="ignore"):
        for high, low in itertools.chain([first, parts(*second)], (parts(*b) for b in bands)):
            high += low
            acc.add(high)
    return acc.result()


def grouped_sum(group: np.ndarray, w: np.ndarray, size: int) -> np.ndarray:
    """Per group, the sum of its non-negative finite weights, within about one ulp of the
    exact sum, for weights of any spread.

    Per band of weights within 2**8 of each other (``_integer_bands``: exact integers
    times one power of two), the high and low halves of the integers are summed per group
    by ``np.bincount``, exactly while a group holds fewer than 2**21 rows; the sums of one
    band are added once, those of several bands by compensated summation, so each group's
    sum is rounded about once. A plain ``np.bincount`` of the floats adds one rounding per
    row.
    """
    def parts(m: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
        high, low = _halves(m)
        with np.errstate(over="ignore"):
            return (np.ldexp(np.bincount(group, weights=high.astype(np.float64),
                                         minlength=size), _SPLIT + shift),
                    np.ldexp(np.bincount(group, weights=low.astype(np.float64),
                                         minlength=size), shift))

    return _band_sum(w, parts)


def accurate_cumsum(w: np.ndarray) -> np.ndarray:
    """[0, w0, w0 + w1, ...] with each prefix sum within about one ulp of the exact one, for
    non-negative finite weights of any spread.

    Per band of weights within 2**8 of each other (``_integer_bands``; the usual weights
    are one band), the exact integers are summed exactly in int64, as a high and a low
    part, and each exact prefix becomes two floats (exact below 2**53); one band's two are
    added once, several bands' by compensated summation, so each prefix is rounded about
    once. A running float sum (``np.cumsum``) loses up to n ulps instead: with every weight
    0.7, 9e-12 relative of AUROC at 1e6 rows.
    """
    out = np.empty(w.shape[0] + 1)
    out[0] = 0.0
    if not w.shape[0]:
        return out

    # int64 sums: the high parts are below 2**32 and the low parts below 2**30 each, so
    # neither overflows for n < 2**31
    def parts(m: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
        high, low = _halves(m)
        with np.errstate(over="ignore"):
            return (np.ldexp(np.cumsum(high).astype(np.float64), _SPLIT + shift),
                    np.ldexp(np.cumsum(low).astype(np.float64), shift))

    out[1:] = _band_sum(w, parts)
    return out


def squared_error_sum(target: np.ndarray | float, value: np.ndarray,
                      weight: np.ndarray | None = None) -> float:
    """Σ weight·(value − target)², accurate to a few ulps of the result.

    Non-negative terms, so no cancellation (Σc² − 2Σcy + Σy lost 12 digits on constant
    data: 0.4099999999999176 for 0.41); numpy's pairwise sum inside blocks of 65536 (error
    ~log2(65536)·eps) and math.fsum across the blocks (exact), so the error does not grow
    with n. One reused block buffer: no n-sized temporary. Unit weights give the unweighted
    sum bit for bit (multiplying by 1.0 is exact).
    """
    n = value.shape[0]
    buf = np.empty(min(n, _BLOCK))
    parts = []
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        d = buf[:stop - start]
        t = target if isinstance(target, float) else target[start:stop]
        np.subtract(value[start:stop], t, out=d)
        np.multiply(d, d, out=d)
        if weight is not None:
            np.multiply(d, weight[start:stop], out=d)
        parts.append(float(d.sum()))  # contiguous: numpy sums pairwise
    return math.fsum(parts)


def pack_keys(correct: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """One int64 per prediction: the confidence's bit pattern shifted left, label in bit 0.

    ``confidence`` must be validated (finite, in [0, 1]). The shift drops the sign bit, so
    ``-0.0`` packs exactly like ``0.0``.
    """
    return (confidence.view(np.int64) << 1) | correct.view(np.uint8)


def scale_weights(w: np.ndarray) -> np.ndarray:
    """w times the power of two that brings its maximum into [1, 2).

    Every metric is invariant to scaling the weights. Scaling keeps products of class
    totals (AUROC) clear of underflow (1e-200 weights) and overflow (2**600) and subnormal
    weights out of sums; a power of two makes the scaling exact, so integer weights stay
    exact dyadic numbers and still equal repeated rows bit for bit (dividing by the maximum
    did not: 1/3 + 1/3 + 1/3 + 1 missed a bin edge by one ulp).
    """
    _, exponent = np.frexp(w.max())
    return np.ldexp(w, 1 - int(exponent))


def keys_to_confidence(keys: np.ndarray) -> np.ndarray:
    """The confidences of packed keys, as float64."""
    return (keys >> 1).view(np.float64)


def low_bits(keys: np.ndarray) -> np.ndarray:
    # The low byte of each little/big-endian int64 holds bit 0; reading it through a strided
    # uint8 view is 3x cheaper than `keys & 1` followed by a bool conversion.
    byte = 0 if np.little_endian else 7
    return (keys.view(np.uint8)[byte::8] & 1).view(bool)


@dataclass(frozen=True)
class Weights:
    """Weights of the correct (``pos``) and incorrect (``neg``) predictions in sorted order."""

    pos: np.ndarray
    neg: np.ndarray

    @cached_property
    def cum_pos(self) -> np.ndarray:
        return accurate_cumsum(self.pos)

    @cached_property
    def cum_neg(self) -> np.ndarray:
        return accurate_cumsum(self.neg)

    @cached_property
    def exact_pos(self) -> Fraction:
        """The exact total weight of the correct predictions."""
        return exact_sum(self.pos)

    @cached_property
    def exact_neg(self) -> Fraction:
        """The exact total weight of the incorrect predictions."""
        return exact_sum(self.neg)


class Ranking:
    """Predictions sorted by confidence, with O(log n) prefix queries.

    Positions are 0-based ranks in the sorted order. ``pos_before(p)`` is the number of
    correct predictions among ranks ``< p``; weighted variants use cumulative weights.
    """

    def __init__(self, keys: np.ndarray, weights: Weights | None = None,
                 order: np.ndarray | None = None):
        self.keys = keys
        self.n = int(keys.shape[0])
        self.weights = weights
        self.order = order  # row index of each sorted position, only when it was needed

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_arrays(cls, correct: np.ndarray, confidence: np.ndarray,
                    sample_weight: np.ndarray | None = None) -> Ranking:
        keys = pack_keys(correct, confidence)
        if sample_weight is None:
            keys.sort()  # in place: keys is our own temporary, np.sort would copy it first
            return cls(keys)
        # Weights must follow their rows, so here (and only here) an argsort is needed.
        order = np.argsort(keys, kind="stable")
        ranking = cls(keys[order], order=order)
        w = scale_weights(sample_weight[order])
        return ranking.with_weights(w[ranking.pos_positions], w[ranking.neg_positions])

    def with_weights(self, pos: np.ndarray, neg: np.ndarray) -> Ranking:
        """The same sort with other weights (shares every static array)."""
        other = Ranking.__new__(Ranking)
        other.__dict__.update(self.__dict__)  # cached static arrays are shared, not copied
        other.weights = Weights(pos, neg)
        return other

    # -- static structure (independent of weights) --------------------------------------
    @cached_property
    def is_pos(self) -> np.ndarray:
        return low_bits(self.keys)

    @cached_property
    def pos_positions(self) -> np.ndarray:
        return np.flatnonzero(self.is_pos)

    @cached_property
    def neg_positions(self) -> np.ndarray:
        return np.flatnonzero(~self.is_pos)

    @cached_property
    def n_pos(self) -> int:
        return int(self.pos_positions.shape[0])

    @property
    def n_neg(self) -> int:
        return self.n - self.n_pos

    @cached_property
    def confidence(self) -> np.ndarray:
        """Sorted confidences (float64)."""
        return keys_to_confidence(self.keys)

    @cached_property
    def mixed_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Runs of equal confidence holding both labels: (start, split, end) positions.

        Inside a run errors come first, so a mixed run shows as two neighbours with equal
        confidence and different labels; ``split`` is the first correct one. (Comparing
        the float view and the bool labels keeps the temporaries 1 byte per row.)
        """
        c, pos = self.confidence, self.is_pos
        t = np.flatnonzero((c[1:] == c[:-1]) & (pos[1:] != pos[:-1]))
        k = self.keys
        start = np.searchsorted(k, k[t], side="left")
        end = np.searchsorted(k, k[t + 1], side="right")
        return start, t + 1, end

    def pos_before(self, p):
        """Number of correct predictions at ranks < p (p scalar or array)."""
        return np.searchsorted(self.pos_positions, p, side="left")

    def run_start(self, p: int) -> int:
        """First rank of the run of equal confidence that holds rank p."""
        return int(np.searchsorted(self.keys, (self.keys[p] >> 1) << 1, side="left"))

    def run_end(self, p: int) -> int:
        """One past the last rank of the run that holds rank p."""
        return int(np.searchsorted(self.keys, ((self.keys[p] >> 1) << 1) + 2, side="left"))

    def is_run_start(self, p: int) -> bool:
        return p == 0 or p == self.n or (self.keys[p] >> 1) != (self.keys[p - 1] >> 1)

    def next_run_start(self, p: int) -> int:
        """The smallest run start >= p (n when p == n)."""
        return p if self.is_run_start(p) else self.run_end(p)

    # -- weighted prefix sums ---------------------------------------------------------
    @property
    def total_weight(self) -> float:
        w = self.weights
        return float(self.n) if w is None else float(w.cum_pos[-1] + w.cum_neg[-1])

    @property
    def pos_weight(self) -> float:
        w = self.weights
        return float(self.n_pos) if w is None else float(w.cum_pos[-1])

    @property
    def neg_weight(self) -> float:
        w = self.weights
        return float(self.n_neg) if w is None else float(w.cum_neg[-1])

    def weight_before(self, p: int) -> float:
        if self.weights is None:
            return float(p)
        k = int(self.pos_before(p))
        return float(self.weights.cum_pos[k] + self.weights.cum_neg[p - k])

    def first_rank_with_weight_before(self, target: float | Fraction) -> int:
        """Smallest rank p in [0, n] with ``weight_before(p) >= target`` (a binary search:
        weight_before is non-decreasing in p)."""
        lo, hi = 0, self.n  # weight_before(n) is the total, which always reaches target
        while lo < hi:
            mid = (lo + hi) // 2
            if self.weight_before(mid) >= target:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def first_rank_in_bin(self, i: int, n_bins: int) -> int:
        """Smallest rank p in [0, n] whose quantile bin is at least i.

        The bin of rank p is ``bin_index(weight_before(p), total_weight, n_bins)``, the
        shared rule of :mod:`confcal._counts`: exact in the ratio of the two weights, so
        scaling every weight changes nothing, and with unit weights (``weight_before(p) ==
        p``) it is the row-count rule bit for bit. The bin is non-decreasing in p: a binary
        search, O(log n) exact comparisons.
        """
        total = self.total_weight
        lo, hi = 0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            if bin_index(self.weight_before(mid), total, n_bins) >= i:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def weight_sums(self, start: int, stop: int) -> tuple[float, float]:
        """(correct, incorrect) weight at ranks [start, stop), summed directly."""
        a, b = int(self.pos_before(start)), int(self.pos_before(stop))
        if self.weights is None:
            return float(b - a), float((stop - start) - (b - a))
        return (float(self.weights.pos[a:b].sum()),
                float(self.weights.neg[start - a:stop - b].sum()))

    def confidence_sum(self, start: int, stop: int) -> float:
        """Sum of (weighted) confidences at ranks [start, stop)."""
        if self.weights is None:
            return float(self.confidence[start:stop].sum())
        a, b = int(self.pos_before(start)), int(self.pos_before(stop))
        total = accurate_dot(self.weights.pos[a:b], self.pos_confidence[a:b])
        a, b = start - a, stop - b
        return math.fsum([total, accurate_dot(self.weights.neg[a:b], self.neg_confidence[a:b])])

    @cached_property
    def pos_confidence(self) -> np.ndarray:
        return self.confidence[self.pos_positions]

    @cached_property
    def neg_confidence(self) -> np.ndarray:
        return self.confidence[self.neg_positions]

    @cached_property
    def neg_before_pos(self) -> np.ndarray:
        """For the j-th correct prediction (rank P[j]), the number of errors ranked below it.

        P[j] - j: its rank minus the correct predictions before it. Errors sort first inside
        a tie, so this counts tied errors as below; AUROC takes half of them back.
        """
        return self.pos_positions - np.arange(self.n_pos)
