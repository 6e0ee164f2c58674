"""The tests on calibration, measured: speed, size and power of calibration_test and
compare_systems.

Five studies, each printed as a table (docs/metrics.md quotes them):

1. speed: ``calibration_test`` with 1,000 redraws of 2,000 predictions (independent and
   grouped null), beside one ``confcal.ece`` call;
2. ``calibration_test``, independent null: the share of p < 0.05 on calibrated data
   (n = 2,000) and on a model overconfident by 0.05 (n = 2,000);
3. ``calibration_test`` with documents: 60 documents of 20 to 40 predictions, calibrated on
   average but with a document effect (logit-scale random intercept of sd 0.5 or 1, or a
   two-point mixture: a document is hard or easy), tested with independent redraws and with
   the grouped null;
4. ``compare_systems``, two equally good systems on the same 200 documents: the share of
   p < 0.05 for every metric;
5. ``compare_systems``, two systems 0.03 AUROC apart (population values printed) on 200
   documents: the power of the AUROC comparison.

    PYTHONPATH=src python benchmarks/bench_inference.py            # about 20 minutes
    PYTHONPATH=src python benchmarks/bench_inference.py --quick    # 100 replications
    PYTHONPATH=src python benchmarks/bench_inference.py --study 5  # one study
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.special import expit

from confcal import auroc, calibration_test, compare_systems, ece
from confcal.metrics._inference import _normal_quadrature, _offsets


def best_of(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def speed() -> None:
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.3, 1.0, size=2000)
    correct = rng.uniform(size=2000) < conf
    docs = np.repeat(np.arange(67), 30)[:2000]
    one = best_of(lambda: ece(correct, conf))
    independent = best_of(lambda: calibration_test(correct, conf, n_resamples=1000))
    grouped = best_of(lambda: calibration_test(correct, conf, groups=docs, n_resamples=1000))
    print("## 1. speed: 2,000 predictions, 1,000 redraws (best of 7)")
    print(f"ece once                        {one * 1e3:8.2f} ms")
    print(f"calibration_test, independent   {independent * 1e3:8.2f} ms  "
          f"({independent / one:.0f}x one ece)")
    print(f"calibration_test, 67 documents  {grouped * 1e3:8.2f} ms  "
          f"({grouped / one:.0f}x one ece)\n")


def share(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{p:.3f} (+-{2 * np.sqrt(p * (1 - p) / reps):.3f})"


def independent_null(reps: int, resamples: int) -> None:
    rng = np.random.default_rng(1)
    calibrated = overconfident = 0
    for r in range(reps):
        truth = rng.uniform(0.3, 0.9, size=2000)
        correct = rng.uniform(size=2000) < truth
        calibrated += calibration_test(correct, truth, n_resamples=resamples,
                                       seed=r).p_value < 0.05
        overconfident += calibration_test(correct, truth + 0.05, n_resamples=resamples,
                                          seed=r).p_value < 0.05
    print(f"## 2. independent null: n = 2,000, {reps} replications, {resamples} redraws")
    print(f"share of p < 0.05, calibrated              {share(calibrated, reps)}")
    print(f"share of p < 0.05, overconfident by 0.05   {share(overconfident, reps)}\n")


def documents(rng: np.random.Generator, kind: str, size: float, n_docs: int = 60
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibrated on average over documents, with a per-document difficulty."""
    sizes = rng.integers(20, 41, size=n_docs)
    docs = np.repeat(np.arange(n_docs), sizes)
    conf = rng.beta(5, 2, size=docs.size)
    if kind == "logit":  # p = expit(a(c) + s·U_d), a(c) keeping E[p] = c
        nodes, weights = _normal_quadrature()
        a = _offsets(conf, size, nodes, np.log(weights))
        p = expit(a + size * rng.standard_normal(n_docs)[docs])
    else:  # a document is hard or easy (probability 1/2 each): p = c -/+ s·c(1 - c)
        p = conf + size * rng.choice([-1.0, 1.0], size=n_docs)[docs] * conf * (1 - conf)
    return rng.uniform(size=docs.size) < p, conf, docs


