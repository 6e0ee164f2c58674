"""Benchmark: a user comparator through the batched protocol against the same one pair by pair.

Usage (from the repository root)::

    python benchmarks/bench_comparators.py              # 2,000 invoices x 20 line items
    python benchmarks/bench_comparators.py --docs 500   # quicker

The comparator is the Jaro-Winkler example of docs/scoring.md (rapidfuzz, casefolded
values). ``JaroWinklerBatched`` implements
:class:`confcal.scoring.comparators.BatchedComparator` (``pairwise`` with ``process.cdist``,
``elementwise`` with ``process.cpdist``); ``JaroWinklerPlain`` is the same ``__call__``
without them, so the scorer calls it once per pair; ``JaroWinklerElementwise`` has
``elementwise`` only (line items then come from one call on the gathered pairs of all
documents instead of one ``cdist`` per document). Each replaces the five ``Text`` fields
of ``FCC_INVOICE`` (Agency, Advertiser, PaymentTerms, LineItems.Days,
LineItems.Description); numbers and dates keep the built-in comparators. The built-in
``Text`` schema is timed alongside for reference.

Workload: the synthetic invoices of ``bench_scoring.py`` (typos, drifted and reformatted
amounts, rewritten dates, dropped, invented and shuffled items, a confidence on every
leaf), scored with ``score_documents``; plus ``match_items`` on one invoice with 300 truth
line items. Times are CPU seconds (``time.process_time``), fastest of ``--repeat`` runs,
every string cache of the built-ins cleared before each run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np


@dataclass(frozen=True)
class JaroWinklerPlain:
    """Jaro-Winkler similarity of the casefolded values: a plain callable."""

    default_threshold: ClassVar[float] = 0.9

    def __call__(self, truth: Any, prediction: Any) -> float:
        from rapidfuzz.distance import JaroWinkler

        return float(JaroWinkler.normalized_similarity(str(truth).casefold(),
                                                       str(prediction).casefold()))


@dataclass(frozen=True)
class JaroWinklerBatched(JaroWinklerPlain):
    """The same comparator with the batched protocol (docs/scoring.md)."""

    def pairwise(self, truths: list[Any], predictions: list[Any]) -> np.ndarray:
        from rapidfuzz import process
        from rapidfuzz.distance import JaroWinkler

        return process.cdist([str(t).casefold() for t in truths],
                             [str(p).casefold() for p in predictions],
                             scorer=JaroWinkler.normalized_similarity, dtype=np.float64)

    def elementwise(self, truths: list[Any], predictions: list[Any]) -> np.ndarray:
        from rapidfuzz import process
        from rapidfuzz.distance import JaroWinkler

        return process.cpdist([str(t).casefold() for t in truths],
                              [str(p).casefold() for p in predictions],
                              scorer=JaroWinkler.normalized_similarity, dtype=np.float64)


@dataclass(frozen=True)
class JaroWinklerElementwise(JaroWinklerPlain):
    """Only ``elementwise``: line items then come from one call on the gathered pairs."""

    elementwise = JaroWinklerBatched.elementwise


def schema_with(comparator: Any) -> Any:
    """FCC_INVOICE with every Text field compared by ``comparator`` (threshold 0.9)."""
    from confcal.scoring.comparators import Text
    from confcal.scoring.presets import FCC_INVOICE
    from confcal.scoring.schema import Field, Items, Schema

    def swap(field: Any) -> Any:
        return Field(comparator, threshold=0.9, weight=field.weight) if isinstance(
            field.comparator, Text) else field

    fields: dict[str, Any] = {}
    for name, spec in FCC_INVOICE.fields.items():
        if isinstance(spec, Items):
            fields[name] = Items({sub: swap(f) for sub, f in spec.fields.items()},
                                 match_threshold=spec.match_threshold, weight=spec.weight)
        else:
            fields[name] = swap(spec)
    return Schema(fields)


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    from confcal.scoring import comparators

    best, out = float("inf"), None
    for _ in range(repeat):
        comparators.clear_caches()
        t0 = time.process_time()
        out = run()
        best = min(best, time.process_time() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000, help="invoices scored")
    parser.add_argument("--items", type=int, default=20, help="line items per invoice")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="runs per row (fastest kept)")
    args = parser.parse_args()

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent / "src"))
    sys.path.insert(0, str(here))
    from bench_scoring import make_corpus

    from confcal.scoring import score_documents
    from confcal.scoring.matching import match_items
    from confcal.scoring.presets import FCC_INVOICE

    truths, preds = make_corpus(args.docs, args.items, args.seed)
    big_truths, big_preds = make_corpus(1, 300, args.seed + 1)
    big_truth, big_pred = next(iter(big_truths.values())), next(iter(big_preds.values()))

    rows = []
    results = {}
    for label, schema in (("built-in Text (reference)", FCC_INVOICE),
                          ("JaroWinklerBatched (protocol)", schema_with(JaroWinklerBatched())),
                          ("JaroWinklerElementwise (elementwise only)",
                           schema_with(JaroWinklerElementwise())),
                          ("JaroWinklerPlain (pair by pair)", schema_with(JaroWinklerPlain()))):
        seconds, result = best_of(
            args.repeat, lambda schema=schema: score_documents(schema, truths, preds))
        match_seconds, _ = best_of(args.repeat, lambda items=schema.fields["LineItems"]: (
            match_items(big_truth["LineItems"], big_pred["LineItems"], items)))
        results[label] = result
        rows.append((label, seconds, args.docs / seconds, match_seconds))

    batched = results["JaroWinklerBatched (protocol)"].entities
    plain = results["JaroWinklerPlain (pair by pair)"].entities
    n_big = len(big_pred["LineItems"])
    plain_seconds, plain_match = rows[-1][1], rows[-1][3]
    print(f"score_documents: {args.docs} invoices x {args.items} line items; match_items: "
          f"300 truth x {n_big} predicted line items; CPU s, best of {args.repeat}\n")
    print("| comparator for the 5 text fields | score_documents s | documents/s | vs pair by pair "
          "| match_items s | vs pair by pair |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, seconds, rate, match_seconds in rows:
        print(f"| {label} | {seconds:.3f} | {rate:,.0f} | {plain_seconds / seconds:.1f}x "
              f"| {match_seconds:.3f} | {plain_match / match_seconds:.1f}x |")
    diff = np.abs(batched["similarity"].to_numpy() - plain["similarity"].to_numpy())
    same_outcomes = (batched["outcome"] == plain["outcome"]).all()
    print(f"\nbatched vs pair by pair: {len(batched):,} entity rows, largest similarity "
          f"difference {diff.max():.1e}, {int((diff > 0).sum())} rows differ at all, "
          f"outcomes {'identical' if same_outcomes else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
