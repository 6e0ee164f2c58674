"""CalibrationSketch: exact under any split and merge order; bounded when snapped."""

from __future__ import annotations

import hashlib
import math
import struct
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import confcal
from _profiles import examples
from confcal import CalibrationSketch, UndefinedMetricWarning, ValidationError
from confcal.testing import calibration_data, weighted_calibration_data

BUDGETS = (0.1, 0.29, 0.5)


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kw)


def same(a: float, b: float, tol: float = 0.0) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def split_and_merge(correct, confidence, cuts, order, **kw):
    bounds = sorted({0, len(correct), *[c % (len(correct) + 1) for c in cuts]})
    parts = [CalibrationSketch.from_arrays(correct[a:b], confidence[a:b], **kw)
             # consecutive bounds: bounds[1:] is one shorter by design
             for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    rng = np.random.default_rng(order)
    rng.shuffle(parts)
    merged = CalibrationSketch.empty(resolution=kw.get("resolution"))
    for p in parts:  # left fold in a random order ...
        merged = merged.merge(p)
    tree = parts  # ... and a random tree
    while len(tree) > 1:
        i = int(rng.integers(0, len(tree) - 1))
        tree = tree[:i] + [tree[i + 1].merge(tree[i])] + tree[i + 2:]
    assert tree[0] == merged
    return merged


@settings(max_examples=examples(150), deadline=None)
@given(data=calibration_data(max_size=120, ties="heavy"),
       cuts=st.lists(st.integers(0, 200), max_size=4), order=st.integers(0, 2**32 - 1),
       binning=st.sampled_from(["quantile", "uniform"]), n_bins=st.integers(1, 12))
def test_split_merge_report_equals_array_report(data, cuts, order, binning, n_bins):
    correct, confidence = data
    sketch = split_and_merge(correct, confidence, cuts, order)
    got = quiet(sketch.report, budgets=BUDGETS, n_bins=n_bins, binning=binning)
    want = quiet(confcal.calibration_report, correct, confidence, budgets=BUDGETS,
                 n_bins=n_bins, binning=binning)
    # counts are integers: AUROC and ECARB are bit-for-bit equal
    assert same(got.auroc, want.auroc)
    for b in BUDGETS:
        assert same(got.ecarb[b], want.ecarb[b])
        assert same(got.ecarb_ceiling[b], want.ecarb_ceiling[b])
    # sums of confidences in another order: equal to rounding
    for name in ("ece", "mce", "brier", "accuracy"):
        assert same(getattr(got, name), getattr(want, name), 1e-12), name
    assert (got.n, got.n_errors) == (want.n, want.n_errors)
    assert got.bins[["bin", "count"]].equals(want.bins[["bin", "count"]])


@settings(max_examples=examples(100), deadline=None)
@given(data=weighted_calibration_data(max_size=60, ties="heavy", single_class=False),
       cuts=st.lists(st.integers(0, 100), max_size=3), order=st.integers(0, 2**32 - 1))
def test_weighted_sketch_equals_weighted_metrics(data, cuts, order):
    correct, confidence, weight = data
    bounds = sorted({0, len(correct), *[c % (len(correct) + 1) for c in cuts]})
    parts = [CalibrationSketch.from_arrays(correct[a:b], confidence[a:b],
                                           sample_weight=weight[a:b])
             # consecutive bounds: bounds[1:] is one shorter by design
             for a, b in zip(bounds, bounds[1:], strict=False)
             if b > a and weight[a:b].sum() > 0]
    np.random.default_rng(order).shuffle(parts)
    sketch = parts[0]
    for p in parts[1:]:
        sketch = sketch.merge(p)
    rep = quiet(sketch.report, budgets=(0.3,))
    kw = {"sample_weight": weight}
    assert same(rep.auroc, quiet(confcal.auroc, correct, confidence, **kw), 1e-12)
    assert same(rep.ece, confcal.ece(correct, confidence, **kw), 1e-12)
    assert same(rep.mce, confcal.mce(correct, confidence, **kw), 1e-12)
    assert same(rep.brier, confcal.brier(correct, confidence, **kw), 1e-12)
    assert same(rep.ecarb[0.3], quiet(confcal.ecarb, correct, confidence, budget=0.3, **kw),
                1e-12)
    if np.all(weight == np.round(weight)):  # whole weights are copies of rows
        rows = np.repeat(np.arange(len(correct)), weight.astype(int))
        assert same(rep.ecarb[0.3], quiet(confcal.ecarb, correct[rows], confidence[rows]),
                    1e-12)


@settings(max_examples=examples(100), deadline=None)
@given(data=calibration_data(max_size=80))
def test_bytes_round_trip_is_exact(data):
    correct, confidence = data
    for kw in ({}, {"resolution": 0.001}, {"sample_weight": np.linspace(0.5, 2, len(correct))}):
        sketch = CalibrationSketch.from_arrays(correct, confidence, **kw)
        blob = sketch.to_bytes()
        again = CalibrationSketch.from_bytes(blob)
        assert again == sketch
        assert again.to_bytes() == blob


@settings(max_examples=examples(150), deadline=None)
@given(data=calibration_data(min_size=2, max_size=200, ties="some", single_class=False),
       resolution=st.sampled_from([0.1, 0.05, 0.01, 0.001]),
       binning=st.sampled_from(["quantile", "uniform"]))
def test_snapped_sketch_stays_within_its_error_bounds(data, resolution, binning):
    correct, confidence = data
    sketch = CalibrationSketch.from_arrays(correct, confidence, resolution=resolution)
    got = quiet(sketch.report, budgets=BUDGETS, binning=binning)
    raw = quiet(confcal.calibration_report, correct, confidence, budgets=BUDGETS,
                binning=binning)
    bound = quiet(sketch.error_bounds, budgets=BUDGETS, binning=binning).set_index("metric")[
        "bound"]
    eps = 1e-12
    assert abs(got.brier - raw.brier) <= bound["brier"] + eps
    assert abs(got.auroc - raw.auroc) <= bound["auroc"] + eps
    assert abs(got.ece - raw.ece) <= bound["ece"] + eps
    for b in BUDGETS:
        if not math.isnan(raw.ecarb[b]):
            assert abs(got.ecarb[b] - raw.ecarb[b]) <= bound[f"ecarb@{b:g}"] + eps


def test_snapping_hand_worked():
    # resolution 0.1: 0.34 -> 0.3, 0.36 -> 0.4, 0.31 -> 0.3; the correct 0.34 and the
    # incorrect 0.31 now share the cell 0.3: 1 of the 2*1 (correct, incorrect) pairs.
    sketch = CalibrationSketch.from_arrays([1, 1, 0], [0.34, 0.36, 0.31], resolution=0.1)
    assert sketch.values.tolist() == [0.3, 0.4]
    assert sketch.n_correct.tolist() == [1, 1] and sketch.n_incorrect.tolist() == [1, 0]
    assert sketch.tied_pair_share == 0.5
    # raw AUROC 1.0; snapped (0.3 tie: 1/2, 0.4 > 0.3: 1) -> 0.75; bound 1/2 * 1/2 = 0.25
    assert confcal.auroc([1, 1, 0], [0.34, 0.36, 0.31]) == 1.0
    assert sketch.report().auroc == 0.75
    bounds = sketch.error_bounds().set_index("metric")["bound"]
    assert bounds["auroc"] == 0.25
    assert bounds["brier"] == 0.1


def test_exact_sketch_has_zero_bounds_and_memory_is_distinct_values():
    rng = np.random.default_rng(0)
    confidence = rng.choice([0.9, 0.95, 0.99], size=10_000)
    correct = rng.uniform(size=10_000) < confidence
    sketch = CalibrationSketch.from_arrays(correct, confidence)
    assert sketch.values.tolist() == [0.9, 0.95, 0.99]
    # 40-byte header + 3 cells x 3 columns x 8 bytes + 16-byte checksum
    assert len(sketch.to_bytes()) == 40 + 3 * 3 * 8 + 16
    assert (sketch.error_bounds()["bound"] == 0).all()


def test_update_equals_merge_and_sketches_are_immutable():
    a = CalibrationSketch.from_arrays([1, 0], [0.9, 0.2])
    b = a.update([1, 1], [0.9, 0.5])
    assert b == a.merge(CalibrationSketch.from_arrays([1, 1], [0.9, 0.5]))
    assert a.n == 2 and b.n == 4
    with pytest.raises(AttributeError):
        a.resolution = 0.1  # type: ignore[misc]


def test_weighted_sketch_with_fractional_weights_has_the_arrays_ecarb():
    # W = 3.5, E = 1, b = 0.3: K = max(1, floor(1.05)) = 1 unit: 0.5 of the correct row at
    # 0.2, then 0.5 of the error at 0.5 -> caught 0.5: 0.5 / (1/3.5 * 1) = 1.75
    weight = [0.5, 1, 2]
    sketch = CalibrationSketch.from_arrays([1, 0, 1], [0.2, 0.5, 0.9], sample_weight=weight)
    rep = sketch.report(budgets=(0.3,))
    assert rep.ecarb[0.3] == 1.75
    assert rep.ecarb[0.3] == confcal.ecarb([1, 0, 1], [0.2, 0.5, 0.9], sample_weight=weight)
    assert rep.auroc == confcal.auroc([1, 0, 1], [0.2, 0.5, 0.9], sample_weight=weight)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: CalibrationSketch.from_arrays([1, 0], [0.5, 1.5]),
         r"confidence must be finite and within \[0, 1\]; found 1 value breaking it, "
         r"first at index 1 \(1\.5\)"),
        (lambda: CalibrationSketch.from_arrays([1, 2], [0.5, 0.5]), r"correct must be bool or 0/1"),
        (lambda: CalibrationSketch.from_arrays([1, 0], [0.5, 0.5]).update([1], [0.2, 0.3]),
         r"same length"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5], resolution=0.3),
         r"resolution must divide 1"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5], resolution=0),
         r"resolution must be None or a number in \(0, 1\]"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5]).merge(
            CalibrationSketch.from_arrays([1], [0.5], resolution=0.01)),
         r"sketches must share a resolution"),
        (lambda: CalibrationSketch.from_arrays([1], [0.5]).report(ties="stable"),
         r"ties must be one of 'expected', 'pessimistic', 'optimistic'; found 'stable'"),
        (lambda: CalibrationSketch.empty().report(), r"the sketch must not be empty"),
        (lambda: CalibrationSketch.from_bytes(b"nope"),
         r"data is not a confcal sketch blob: it must start with b'CCSK'; found b'nope'"),
        (lambda: CalibrationSketch.from_bytes(b"XXXX" + bytes(32)), r"must start with b'CCSK'"),
        (lambda: CalibrationSketch.from_bytes("CCSK"), r"data must be bytes; found str"),
        # 1 cell x 3 columns x 8 = 24 bytes of payload; 40 + 24 + 16 = 80 in all
        (lambda: CalibrationSketch.from_bytes(
            CalibrationSketch.from_arrays([1], [0.5]).to_bytes()[:-1]),
         (r"sketch blob is truncated: its header says 24 bytes of payload \(1 cells x 3 "
          r"columns\) and a 16-byte checksum after the 40-byte header, 80 bytes in all; "
          r"found 79")),
    ],
)
def test_bad_input_raises_named_errors(call, message):
    with pytest.raises(ValidationError, match=message):
        call()