def grouped_null(reps: int, resamples: int) -> None:
    print(f"## 3. 60 documents of 20-40 predictions, calibrated on average; {reps} "
          f"replications, {resamples} redraws")
    print("document effect          independent p<0.05   grouped p<0.05       mean sd "
          "estimate")
    for kind, size in (("logit", 0.0), ("logit", 0.5), ("logit", 1.0), ("mixture", 0.8)):
        rng = np.random.default_rng(5)
        independent = grouped = 0
        sds = []
        for r in range(reps):
            correct, conf, docs = documents(rng, kind, size)
            independent += calibration_test(correct, conf, n_resamples=resamples,
                                            seed=r).p_value < 0.05
            test = calibration_test(correct, conf, groups=docs, n_resamples=resamples, seed=r)
            grouped += test.p_value < 0.05
            sds.append(test.group_sd)
        label = f"{kind} {'sd' if kind == 'logit' else 'shift'} {size:g}"
        print(f"{label:<24} {share(independent, reps):<20} {share(grouped, reps):<20} "
              f"{np.mean(sds):.2f}")
    # power of the grouped null against overconfidence, with a document effect
    print("overconfident by 0.05 (grouped null):", end="")
    for size in (0.0, 0.5, 1.0):
        rng = np.random.default_rng(7)
        hits = 0
        for r in range(reps):
            correct, conf, docs = documents(rng, "logit", size)
            hits += calibration_test(correct, np.minimum(conf + 0.05, 1.0), groups=docs,
                                     n_resamples=resamples, seed=r).p_value < 0.05
        print(f"  sd {size:g}: {share(hits, reps)}", end="")
    print("\n")


def two_systems(rng: np.random.Generator, noise: tuple[float, float], n_docs: int = 200
                ) -> dict[str, pd.DataFrame]:
    """Two systems extract the same entities of the same documents.

    An entity's log-odds of being right: 1 + U_d (document, sd 1) + Z_e (the entity, sd
    0.5, shared by both systems) + the system's own luck (sd 0.5); each system's confidence
    is expit(its log-odds + noise·N(0, 1)): more noise, a worse ranking. Entity tables: a
    right entity is TP (similarity 1), a wrong one FD (similarity uniform in [0, 0.8]).
    """
    sizes = rng.integers(25, 36, size=n_docs)
    docs = np.repeat(np.arange(n_docs), sizes)
    n = docs.size
    shared = 1.0 + rng.standard_normal(n_docs)[docs] + rng.normal(0, 0.5, n)
    tables = {}
    for name, level in zip(("a", "b"), noise, strict=True):
        logit = shared + rng.normal(0, 0.5, n)
        correct = rng.uniform(size=n) < expit(logit)
        tables[name] = pd.DataFrame({
            "doc_id": docs, "field": [f"f{i}" for i in range(n)],
            "outcome": np.where(correct, "TP", "FD"), "correct": correct,
            "confidence": expit(logit + level * rng.standard_normal(n)),
            "similarity": np.where(correct, 1.0, rng.uniform(0, 0.8, n)), "weight": 1.0})
    return tables


def population_auroc(noise: float, n: int = 2_000_000) -> float:
    rng = np.random.default_rng(123)
    logit = 1.0 + rng.standard_normal(n) + rng.normal(0, 0.5, n) + rng.normal(0, 0.5, n)
    correct = rng.uniform(size=n) < expit(logit)
    return auroc(correct, expit(logit + noise * rng.standard_normal(n)))


def equal_systems(reps: int, resamples: int) -> None:
    hits: dict[str, int] = {}
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        result = compare_systems(two_systems(rng, (1.0, 1.0)), baseline="a",
                                 n_resamples=resamples, seed=r)
        for _, row in result[result.system == "b"].iterrows():
            hits[row.metric] = hits.get(row.metric, 0) + int(row.p_value < 0.05)
    print(f"## 4. two equally good systems, 200 documents; {reps} replications, {resamples} "
          "resamples")
    for metric, count in hits.items():
        print(f"{metric:<14} share of p < 0.05  {share(count, reps)}")
    print()


def auroc_power(reps: int, resamples: int, noise_b: float = 1.36) -> None:
    a, b = population_auroc(1.0), population_auroc(noise_b)
    hits = 0
    diffs = []
    for r in range(reps):
        rng = np.random.default_rng(5000 + r)
        result = compare_systems(two_systems(rng, (1.0, noise_b)), baseline="b",
                                 metrics=["auroc"], n_resamples=resamples, seed=r)
        row = result[result.system == "a"].iloc[0]
        hits += int(row.p_value < 0.05)
        diffs.append(row.difference)
    print(f"## 5. two systems {a - b:.3f} AUROC apart (population {a:.3f} and {b:.3f}), 200 "
          f"documents; {reps} replications, {resamples} resamples")
    print(f"power (p < 0.05)   {share(hits, reps)}   mean estimated difference "
          f"{np.mean(diffs):.3f}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 replications")
    parser.add_argument("--study", type=int, action="append", choices=range(1, 6),
                        help="run only this study (repeatable; default all five)")
    args = parser.parse_args()
    reps = 100 if args.quick else 400
    studies = {1: speed, 2: lambda: independent_null(reps, 1000),
               3: lambda: grouped_null(reps, 999), 4: lambda: equal_systems(reps, 199),
               5: lambda: auroc_power(reps, 999)}
    started = time.perf_counter()
    for number in args.study or sorted(studies):
        studies[number]()
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
