"""Render a demo invoice as a page image, for degradation and OCR (PIL, no downloads).

The page is drawn with a DejaVu face matplotlib ships (``mpl-data/fonts/ttf``: Sans, Serif
or Sans Mono), so nothing is fetched and the same package versions draw the same pixels.
:data:`PAGE_DESIGNS` names the layouts the degradation benchmark measures on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..._validation import is_real
from ...exceptions import ValidationError
from .._optional import require

__all__ = ["FONTS", "INVOICE_LABELS", "PAGE_DESIGNS", "TABLE_HEADER", "InvoiceLayout",
           "font_path", "invoice_lines", "render_invoice"]

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

FONTS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    "serif": ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf"),
    "mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"),
})
"""Font families a page can be drawn in: name -> (regular, bold) DejaVu files."""


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
    font : str
        A family of :data:`FONTS`: ``"sans"``, ``"serif"`` or ``"mono"``.
    ruled : bool
        Draw the table as a grid: a 2 px rule above the header, between rows and below
        the last row, one left of every column and one at the right edge.

    Examples
    --------
    >>> InvoiceLayout().font, InvoiceLayout.at_dpi(150).width
    ('sans', 1275)
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
    font: str = "sans"
    ruled: bool = False

    def __post_init__(self) -> None:
        if self.font not in FONTS:
            raise ValidationError(f"font must be one of {list(FONTS)}; found {self.font!r}")

    @classmethod
    def at_dpi(cls, dpi: float, **changes: Any) -> InvoiceLayout:
        """The default US Letter layout (200 dpi) scaled to another resolution.

        Every size (page, margin, text, line height, columns) is scaled by ``dpi / 200``
        and rounded to the pixel; ``changes`` override fields afterwards (``font``,
        ``ruled``, ``max_rows``).
        """
        if not (is_real(dpi) and 50 <= dpi <= 600):
            raise ValidationError(f"dpi must be a number in [50, 600]; found {dpi!r}")
        base, k = cls(), dpi / 200

        def px(v: int) -> int:
            return int(round(v * k))

        columns = tuple(px(c) for c in base.columns)
        return replace(cls(width=px(base.width), height=px(base.height),
                           margin=px(base.margin), font_size=px(base.font_size),
                           line_height=px(base.line_height),
                           columns=columns),  # type: ignore[arg-type]
                       **changes)


PAGE_DESIGNS: Mapping[str, InvoiceLayout] = MappingProxyType({
    # the demo invoices' layout: DejaVu Sans 30 px at 200 dpi, an open table
    "sans-200-open": InvoiceLayout(),
    "serif-200-ruled": InvoiceLayout(font="serif", ruled=True),
    "mono-150-open": InvoiceLayout.at_dpi(150, font="mono"),
    "sans-150-ruled": InvoiceLayout.at_dpi(150, ruled=True),
})
"""Page designs the degradation benchmark measures on: three fonts, open and ruled tables,
200 and 150 dpi (name -> :class:`InvoiceLayout`)."""


def font_path(bold: bool = False, font: str = "sans") -> Path:
    """A DejaVu face of :data:`FONTS` (regular or bold) as shipped inside matplotlib.

    Examples
    --------
    >>> font_path().name, font_path(bold=True, font="serif").name  # doctest: +SKIP
    ('DejaVuSans.ttf', 'DejaVuSerif-Bold.ttf')
    """
    if font not in FONTS:
        raise ValidationError(f"font must be one of {list(FONTS)}; found {font!r}")
    matplotlib = require("matplotlib", user="confcal.extras.augment.render_invoice",
                         extra="augment")
    regular, heavy = FONTS[font]
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / (heavy if bold else regular)


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
        Page size, margins, font, font size, table columns and rules (default: Letter at
        200 dpi, DejaVu Sans, an open table).
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
    body = ImageFont.truetype(str(font_path(font=layout.font)), layout.font_size)
    bold = ImageFont.truetype(str(font_path(bold=True, font=layout.font)), layout.font_size)
    big = ImageFont.truetype(str(font_path(bold=True, font=layout.font)),
                             int(layout.font_size * 1.6))
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
    table_top = y
    for x, name in zip(layout.columns, TABLE_HEADER, strict=True):
        text(x, y, name, bold)
    y += layout.line_height
    for row in lines["rows"]:
        for x, value in zip(layout.columns, row, strict=True):
            text(x, y, value, body)
        y += layout.line_height
    if layout.ruled:
        _rules(draw, layout, table_top, y)
    y += layout.line_height
    for label, value in lines["totals"]:
        text(layout.margin, y, label, bold)
        text(value_x, y, value, body)
        y += layout.line_height
    if y > layout.height - layout.margin / 2:
        raise ValidationError(f"invoice must fit the page height {layout.height}; found it "
                              f"reaching {y} px")
    return page


def _rules(draw: Any, layout: InvoiceLayout, top: int, bottom: int) -> None:
    """The grid of a ruled table: rules midway between the text lines, and column rules."""
    # PIL draws text from its top; the gap between two lines is the line height less
    # the text's height, and a rule sits in its middle
    gap = (layout.line_height - layout.font_size) // 2
    left = layout.columns[0] - layout.font_size // 2
    right = layout.width - layout.margin // 2
    for y in range(top - gap, bottom, layout.line_height):
        draw.line([(left, y), (right, y)], fill=0, width=2)
    for x in (*(c - layout.font_size // 2 for c in layout.columns), right):
        draw.line([(x, top - gap), (x, bottom - gap)], fill=0, width=2)