# -- the binary format (docs/scaling.md, "Binary format") -------------------------------
# Blobs are also written here straight from the byte table, independently of to_bytes, so
# the content checks can be reached behind a valid checksum (a buggy or foreign writer).
FIELDS = struct.Struct("<4sHHdQQ")  # magic, version, flags, resolution, n_cells, n_rows
NAN = math.nan


def columns_bytes(columns) -> bytes:
    # values, n_correct, n_incorrect[, w_correct, w_incorrect]
    dtypes = ["<f8", "<i8", "<i8", "<f8", "<f8"]
    # three columns for an unweighted sketch, five for a weighted one: the tail is optional
    return b"".join(np.asarray(c, dtype=dt).tobytes()
                    for c, dt in zip(columns, dtypes, strict=False))


def seal(flags, resolution, rows, *columns, cells=None, weightless=None) -> bytes:
    """A version-2 blob with correct checksums, whatever the columns hold; ``weightless``:
    the two uint64 counts of zero-weight rows after the columns."""
    cells = len(columns[0]) if cells is None else cells
    fields = FIELDS.pack(b"CCSK", 2, flags, resolution, cells, rows)
    body = fields + hashlib.sha256(fields).digest()[:8] + columns_bytes(columns)
    if weightless is not None:
        body += struct.pack("<QQ", *weightless)
    return body + hashlib.sha256(body).digest()[:16]


