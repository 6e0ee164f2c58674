"""Ready-made schemas.

``FCC_INVOICE`` is the FCC political-advertising invoice schema of the ConfBench paper,
with the paper's comparator types: text fields by normalized Levenshtein similarity
(:class:`~confcal.comparators.Text`, threshold 0.5), amounts with a 1% relative tolerance
(:class:`~confcal.comparators.Number`), dates by calendar equivalence
(:class:`~confcal.comparators.Date`, month-first for ambiguous US dates, as on these
invoices). Line items are paired with ``match_threshold=0.0`` (DESIGN.md default) and
every field weighs 1.0 (the paper's equal weights).

``Days`` is the air-day pattern printed on broadcast invoices (``"M-F"``, ``"MTWTF--"``),
so it is text; if your ground truth holds day counts instead, build a variant::

    from confcal.schema import Field, Items, Schema
    from confcal.comparators import Number

    items = FCC_INVOICE.fields["LineItems"]
    schema = Schema({**FCC_INVOICE.fields,
                     "LineItems": Items({**items.fields, "Days": Field(Number())})})

Examples
--------
>>> FCC_INVOICE.entity_fields  # doctest: +NORMALIZE_WHITESPACE
('Agency', 'Advertiser', 'GrossTotal', 'PaymentTerms', 'AgencyCommission', 'NetAmountDue',
 'LineItems.StartDate', 'LineItems.EndDate', 'LineItems.Days', 'LineItems.Description',
 'LineItems.Rate')
>>> FCC_INVOICE.fields["GrossTotal"]
Field(comparator=Number(rel_tol=0.01, abs_tol=0.0, decimal='.'), threshold=1.0, weight=1.0)
"""

from __future__ import annotations

from .comparators import Date, Number, Text
from .schema import Field, Items, Schema

__all__ = ["FCC_INVOICE"]

_TEXT = Field(Text())
_AMOUNT = Field(Number(rel_tol=0.01))
_DATE = Field(Date(dayfirst=False))

FCC_INVOICE: Schema = Schema(
    {
        "Agency": _TEXT,
        "Advertiser": _TEXT,
        "GrossTotal": _AMOUNT,
        "PaymentTerms": _TEXT,
        "AgencyCommission": _AMOUNT,
        "NetAmountDue": _AMOUNT,
        "LineItems": Items(
            {
                "StartDate": _DATE,
                "EndDate": _DATE,
                "Days": _TEXT,
                "Description": _TEXT,
                "Rate": _AMOUNT,
            },
            match_threshold=0.0,
        ),
    }
)
"""The ConfBench FCC invoice schema (module docstring)."""
