"""Render a demo invoice as a page image, for degradation and OCR (PIL, no downloads).

The page is drawn with DejaVu Sans, the font matplotlib ships (``mpl-data/fonts/ttf``), so
nothing is fetched and the same package versions draw the same pixels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ...exceptions import ValidationError
from .._optional import require

__all__ = ["INVOICE_LABELS", "TABLE_HEADER", "InvoiceLayout", "font_path", "invoice_lines",
           "render_invoice"]

INVOICE_LABELS: Mapping[str, str] = {
    "Agency": "Agency:",
    "Advertiser": "Advertiser:",
    "PaymentTerms": "Payment terms:",
    "GrossTotal": "Gross total:",
    "AgencyCommission": "Agency commission:",
    "NetAmountDue": "Net amount due:",
}
"""The printed label of each header and total field (the template extractor reads them)."""

TABLE_HEADER: tuple[str, ...] = ("Start", "End", "Days", "Program", "Rate")


@dataclass(frozen=True)
class InvoiceLayout:
    """Where things go on the page, in pixels (defaults: US Letter at 200 dpi).

    Attributes
    ----------
    width, height : int
        Page size.
    margin : int
        Left margin; the title starts at ``margin`` from the top too.
    font_size : int
        Body text size in pixels (the title is 1.6 times it).
    line_height : int
        Distance between baselines of consecutive lines.
    columns : tuple of int
        Left edges of the five table columns (start, end, days, program, rate).
    max_rows : int
        At most this many line items fit; more is an error.
    """

    # 30 px text (11 pt at 200 dpi): at 24 px on 150 dpi, Tesseract 5.3 drops the leading
    # "1" of "10/07/2024" on a third of the rows of some clean pages
    width: int = 1700
    height: int = 2200
    margin: int = 100
    font_size: int = 30
    line_height: int = 48
    columns: tuple[int, int, int, int, int] = (100, 320, 530, 720, 1380)
    max_rows: int = 30


def font_path(bold: bool = False) -> Path:
    """DejaVu Sans (or its bold face) as shipped inside matplotlib.

    Examples
    --------
    >>> font_path().name  # doctest: +SKIP
    'DejaVuSans.ttf'
    """
    matplotlib = require("matplotlib", user="confcal.extras.augment.render_invoice",
                         extra="augment")
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name


def _us_date(text: str) -> str:
    return date.fromisoformat(text).strftime("%m/%d/%Y")


def _money(text: str) -> str:
    return f"${float(text):,.2f}"


def invoice_lines(invoice: Mapping[str, Any]) -> dict[str, Any]:
    """The text printed for each field of an invoice: header fields, rows and totals.

    Parameters
    ----------
    invoice : mapping
        A ground-truth invoice as :func:`confcal.datasets._generate.make_invoice` makes it
        (FCC_INVOICE fields; amounts as decimal strings, dates ISO).

    Returns
    -------
    dict
        ``{"header": [(label, text)], "rows": [(start, end, days, program, rate)],
        "totals": [(label, text)]}``: dates printed MM/DD/YYYY, amounts as ``$1,234.50``,
        a missing payment term left out (its line is not printed).

    Examples
    --------
    >>> lines = invoice_lines({"Agency": "Blue Harbor Media", "Advertiser": "Yes on 12",
    ...     "PaymentTerms": None, "GrossTotal": "1250.00", "AgencyCommission": "187.50",
    ...     "NetAmountDue": "1062.50", "LineItems": [{"StartDate": "2024-10-07",
    ...     "EndDate": "2024-10-09", "Days": "M-W", "Description": "NEWS 6P",
    ...     "Rate": "1250.00"}]})
    >>> lines["header"]
    [('Agency:', 'Blue Harbor Media'), ('Advertiser:', 'Yes on 12')]
    >>> lines["rows"], lines["totals"][0]
    ([('10/07/2024', '10/09/2024', 'M-W', 'NEWS 6P', '$1,250.00')], ('Gross total:', '$1,250.00'))
    """
    header = [(INVOICE_LABELS[f], str(invoice[f])) for f in ("Agency", "Advertiser",
                                                            "PaymentTerms")
              if invoice.get(f) is not None]
    rows = [(_us_date(i["StartDate"]), _us_date(i["EndDate"]), str(i["Days"]),
             str(i["Description"]), _money(i["Rate"])) for i in invoice.get("LineItems", [])]
    totals = [(INVOICE_LABELS[f], _money(invoice[f]))
              for f in ("GrossTotal", "AgencyCommission", "NetAmountDue")]
    return {"header": header, "rows": rows, "totals": totals}


def render_invoice(invoice: Mapping[str, Any], *, layout: InvoiceLayout | None = None,
                   title: str = "INVOICE") -> Any:
    """Draw an invoice as a white page with black text: a PIL image in mode ``L``.

    Parameters
    ----------
    invoice : mapping
        A ground-truth invoice (see :func:`invoice_lines`).
    layout : InvoiceLayout, optional
        Page size, margins, font size and table columns (default: Letter at 150 dpi).
    title : str, default "INVOICE"
        The bold heading.

    Returns
    -------
    PIL.Image.Image
        Mode ``L``, ``layout.width`` x ``layout.height``.

    Raises
    ------
    ValidationError
        More line items than ``layout.max_rows``, or text wider than the page.

    Examples
    --------
    >>> from confcal.datasets._generate import make_invoice
    >>> page = render_invoice(make_invoice(3))  # doctest: +SKIP
    >>> page.size, page.mode                     # doctest: +SKIP
    ((1700, 2200), 'L')
    """
    from PIL import Image, ImageDraw, ImageFont

    layout = layout or InvoiceLayout()
    lines = invoice_lines(invoice)
    if len(lines["rows"]) > layout.max_rows:
        raise ValidationError(f"invoice must have at most {layout.max_rows} line items to fit "
                              f"the page; found {len(lines['rows'])}")
    body = ImageFont.truetype(str(font_path()), layout.font_size)
    bold = ImageFont.truetype(str(font_path(bold=True)), layout.font_size)
    big = ImageFont.truetype(str(font_path(bold=True)), int(layout.font_size * 1.6))
    page = Image.new("L", (layout.width, layout.height), 255)
    draw = ImageDraw.Draw(page)

    def text(x: int, y: int, value: str, font: Any) -> None:
        right = x + draw.textlength(value, font=font)
        if right > layout.width - layout.margin / 2:
            raise ValidationError(f"invoice text must fit the page width {layout.width}; "
                                  f"found {value!r} reaching {right:.0f} px")
        draw.text((x, y), value, fill=0, font=font)

    y = layout.margin
    text(layout.margin, y, title, big)
    y += 2 * layout.line_height
    label_width = max(draw.textlength(label, font=bold) for label in INVOICE_LABELS.values())
    value_x = int(layout.margin + label_width + layout.font_size)
    for label, value in lines["header"]:
        text(layout.margin, y, label, bold)
        text(value_x, y, value, body)
        y += layout.line_height
    y += layout.line_height
    for x, name in zip(layout.columns, TABLE_HEADER, strict=True):
        text(x, y, name, bold)
    y += layout.line_height
    for row in lines["rows"]:
        for x, value in zip(layout.columns, row, strict=True):
            text(x, y, value, body)
        y += layout.line_height
    y += layout.line_height
    for label, value in lines["totals"]:
        text(layout.margin, y, label, bold)
        text(value_x, y, value, body)
        y += layout.line_height
    if y > layout.height - layout.margin / 2:
        raise ValidationError(f"invoice must fit the page height {layout.height}; found it "
                              f"reaching {y} px")
    return page