def v1_blob(flags, resolution, rows, *columns, cells=None) -> bytes:
    """The version-1 layout (confcal before the checksum): 32-byte header, columns."""
    cells = len(columns[0]) if cells is None else cells
    return FIELDS.pack(b"CCSK", 1, flags, resolution, cells, rows) + columns_bytes(columns)


def flip(blob: bytes, bit: int) -> bytes:
    out = bytearray(blob)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def refused(blob: bytes, **kw) -> bool:
    """True if from_bytes raises ValidationError; any other exception fails the test."""
    try:
        CalibrationSketch.from_bytes(blob, **kw)
    except ValidationError:
        return True
    return False


# 0.2 holds a correct row (weight 1) and an error (weight 2), 0.7 a correct row (3), 0.9 an
# error (4): 3 cells x 5 columns x 8 = 120 bytes of payload, 40 + 120 + 16 = 176 in all.
SMALL = CalibrationSketch.from_arrays([1, 0, 1, 0], [0.2, 0.2, 0.7, 0.9],
                                      sample_weight=[1, 2, 3, 4])
SMALL_COLUMNS = ([0.2, 0.7, 0.9], [1, 1, 0], [1, 0, 1], [1.0, 3.0, 0.0], [2.0, 0.0, 4.0])


def test_blob_layout_matches_the_documented_table():
    assert SMALL.to_bytes() == seal(1, NAN, 4, *SMALL_COLUMNS)
    assert len(SMALL.to_bytes()) == 176
    snapped = CalibrationSketch.from_arrays([1, 0], [0.34, 0.36], resolution=0.1)
    assert snapped.to_bytes() == seal(0, 0.1, 2, [0.3, 0.4], [1, 0], [0, 1])
    assert CalibrationSketch.empty().to_bytes() == seal(0, NAN, 0, [])
    assert CalibrationSketch.from_bytes(CalibrationSketch.empty(weighted=True).to_bytes()) == \
        CalibrationSketch.empty(weighted=True)
    # rows of zero weight: flag bit 1 and two uint64 after the columns; N counts them
    tallied = CalibrationSketch.from_arrays([1, 0, 1, 0, 0], [0.2, 0.2, 0.7, 0.9, 0.5],
                                            sample_weight=[1, 2, 3, 4, 0])
    assert tallied.to_bytes() == seal(3, NAN, 5, *SMALL_COLUMNS, weightless=[0, 1])
    assert len(tallied.to_bytes()) == 176 + 16
    assert CalibrationSketch.from_bytes(tallied.to_bytes()) == tallied


