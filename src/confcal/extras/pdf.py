"""A PDF's text for a parse-then-read system: page markers and document metadata.

DocBench's parse-then-read baseline gives a model the text PyMuPDF extracts from the PDF.
Text alone cannot answer DocBench's meta-data questions ("How many pages does the report
have?", "Who wrote it?"), so :func:`pdf_text` keeps, beside the text of every page, what the
PDF itself says: its page count, its title and author (from the document information
dictionary, where present), and a word count. :meth:`PdfText.render` writes it for a
prompt::

    Document information:
    - pages: 12
    - words: 3456
    - title: Annual Report 2023
    - author: Jane Smith

    [Page 1 of 12]
    ...

PyMuPDF (``pip install -e '.[pdf]'``; AGPL-licensed) is imported when a PDF is read.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._validation import check_positive_int, is_real
from ..exceptions import ValidationError
from ._optional import require

__all__ = ["MAX_CHARS", "MAX_PAGES", "MAX_SECONDS", "PdfText", "pdf_text"]

_EXTRA = "pdf"
_SPACES = re.compile(r"[ \t\u00a0]{2,}")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class PdfText:
    """The text of a PDF, page by page, with what the PDF says about itself.

    Attributes
    ----------
    source : str
        The file read.
    pages : tuple of str
        The text of each page, in page order (``""`` for a page without a text layer).
    images : tuple of int
        How many images each page shows (their content is not in the text).
    title, author : str or None
        From the PDF's document information dictionary; None where it has none.

    Examples
    --------
    >>> doc = PdfText("a.pdf", ("Net income was $5 million.", ""), (0, 1), "Report", None)
    >>> doc.page_count, doc.word_count, doc.pages_without_text
    (2, 5, (2,))
    >>> print(doc.render())
    Document information:
    - pages: 2
    - words: 5
    - title: Report
    - pages without text: 2
    <BLANKLINE>
    [Page 1 of 2]
    Net income was $5 million.
    <BLANKLINE>
    [Page 2 of 2]
    (no text on this page)
    [this page shows 1 image, not given here]
    """

    source: str
    pages: tuple[str, ...]
    images: tuple[int, ...]
    title: str | None = None
    author: str | None = None

    @property
    def page_count(self) -> int:
        """The number of pages."""
        return len(self.pages)

    @property
    def word_count(self) -> int:
        """Words of the whole text: runs of characters between whitespace, markers excluded."""
        return sum(len(page.split()) for page in self.pages)

    @property
    def pages_without_text(self) -> tuple[int, ...]:
        """1-based numbers of the pages with no text (scanned pages, figure pages)."""
        return tuple(i + 1 for i, page in enumerate(self.pages) if not page.strip())

    def header(self) -> str:
        """The document information block: pages, words, title and author where present."""
        lines = ["Document information:", f"- pages: {self.page_count}",
                 f"- words: {self.word_count}"]
        if self.title:
            lines.append(f"- title: {self.title}")
        if self.author:
            lines.append(f"- author: {self.author}")
        empty = self.pages_without_text
        if empty:
            lines.append(f"- pages without text: {', '.join(map(str, empty))}")
        return "\n".join(lines)

    def page(self, number: int, text: str | None = None) -> str:
        """Page ``number`` (1-based) under its marker ``[Page n of N]``.

        ``text`` replaces the page's text (a page cut to fit a context); the marker and the
        image note stay.
        """
        if isinstance(number, bool) or not isinstance(number, int) \
                or not 1 <= number <= self.page_count:
            raise ValidationError(f"number must be a page number from 1 to {self.page_count}; "
                                  f"found {number!r}")
        body = self.pages[number - 1] if text is None else text
        lines = [f"[Page {number} of {self.page_count}]",
                 body if body.strip() else "(no text on this page)"]
        shown = self.images[number - 1]
        if shown:
            lines.append(f"[this page shows {shown} image{'s' if shown > 1 else ''}, "
                         "not given here]")
        return "\n".join(lines)

    def render(self) -> str:
        """The header, then every page under its marker, separated by blank lines."""
        return "\n\n".join([self.header(), *(self.page(n) for n in
                                             range(1, self.page_count + 1))])


def _clean(text: str) -> str:
    # Layout spacing (sort=True keeps table columns apart with runs of spaces) is kept as
    # a two-space gap: still a column break to a reader, at a fraction of the tokens.
    lines = [_SPACES.sub("  ", line).strip() for line in text.splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def _info(metadata: Any, key: str) -> str | None:
    value = (metadata or {}).get(key)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


MAX_PAGES = 5_000
"""The most pages :func:`pdf_text` reads by default (DocBench's longest documents have a
few hundred); the count is the PDF's own, checked before any page is read."""

MAX_SECONDS = 60.0
"""The longest :func:`pdf_text` reads by default, checked after each page: a small PDF can
hold pages that are slow to lay out (a 266 KB file took 75 s)."""

MAX_CHARS = 20_000_000
"""The most characters of text :func:`pdf_text` keeps by default (some 5,000 dense pages):
a PDF's content streams compress, so a small file can hold far more text than any model's
context."""


