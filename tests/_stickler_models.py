"""The FCC-equivalent stickler-eval 1.0.0 models, defined once.

Imported only by code that runs in stickler's own virtual environment: the test worker
(tests/_stickler_worker.py) and the speed benchmark (benchmarks/bench_scoring.py). They are
the stickler counterpart of ``confcal.scoring.presets.FCC_INVOICE`` as the ConfBench paper scored
it:
Levenshtein text at threshold 0.5, amounts with a 1% relative tolerance, dates month-first,
line items paired at stickler's default match threshold 0.7.
"""

from __future__ import annotations

from typing import Any


def fcc_models() -> tuple[Any, Any]:
    """``(Invoice, LineItem)`` StructuredModel classes."""
    from stickler import ComparableField, StructuredModel
    from stickler.comparators import DateComparator, LevenshteinComparator, NumericComparator

    def text() -> Any:
        return ComparableField(comparator=LevenshteinComparator(), threshold=0.5, default=None)

    def amount() -> Any:
        return ComparableField(comparator=NumericComparator(relative_tolerance=0.01),
                               threshold=1.0, default=None)

    def day() -> Any:
        return ComparableField(comparator=DateComparator(dayfirst=False), threshold=1.0,
                               default=None)

    class LineItem(StructuredModel):  # type: ignore[misc]
        StartDate: str | None = day()
        EndDate: str | None = day()
        Days: str | None = text()
        Description: str | None = text()
        Rate: str | None = amount()

    class Invoice(StructuredModel):  # type: ignore[misc]
        Agency: str | None = text()
        Advertiser: str | None = text()
        GrossTotal: str | None = amount()
        PaymentTerms: str | None = text()
        AgencyCommission: str | None = amount()
        NetAmountDue: str | None = amount()
        LineItems: list[LineItem] | None = ComparableField(default=None)

    return Invoice, LineItem
