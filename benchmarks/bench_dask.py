"""Benchmark: confcal.dask's calibration report against the in-memory one, and sketch merges.

Usage (from the repository root)::

    python benchmarks/bench_dask.py                        # 5M rows, 8 partitions
    python benchmarks/bench_dask.py --rows 1000000         # quicker
    python benchmarks/bench_dask.py --weighted             # with sample_weight as well

The rows are Beta(5, 2) confidences as float64 (every value distinct: the sketch's worst
case, one cell per row) and the same rounded to 2 decimals, with ``correct`` drawn as
Bernoulli(confidence). For each, side by side and best of ``--repeats``:

- ``calibration_report(correct, confidence)`` in this process;
- ``confcal.dask.dask_calibration_report`` of the same rows in ``--partitions`` partitions
  on a LocalCluster of 2 worker processes (1 thread each), the frame persisted on the
  workers first (data already on the cluster, as after ``dd.read_parquet``);
- the same steps in this process, one after another, to say where the Dask time goes:
  the per-partition sketches, pickling them (what travels between processes), the k-way
  merge and the report from the merged sketch.

Then merging k sketches: a left fold of ``merge`` (each step re-sorts everything merged so
far, O(N k)) against one ``CalibrationSketch.merge_all`` (O(N log k)).

The machine is shared: read the ratios, and the load average printed with them.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import pandas as pd

import confcal
from confcal.metrics.sketch import CalibrationSketch


def best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """(best seconds, last result) over ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def make_rows(n: int, decimals: int | None, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 2, size=n)
    if decimals is not None:
        conf = np.round(conf, decimals)
    return pd.DataFrame({"correct": rng.uniform(size=n) < conf, "confidence": conf,
                         "w": rng.integers(1, 5, size=n).astype(np.float64)})


def steps(frame: pd.DataFrame, partitions: int, weighted: bool) -> dict[str, float]:
    """The Dask pipeline's steps run serially in this process (seconds each, summed over
    partitions where per partition)."""
    bounds = np.linspace(0, len(frame), partitions + 1).astype(int)
    parts = [frame.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    out: dict[str, float] = {}
    t = time.perf_counter()
    sketches = [CalibrationSketch.from_arrays(
        p["correct"].to_numpy(), p["confidence"].to_numpy(),
        sample_weight=p["w"].to_numpy() if weighted else None) for p in parts]
    out["sketch per partition (all partitions)"] = time.perf_counter() - t
    t = time.perf_counter()
    blobs = [pickle.dumps(s, protocol=5) for s in sketches]
    sketches = [pickle.loads(b) for b in blobs]
    out["pickle + unpickle the sketches"] = time.perf_counter() - t
    out["_bytes"] = float(sum(len(b) for b in blobs))
    t = time.perf_counter()
    merged = CalibrationSketch.merge_all(sketches)
    out["merge_all of the partition sketches"] = time.perf_counter() - t
    t = time.perf_counter()
    merged.report()
    out["report from the merged sketch"] = time.perf_counter() - t
    return out


def merge_ablation(k: int, cells: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    sketches = []
    for _ in range(k):
        conf = rng.uniform(size=cells)
        sketches.append(CalibrationSketch.from_arrays(rng.uniform(size=cells) < conf, conf))
    fold, a = best(lambda: reduce(lambda x, y: x.merge(y), sketches), repeats)
    kway, b = best(lambda: CalibrationSketch.merge_all(sketches), repeats)
    assert a == b, "merge_all must equal the fold"
    return fold, kway


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--weighted", action="store_true",
                        help="also time sample_weight (a column of whole-number weights)")
    args = parser.parse_args(argv)

    import dask.dataframe as dd
    import distributed

    from confcal import dask as cdask

    print(f"# {args.rows:,} rows, {args.partitions} partitions, best of {args.repeats}; "
          f"numpy {np.__version__}, dask {distributed.__version__}, "
          f"load average before {os.getloadavg()[0]:.2f}")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    rows: list[tuple[str, str, float, str]] = []
    try:
        for label, decimals in (("float64", None), ("2 decimals", 2)):
            frame = make_rows(args.rows, decimals)
            kinds = [("unweighted", None)] + ([("weighted", "w")] if args.weighted else [])
            for kind, weight in kinds:
                w = None if weight is None else frame[weight]
                mem, rep = best(lambda w=w: confcal.calibration_report(
                    frame["correct"], frame["confidence"], sample_weight=w), args.repeats)
                ddf = dd.from_pandas(frame, npartitions=args.partitions).persist()
                distributed.wait(ddf)
                dsk, drep = best(lambda ddf=ddf, weight=weight: cdask.dask_calibration_report(
                    ddf, sample_weight=weight), args.repeats)
                assert drep.n == rep.n and abs(drep.auroc - rep.auroc) <= 1e-12
                name = f"{label}, {kind}"
                rows.append((name, "in memory `calibration_report`", mem, "1.00×"))
                rows.append((name, "`dask_calibration_report`, 2 workers", dsk,
                             f"**{dsk / mem:.2f}×**"))
                for step, sec in steps(frame, args.partitions, weight is not None).items():
                    if step == "_bytes":
                        continue
                    rows.append((name, f"serial: {step}", sec, f"{sec / mem:.2f}×"))
                del ddf
        fold, kway = merge_ablation(10, 100_000, args.repeats)
    finally:
        client.close()
        cluster.close()
    print("\n| data | what | seconds | vs in memory |\n|---|---|---:|---:|")
    for name, what, sec, ratio in rows:
        print(f"| {name} | {what} | {sec:.3f} | {ratio} |")
    print(f"\n| merging 10 sketches of 100,000 cells | seconds | ratio |\n|---|---:|---:|\n"
          f"| left fold of `merge` | {fold:.3f} | {fold / kway:.1f}× |\n"
          f"| `CalibrationSketch.merge_all` | {kway:.3f} | 1.0× |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