def test_to_bytes_is_deterministic():
    rng = np.random.default_rng(1)
    conf, correct = np.round(rng.uniform(size=300), 2), rng.uniform(size=300) < 0.7
    w = rng.integers(1, 4, size=300).astype(float)
    for kw in ({}, {"sample_weight": w}, {"resolution": 0.05}):
        a = CalibrationSketch.from_arrays(correct[:100], conf[:100], **_part(kw, 0, 100))
        b = CalibrationSketch.from_arrays(correct[100:], conf[100:], **_part(kw, 100, 300))
        whole = CalibrationSketch.from_arrays(correct[::-1], conf[::-1], **_part(kw, None, None))
        assert a.merge(b).to_bytes() == b.merge(a).to_bytes() == whole.to_bytes()


def _part(kw, a, b):
    if "sample_weight" not in kw:
        return kw
    w = kw["sample_weight"]
    return {"sample_weight": w[::-1] if a is None else w[a:b]}


@pytest.mark.parametrize(
    ("region", "start", "stop", "message"),
    [
        ("magic", 0, 4, r"data is not a confcal sketch blob: it must start with b'CCSK'"),
        # 2 with one bit flipped is 0, 3, 6, 10, ..., 514, ...: never 1
        ("version", 4, 6, r"sketch blob has format version \d+; this confcal reads version 2"),
        ("flags", 6, 8, r"sketch blob is corrupted: header checksum mismatch"),
        ("resolution", 8, 16, r"sketch blob is corrupted: header checksum mismatch"),
        ("n_cells", 16, 24, r"sketch blob is corrupted: header checksum mismatch"),
        ("n_rows", 24, 32, r"sketch blob is corrupted: header checksum mismatch"),
        ("header checksum", 32, 40, r"sketch blob is corrupted: header checksum mismatch"),
        ("values", 40, 64, r"sketch blob is corrupted: checksum mismatch"),
        ("n_correct", 64, 88, r"sketch blob is corrupted: checksum mismatch"),
        ("n_incorrect", 88, 112, r"sketch blob is corrupted: checksum mismatch"),
        ("w_correct", 112, 136, r"sketch blob is corrupted: checksum mismatch"),
        ("w_incorrect", 136, 160, r"sketch blob is corrupted: checksum mismatch"),
        ("checksum", 160, 176, r"sketch blob is corrupted: checksum mismatch"),
    ],
)
def test_every_bit_flip_in_each_region_is_named(region, start, stop, message):
    blob = SMALL.to_bytes()
    for bit in range(8 * start, 8 * stop):
        with pytest.raises(ValidationError, match=message):
            CalibrationSketch.from_bytes(flip(blob, bit))


def test_checksum_message_shows_both_digests():
    blob = SMALL.to_bytes()
    bad = flip(blob, 8 * 40)  # lowest bit of the first value: 0.2 + 1 ulp, still sorted
    stored, computed = blob[-16:].hex(), hashlib.sha256(bad[:-16]).digest()[:16].hex()
    with pytest.raises(ValidationError, match=rf"checksum mismatch \(stored 0x{stored}, "
                                              rf"computed 0x{computed}\)$"):
        CalibrationSketch.from_bytes(bad)


