"""Ready-made schemas.

``FCC_INVOICE`` is the FCC political-advertising invoice schema of the ConfBench paper,
with the paper's comparator types: text fields by normalized Levenshtein similarity
(:class:`~confcal.scoring.comparators.Text`), amounts with a 1% relative tolerance
(:class:`~confcal.scoring.comparators.Number`), dates by calendar equivalence
(:class:`~confcal.scoring.comparators.Date`, month-first for ambiguous US dates, as on these
invoices). Line items are paired with ``match_threshold=0.0`` and every field weighs 1.0
(the paper's equal weights).

Text is accepted near-exactly, at similarity >= 0.9
(:data:`~confcal.scoring.comparators.NEAR_EXACT_THRESHOLD`): the paper's F1 "applies a binary
per-field acceptance threshold and counts only exact or near-exact matches" (section 4.2,
appendix A.8), and that is what ``correct`` means in every calibration metric. "Net 30" read
as "Net 60" (0.83) or "Vote Yes on 3" as "Vote No on 3" (0.77) is an error, while case,
spacing and Unicode-compatibility variants ("ACME Media" vs "acme  media") compare equal.
:func:`fcc_invoice` builds the same schema with other thresholds, such as the lenient ANLS
cut-off 0.5 (:data:`~confcal.scoring.comparators.ANLS_THRESHOLD`).

``Days`` is the air-day pattern printed on broadcast invoices (``"M-F"``, ``"MTWTF--"``),
so it is text; if your ground truth holds day counts instead, build a variant::

    from confcal.scoring.schema import Field, Items, Schema
    from confcal.scoring.comparators import Number

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
>>> FCC_INVOICE.fields["PaymentTerms"].threshold
0.9
>>> fcc_invoice(text_threshold=0.5).fields["PaymentTerms"].threshold
0.5
"""

from __future__ import annotations

from .comparators import NEAR_EXACT_THRESHOLD, Date, Number, Text
from .schema import Field, Items, Schema

__all__ = ["FCC_INVOICE", "fcc_invoice"]


def fcc_invoice(
    *, text_threshold: float = NEAR_EXACT_THRESHOLD, match_threshold: float = 0.0
) -> Schema:
    """The ConfBench FCC invoice schema with the given acceptance settings.

    Parameters
    ----------
    text_threshold : float in [0, 1], default 0.9
        Acceptance threshold of the text fields (Agency, Advertiser, PaymentTerms, and the
        line items' Days and Description). 0.9 is the paper's near-exact acceptance;
        0.5 (:data:`~confcal.scoring.comparators.ANLS_THRESHOLD`) the lenient ANLS cut-off.
    match_threshold : float in [0, 1], default 0.0
        Minimum line-item similarity for a pair (:class:`~confcal.scoring.schema.Items`).

    Returns
    -------
    Schema
        ``fcc_invoice()`` equals :data:`FCC_INVOICE`.

    See Also
    --------
    Schema : build your own.
    """
    text = Field(Text(), threshold=text_threshold)
    amount = Field(Number(rel_tol=0.01))
    day = Field(Date(dayfirst=False))
    return Schema(
        name="fcc-invoice",
        fields={
            "Agency": text,
            "Advertiser": text,
            "GrossTotal": amount,
            "PaymentTerms": text,
            "AgencyCommission": amount,
            "NetAmountDue": amount,
            "LineItems": Items(
                {
                    "StartDate": day,
                    "EndDate": day,
                    "Days": text,
                    "Description": text,
                    "Rate": amount,
                },
                match_threshold=match_threshold,
            ),
        },
    )


FCC_INVOICE: Schema = fcc_invoice()
"""The ConfBench FCC invoice schema (module docstring)."""
