"""Do the document-bootstrap intervals of ECE, debiased ECE and smooth ECE cover the truth
for a calibrated model?

The scenario: 60 documents of 25 to 35 entities (30 on average), each entity's confidence
drawn from Beta(5, 2) and its outcome drawn with exactly that probability (confidence =
the true probability, outcomes independent). For such a model every calibration error is
0 in the population: E[correct − confidence | confidence] = 0, so every bin (whatever its
edges) and every smoothed residual has mean 0. Each replication draws one data set and
computes the 95% percentile interval of ``bootstrap_ci`` (documents resampled); a
replication covers when low <= 0 <= high.

    PYTHONPATH=src python benchmarks/sim_calibrated_coverage.py             # 200 replications
    PYTHONPATH=src python benchmarks/sim_calibrated_coverage.py --quick     # 50, fewer resamples

ECE and debiased ECE take 1,000 resamples per replication, the smooth ECE 200 (it chooses
its bandwidth anew in every resample, ~4 ms each; its interval misses 0 by a wide margin
whatever the count).

docs/metrics.md quotes the output. (A smaller version runs in the test suite:
tests/metrics/test_estimators.py::test_debiased_interval_covers_a_calibrated_model.)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from confcal import bootstrap_ci, debiased_ece, ece, smooth_ece

METRICS = ("ece", "debiased_ece", "smooth_ece")


def calibrated_documents(rng: np.random.Generator, n_docs: int = 60
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = rng.integers(25, 36, size=n_docs)
    docs = np.repeat(np.arange(n_docs), sizes)
    confidence = rng.beta(5, 2, size=docs.size)
    correct = rng.uniform(size=docs.size) < confidence
    return correct, confidence, docs


def population_check(rng: np.random.Generator, n: int = 2_000_000) -> dict[str, float]:
    """The three estimators on one very large calibrated sample: all near their value, 0."""
    confidence = rng.beta(5, 2, size=n)
    correct = rng.uniform(size=n) < confidence
    return {"ece": ece(correct, confidence), "debiased_ece": debiased_ece(correct, confidence),
            "smooth_ece": smooth_ece(correct, confidence)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--smooth-resamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="50 replications, 200 and 50 resamples")
    args = parser.parse_args()
    if args.quick:
        args.replications, args.resamples, args.smooth_resamples = 50, 200, 50
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    covered = {m: 0 for m in METRICS}
    estimates: dict[str, list[float]] = {m: [] for m in METRICS}
    widths: dict[str, list[float]] = {m: [] for m in METRICS}
    widened = {m: 0 for m in METRICS}
    n_rows = []
    for r in range(args.replications):
        correct, confidence, docs = calibrated_documents(rng)
        n_rows.append(docs.size)
        ci = pd.concat([
            bootstrap_ci(correct, confidence, groups=docs, metrics=("ece", "debiased_ece"),
                         n_resamples=args.resamples, seed=r),
            bootstrap_ci(correct, confidence, groups=docs, metrics=("smooth_ece",),
                         n_resamples=args.smooth_resamples, seed=r),
        ]).set_index("metric")
        for m in METRICS:
            low, high = ci.loc[m, "low"], ci.loc[m, "high"]
            covered[m] += bool(low <= 0.0 <= high)
            estimates[m].append(ci.loc[m, "estimate"])
            widths[m].append(high - low)
            widened[m] += bool(ci.loc[m, "widened"])
    elapsed = time.perf_counter() - start
    print(f"{args.replications} replications of 60 documents ({np.mean(n_rows):.0f} "
          f"entities on average), {args.resamples} document resamples each "
          f"({args.smooth_resamples} for smooth_ece), seed {args.seed}; {elapsed:.0f} s")
    print(f"{'metric':14s} {'covers 0':>9s} {'mean est.':>10s} {'sd est.':>8s} "
          f"{'mean width':>11s} {'widened':>8s}")
    for m in METRICS:
        est = np.asarray(estimates[m])
        print(f"{m:14s} {covered[m] / args.replications:9.1%} {est.mean():10.4f} "
              f"{est.std(ddof=1):8.4f} {np.mean(widths[m]):11.4f} "
              f"{widened[m] / args.replications:8.1%}")
    big = population_check(np.random.default_rng(args.seed + 1))
    print("one calibrated sample of 2,000,000: "
          + ", ".join(f"{m} {v:.5f}" for m, v in big.items()))


if __name__ == "__main__":
    main()