def test_every_truncation_of_a_small_blob_says_truncated():
    blob = SMALL.to_bytes()
    for n in range(len(blob)):
        with pytest.raises(ValidationError, match=r"^sketch blob is truncated: "):
            CalibrationSketch.from_bytes(blob[:n])
    with pytest.raises(ValidationError, match=r"found 31 bytes, fewer than a header's 32 "
                                              r"\(version 1\) or 40 \(version 2\)"):
        CalibrationSketch.from_bytes(blob[:31])
    with pytest.raises(ValidationError, match=r"a version-2 header is 40 bytes; found 39"):
        CalibrationSketch.from_bytes(blob[:39])
    with pytest.raises(ValidationError, match=r"its header says 120 bytes of payload \(3 cells "
                                              r"x 5 columns\) and a 16-byte checksum after the "
                                              r"40-byte header, 176 bytes in all; found 175"):
        CalibrationSketch.from_bytes(blob[:175])


def test_trailing_bytes_are_refused():
    blob = SMALL.to_bytes()
    with pytest.raises(ValidationError, match=r"sketch blob has 1 trailing byte: its header "
                                              r"accounts for 176 bytes \(3 cells\); found 177"):
        CalibrationSketch.from_bytes(blob + b"\x00")
    with pytest.raises(ValidationError, match=r"has 176 trailing bytes"):
        CalibrationSketch.from_bytes(blob + blob)  # two blobs glued together


def test_swapped_values_are_refused_in_every_version():
    # The 0.2 is an error, the 0.8 correct: Brier (0.2² + 0.2²) / 2 = 0.04. With the two
    # values swapped the error carries 0.8 and the correct row 0.2: (0.8² + 0.8²) / 2 = 0.64,
    # which is what version 1 read back.
    sketch = CalibrationSketch.from_arrays([0, 1], [0.2, 0.8])
    swapped = CalibrationSketch(np.array([0.8, 0.2]), sketch.n_correct, sketch.n_incorrect)
    assert sketch.report().brier == pytest.approx(0.04)
    assert swapped.report().brier == pytest.approx(0.64)
    blob = bytearray(sketch.to_bytes())
    blob[40:48], blob[48:56] = blob[48:56], blob[40:48]
    with pytest.raises(ValidationError, match=r"sketch blob is corrupted: checksum mismatch"):
        CalibrationSketch.from_bytes(bytes(blob))
    ascending = r"values must be strictly ascending; found 0.2 after 0.8 at index 1"
    with pytest.raises(ValidationError, match="sketch blob is invalid: " + ascending):
        CalibrationSketch.from_bytes(seal(0, NAN, 2, [0.8, 0.2], [0, 1], [1, 0]))
    with pytest.raises(ValidationError, match="version-1 sketch blob is corrupted: " + ascending):
        CalibrationSketch.from_bytes(v1_blob(0, NAN, 2, [0.8, 0.2], [0, 1], [1, 0]),
                                     allow_unverified_v1=True)
    with pytest.raises(ValidationError, match="sketch cannot be written: " + ascending):
        swapped.to_bytes()


def test_cells_of_the_wrong_shape_cannot_be_written():
    # a sketch built by hand with two correct counts for one value, or one weight column
    one = np.array([0.5])
    with pytest.raises(ValidationError, match=r"sketch cannot be written: n_correct must hold "
                                              r"one entry per value \(1\); found \(2,\)"):
        CalibrationSketch(one, np.array([1, 2]), np.array([0])).to_bytes()
    with pytest.raises(ValidationError, match=r"sketch cannot be written: w_incorrect must "
                                              r"hold one entry per value \(1\); found None"):
        CalibrationSketch(one, np.array([1]), np.array([0]), w_correct=np.array([1.0])
                          ).to_bytes()

