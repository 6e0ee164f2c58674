"""Benchmark: what refusing a repeated entity costs ``compare_runs``.

Usage (from the repository root)::

    python benchmarks/bench_entity_keys.py            # the demo table 10 times (~1M rows)
    python benchmarks/bench_entity_keys.py --copies 2 # a quick look

``compare_runs`` refuses an entity table that holds one entity (metadata values, doc_id,
field, truth_index, pred_index) twice. The check gives every row one integer code
(``confcal.report._runs._key_codes``: each column factorized, the codes combined) and looks
for a repeated code with a hash table. Timed side by side, best of ``--repeat`` runs, on the
demo corpus's entity table stacked ``--copies`` times with distinct doc ids:

* ``check``: the check alone;
* ``groupby``: the same codes from ``DataFrame.groupby(...).ngroup()``, the obvious way;
* ``compare_runs``: the whole table of runs, check included.

Reported: seconds and each one's ratio to ``compare_runs``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from confcal.datasets import load_demo
from confcal.report import _runs


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    demo = load_demo().score().entities
    table = pd.concat([demo.assign(doc_id=demo["doc_id"].astype(str) + f"-{k}")
                       for k in range(args.copies)], ignore_index=True)
    key = [c for c in table.columns if c not in _runs.ENTITY_COLUMNS]
    key += ["doc_id", "field", "truth_index", "pred_index"]
    timings = {
        "check": _best(lambda: _runs.check_unique_entities(table), args.repeat),
        "groupby": _best(lambda: table.groupby(key, sort=False, dropna=False,
                                               observed=True).ngroup(), args.repeat),
        "compare_runs": _best(lambda: _runs.compare_runs(table, budgets=(0.3,)), args.repeat),
    }
    print(f"{len(table):,} entity rows, {len(key)} key columns, best of {args.repeat}")
    print("| what | seconds | share of compare_runs |")
    print("|---|---:|---:|")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.3f} | {seconds / timings['compare_runs']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
