"""Speed of the calibration metrics, side by side with their baselines, in one run.

Machines here are noisy: read the ratios, not the seconds. Each timing is the best of
``--repeat`` runs.

    python benchmarks/bench_metrics.py                 # 10M rows; bootstrap on 1M rows
    python benchmarks/bench_metrics.py --quick         # 1M rows; bootstrap on 100k rows

Targets: calibration_report within 5x one np.sort and at least 10x faster than
sklearn roc_auc_score + brier_score_loss; bootstrap_ci with 1,000 document resamples of 1M
rows in 10k documents under 60 s and at least 3x faster than resampling rows and calling
calibration_report each time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import confcal


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def synthetic(n: int, seed: int, decimals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    confidence = rng.beta(5, 2, size=n)
    if decimals is not None:
        confidence = np.round(confidence, decimals)
    correct = rng.uniform(size=n) < confidence
    return correct, confidence


def bench_report(n: int, repeat: int) -> list[tuple[str, str, float, str]]:
    from sklearn.metrics import brier_score_loss, roc_auc_score

    rows = []
    for label, decimals in (("continuous", None), ("2-decimal ties", 2)):
        correct, confidence = synthetic(n, seed=0, decimals=decimals)
        t_sort = best_of(lambda: np.sort(confidence), repeat)
        t_argsort = best_of(lambda: np.argsort(confidence), 1)
        t_report = best_of(lambda: confcal.calibration_report(correct, confidence), repeat)
        t_sklearn = best_of(lambda: (roc_auc_score(correct, confidence),
                                     brier_score_loss(correct, confidence)), 1)
        rows += [
            (label, "np.sort(confidence)", t_sort, "1.00x sort"),
            (label, "np.argsort(confidence)", t_argsort, f"{t_argsort / t_sort:.2f}x sort"),
            (label, "confcal.calibration_report", t_report,
             f"{t_report / t_sort:.2f}x sort (target <= 5x)"),
            (label, "sklearn roc_auc_score + brier_score_loss", t_sklearn,
             f"report is {t_sklearn / t_report:.1f}x faster (target >= 10x)"),
        ]
    return rows


def resample_rows_and_report(correct: np.ndarray, confidence: np.ndarray, docs: np.ndarray,
                             n_resamples: int, seed: int) -> list[float]:
    """The baseline: materialise each document resample as rows, recompute the report."""
    order = np.argsort(docs, kind="stable")
    y, c, d = correct[order], confidence[order], docs[order]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
    lengths = np.diff(np.r_[starts, d.shape[0]])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_resamples):
        draw = rng.integers(0, starts.shape[0], size=starts.shape[0])
        lens = lengths[draw]
        offsets = np.repeat(starts[draw] - np.r_[0, np.cumsum(lens)[:-1]], lens)
        rows = offsets + np.arange(offsets.shape[0])
        rep = confcal.calibration_report(y[rows], c[rows], budgets=(0.3,))
        out.append(rep.auroc)
    return out


def bench_bootstrap(n: int, n_docs: int, n_resamples: int, n_baseline: int
                    ) -> list[tuple[str, str, float, str]]:
    correct, confidence = synthetic(n, seed=1)
    docs = np.random.default_rng(2).integers(0, n_docs, size=n)
    start = time.perf_counter()
    confcal.bootstrap_ci(correct, confidence, groups=docs, n_resamples=n_resamples, seed=0)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    resample_rows_and_report(correct, confidence, docs, n_baseline, seed=0)
    t_base = (time.perf_counter() - start) * n_resamples / n_baseline
    label = f"{n:,} rows, {n_docs:,} docs"
    return [
        (label, f"bootstrap_ci, {n_resamples} resamples", t_ours,
         f"{1000 * t_ours / n_resamples:.1f} ms/resample (target < 60 s)"),
        (label, f"rows resampled + calibration_report ({n_baseline} timed, scaled to "
                f"{n_resamples})", t_base,
         f"bootstrap_ci is {t_base / t_ours:.1f}x faster (target >= 3x)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller inputs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-resamples", type=int, default=100)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    rows = bench_report(10_000_000 // scale, args.repeat)
    rows += bench_bootstrap(1_000_000 // scale, 10_000 // scale, args.resamples,
                            args.baseline_resamples)
    width = max(len(r[1]) for r in rows)
    print(f"{'data':<22} {'what':<{width}} {'seconds':>9}  ratio")
    for data, what, seconds, ratio in rows:
        print(f"{data:<22} {what:<{width}} {seconds:9.3f}  {ratio}")


if __name__ == "__main__":
    main()