def test_version_1_blobs_are_refused_unless_opted_in():
    blob = v1_blob(1, NAN, 4, *SMALL_COLUMNS)
    with pytest.raises(ValidationError, match=(
            r"sketch blob has format version 1, which carries no checksum, so corruption "
            r"cannot be detected; re-create the sketch from the data, or read it with "
            r"CalibrationSketch\.from_bytes\(blob, allow_unverified_v1=True\)")):
        CalibrationSketch.from_bytes(blob)
    old = CalibrationSketch.from_bytes(blob, allow_unverified_v1=True)
    assert old == SMALL
    assert old.to_bytes() == SMALL.to_bytes()  # re-saved as a checksummed version 2
    # the opt-in still runs the content and length checks ...
    with pytest.raises(ValidationError, match=r"version-1 sketch blob is corrupted: the header "
                                              r"says 5 rows; the cells hold 4"):
        CalibrationSketch.from_bytes(v1_blob(1, NAN, 5, *SMALL_COLUMNS), allow_unverified_v1=True)
    with pytest.raises(ValidationError, match=r"truncated: its header says 120 bytes of payload "
                                              r"\(3 cells x 5 columns\) after the 32-byte "
                                              r"header, 152 bytes in all; found 151"):
        CalibrationSketch.from_bytes(blob[:-1], allow_unverified_v1=True)
    with pytest.raises(ValidationError, match=r"1 trailing byte"):
        CalibrationSketch.from_bytes(blob + b"\x00", allow_unverified_v1=True)
    # ... and never switches off the checksum of a version-2 blob
    with pytest.raises(ValidationError, match=r"checksum mismatch"):
        CalibrationSketch.from_bytes(flip(SMALL.to_bytes(), 8 * 50), allow_unverified_v1=True)
    with pytest.raises(ValidationError, match=r"format version 3; this confcal reads version 2 "
                                              r"\(and version 1 with allow_unverified_v1=True\)"):
        CalibrationSketch.from_bytes(b"CCSK\x03\x00" + bytes(50))


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (seal(0, NAN, 2, [0.2, 1.5], [1, 0], [0, 1]),
         r"values must be finite and within \[0, 1\] \(and 0.0, not -0.0\); found 1.5 at index 1"),
        (seal(0, NAN, 2, [NAN, 0.5], [1, 0], [0, 1]), r"within \[0, 1\].*found nan at index 0"),
        (seal(0, NAN, 2, [-0.0, 0.5], [1, 0], [0, 1]), r"not -0.0\); found -0.0 at index 0"),
        (seal(0, NAN, 2, [0.5, 0.5], [1, 0], [0, 1]),
         r"strictly ascending; found 0.5 after 0.5 at index 1"),
        (seal(0, 0.1, 2, [0.2, 0.25], [1, 0], [0, 1]),
         r"values must lie on the grid i/10 of resolution 0.1; found 0.25 at index 1"),
        (seal(0, 0.3, 1, [0.3], [1], [0]),
         r"resolution must be NaN \(none\) or a number in \(0, 1\] that divides 1; found 0.3"),
        (seal(0, 0.0, 1, [0.0], [1], [0]), r"resolution must be NaN .* found 0.0"),
        (seal(0, -0.5, 1, [0.0], [1], [0]), r"resolution must be NaN .* found -0.5"),
        (seal(0, 2.0, 1, [0.0], [1], [0]), r"resolution must be NaN .* found 2.0"),
        (seal(0, math.inf, 1, [0.0], [1], [0]), r"resolution must be NaN .* found inf"),
        (seal(4, NAN, 1, [0.5], [1], [0]), r"unknown flags 0x0004"),
        (seal(2, NAN, 1, [0.5], [1], [0], weightless=[1, 0]),
         r"flag bit 1 \(rows of zero weight\) is set without bit 0 \(weighted\)"),
        (seal(3, NAN, 1, [0.5], [1], [0], [1.0], [0.0], weightless=[0, 0]),
         r"flag bit 1 is set but the rows of zero weight are 0 and 0"),
        (seal(3, NAN, 4, [0.5], [1], [0], [1.0], [0.0], weightless=[1, 1]),
         r"the header says 4 rows; the cells hold 1 and the rows of zero weight 1 \+ 1"),
        (seal(3, NAN, 0, [0.5], [1], [0], [1.0], [0.0], weightless=[2**63, 0]),
         r"they overflow"),
        (seal(1, NAN, 2, [0.2, 0.5], [1, 0], [0, 1], [0.0, 0.0], [0.0, 1.0]),
         r"w_correct must be > 0 where n_correct is > 0 \(rows of zero weight are counted "
         r"in n_weightless_correct, not in a cell\); found 0.0 for 1 rows at index 0"),
        (seal(0x8001, NAN, 1, [0.5], [1], [0], [1.0], [0.0]), r"unknown flags 0x8001"),
        (seal(0, NAN, 1, [0.2, 0.5], [-1, 1], [1, 0]),
         r"n_correct must be >= 0; found -1 at index 0"),
        (seal(0, NAN, 1, [0.2, 0.5], [1, 0], [0, 0]),
         r"every value must hold at least one row; found none for 0.5 at index 1"),
        (seal(0, NAN, 3, [0.2, 0.5], [1, 0], [0, 1]),
         r"the header says 3 rows; the cells hold 2"),
        (seal(0, NAN, 0, [0.2, 0.5], [2**62, 2**62], [2**62, 2**62]), r"they overflow"),
        (seal(1, NAN, 2, [0.2, 0.5], [1, 0], [0, 1], [-1.0, 0.0], [0.0, 1.0]),
         r"w_correct must be finite and >= 0; found -1.0 at index 0"),
        (seal(1, NAN, 2, [0.2, 0.5], [1, 0], [0, 1], [1.0, 0.0], [0.0, math.inf]),
         r"w_incorrect must be finite and >= 0; found inf at index 1"),
        (seal(1, NAN, 2, [0.2, 0.5], [1, 0], [0, 1], [1.0, 0.0], [0.5, 1.0]),
         r"w_incorrect must be 0 where n_incorrect is 0; found 0.5 at index 0"),
    ],
)
def test_content_behind_a_valid_checksum_is_checked(blob, message):
    with pytest.raises(ValidationError, match="^sketch blob is invalid: .*" + message):
        CalibrationSketch.from_bytes(blob)


