"""Precision, not speed: weighted metrics with every weight 0.7 against exact references.

Usage (from the repository root)::

    python benchmarks/bench_weighted_precision.py               # 1e5, 1e6 and 1e7 rows
    python benchmarks/bench_weighted_precision.py --sizes 1000000

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
from fractions import Fraction

import numpy as np

import confcal
from confcal.metrics._metrics import ranking_bins
from confcal.metrics._ranking import Ranking, exact_sum

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    args = parser.parse_args(argv)
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
