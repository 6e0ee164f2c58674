"""Precision, not speed: weighted metrics with every weight 0.7 against exact references.

Usage (from the repository root)::

    python benchmarks/bench_weighted_precision.py               # 1e5, 1e6 and 1e7 rows
    python benchmarks/bench_weighted_precision.py --sizes 1000000
    python benchmarks/bench_weighted_precision.py --cost 10000000  # seconds of the sums

One weight for every row changes no metric, so the weighted report with weights 0.7 must
equal the exact value of the unweighted metric. The references are exact rationals
rounded once: AUROC from integer rank sums (the unweighted report computes it that way),
ECARB from the unweighted report (exact rationals inside), ECE from the unweighted bins with
each bin's confidences summed exactly (``exact_sum``) and the correct count as an integer,
Brier as ``math.fsum`` of the squared errors. Prints the relative error of each metric.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction

import numpy as np

import confcal
from confcal.metrics._metrics import ranking_bins
from confcal.metrics._ranking import Ranking, accurate_cumsum, exact_sum, grouped_sum

BUDGETS = (0.1, 0.3)


def exact_ece(y: np.ndarray, c: np.ndarray, n_bins: int = 5) -> float:
    r = Ranking.from_arrays(y, c)
    bins = ranking_bins(r, n_bins, "quantile")
    total = Fraction(0)
    for start, stop in zip(bins.start, bins.stop, strict=True):
        correct = int(r.pos_before(int(stop)) - r.pos_before(int(start)))
        total += abs(Fraction(correct) - exact_sum(r.confidence[start:stop]))
    return float(total / r.n)


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def best_of(f, *args, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def cost(n: int) -> None:
    """Seconds of accurate_cumsum and grouped_sum against numpy's running float sums, side
    by side, for weights of one band (0.7), a few (uniform on [0, 5]: down to ~1e-7) and
    the whole float range (1e-300..1e300)."""
    rng = np.random.default_rng(0)
    group = rng.integers(0, 1000, size=n)
    print("| weights | np.cumsum | accurate_cumsum | ratio | np.bincount | grouped_sum | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, w in [("all 0.7", np.full(n, 0.7)), ("uniform [0, 5]", rng.uniform(0, 5, n)),
                    ("1e-300..1e300", 10.0 ** rng.uniform(-300, 300, n))]:
        a, b = best_of(np.cumsum, w), best_of(accurate_cumsum, w)
        g = best_of(lambda: np.bincount(group, weights=w, minlength=1000))
        h = best_of(lambda: grouped_sum(group, w, 1000))
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.0f}x | {g:.3f} | {h:.3f} | {h / g:.0f}x |")
    # what the sums cost inside a whole weighted report, against the unweighted one
    c = rng.beta(5, 2, size=n)
    y = rng.uniform(size=n) < c
    plain = best_of(confcal.calibration_report, y, c)
    print()
    print("| weights | calibration_report weighted | unweighted | ratio |")
    print("|---|---:|---:|---:|")
    for name, w in [("all 0.7", np.full(n, 0.7)), ("uniform [0, 5]", rng.uniform(0, 5, n)),
                    ("1e-300..1e300", 10.0 ** rng.uniform(-300, 300, n))]:
        t = best_of(lambda: confcal.calibration_report(y, c, sample_weight=w))
        print(f"| {name} | {t:.3f} | {plain:.3f} | {t / plain:.1f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    parser.add_argument("--cost", type=int, default=0,
                        help="rows for the timing table of the sums (0: precision only)")
    args = parser.parse_args(argv)
    if args.cost:
        cost(args.cost)
        return 0
    print("| rows | AUROC | ECE | Brier | ECARB@0.1 | ECARB@0.3 | ceiling@0.3 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(0)
        c = rng.beta(5, 2, size=n)
        y = rng.uniform(size=n) < c
        got = confcal.calibration_report(y, c, sample_weight=np.full(n, 0.7), budgets=BUDGETS)
        ref = confcal.calibration_report(y, c, budgets=BUDGETS)
        brier = math.fsum(((c - y) ** 2).tolist()) / n
        cells = [rel(got.auroc, ref.auroc), rel(got.ece, exact_ece(y, c)),
                 rel(got.brier, brier), rel(got.ecarb[0.1], ref.ecarb[0.1]),
                 rel(got.ecarb[0.3], ref.ecarb[0.3]),
                 rel(got.ecarb_ceiling[0.3], ref.ecarb_ceiling[0.3])]
        print(f"| {n:,} | " + " | ".join(f"{x:.1e}" for x in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
