"""An exact, mergeable summary of (correct, confidence) for data that does not fit one host.

Every calibration metric in confcal is defined on *runs* of equal confidence: AUROC gives
ties half credit, quantile bins never split a run, and ECARB's default is the exact
expectation over the orders of a tied run. So the metrics depend on the data only through,
for each distinct confidence value, how many correct and how many incorrect predictions
carry it. :class:`CalibrationSketch` keeps exactly that, and its report is the report of the
raw arrays — not an approximation — while its memory is O(distinct values). Sketches of
parts of the data merge (associatively and commutatively) into the sketch of the whole.

With ``resolution``, values are snapped to the grid {i/m : i = 0..m}, m = 1/resolution, to
bound memory for continuous confidences; :meth:`CalibrationSketch.error_bounds` then says by
how much each metric can differ from the raw arrays (see docs/scaling.md).
"""

from __future__ import annotations

import hashlib
import math
import struct
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._counts import whole_floor_array
from .._validation import (
    check_budgets,
    check_calibration_data,
    check_n_bins,
    check_option,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ._metrics import (
    BINNINGS,
    DEFAULT_BUDGETS,
    bins_frame,
    ecarb_value,
    ece_from_bins,
    mce_from_bins,
    ranked_auroc,
    ranking_bins,
    review_weight,
    undefined_metric,
)
from ._ranking import (
    Ranking,
    Weights,
    dot_no_blas,
    grouped_sum,
    low_bits,
    pack_keys,
    scale_weights,
    squared_error_sum,
)
from ._report import CalibrationReport

if TYPE_CHECKING:  # pandas loads in error_bounds, not on import: the metrics cost numpy
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["CalibrationSketch", "SKETCH_TIES"]

SKETCH_TIES = ("expected", "pessimistic", "optimistic")  # "stable" needs the row order
_MAGIC = b"CCSK"
_VERSION = 2
# magic, version, flags, resolution, n_cells, n_rows: the whole version-1 header
_FIELDS = struct.Struct("<4sHHdQQ")
_VERSION_FIELD = struct.Struct("<H")  # at offset 4 in every version
# Version 2 adds 8 bytes of SHA-256 of the fields right after them, so n_cells is trusted
# (and a truncated blob told apart from a corrupted header) before any length is used, and
# 16 bytes of SHA-256 of every byte before them at the end of the blob.
_HEADER_DIGEST_SIZE = 8
_HEADER_SIZE = _FIELDS.size + _HEADER_DIGEST_SIZE
_DIGEST_SIZE = 16
_FLAG_WEIGHTED = 1
# Bit 1: the blob ends its payload with two uint64, the rows of zero weight (correct,
# incorrect); set exactly when a weighted sketch has such rows.
_FLAG_WEIGHTLESS = 2
_WEIGHTLESS_FIELDS = struct.Struct("<QQ")
# An unweighted report ranks the rows themselves when they are at most this many per cell
_ROW_RANKING_FACTOR = 4
_KNOWN_FLAGS = _FLAG_WEIGHTED | _FLAG_WEIGHTLESS
_MIN_RESOLUTION = 2.0**-53  # the spacing of floats just below 1: no finer grid exists there


def _check_resolution(resolution: Any) -> int | None:
    """The grid size m = 1/resolution; resolution must divide 1 (1e-6, 0.001, 0.05, ...)."""
    if resolution is None:
        return None
    if isinstance(resolution, bool) or not isinstance(resolution, (int, float, np.floating)):
        raise ValidationError(
            f"resolution must be None or a number in (0, 1]; found {resolution!r}")
    r = float(resolution)
    if not (0.0 < r <= 1.0):
        raise ValidationError(
            f"resolution must be None or a number in (0, 1]; found {resolution!r}")
    if r < _MIN_RESOLUTION:
        raise ValidationError(
            f"resolution must be at least 2**-53 ({_MIN_RESOLUTION!r}: floats near 1 are "
            f"that far apart, so a finer grid snaps nothing; use resolution=None for exact "
            f"values); found {resolution!r}")
    m = round(1.0 / r)
    if abs(m * r - 1.0) > 1e-9:
        raise ValidationError(
            f"resolution must divide 1 (1/resolution a whole number, e.g. 1e-6 or 0.01); "
            f"found {resolution!r} (1/resolution = {1.0 / r!r})")
    return m


def _snap(confidence: np.ndarray, m: int) -> np.ndarray:
    # i/m for the nearest i: the division is correctly rounded, so grid values are the
    # same floats in every process and never exceed 1.0.
    return np.rint(confidence * m) / m


# -- serialisation helpers (to_bytes / from_bytes) -------------------------------------------
def _digest(data: bytes | memoryview, size: int) -> bytes:
    # The first `size` bytes of SHA-256: in the standard library of every language a
    # sketch is read from (CRC-32 misses 1 in 2**32 random corruptions). It detects
    # corruption and truncation; anyone can recompute it, so it is no signature against a
    # deliberate forger (docs/scaling.md, "Binary format").
    return hashlib.sha256(data).digest()[:size]


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _check_total_weight(w_pos: np.ndarray, w_neg: np.ndarray, name: str) -> None:
    """The cells' weights and their total are finite floats: a sketch keeps the weights as
    given (ECARB counts them as predictions), so their sum must not overflow."""
    with np.errstate(over="ignore"):
        total = float(w_pos.sum()) + float(w_neg.sum())
    if not math.isfinite(total):
        raise ValidationError(
            f"{name} must add up to at most the largest float64, {sys.float_info.max!r}, in "
            f"a sketch (which keeps the weights as given); found a total that overflows. "
            "Scale the weights down: every metric but ECARB is unchanged by a common factor")


def _scaled(r: Ranking) -> Ranking:
    """The cells' Ranking with the weights scaled by the power of two that brings the
    largest into [1, 2), as the arrays' Ranking is: AUROC multiplies two class totals,
    which overflow for weights near the largest float (scaling changes no AUROC)."""
    w = r.weights
    assert w is not None
    both = scale_weights(np.concatenate([w.pos, w.neg]))
    return r.with_weights(both[:w.pos.shape[0]], both[w.pos.shape[0]:])


def _one_class_auroc(sketch: CalibrationSketch, r: Ranking) -> float | None:
    """NaN with the warning the arrays give when AUROC has one class, counting the rows
    (a cell is many predictions); None when both classes carry weight."""
    if r.pos_weight > 0 and r.neg_weight > 0:
        return None
    n_pos = sketch.n - sketch.n_errors
    if sketch.weighted and n_pos and sketch.n_errors:
        label = "incorrect" if r.pos_weight == 0 else "correct"
        return undefined_metric("auroc", f"every prediction with positive weight is {label}")
    label = "correct" if sketch.n_errors == 0 else "incorrect"
    return undefined_metric("auroc", f"all {sketch.n} predictions are {label} (one class only)")


def _check_cells(values: np.ndarray, n_pos: np.ndarray, n_neg: np.ndarray,
                 w_pos: np.ndarray | None, w_neg: np.ndarray | None,
                 resolution: float | None, n_rows: int | None, where: str) -> None:
    """Raise unless the cells keep the invariants ``from_arrays`` and ``merge`` keep.

    Values finite, in [0, 1], +0.0 not -0.0 (pack_keys drops the sign), strictly ascending,
    on the grid when snapped (``resolution`` already checked); counts >= 0, at least one
    row per cell, adding up to ``n_rows`` (None: not compared) without int64 overflow;
    weights finite, exactly 0 on the side of a cell with no rows and > 0 on a side with
    rows (rows of zero weight are counted outside the cells).
    """
    cells = values.shape[0]
    arrays: dict[str, np.ndarray | None] = {"n_correct": n_pos, "n_incorrect": n_neg}
    if w_pos is not None or w_neg is not None:
        arrays.update(w_correct=w_pos, w_incorrect=w_neg)
    for name, arr in arrays.items():
        if arr is None or arr.shape != (cells,):
            shape = None if arr is None else arr.shape
            raise ValidationError(f"{where}: {name} must hold one entry per value ({cells}); "
                                  f"found {shape}")
    _check_cell_values(values, resolution, where)
    _check_cell_counts(values, n_pos, n_neg, n_rows, where)
    if w_pos is not None and w_neg is not None:
        _check_cell_weights(w_pos, w_neg, n_pos, n_neg, where)


def _check_cell_values(values: np.ndarray, resolution: float | None, where: str) -> None:
    """Values finite, in [0, 1], +0.0 not -0.0, strictly ascending, on the grid if snapped."""
    bad = ~(np.isfinite(values) & (values >= 0.0) & (values <= 1.0)) | np.signbit(values)
    if bad.any():
        i = _first(bad)
        raise ValidationError(f"{where}: values must be finite and within [0, 1] (and 0.0, "
                              f"not -0.0); found {float(values[i])!r} at index {i}")
    down = values[1:] <= values[:-1]
    if down.any():
        i = _first(down) + 1
        raise ValidationError(f"{where}: values must be strictly ascending; found "
                              f"{float(values[i])!r} after {float(values[i - 1])!r} at index {i}")
    if resolution is not None:
        m = round(1.0 / resolution)
        off = _snap(values, m) != values
        if off.any():
            i = _first(off)
            raise ValidationError(f"{where}: values must lie on the grid i/{m} of resolution "
                                  f"{resolution!r}; found {float(values[i])!r} at index {i}")


def _check_cell_counts(values: np.ndarray, n_pos: np.ndarray, n_neg: np.ndarray,
                       n_rows: int | None, where: str) -> None:
    """Counts >= 0, at least one row per cell, adding up to ``n_rows`` without overflow."""
    for name, n in (("n_correct", n_pos), ("n_incorrect", n_neg)):
        if (n < 0).any():
            i = _first(n < 0)
            raise ValidationError(f"{where}: {name} must be >= 0; found {int(n[i])} at index {i}")
    none = (n_pos == 0) & (n_neg == 0)
    if none.any():
        i = _first(none)
        raise ValidationError(f"{where}: every value must hold at least one row; found none "
                              f"for {float(values[i])!r} at index {i}")
    # Non-negative int64 terms: the first overflow of a running sum makes it negative.
    running = np.cumsum(np.concatenate([n_pos, n_neg]).astype(np.int64))
    if (running < 0).any():
        raise ValidationError(f"{where}: the row counts must add up to at most 2**63 - 1; "
                              f"they overflow")
    total = int(running[-1]) if values.shape[0] else 0
    if n_rows is not None and total != n_rows:
        raise ValidationError(f"{where}: the header says {n_rows} rows; the cells hold {total}")


def _check_cell_weights(w_pos: np.ndarray, w_neg: np.ndarray, n_pos: np.ndarray,
                        n_neg: np.ndarray, where: str) -> None:
    """Weights finite, exactly 0 on the side of a cell with no rows and > 0 on a side with
    rows (the rows of zero weight are counted apart, outside the cells)."""
    for name, w, n in (("w_correct", w_pos, n_pos), ("w_incorrect", w_neg, n_neg)):
        bad = ~(np.isfinite(w) & (w >= 0.0))
        if bad.any():
            i = _first(bad)
            raise ValidationError(f"{where}: {name} must be finite and >= 0; found "
                                  f"{float(w[i])!r} at index {i}")
        ghost = (n == 0) & (w != 0.0)
        if ghost.any():
            i = _first(ghost)
            raise ValidationError(f"{where}: {name} must be 0 where n_{name[2:]} is 0; found "
                                  f"{float(w[i])!r} at index {i}")
        weightless = (n > 0) & (w == 0.0)
        if weightless.any():
            i = _first(weightless)
            raise ValidationError(
                f"{where}: {name} must be > 0 where n_{name[2:]} is > 0 (rows of zero "
                f"weight are counted in n_weightless_{name[2:]}, not in a cell); found 0.0 "
                f"for {int(n[i])} rows at index {i}")


def _check_weightless(weightless: tuple[int, int], weighted: bool, cells_total: int,
                      where: str) -> None:
    """The counts of zero-weight rows: whole numbers >= 0, only in a weighted sketch, and
    adding to the cells' rows without int64 overflow."""
    for name, k in zip(("n_weightless_correct", "n_weightless_incorrect"), weightless,
                       strict=True):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValidationError(f"{where}: {name} must be a whole number >= 0; found {k!r}")
    if any(weightless) and not weighted:
        raise ValidationError(f"{where}: only a weighted sketch has rows of zero weight; "
                              f"found {weightless[0]} + {weightless[1]} in an unweighted one")
    if cells_total + int(weightless[0]) + int(weightless[1]) > 2**63 - 1:
        raise ValidationError(f"{where}: the row counts must add up to at most 2**63 - 1; "
                              f"they overflow")


def _is_empty_chunk(correct: Any, confidence: Any, sample_weight: Any) -> bool:
    """True when every array given is 1-D and empty (and their lengths thus agree)."""
    arrays = [correct, confidence] + ([] if sample_weight is None else [sample_weight])
    for a in arrays:
        if a is None or isinstance(a, (str, bytes)):
            return False
        shape = np.shape(a)
        if shape != (0,):
            return False
    return True


def _unsupported_version(version: int) -> ValidationError:
    if version == 1:
        return ValidationError(
            "sketch blob has format version 1, which carries no checksum, so corruption "
            "cannot be detected; re-create the sketch from the data, or read it with "
            "CalibrationSketch.from_bytes(blob, allow_unverified_v1=True) (checks the content "
            "only) and save it again with to_bytes() (version 2)")
    return ValidationError(
        f"sketch blob has format version {version}; this confcal reads version {_VERSION} "
        "(and version 1 with allow_unverified_v1=True). A newer confcal wrote it, or the "
        "blob is corrupted")


def _check_blob_start(data: Any) -> bytes:
    """``data`` as bytes, once it is bytes-like, starts with the magic and holds a header's
    fixed fields."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValidationError(f"data must be bytes; found {type(data).__name__}")
    data = bytes(data)
    magic = data[:4]
    if magic != _MAGIC[:len(magic)]:
        raise ValidationError(f"data is not a confcal sketch blob: it must start with "
                              f"{_MAGIC!r}; found {magic!r}")
    if len(data) < _FIELDS.size:
        raise ValidationError(f"sketch blob is truncated: found {len(data)} bytes, fewer "
                              f"than a header's {_FIELDS.size} (version 1) or "
                              f"{_HEADER_SIZE} (version {_VERSION})")
    return data


def _blob_layout(version: int, allow_unverified_v1: bool) -> tuple[int, int, str]:
    """Header size, checksum size and the error prefix of a blob of this format version."""
    if version == 1 and allow_unverified_v1:
        return _FIELDS.size, 0, "version-1 sketch blob is corrupted"
    if version == _VERSION:
        return _HEADER_SIZE, _DIGEST_SIZE, "sketch blob is invalid"
    raise _unsupported_version(version)


def _check_digest(stored: bytes, covered: bytes | memoryview, part: str) -> None:
    """The stored checksum (``part``: "header " or "") is that of the bytes it covers."""
    computed = _digest(covered, len(stored))
    if stored != computed:
        raise ValidationError(f"sketch blob is corrupted: {part}checksum mismatch "
                              f"(stored 0x{stored.hex()}, computed 0x{computed.hex()})")


def _check_blob_length(data: bytes, cells: int, n_cols: int, header_size: int,
                       digest_size: int, tail: int = 0) -> None:
    """The blob is exactly as long as its header says: neither truncated nor trailing.
    ``tail``: bytes after the columns (the counts of zero-weight rows)."""
    payload = cells * 8 * n_cols + tail  # a Python int: a hostile n_cells cannot overflow it
    expected = header_size + payload + digest_size
    checksum = f" and a {digest_size}-byte checksum" if digest_size else ""
    counts = f" + {tail} bytes of zero-weight row counts" if tail else ""
    if len(data) < expected:
        raise ValidationError(
            f"sketch blob is truncated: its header says {payload} bytes of payload "
            f"({cells} cells x {n_cols} columns{counts}){checksum} after the {header_size}-byte "
            f"header, {expected} bytes in all; found {len(data)}")
    if len(data) > expected:
        extra = len(data) - expected
        raise ValidationError(
            f"sketch blob has {extra} trailing byte{'s' if extra > 1 else ''}: its header "
            f"accounts for {expected} bytes ({cells} cells); found {len(data)}")


def _mergeable(sketches: Any) -> list[CalibrationSketch]:
    """The sketches as a list, once they can be merged: at least one, one resolution, all
    weighted or all unweighted (empty sketches excepted)."""
    parts = [sketches] if isinstance(sketches, CalibrationSketch) else list(sketches)
    if not parts:
        raise ValidationError("sketches must hold at least one CalibrationSketch; found 0")
    for i, s in enumerate(parts):
        if not isinstance(s, CalibrationSketch):
            raise ValidationError(f"sketches must be CalibrationSketch objects; found "
                                  f"{type(s).__name__} at index {i}")
    first = parts[0]
    for i, s in enumerate(parts[1:], 1):
        if s.resolution != first.resolution:
            raise ValidationError(
                f"sketches must share a resolution to merge; found {first.resolution!r} "
                f"and {s.resolution!r} at index {i}")
    filled = [(i, s) for i, s in enumerate(parts) if s.n]
    for i, s in filled[1:]:
        if s.weighted != filled[0][1].weighted:
            raise ValidationError(
                "sketches must all be weighted or all unweighted to merge; found "
                f"weighted={filled[0][1].weighted} and weighted={s.weighted} at index {i}")
    return parts


def _rows_report(r: Ranking, budgets: tuple[float, ...], n_bins: int, binning: str,
                 ties: str) -> CalibrationReport:
    """The report of an unweighted Ranking of rows (checked options), as a sketch gives it."""
    from types import MappingProxyType

    bins = ranking_bins(r, n_bins, binning)
    nan = {b: math.nan for b in budgets}
    ecarbs, ceilings = dict(nan), dict(nan)
    if r.n_neg == 0:
        undefined_metric("ecarb", f"there are no errors among the {r.n} predictions (E = 0)")
    else:
        for b in budgets:
            _, _, ecarbs[b], ceilings[b] = ecarb_value(r, b, ties)
    brier = squared_error_sum(r.is_pos, r.confidence) / r.n
    return CalibrationReport(
        n=r.n, n_errors=r.n_neg, accuracy=r.n_pos / r.n, auroc=ranked_auroc(r),
        ece=ece_from_bins(bins, r.total_weight), mce=mce_from_bins(bins), brier=brier,
        ecarb=MappingProxyType(ecarbs), ecarb_ceiling=MappingProxyType(ceilings),
        bins=bins_frame(bins, 0, weighted=False), n_bins=n_bins, binning=binning, ties=ties)


@dataclass(frozen=True, eq=False)
class CalibrationSketch:
    """Per distinct confidence, the count (and weight) of correct and incorrect predictions.

    Build one with :meth:`from_arrays`, grow it with :meth:`update` or :meth:`merge` (both
    return a new sketch), and compute everything with :meth:`report`.

    Attributes
    ----------
    values : ndarray of float64
        Distinct confidences, ascending (snapped to the grid when ``resolution`` is set).
    n_correct, n_incorrect : ndarray of int64
        Rows per value.
    w_correct, w_incorrect : ndarray of float64 or None
        Weight per value when the sketch was built with ``sample_weight``; None otherwise
        (the counts are the weights). Every row counted in a cell has a positive weight.
    resolution : float or None
    n_weightless_correct, n_weightless_incorrect : int
        Rows of zero weight (weighted sketches only). They count in :attr:`n` and
        :attr:`n_errors`, as rows of zero weight do in :func:`confcal.calibration_report`,
        and in nothing else: no cell, no bin, no metric. Their confidences are not kept.

    See Also
    --------
    calibration_report : the same report from the rows.
    confcal.dask.dask_calibration_report : sketches merged over Dask partitions.

    Notes
    -----
    Exactness: counts are integers, so merging is exact in any order and every metric of
    an unweighted sketch equals the metric of the raw arrays (AUROC and ECARB to the last
    bit; ECE, MCE and Brier up to the order of floating-point summation, ~1e-16). With real
    weights, merging adds floats, exact up to rounding.

    Examples
    --------
    >>> import numpy as np, confcal
    >>> rng = np.random.default_rng(0)
    >>> conf = np.round(rng.uniform(size=1000), 2)
    >>> correct = rng.uniform(size=1000) < conf
    >>> a = CalibrationSketch.from_arrays(correct[:600], conf[:600])
    >>> b = CalibrationSketch.from_arrays(correct[600:], conf[600:])
    >>> whole = b.merge(a)
    >>> len(whole.values) <= 101          # one cell per distinct value
    True
    >>> whole.report().auroc == confcal.auroc(correct, conf)
    True
    >>> CalibrationSketch.from_bytes(whole.to_bytes()) == whole
    True
    """

    values: np.ndarray
    n_correct: np.ndarray
    n_incorrect: np.ndarray
    w_correct: np.ndarray | None = None
    w_incorrect: np.ndarray | None = None
    resolution: float | None = None
    n_weightless_correct: int = 0
    n_weightless_incorrect: int = 0

    # -- construction -----------------------------------------------------------------
    @classmethod
    def empty(cls, *, resolution: float | None = None, weighted: bool = False
              ) -> CalibrationSketch:
        """A sketch of nothing: the identity of :meth:`merge`."""
        _check_resolution(resolution)
        z, zi = np.zeros(0), np.zeros(0, dtype=np.int64)
        return cls(z, zi, zi.copy(), z.copy() if weighted else None,
                   z.copy() if weighted else None, resolution)

    @classmethod
    def from_arrays(cls, correct: ArrayLike, confidence: ArrayLike, *,
                    sample_weight: ArrayLike | None = None,
                    resolution: float | None = None) -> CalibrationSketch:
        """Summarise arrays; the same validation (and errors) as the array metrics.

        Two inputs the array metrics refuse are valid chunks here, so that per-partition
        and streaming code needs no special case: empty arrays give the empty sketch
        (:meth:`empty`, weighted when ``sample_weight`` is given), and weights that are
        all zero give a sketch whose rows carry no weight. Rows of zero weight are
        counted apart (``n_weightless_correct``, ``n_weightless_incorrect``): they add to
        ``n`` and ``n_errors``, as rows of zero weight do in
        :func:`confcal.calibration_report`, and to no cell, bin or metric.

        See Also
        --------
        update : this sketch merged with the sketch of more arrays.
        merge_all : merges many sketches.
        """
        m = _check_resolution(resolution)
        if _is_empty_chunk(correct, confidence, sample_weight):
            return cls.empty(resolution=resolution, weighted=sample_weight is not None)
        y, c, w = check_calibration_data(correct, confidence, sample_weight,
                                         positive_total=False)
        if m is not None:
            c = _snap(c, m)
        if w is None:
            # The packed keys of confidence and label, sorted: a value's rows are one run,
            # its errors first; the correct ones are the run's keys with bit 0 set.
            keys = pack_keys(y, c)
            keys.sort()
            bits = keys >> 1
            starts = np.flatnonzero(np.r_[True, bits[1:] != bits[:-1]])
            rows = np.diff(np.r_[starts, keys.shape[0]])
            n_pos = np.add.reduceat(low_bits(keys).view(np.uint8), starts, dtype=np.int64)
            return cls(bits[starts].view(np.float64), n_pos, rows - n_pos, None, None,
                       resolution)
        live = w > 0
        weightless = (int(np.count_nonzero(y & ~live)), int(np.count_nonzero(~y & ~live)))
        if not live.all():
            y, c, w = y[live], c[live], w[live]
        if not live.any():
            return cls.empty(resolution=resolution, weighted=True)._with_weightless(*weightless)
        keys = pack_keys(y, c)
        cell_keys, inverse = np.unique(keys, return_inverse=True)
        counts = np.bincount(inverse, minlength=cell_keys.shape[0])
        weights = grouped_sum(inverse, w, cell_keys.shape[0])  # digits kept as n grows
        _check_total_weight(weights, np.zeros(0), "sample_weight")
        return cls._from_cells(cell_keys, counts, weights, resolution)._with_weightless(
            *weightless)

    @classmethod
    def _from_cells(cls, cell_keys: np.ndarray, counts: np.ndarray,
                    weights: np.ndarray | None, resolution: float | None) -> CalibrationSketch:
        """Cells are sorted (value, label) keys; fold the two labels of a value together."""
        label = (cell_keys & 1).astype(bool)
        value_bits = cell_keys >> 1
        starts = np.flatnonzero(np.r_[True, value_bits[1:] != value_bits[:-1]])
        values = value_bits[starts].view(np.float64)
        group = np.cumsum(np.r_[False, value_bits[1:] != value_bits[:-1]])
        size = values.shape[0]
        n_pos = np.bincount(group[label], weights=counts[label], minlength=size)
        n_neg = np.bincount(group[~label], weights=counts[~label], minlength=size)
        w_pos = w_neg = None
        if weights is not None:
            w_pos = np.bincount(group[label], weights=weights[label], minlength=size)
            w_neg = np.bincount(group[~label], weights=weights[~label], minlength=size)
        return cls(values.copy(), n_pos.astype(np.int64), n_neg.astype(np.int64),
                   w_pos, w_neg, resolution)

    def update(self, correct: ArrayLike, confidence: ArrayLike, *,
               sample_weight: ArrayLike | None = None) -> CalibrationSketch:
        """This sketch merged with the sketch of more arrays (a new sketch)."""
        return self.merge(CalibrationSketch.from_arrays(
            correct, confidence, sample_weight=sample_weight, resolution=self.resolution))

    def merge(self, other: CalibrationSketch) -> CalibrationSketch:
        """The sketch of both inputs. Associative and commutative (exact for counts).

        See Also
        --------
        merge_all : many sketches at once, in O(N log k).
        """
        if not isinstance(other, CalibrationSketch):
            raise ValidationError(
                f"other must be a CalibrationSketch; found {type(other).__name__}")
        return CalibrationSketch.merge_all([self, other])

    @classmethod
    def merge_all(cls, sketches: Sequence[CalibrationSketch] | Any) -> CalibrationSketch:
        """The sketch of every input, merged at once (a k-way merge).

        Each sketch's values are sorted, so the concatenated values are k sorted runs;
        a stable merge sort of them (numpy's timsort gallops through runs) costs
        O(N log k) for N cells in all, and the counts and weights of equal values are
        added in input order. The result equals folding :meth:`merge` over the inputs
        in that order, bit for bit; counts (and whole-number weights) are exact, so any
        order of inputs gives the same sketch. Empty sketches are the identity.

        Parameters
        ----------
        sketches : iterable of CalibrationSketch
            At least one; all of one resolution, and all weighted or all unweighted
            (empty sketches excepted).

        Returns
        -------
        CalibrationSketch

        See Also
        --------
        merge : two sketches.
        from_arrays : a sketch of arrays.

        Examples
        --------
        >>> import numpy as np
        >>> conf = np.array([0.2, 0.9, 0.2, 0.5, 0.9, 0.2])
        >>> correct = np.array([0, 1, 1, 0, 1, 0], dtype=bool)
        >>> parts = [CalibrationSketch.from_arrays(correct[i:i + 2], conf[i:i + 2])
        ...          for i in range(0, 6, 2)]
        >>> merged = CalibrationSketch.merge_all(parts)
        >>> merged.values.tolist(), merged.n_correct.tolist(), merged.n_incorrect.tolist()
        ([0.2, 0.5, 0.9], [1, 0, 2], [2, 1, 0])
        >>> merged == CalibrationSketch.from_arrays(correct, conf)
        True
        """
        parts = _mergeable(sketches)
        first = parts[0]
        filled = [s for s in parts if len(s.values)]
        weightless = (sum(s.n_weightless_correct for s in parts),
                      sum(s.n_weightless_incorrect for s in parts))
        if not filled:  # no cells: weighted if any sketch is
            return cls.empty(resolution=first.resolution,
                             weighted=any(s.weighted for s in parts)
                             )._with_weightless(*weightless)
        if len(filled) == 1:  # the others add no cell
            one = filled[0]
            same = (one.n_weightless_correct, one.n_weightless_incorrect) == weightless
            return one if same else one._with_weightless(*weightless)
        return cls._merge_cells(filled, filled[0].weighted, first.resolution)._with_weightless(
            *weightless)

    @classmethod
    def _merge_cells(cls, parts: list[CalibrationSketch], weighted: bool,
                     resolution: float | None) -> CalibrationSketch:
        """The k-way merge itself: sorted runs of values in, one sorted sketch out."""
        # Non-negative float64 values order like their int64 bit patterns; a stable sort
        # of k sorted runs is a timsort merge of the runs, and equal values keep input order.
        bits = np.concatenate([s.values for s in parts]).view(np.int64)
        order = np.argsort(bits, kind="stable")
        bits = bits[order]
        starts = np.flatnonzero(np.r_[True, bits[1:] != bits[:-1]])

        def add(columns: list[np.ndarray]) -> np.ndarray:
            out: np.ndarray = np.add.reduceat(np.concatenate(columns)[order], starts)
            return out

        w_pos = w_neg = None
        if weighted:
            with np.errstate(over="ignore"):
                w_pos = add([s._w(True) for s in parts])
                w_neg = add([s._w(False) for s in parts])
            _check_total_weight(w_pos, w_neg, "the weights of the merged sketches")
        return cls(bits[starts].view(np.float64), add([s.n_correct for s in parts]),
                   add([s.n_incorrect for s in parts]), w_pos, w_neg, resolution)

    def _with_weightless(self, correct: int, incorrect: int) -> CalibrationSketch:
        """This sketch with these counts of zero-weight rows."""
        return replace(self, n_weightless_correct=correct, n_weightless_incorrect=incorrect)

    def _w(self, correct: bool) -> np.ndarray:
        w = self.w_correct if correct else self.w_incorrect
        n = self.n_correct if correct else self.n_incorrect
        return n.astype(np.float64) if w is None else w

    # -- summaries ----------------------------------------------------------------------
    @property
    def weighted(self) -> bool:
        return self.w_correct is not None

    @property
    def n(self) -> int:
        """Rows summarised, those of zero weight included."""
        return int(self.n_correct.sum() + self.n_incorrect.sum()) + int(
            self.n_weightless_correct + self.n_weightless_incorrect)

    @property
    def n_errors(self) -> int:
        """Incorrect rows summarised, those of zero weight included."""
        return int(self.n_incorrect.sum()) + int(self.n_weightless_incorrect)

    @property
    def tied_pair_share(self) -> float:
        """Share of (correct, incorrect) weight pairs that share a cell.

        AUROC gives these pairs half credit. With ``resolution``, snapping can only turn
        ordered pairs into tied ones, so AUROC moves by at most half this share.
        """
        pos, neg = self._w(True), self._w(False)
        denom = float(pos.sum()) * float(neg.sum())
        return float(dot_no_blas(pos, neg) / denom) if denom > 0 else math.nan

    def _ranking(self) -> tuple[Ranking, np.ndarray]:
        """A weighted Ranking over cells, and the rows per cell (for bin counts)."""
        has_neg, has_pos = self.n_incorrect > 0, self.n_correct > 0
        if self.weighted:
            has_neg |= self._w(False) > 0
            has_pos |= self._w(True) > 0
        bits = self.values.view(np.int64) << 1
        # per value: the error cell first, then the correct cell (the packed-key order);
        # one index of the kept cells serves keys and rows
        keep = np.flatnonzero(np.column_stack([has_neg, has_pos]).ravel())
        keys = np.column_stack([bits, bits | 1]).ravel()[keep]
        rows = np.column_stack([self.n_incorrect, self.n_correct]).ravel()[keep]
        weights = Weights(self._w(True)[has_pos], self._w(False)[has_neg])
        # a cell of rows without weight (only in a sketch built by hand) is in no bin's count
        cell_weight = np.column_stack([self._w(False), self._w(True)]).ravel()[keep]
        return Ranking(keys, weights), np.where(cell_weight > 0, rows, 0)

    def _row_keys(self) -> np.ndarray:
        """The sorted packed keys of the rows themselves: each cell's key repeated once per
        row, errors first — the very keys ``calibration_report`` sorts."""
        bits = self.values.view(np.int64) << 1
        keys = np.column_stack([bits, bits | 1]).ravel()
        return np.repeat(keys, np.column_stack([self.n_incorrect, self.n_correct]).ravel())

    @classmethod
    def merged_report(cls, sketches: Sequence[CalibrationSketch] | Any, *,
                      budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                      binning: str = "quantile", ties: str = "expected") -> CalibrationReport:
        """``merge_all(sketches).report(...)``, without the merged sketch when it need not be
        built.

        Unweighted sketches of few rows per distinct value (continuous confidences) are
        reported from the sorted rows, which a merged sketch would rebuild anyway: their
        keys are k sorted runs, and one stable sort (a merge of the runs) gives the
        ranking directly. The report is the one of the merged sketch, bit for bit.

        See Also
        --------
        merge_all : the merged sketch.
        report : the report of one sketch.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> conf = rng.uniform(size=100)
        >>> correct = rng.uniform(size=100) < conf
        >>> parts = [CalibrationSketch.from_arrays(correct[i:i + 25], conf[i:i + 25])
        ...          for i in range(0, 100, 25)]
        >>> CalibrationSketch.merged_report(parts) == CalibrationSketch.merge_all(parts).report()
        True
        """
        parts = _mergeable(sketches)
        filled = [s for s in parts if len(s.values)]
        rows = sum(s.n for s in filled)
        cells = sum(s.values.shape[0] for s in filled)
        if len(filled) < 2 or any(s.weighted for s in filled) or (
                rows > _ROW_RANKING_FACTOR * cells):
            return cls.merge_all(parts).report(budgets=budgets, n_bins=n_bins,
                                               binning=binning, ties=ties)
        budgets = check_budgets(budgets)
        n_bins = check_n_bins(n_bins)
        binning = check_option(binning, "binning", BINNINGS)
        ties = check_option(ties, "ties", SKETCH_TIES)
        keys = np.concatenate([s._row_keys() for s in filled])
        keys.sort(kind="stable")  # k sorted runs: a merge of them
        return _rows_report(Ranking(keys), budgets, n_bins, binning, ties)

    def _check_nonempty(self) -> None:
        if self.n == 0:
            raise ValidationError("the sketch must not be empty; found 0 rows")

    def report(self, *, budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
               binning: str = "quantile", ties: str = "expected") -> CalibrationReport:
        """The :class:`~confcal.CalibrationReport` of the summarised data.

        Equal to ``calibration_report`` on the raw arrays (see the class Notes). For a
        weighted sketch the metrics are the weighted ones, ECARB's with frequency weights
        as in :func:`confcal.ecarb` (a row of weight w is w predictions; whole-number
        weights are copies of rows). ``ties="stable"`` needs the original row order, which
        a sketch does not keep: it is refused.
        """
        self._check_nonempty()
        budgets = check_budgets(budgets)
        n_bins = check_n_bins(n_bins)
        binning = check_option(binning, "binning", BINNINGS)
        ties = check_option(ties, "ties", SKETCH_TIES)
        if self.weighted and not float(self._w(True).sum() + self._w(False).sum()) > 0.0:
            return self._weightless_report(budgets, n_bins, binning, ties)
        if not self.weighted and self.n <= _ROW_RANKING_FACTOR * self.values.shape[0]:
            # Few rows per cell (continuous confidences): ranking the rows is cheaper than
            # the weighted ranking of the cells, and it is calibration_report's own.
            return _rows_report(Ranking(self._row_keys()), budgets, n_bins, binning, ties)
        r, rows = self._ranking()
        bins = ranking_bins(r, n_bins, binning)
        # ranking_bins counts cells; a bin's count is the rows of its cells
        cum_rows = np.r_[0, np.cumsum(rows)]
        bins = replace(bins, count=cum_rows[bins.stop] - cum_rows[bins.start])
        pos, neg = self._w(True), self._w(False)
        total = float(pos.sum() + neg.sum())
        values = self.values
        # pairwise + fsum, as the array Brier (einsum's running sum drifted ~n ulps)
        brier = math.fsum([squared_error_sum(1.0, values, pos),
                           squared_error_sum(0.0, values, neg)]) / total
        ecarbs, ceilings = self._ecarb(r, budgets, ties)
        one_class = _one_class_auroc(self, r)
        auroc = ranked_auroc(_scaled(r)) if one_class is None else one_class
        return CalibrationReport(
            n=self.n, n_errors=self.n_errors, accuracy=float(pos.sum()) / total,
            auroc=auroc, ece=ece_from_bins(bins, r.total_weight), mce=mce_from_bins(bins),
            brier=brier, ecarb=ecarbs, ecarb_ceiling=ceilings,
            bins=bins_frame(bins, 0, weighted=self.weighted),
            n_bins=n_bins, binning=binning, ties=ties)

    def _weightless_report(self, budgets: tuple[float, ...], n_bins: int, binning: str,
                           ties: str) -> CalibrationReport:
        """Rows that all weigh zero: every metric is undefined (a warning and NaN)."""
        from types import MappingProxyType

        undefined_metric("calibration_report", f"the {self.n} predictions all carry zero "
                         "weight (total weight 0)")
        nan = {b: math.nan for b in budgets}
        empty = Ranking(np.zeros(0, dtype=np.int64), Weights(np.zeros(0), np.zeros(0)))
        bins = ranking_bins(empty, n_bins, binning)
        return CalibrationReport(
            n=self.n, n_errors=self.n_errors, accuracy=math.nan, auroc=math.nan,
            ece=math.nan, mce=math.nan, brier=math.nan, ecarb=MappingProxyType(nan),
            ecarb_ceiling=MappingProxyType(dict(nan)), bins=bins_frame(bins, 0, weighted=True),
            n_bins=n_bins, binning=binning, ties=ties)

    def _ecarb(self, r: Ranking, budgets: tuple[float, ...], ties: str
               ) -> tuple[dict[float, float], dict[float, float]]:
        from types import MappingProxyType

        nan = {b: math.nan for b in budgets}
        if r.neg_weight == 0:
            reason = (f"there are no errors among the {self.n} predictions (E = 0)"
                      if self.n_errors == 0 else
                      f"the {self.n_errors} errors among the {self.n} predictions carry no "
                      "weight (E = 0)")
            undefined_metric("ecarb", reason)
            return MappingProxyType(nan), MappingProxyType(dict(nan))  # type: ignore[return-value]
        ecarbs, ceilings = {}, {}
        for b in budgets:
            # the cells hold the weights as given (unscaled): one prediction weighs 1, and
            # ECARB's frequency-weight rule (confcal.ecarb, Notes) applies as to the arrays
            _, _, ecarbs[b], ceilings[b] = ecarb_value(r, b, ties)
        return MappingProxyType(ecarbs), MappingProxyType(ceilings)  # type: ignore[return-value]

    def error_bounds(self, *, budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                     binning: str = "quantile") -> pd.DataFrame:
        """How far each metric of a snapped sketch can be from the raw arrays' metric.

        Returns a DataFrame ``metric, bound``. Snapping moves each confidence by at most
        resolution/2 and is monotone (it can merge values, never reorder them), so:

        - **Brier**: |Δ| ≤ resolution ((c'−y)² − (c−y)² = (c'−c)(c'+c−2y), |c'+c−2y| ≤ 2).
        - **AUROC**: |Δ| ≤ ½ · :attr:`tied_pair_share` — only pairs that now share a cell
          can change, each by at most a half.
        - **ECE**: |Δ| ≤ resolution/2 + 2·W_b/W, with W_b the weight of the cells a bin
          boundary could cut (uniform: cells within resolution/2 of an inner edge;
          quantile: cells holding a nominal boundary rank after their first), because a
          row that changes bin moves |Σ(y−c)| of two bins by at most its weight each.
        - **ECARB@b**: |Δ| ≤ (optimistic − pessimistic errors in the cell at the review
          cut-off)·n/(k·E): the raw order inside that cell is one of the orders the
          sketch averages over. Other cells are reviewed wholly or not at all either way.

        MCE has no useful bound (a row moving into a small bin can change its gap by up to
        1) and is not listed. Without ``resolution`` every bound is 0: the sketch is exact.
        """
        self._check_nonempty()
        budgets = check_budgets(budgets)
        n_bins = check_n_bins(n_bins)
        binning = check_option(binning, "binning", BINNINGS)
        import pandas as pd

        if self.resolution is None:
            rows = [("brier", 0.0), ("auroc", 0.0), ("ece", 0.0)] + [
                (f"ecarb@{b:g}", 0.0) for b in budgets]
            return pd.DataFrame(rows, columns=["metric", "bound"])
        res = float(self.resolution)
        r, _ = self._ranking()
        total = r.total_weight
        cell_w = self._w(True) + self._w(False)
        if binning == "uniform":
            edges = np.arange(1, n_bins) / n_bins
            near = np.zeros(self.values.shape[0], dtype=bool)
            for e in edges:
                near |= np.abs(self.values - e) <= res / 2 * (1 + 1e-9)
            boundary_weight = float(cell_w[near].sum())
        else:
            # A raw row of the cell goes to the bin of the weight before it, by the shared
            # rule of the bins (confcal._counts). Unweighted, rows weigh 1 and the cell's
            # last row starts at end - 1; weighted, a row of tiny weight can start just
            # below the end, where the rule already counts it in the next bin: use the end.
            before = np.r_[0.0, np.cumsum(cell_w)[:-1]]
            last_start = np.minimum(before + cell_w, total) - (0.0 if self.weighted else 1.0)
            first_bin = whole_floor_array(before * n_bins / total)
            last_bin = np.minimum(whole_floor_array(last_start * n_bins / total), n_bins - 1)
            boundary_weight = float(cell_w[last_bin > first_bin].sum())
        rows = [("brier", res), ("auroc", 0.5 * self.tied_pair_share),
                ("ece", res / 2 + 2 * boundary_weight / total)]
        e_total = r.neg_weight
        for b in budgets:
            if e_total == 0:
                rows.append((f"ecarb@{b:g}", math.nan))
                continue
            n = Fraction(total)
            k = review_weight(b, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                _, pes, _, _ = ecarb_value(r, b, "pessimistic")
                _, opt, _, _ = ecarb_value(r, b, "optimistic")
            rows.append((f"ecarb@{b:g}", float((opt - pes) * n / (k * Fraction(e_total)))))
        return pd.DataFrame(rows, columns=["metric", "bound"])

    # -- serialisation -------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The version-2 binary form: little-endian, checksummed, no pickle.

        A 40-byte header — magic ``b"CCSK"``, uint16 version (2), uint16 flags (bit 0:
        weighted; bit 1: rows of zero weight follow), float64 resolution (NaN for none),
        uint64 number of cells, uint64 rows, then the first 8 bytes of the SHA-256 of those
        32 bytes — then per cell, column by column: float64 values, int64 correct counts,
        int64 incorrect counts, and if weighted float64 correct and incorrect weights; with
        bit 1, two uint64, the correct and incorrect rows of zero weight; last, the first
        16 bytes of the SHA-256 of every byte before them. The byte table is in
        docs/scaling.md.

        Deterministic: equal sketches give equal bytes. A sketch whose cells break the
        invariants :meth:`from_bytes` checks (possible only for one built by hand) raises
        :class:`~confcal.exceptions.ValidationError`, so every blob written can be read.
        """
        _check_resolution(self.resolution)
        where = "sketch cannot be written"
        _check_cells(self.values, self.n_correct, self.n_incorrect, self.w_correct,
                     self.w_incorrect, self.resolution, None, where)
        weightless = (self.n_weightless_correct, self.n_weightless_incorrect)
        _check_weightless(weightless, self.weighted,
                          int(self.n_correct.sum() + self.n_incorrect.sum()), where)
        flags = (_FLAG_WEIGHTED if self.weighted else 0) | (
            _FLAG_WEIGHTLESS if any(weightless) else 0)
        res = math.nan if self.resolution is None else float(self.resolution)
        fields = _FIELDS.pack(_MAGIC, _VERSION, flags, res, self.values.shape[0], self.n)
        parts = [fields, _digest(fields, _HEADER_DIGEST_SIZE),
                 self.values.astype("<f8").tobytes(), self.n_correct.astype("<i8").tobytes(),
                 self.n_incorrect.astype("<i8").tobytes()]
        if self.weighted:
            parts += [self._w(True).astype("<f8").tobytes(), self._w(False).astype("<f8").tobytes()]
        if any(weightless):
            parts.append(_WEIGHTLESS_FIELDS.pack(*map(int, weightless)))
        body = b"".join(parts)
        return body + _digest(body, _DIGEST_SIZE)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, *,
                   allow_unverified_v1: bool = False) -> CalibrationSketch:
        """Read :meth:`to_bytes` output, refusing anything else.

        Parameters
        ----------
        data : bytes, bytearray or memoryview
        allow_unverified_v1 : bool, default False
            Read a version-1 blob (written by confcal before the checksum existed). It has
            no checksum, so only the content checks below run: they catch much corruption
            (unsorted or out-of-range values, impossible counts or weights) but not, say, a
            flipped low bit of a value that stays in order. Save the result again with
            :meth:`to_bytes` to get a checksummed version-2 blob.

        Raises
        ------
        ValidationError
            Whenever ``data`` is not exactly a blob :meth:`to_bytes` writes, with a message
            saying what is wrong: another magic or version; truncated (the header says how
            long the blob must be); trailing bytes; a header or payload checksum mismatch
            (corrupted); or content breaking the sketch's invariants — values finite,
            within [0, 1], strictly ascending and on the grid when snapped; resolution
            none or in (0, 1] dividing 1; known flags only; counts >= 0, at least one row
            per value, adding up (with the rows of zero weight) to the header's row
            count; weights finite, zero where the count is zero and positive where it is
            not. No other exception type
            escapes, and lengths are checked against ``len(data)`` before anything is
            allocated, so the cost stays O(len(data)) on hostile input.

        Notes
        -----
        Version-1 blobs are refused by default: without a checksum a corrupted one can be
        read as a different, valid-looking sketch (one third to three fifths of the
        single-bit flips of two test blobs were; with the content checks alone, one quarter
        to two fifths), and the data a sketch summarises is usually still there to build
        it again. The checksum detects corruption and truncation, not forgery: anyone can
        recompute it (docs/scaling.md, "Binary format").
        """
        data = _check_blob_start(data)
        (version,) = _VERSION_FIELD.unpack_from(data, 4)
        header_size, digest_size, where = _blob_layout(version, allow_unverified_v1)
        if len(data) < header_size:
            raise ValidationError(f"sketch blob is truncated: a version-{version} header is "
                                  f"{header_size} bytes; found {len(data)}")
        _, _, flags, res, cells, n_rows = _FIELDS.unpack_from(data)
        if digest_size:
            _check_digest(data[_FIELDS.size:_HEADER_SIZE], data[:_FIELDS.size], "header ")
        if flags & ~_KNOWN_FLAGS:
            raise ValidationError(f"{where}: unknown flags 0x{flags:04x} (bit 0, weighted, is "
                                  f"the only one); a newer confcal wrote it, or it is corrupted")
        weighted = bool(flags & _FLAG_WEIGHTED)
        tallied = bool(flags & _FLAG_WEIGHTLESS)
        if tallied and not weighted:
            raise ValidationError(f"{where}: flag bit 1 (rows of zero weight) is set without "
                                  "bit 0 (weighted)")
        tally_size = _WEIGHTLESS_FIELDS.size if tallied else 0
        _check_blob_length(data, cells, 5 if weighted else 3, header_size, digest_size,
                           tally_size)
        if digest_size:
            _check_digest(data[-digest_size:], memoryview(data)[:-digest_size], "")
        resolution = None if math.isnan(res) else res
        try:
            _check_resolution(resolution)
        except ValidationError:
            raise ValidationError(f"{where}: resolution must be NaN (none) or a number in "
                                  f"(0, 1] that divides 1; found {res!r}") from None
        # The lengths match the blob, so no column is longer than len(data) bytes.
        cols = [np.frombuffer(data, dtype=dt, count=cells, offset=header_size + i * cells * 8)
                .astype(dt[1:]) for i, dt in enumerate(
                    ["<f8", "<i8", "<i8"] + (["<f8", "<f8"] if weighted else []))]
        w_pos, w_neg = (cols[3], cols[4]) if weighted else (None, None)
        weightless = (0, 0)
        if tallied:
            weightless = _WEIGHTLESS_FIELDS.unpack_from(
                data, header_size + cells * 8 * 5)
            if not any(weightless):
                raise ValidationError(f"{where}: flag bit 1 is set but the rows of zero "
                                      "weight are 0 and 0 (the flag is set only for some)")
        _check_cells(cols[0], cols[1], cols[2], w_pos, w_neg, resolution,
                     None if tallied else n_rows, where)
        if tallied:
            in_cells = int(cols[1].sum() + cols[2].sum())
            _check_weightless(weightless, weighted, in_cells, where)
            if in_cells + sum(weightless) != n_rows:
                raise ValidationError(
                    f"{where}: the header says {n_rows} rows; the cells hold {in_cells} and "
                    f"the rows of zero weight {weightless[0]} + {weightless[1]}")
        return cls(cols[0], cols[1], cols[2], w_pos, w_neg, resolution, *weightless)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CalibrationSketch):
            return NotImplemented
        same_w = (self.weighted == other.weighted) and (not self.weighted or (
            np.array_equal(self._w(True), other._w(True))
            and np.array_equal(self._w(False), other._w(False))))
        return (self.resolution == other.resolution and same_w
                and np.array_equal(self.values, other.values)
                and np.array_equal(self.n_correct, other.n_correct)
                and np.array_equal(self.n_incorrect, other.n_incorrect)
                and self.n_weightless_correct == other.n_weightless_correct
                and self.n_weightless_incorrect == other.n_weightless_incorrect)

    __hash__ = None  # type: ignore[assignment]