def _read_pages(pymupdf: Any, doc: Any, path: Path, *, max_seconds: float,
                max_chars: int) -> tuple[list[str], list[int]]:
    """Every page's text and image count, within the time and character bounds."""
    flags = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
    pages: list[str] = []
    images: list[int] = []
    started, chars = time.monotonic(), 0
    for number in range(doc.page_count):
        try:
            page = doc.load_page(number)
            pages.append(_clean(page.get_text("text", sort=True, flags=flags)))
            images.append(len(page.get_image_info()))
        except (RuntimeError, ValueError) as exc:
            raise ValidationError(f"{path}, page {number + 1}: must be a readable page; "
                                  f"found one PyMuPDF cannot read ({exc})",
                                  source=path) from None
        chars += len(pages[-1])
        if chars > max_chars:
            raise ValidationError(
                f"{path}: must hold at most {max_chars:,} characters of text ({{option}} "
                f"raises it); found more by page {number + 1:,} of {doc.page_count:,}",
                source=path, option=("max_chars", max_chars))
        elapsed = time.monotonic() - started
        if elapsed > max_seconds and number + 1 < doc.page_count:
            raise ValidationError(
                f"{path}: must be read within {max_seconds:g} s ({{option}} raises it); "
                f"found {elapsed:.1f} s spent by page {number + 1:,} of {doc.page_count:,}",
                source=path, option=("max_seconds", max_seconds))
    return pages, images


def pdf_text(path: str | os.PathLike[str], *, max_pages: int = MAX_PAGES,
             max_seconds: float = MAX_SECONDS, max_chars: int = MAX_CHARS) -> PdfText:
    """Read a PDF's text page by page, with its page count, title and author.

    Parameters
    ----------
    path : str or path-like
        A PDF file.
    max_pages : int, default MAX_PAGES (5,000)
        The most pages to read; a PDF with more is refused before any page is read.
    max_seconds : float, default MAX_SECONDS (60)
        The longest to read, checked after each page.
    max_chars : int, default MAX_CHARS (20,000,000)
        The most characters of text to keep, counted page by page.

    Returns
    -------
    PdfText
        :meth:`PdfText.render` gives the text with page markers and the metadata header.

    Raises
    ------
    ValidationError
        Naming the file: it does not exist, is empty or not a PDF PyMuPDF can open, needs
        a password, a page cannot be read, or it is beyond one of the bounds (naming the
        bound, the page reached and the argument that raises it); never a text cut short.
    ImportError
        PyMuPDF is not installed (``pip install -e '.[pdf]'``).

    Notes
    -----
    Each page's text is PyMuPDF's plain text with ``sort=True``: blocks in reading order
    from the top left, and words of one line (a table row) kept on one line. Ligatures are
    expanded ("ﬀ" becomes "ff"), runs of spaces become two spaces, spaces at either end of
    a line and runs of blank lines are dropped. Images are counted per page, not read: a
    scanned page has no text (it is listed as such in the header), which OCR would have to
    supply.

    Examples
    --------
    >>> import tempfile
    >>> import pymupdf  # the 'pdf' extra
    >>> path = Path(tempfile.mkdtemp()) / "report.pdf"
    >>> doc = pymupdf.open()
    >>> for n in (1, 2):
    ...     _ = doc.new_page().insert_text((72, 72), f"Text of page {n}.")
    >>> doc.set_metadata({"title": "Annual Report", "author": "Jane Smith"})
    >>> doc.save(path)
    >>> text = pdf_text(path)
    >>> text.page_count, text.word_count, text.title, text.author
    (2, 8, 'Annual Report', 'Jane Smith')
    >>> print(text.page(2))
    [Page 2 of 2]
    Text of page 2.
    """
    max_pages = check_positive_int(max_pages, "max_pages")
    max_chars = check_positive_int(max_chars, "max_chars")
    if not (is_real(max_seconds) and float(max_seconds) > 0):
        raise ValidationError(f"max_seconds must be a number > 0; found {max_seconds!r}")
    pymupdf = require("pymupdf", user="confcal.extras.pdf", extra=_EXTRA)
    path = Path(path)
    if not path.is_file():
        raise ValidationError(f"path must be an existing PDF file; found {str(path)!r}",
                              source=path)
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (RuntimeError, ValueError) as exc:  # FileDataError, EmptyFileError
        raise ValidationError(f"{path}: must be a readable PDF; found a file PyMuPDF cannot "
                              f"open ({exc})", source=path) from None
    with doc:
        if doc.needs_pass:
            raise ValidationError(f"{path}: must be a PDF that opens without a password; "
                                  "found an encrypted one (decrypt it first)", source=path)
        if doc.page_count > max_pages:
            raise ValidationError(f"{path}: must have at most {max_pages:,} pages ({{option}} "
                                  f"raises it); found {doc.page_count:,}", source=path,
                                  option=("max_pages", max_pages))
        pages, images = _read_pages(pymupdf, doc, path, max_seconds=float(max_seconds),
                                    max_chars=max_chars)
        metadata = doc.metadata
    return PdfText(str(path), tuple(pages), tuple(images), _info(metadata, "title"),
                   _info(metadata, "author"))