@pytest.mark.parametrize("cells", [2**20, 2**61, 2**64 - 1])
def test_a_huge_cell_count_is_refused_before_allocating(cells):
    # The header checksum is right, so only the length check stands between this 56-byte
    # blob and allocating cells x 24 bytes.
    blob = seal(0, NAN, 0, [], cells=cells)
    with pytest.raises(ValidationError, match=rf"truncated: its header says {cells * 24} bytes "
                                              rf"of payload \({cells} cells x 3 columns\)"):
        CalibrationSketch.from_bytes(blob)
    with pytest.raises(ValidationError, match=rf"truncated: its header says {cells * 24} bytes"):
        CalibrationSketch.from_bytes(v1_blob(0, NAN, 0, [], cells=cells), allow_unverified_v1=True)


@st.composite
def sketches(draw, max_size: int = 40) -> CalibrationSketch:
    """Weighted or not, exact or snapped, sometimes empty."""
    resolution = draw(st.sampled_from([None, 0.1, 0.01, 1e-6]))
    weighted = draw(st.booleans())
    if draw(st.integers(0, 9)) == 0:
        return CalibrationSketch.empty(resolution=resolution, weighted=weighted)
    if weighted:
        correct, confidence, weight = draw(weighted_calibration_data(
            max_size=max_size, weights=draw(st.sampled_from(["integer", "float"]))))
    else:
        (correct, confidence), weight = draw(calibration_data(max_size=max_size)), None
    return CalibrationSketch.from_arrays(correct, confidence, sample_weight=weight,
                                         resolution=resolution)


def assert_same_results(a: CalibrationSketch, b: CalibrationSketch) -> None:
    assert a == b and a.weighted == b.weighted and a.resolution == b.resolution
    if a.n == 0:
        return
    ra, rb = quiet(a.report, budgets=BUDGETS), quiet(b.report, budgets=BUDGETS)
    for name in ("n", "n_errors", "accuracy", "auroc", "ece", "mce", "brier"):
        assert same(getattr(ra, name), getattr(rb, name)), name
    for budget in BUDGETS:
        assert same(ra.ecarb[budget], rb.ecarb[budget])
        assert same(ra.ecarb_ceiling[budget], rb.ecarb_ceiling[budget])
    assert ra.bins.equals(rb.bins)
    assert quiet(a.error_bounds).equals(quiet(b.error_bounds))


@settings(max_examples=examples(150), deadline=None)
@given(sketch=sketches())
def test_round_trip_is_exact_in_every_result(sketch):
    blob = sketch.to_bytes()
    again = CalibrationSketch.from_bytes(blob)
    assert_same_results(again, sketch)
    assert again.to_bytes() == blob
    assert CalibrationSketch.from_bytes(bytearray(blob)) == sketch
    assert CalibrationSketch.from_bytes(memoryview(blob)) == sketch


@settings(max_examples=examples(40), deadline=None)
@given(sketch=sketches(max_size=6))
def test_every_bit_flip_of_a_small_blob_is_refused(sketch):
    blob = sketch.to_bytes()  # at most 40 + 6 x 40 + 16 = 296 bytes: all 2368 flips
    assert [bit for bit in range(8 * len(blob)) if not refused(flip(blob, bit))] == []


@settings(max_examples=examples(40), deadline=None)
@given(sketch=sketches(max_size=300), data=st.data())
def test_sampled_bit_flips_of_a_larger_blob_are_refused(sketch, data):
    blob = sketch.to_bytes()
    bits = data.draw(st.lists(st.integers(0, 8 * len(blob) - 1), min_size=1, max_size=300,
                              unique=True))
    assert [bit for bit in bits if not refused(flip(blob, bit))] == []


@settings(max_examples=examples(60), deadline=None)
@given(sketch=sketches(), extra=st.binary(min_size=1, max_size=64))
def test_every_truncation_and_extension_is_refused(sketch, extra):
    blob = sketch.to_bytes()
    assert [n for n in range(len(blob)) if not refused(blob[:n])] == []
    assert not refused(blob) and refused(blob + extra)


def test_no_single_bit_flip_of_a_representative_blob_is_accepted():
    # The figure: version 1 accepted about a third of all single-bit flips (this
    # blob under the version-1 layout: 6,543 of 19,648, 6,018 with changed results).
    rng = np.random.default_rng(0)
    conf = np.round(rng.uniform(size=2000), 2)
    correct = rng.uniform(size=2000) < conf
    blob = CalibrationSketch.from_arrays(correct, conf).to_bytes()
    assert len(blob) == 40 + 101 * 24 + 16  # 101 distinct values 0.00 .. 1.00
    accepted = [bit for bit in range(8 * len(blob)) if not refused(flip(blob, bit))]
    assert accepted == []


