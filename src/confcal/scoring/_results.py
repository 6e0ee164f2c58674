"""Combining the scoring results of several runs or chunks into one."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..exceptions import ValidationError
from ._result import ExtractionResult


def concat_results(results: Sequence[ExtractionResult]) -> ExtractionResult:
    """One result whose entity table stacks the given ones, in order, and whose counts add.

    ``counts["documents"]`` becomes the number of scored (document, run) pairs, and
    ``unknown_field_names`` those of every result, each once. Categorical
    columns stay categorical when every table uses the same categories (one schema). The
    results must share one signature (same version, schema and conventions), which the
    combined result keeps.
    """
    if not results:
        raise ValidationError("results must hold at least one ExtractionResult; found 0")
    entities = pd.concat([r.entities for r in results], ignore_index=True)
    counts: dict[str, int] = {}
    for r in results:
        for key, value in r.counts.items():
            counts[key] = counts.get(key, 0) + value
    signatures = list(dict.fromkeys(r.signature for r in results))
    if len(signatures) > 1:
        raise ValidationError(
            "results must come from the same scoring settings to be combined; found "
            f"{len(signatures)} signatures: {signatures[0]!r} and {signatures[1]!r}")
    names = dict.fromkeys(name for r in results for name in r.unknown_field_names)
    return ExtractionResult(entities=entities, counts=counts, signature=signatures[0],
                            unknown_field_names=tuple(names))