def test_weighted_sketch_bins_ignore_a_scale_of_0_7():
    # as the array metrics: M = 5, five rows one per bin; ECE = (0.1+0.2+0.3+0.6+0.5)/5 = 0.34
    y, c = [0, 0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4, 0.5]
    for w in ([1.0] * 5, [0.7] * 5, [1 / 3] * 5):
        rep = quiet(CalibrationSketch.from_arrays(y, c, sample_weight=w).report)  # no ECARB
        assert rep.ece == pytest.approx(0.34, abs=1e-15), w
        assert rep.bins["bin"].tolist() == [0, 1, 2, 3, 4]


def test_sketch_brier_on_constant_data():
    # (0.1² + 0.9²) / 2 = 0.41, from two cells (0.9, right) x 5000 and (0.9, wrong) x 5000
    y, c = [1] * 5000 + [0] * 5000, [0.9] * 10000
    assert abs(CalibrationSketch.from_arrays(y, c).report().brier - 0.41) <= 1e-15
    weighted = CalibrationSketch.from_arrays(y, c, sample_weight=[0.7] * 10000)
    assert abs(quiet(weighted.report).brier - 0.41) <= 1e-15  # 0.7: no ECARB, warned


def test_subnormal_resolutions_and_overflowing_weights_are_named_errors():
    for tiny in (5e-324, 1e-300, 2.0**-54):
        with pytest.raises(ValidationError, match=r"resolution must be at least 2\*\*-53 "
                                                  r"\(1.1102230246251565e-16.*found"):
            CalibrationSketch.from_arrays([1], [0.5], resolution=tiny)
        with pytest.raises(ValidationError, match=r"resolution must be at least 2\*\*-53"):
            CalibrationSketch.empty(resolution=tiny)
    # the finest grid there is still works: 2**-53 snaps nothing that is not already on it
    fine = CalibrationSketch.from_arrays([1, 0], [0.5, 0.25], resolution=2.0**-53)
    assert fine.values.tolist() == [0.25, 0.5]
    # 1e308 + 1e308 overflows float64: in one chunk, across cells, and in a merge
    big = r"sample_weight must add up to at most the largest float64, 1.7976931348623157e\+308"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValidationError, match=big):
            CalibrationSketch.from_arrays([1, 0], [0.5, 0.5], sample_weight=[1e308, 1e308])
        with pytest.raises(ValidationError, match=big):
            CalibrationSketch.from_arrays([1, 1], [0.5, 0.6], sample_weight=[1e308, 1e308])
        one = CalibrationSketch.from_arrays([1], [0.5], sample_weight=[1e308])
        with pytest.raises(ValidationError, match=r"the weights of the merged sketches must "
                                                  r"add up to at most the largest float64"):
            one.merge(one)
    # the largest weights that fit are fine, and equal to the arrays' report
    ok = CalibrationSketch.from_arrays([1, 0], [0.6, 0.5], sample_weight=[8e307, 8e307])
    assert ok.report(budgets=(0.5,)).auroc == 1.0


def auroc_warnings(fn, *args, **kw) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args, **kw)
    return [str(w.message) for w in caught if str(w.message).startswith("auroc")]


def test_the_sketch_auroc_warning_counts_predictions_not_cells():
    # 200 rows in one cell: "all 200 predictions", as the arrays say, not "all 1"
    one_cell = "auroc is undefined: all 200 predictions are correct (one class only); returning NaN"
    sketch = CalibrationSketch.from_arrays([1] * 200, [0.5] * 200)
    assert auroc_warnings(sketch.report, budgets=(0.3,)) == [one_cell]
    assert auroc_warnings(confcal.calibration_report, [1] * 200, [0.5] * 200) == [one_cell]
    # 3 cells, 300 errors
    errors = CalibrationSketch.from_arrays([0] * 300, [0.1, 0.2, 0.3] * 100)
    assert auroc_warnings(errors.report) == [
        "auroc is undefined: all 300 predictions are incorrect (one class only); returning NaN"]
    # weighted: the one error weighs 0, so the message is the arrays' weighted one
    y, c, w = [1] * 50 + [0], [0.5] * 51, [1.0] * 50 + [0.0]
    weighted = CalibrationSketch.from_arrays(y, c, sample_weight=w)
    want = auroc_warnings(confcal.calibration_report, y, c, sample_weight=w)
    assert want == ["auroc is undefined: every prediction with positive weight is correct; "
                    "returning NaN"]
    assert auroc_warnings(weighted.report) == want
