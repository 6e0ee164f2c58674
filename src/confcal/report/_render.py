"""Showing the runs table: text, Markdown, HTML, figures, and the report folder.

:func:`write_report` writes a folder a person can open: ``report.html`` (one file, images
embedded as base64 PNG, no script, no external resource), ``report.md``, ``metrics.csv`` and
the PNG figures. Every value that comes from a document or a metadata column is escaped:
extracted text is untrusted input. The folder is written under a temporary name and renamed
into place, so a failure never leaves a half-written report. The numbers come from
:mod:`confcal.report._runs`; this module renders them and never the reverse.
"""

from __future__ import annotations

import base64
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import check_destination as _check_folder
from .._files import staged_folder
from .._markdown import escape_cell, escape_html, escape_text, markdown_table, write_csv
from .._signature import table_signature
from .._validation import (
    check_budgets,
    check_n_bins,
    check_option,
    check_positive_int,
    is_missing,
)
from ..exceptions import UndefinedMetricWarning, ValidationError
from ..metrics._metrics import DEFAULT_BUDGETS
from ..scoring.io import check_entities
from ._compare import DIFFERENCE_SUFFIXES, ON_CHOICES, baseline_differences, check_baseline
from ._runs import MAX_WORK, MIN_INTERVAL_DOCUMENTS, check_by, check_work, compare_runs

__all__ = ["WrittenReport", "format_differences", "format_runs", "to_html", "to_markdown",
           "write_report"]

_MAX_PANELS = 24  # reliability panels in one figure; more groups are named, not drawn
_MAX_CURVES = 10  # ECARB curves per panel (tab10 colours stay distinguishable)
_DRAWN_BINS = 10  # uniform bins of the reliability panels (the usual diagram)


# ------------------------------------------------------------------------- formatting
_HEADERS = {"n_documents": "docs", "n_entities": "entities",
            "n_without_confidence": "no confidence", "woa": "WOA", "f1": "F1",
            "auroc": "AUROC", "ece": "ECE", "brier": "Brier"}


def _number(value: Any, digits: int) -> str:
    if is_missing(value, blank=False):
        return "n/a"
    return f"{value:.{digits}f}"


def format_runs(runs: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """The table of :func:`compare_runs` as text, intervals beside their estimates.

    Counts get thousands separators, metrics ``digits`` decimals, and a metric with an
    interval reads ``0.812 [0.790, 0.833]``; NaN reads ``n/a``. Headers become short names
    (``WOA``, ``ECARB@0.3``, ``max@0.3`` for the ECARB ceiling).

    See Also
    --------
    compare_runs : the table it formats.
    to_markdown : the formatted table as Markdown.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["a"], "n_entities": [1200], "auroc": [0.8123],
    ...                      "auroc_low": [0.79], "auroc_high": [0.8331]})
    >>> format_runs(runs).to_dict("records")
    [{'model': 'a', 'entities': '1,200', 'AUROC': '0.812 [0.790, 0.833]'}]
    """
    digits = check_positive_int(digits, "digits", 0)
    if not isinstance(runs, pd.DataFrame):
        raise ValidationError(f"runs must be a DataFrame from compare_runs; found "
                              f"{type(runs).__name__}")
    differences = _difference_columns(runs)  # shown by format_differences
    columns = [c for c in runs.columns
               if c not in differences and not (
                   str(c).endswith(("_low", "_high")) and str(c)[: str(c).rfind("_")]
                   in runs.columns)]
    out = {}
    for c in columns:
        name = str(c)
        values = runs[c]
        if name in ("n_documents", "n_entities", "n_without_confidence"):
            text = [f"{int(v):,}" for v in values]
        elif name in _HEADERS or name.startswith(("ecarb@", "ecarb_ceiling@")):
            text = [_number(v, digits) for v in values]
            if f"{name}_low" in runs.columns:
                text = [f"{t} [{_number(lo, digits)}, {_number(hi, digits)}]"
                        if t != "n/a" else t
                        for t, lo, hi in zip(text, runs[f"{name}_low"], runs[f"{name}_high"],
                                             strict=True)]
        else:
            text = ["n/a" if is_missing(v, blank=False) else str(v) for v in values]
        header = _HEADERS.get(name, name)
        if name.startswith("ecarb@"):
            header = f"ECARB@{name[6:]}"
        elif name.startswith("ecarb_ceiling@"):
            header = f"max@{name[14:]}"
        out[header] = text
    return pd.DataFrame(out, index=runs.index)


def _difference_columns(runs: pd.DataFrame) -> set[str]:
    return {f"{m}{suffix}" for m in runs.attrs.get("differences", ())
            for suffix in DIFFERENCE_SUFFIXES}


def _metric_header(metric: str) -> str:
    if metric.startswith("ecarb@"):
        return f"ECARB@{metric[6:]}"
    return {**_HEADERS, "debiased_ece": "debiased ECE", "smooth_ece": "smooth ECE"}.get(
        metric, metric)


def format_differences(runs: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """The differences from the baseline in a runs table, as text; one row per compared run.

    ``runs`` is the table of :func:`write_report` with ``baseline=`` (its ``attrs`` name
    the metrics compared and the baseline): each metric's cell reads
    ``+0.012 [-0.004, 0.029] p=0.140``, the paired difference from the baseline run, its
    interval and p-value (:func:`compare_systems`). The baseline's rows, and runs without a
    baseline to compare with, are left out.

    See Also
    --------
    write_report : adds the differences with ``baseline=``.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"model": ["a", "b"], "auroc_diff": [float("nan"), 0.0412],
    ...                      "auroc_diff_low": [float("nan"), 0.01],
    ...                      "auroc_diff_high": [float("nan"), 0.0724],
    ...                      "auroc_diff_p": [float("nan"), 0.012]})
    >>> runs.attrs.update(by=["model"], differences=["auroc"])
    >>> format_differences(runs).to_dict("records")
    [{'model': 'b', 'ΔAUROC': '+0.041 [+0.010, +0.072] p=0.012'}]
    """
    digits = check_positive_int(digits, "digits", 0)
    metrics = list(runs.attrs.get("differences", ()))
    by = list(runs.attrs.get("by", ()))
    if not metrics:
        raise ValidationError("runs must carry differences from a baseline (write_report with "
                              "baseline=...); found none")
    compared = runs[[f"{m}_diff" for m in metrics]].notna().any(axis=1)
    rows = runs[compared]

    def signed(value: Any) -> str:
        return "n/a" if is_missing(value, blank=False) else f"{value:+.{digits}f}"

    out: dict[str, list[str]] = {c: [missing_as_na(v) for v in rows[c]] for c in by}
    for m in metrics:
        out[f"\u0394{_metric_header(m)}"] = [
            "n/a" if is_missing(d, blank=False) else
            f"{signed(d)} [{signed(lo)}, {signed(hi)}] p={_number(p, digits)}"
            for d, lo, hi, p in zip(rows[f"{m}_diff"], rows[f"{m}_diff_low"],
                                    rows[f"{m}_diff_high"], rows[f"{m}_diff_p"], strict=True)]
    return pd.DataFrame(out, index=rows.index)


def _differences_html(runs: pd.DataFrame) -> str:
    """The differences table for the page: the difference, then its interval and p-value on
    smaller lines."""
    text = format_differences(runs)
    head = [escape_html(str(c)) for c in text.columns]
    rows = []
    for _, row in text.iterrows():
        cells = []
        for c, value in row.items():
            value = str(value)
            if str(c).startswith("\u0394") and value != "n/a":
                estimate, rest = value.split(" [", 1)
                interval, p = rest.split("] ", 1)
                low, high = interval.split(", ")
                cells.append(f"{escape_html(estimate)}<br><span class=\"ci\">"
                             f"{escape_html(low)} to {escape_html(high)}</span><br>"
                             f"<span class=\"ci\">{escape_html(p)}</span>")
            else:
                cells.append(escape_html(value))
        rows.append(cells)
    return _table_html(head, rows, "runs")


def to_markdown(table: pd.DataFrame) -> str:
    """A DataFrame as a Markdown pipe table; every header and cell escaped.

    Cells go through :func:`confcal._markdown.escape_cell`: HTML as entities (Markdown
    renderers pass raw HTML through), Markdown syntax (links, images, emphasis, code, ``|``)
    backslash-escaped and line breaks as spaces, so a value from a document can neither
    break the table nor inject markup, a link or a remote image.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_markdown(pd.DataFrame({"field": ["Agency"], "prediction": ["<b>A|B</b>"]})))
    | field | prediction |
    |---|---|
    | Agency | &lt;b&gt;A\\|B&lt;/b&gt; |
    """
    return markdown_table(table.columns, table.itertuples(index=False, name=None))


def to_html(table: pd.DataFrame, *, css_class: str = "runs") -> str:
    """A DataFrame as an HTML ``<table>``; every header and cell escaped.

    An interval written by :func:`format_runs` (``0.812 [0.790, 0.833]``) is set on a
    second, smaller line as ``0.790–0.833``.

    Examples
    --------
    >>> import pandas as pd
    >>> print(to_html(pd.DataFrame({"prediction": ["<script>alert(1)</script>"]})))
    <table class="runs">
    <thead><tr><th>prediction</th></tr></thead>
    <tbody>
    <tr><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr>
    </tbody>
    </table>
    """
    cells = [[_html_cell(v) for v in row] for row in table.itertuples(index=False, name=None)]
    return _table_html([escape_html(str(c)) for c in table.columns], cells, css_class)


def _html_cell(value: Any) -> str:
    text = str(value)
    if text.endswith("]") and " [" in text:
        # "0.812 [0.790, 0.833]" as 0.812 over "0.790–0.833": one short, unbreakable
        # line, so a dozen metric columns fit a 1024-pixel window
        estimate, interval = text[:-1].split(" [", 1)
        low, _, high = interval.partition(", ")
        return (f'{escape_html(estimate)}<br><span class="ci">'
                f"{escape_html(low)}\u2013{escape_html(high)}</span>")
    return escape_html(text)


def _table_html(head: Sequence[str], rows: Sequence[Sequence[str]], css_class: str) -> str:
    """An HTML table of cells that are already HTML (escaped by the caller)."""
    header = "".join(f"<th>{h}</th>" for h in head)
    body = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<table class="{escape_html(css_class)}">\n<thead><tr>{header}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>")


def _scrolling(table: str) -> str:
    """A table in a box that scrolls sideways (the page never does), and the hint that more
    columns follow; the shadows at the box's edges (CSS) show it too."""
    return ('<div class="scroll" role="region" tabindex="0" aria-label="table; scrolls '
            f'sideways when wider than the page">\n{table}</div>\n'
            '<p class="more">Scroll the table sideways for more columns →</p>')


def _errors_html(errors: pd.DataFrame) -> str:
    """The confident errors; the extracted values may break anywhere (a long token from a
    document must not widen the page), the other columns only between words."""
    values = {"truth", "prediction"}
    head = [escape_html(str(c)) for c in errors.columns]
    rows = [[(f'<span class="value">{escape_html(str(v))}</span>' if c in values
              else escape_html(str(v))) for c, v in zip(errors.columns, row, strict=True)]
            for row in errors.itertuples(index=False, name=None)]
    return _table_html(head, rows, "errors")


def _runs_html(runs: pd.DataFrame) -> str:
    """The runs table for the page: each ECARB ceiling (``max@b``) on a third line of its
    ECARB cell rather than in a column of its own, so the table fits 1024 pixels."""
    text = format_runs(runs)
    columns = [c for c in text.columns if not str(c).startswith("max@")]
    head = [escape_html(str(c)) + ("<br>(max)" if f"max@{str(c)[6:]}" in text.columns
                                   and str(c).startswith("ECARB@") else "")
            for c in columns]
    rows = []
    for _, row in text.iterrows():
        cells = []
        for c in columns:
            cell = _html_cell(row[c])
            ceiling = f"max@{str(c)[6:]}"
            if str(c).startswith("ECARB@") and ceiling in text.columns:
                cell += f'<br><span class="ci">max {escape_html(str(row[ceiling]))}</span>'
            cells.append(cell)
        rows.append(cells)
    return _table_html(head, rows, "runs")


# ---------------------------------------------------------------------------- figures
def _calibration_rows(group: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    conf = group["confidence"].to_numpy(dtype=np.float64)
    has = ~np.isnan(conf)
    return group["correct"].to_numpy(dtype=bool)[has], conf[has]


def _calibration_docs(group: pd.DataFrame) -> np.ndarray:
    """The doc ids of the rows :func:`_calibration_rows` returns, in its order."""
    has = group["confidence"].notna().to_numpy()
    return group["doc_id"].to_numpy(dtype=object)[has]


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    if not by:
        return [((), frame)]
    return [((k if isinstance(k, tuple) else (k,)), g) for k, g in
            frame.groupby(list(by), sort=False, dropna=False, observed=True)]


def _short(key: Sequence[Any]) -> str:
    # missing metadata reads n/a here as in the tables (format_runs), never "nan"
    return " / ".join(missing_as_na(k) for k in key) if key else "all entities"


def _reliability_panels(frame: pd.DataFrame, by: Sequence[str], runs: pd.DataFrame,
                        min_count: int, n_resamples: int = 0, seed: int | None = 0
                        ) -> tuple[Any, str]:
    from ..metrics._inference import calibration_test
    from ..metrics._metrics import ece
    from .plots import consistency_note, panel_grid, plain_text, reliability_diagram

    _plain = plain_text

    groups = _groups(frame, by)
    shown = groups[:_MAX_PANELS]
    n_bins = runs.attrs["n_bins"]
    # compare_runs' rows are these groups in the same order (groupby, sort=False, dropna=False)
    table_eces = runs["ece"].to_numpy(dtype=np.float64)
    fig, axes = panel_grid(len(shown))
    for i, ((key, group), ax) in enumerate(zip(shown, axes, strict=True)):
        correct, conf = _calibration_rows(group)
        if conf.size == 0:
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{_short(key)}\nno predictions with a confidence",
                    ha="center", va="center", fontsize=8, transform=ax.transAxes)
            continue
        # drawn in 10 uniform bins (equal-mass bins crowd at high confidence and overprint),
        # so the page has two ECEs: each panel names both, the table's (n_bins equal-mass,
        # compare_runs) first and the drawn bins' beside it
        # the consistency bands of the drawn bins, from redraws that keep a document's
        # predictions together (a document effect, estimated from the data)
        test = (calibration_test(correct, conf, groups=_calibration_docs(group),
                                 n_bins=_DRAWN_BINS, binning="uniform",
                                 n_resamples=n_resamples, seed=seed)
                if n_resamples else None)
        reliability_diagram(correct, conf, n_bins=_DRAWN_BINS, binning="uniform",
                            min_count=min_count, ax=ax, legend=i == 0,
                            consistency=False if test is None else test)
        table_ece = _number(table_eces[i], 3)  # the table's own number, not a recomputation
        drawn_ece = ece(correct, conf, n_bins=_DRAWN_BINS, binning="uniform")
        ax.set_title(f"{_plain(_short(key))}\nECE {table_ece} (table: {n_bins} "
                     f"equal-mass bins)\nECE {drawn_ece:.3f} (drawn: {_DRAWN_BINS} uniform "
                     "bins)" + ("" if test is None else f"\n{consistency_note(test)}"),
                     fontsize=8)
    note = (f"Showing the first {len(shown)} of {len(groups)} groups; metrics.csv has all."
            if len(groups) > len(shown) else "")
    return fig, note


def _reliability_figure(frame: pd.DataFrame, by: Sequence[str], runs: pd.DataFrame,
                        min_count: int, n_resamples: int = 0, seed: int | None = 0
                        ) -> tuple[bytes, str]:
    from .plots import figure_png

    fig, note = _reliability_panels(frame, by, runs, min_count, n_resamples, seed)
    return figure_png(fig), note


def _ecarb_figure(frame: pd.DataFrame, by: Sequence[str]) -> tuple[bytes, str]:
    from .plots import ecarb_vs_budget, figure_png, panel_grid

    # one panel per value of the first `by` column, a curve per value of the others
    panel_by, curve_by = (by[:1], by[1:]) if len(by) > 1 else ((), by)
    panels = _groups(frame, panel_by)[:_MAX_PANELS]
    fig, axes = panel_grid(len(panels), ncols=2, size=4.2)
    dropped = 0
    for (panel_key, panel), ax in zip(panels, axes, strict=True):
        curves = _groups(panel, curve_by)
        dropped += max(0, len(curves) - _MAX_CURVES)
        drawn = False
        for key, group in curves[:_MAX_CURVES]:
            correct, conf = _calibration_rows(group)
            if conf.size and not correct.all():  # ECARB needs an error to catch
                ecarb_vs_budget(correct, conf, label=_short(key), ax=ax, show_ceiling=False,
                            title=_short(panel_key))
                drawn = True
        if not drawn:
            ax.set_axis_off()
            ax.text(0.5, 0.5, f"{_short(panel_key)}\nno errors with a confidence to catch",
                    ha="center", va="center", fontsize=8, transform=ax.transAxes)
    _share_y(axes)
    notes = []
    if len(_groups(frame, panel_by)) > len(panels):
        notes.append(f"Showing the first {len(panels)} panels; metrics.csv has every group.")
    if dropped:
        notes.append(f"{dropped} curves beyond {_MAX_CURVES} per panel are not drawn; "
                     "metrics.csv has them.")
    return figure_png(fig), " ".join(notes)


def _share_y(axes: Sequence[Any]) -> None:
    """One y range over the drawn panels, so their curves compare at a glance."""
    drawn = [ax for ax in axes if ax.axison]
    if len(drawn) > 1:
        low = min(ax.get_ylim()[0] for ax in drawn)
        high = max(ax.get_ylim()[1] for ax in drawn)
        for ax in drawn:
            ax.set_ylim(low, high)


def _auroc_figure(runs: pd.DataFrame) -> bytes:
    from .plots import auroc_vs_woa, figure_png

    return figure_png(auroc_vs_woa(runs))


# ----------------------------------------------------------------------------- report
@dataclass(frozen=True)
class WrittenReport:
    """What :func:`write_report` wrote.

    Attributes
    ----------
    directory : pathlib.Path
    html, markdown, metrics : pathlib.Path
        ``report.html``, ``report.md``, ``metrics.csv``.
    figures : tuple of pathlib.Path
        The PNG files.
    runs : pandas.DataFrame
        The table of :func:`compare_runs` (what ``metrics.csv`` holds).
    signature : str
        The settings behind every number in the report (shown in its footer): the entity
        table's extraction signature (``schema:unknown`` if it carries none) and the ECE
        binning and ECARB tie rule; see :mod:`confcal._signature`.
    """

    directory: Path
    html: Path
    markdown: Path
    metrics: Path
    figures: tuple[Path, ...]
    runs: pd.DataFrame
    signature: str = ""


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:78rem;
padding:0 1rem;color:#1d2430;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d8dde6;padding-bottom:.2rem}
.scroll{overflow-x:auto;max-width:100%;margin:.6rem 0;
background:linear-gradient(to right,#fff 30%,#fff0) left/2rem 100% no-repeat local,
linear-gradient(to left,#fff 30%,#fff0) right/2rem 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,#0003,#0000) left/.8rem 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/.8rem 100% no-repeat scroll}
.more{display:none;color:#6b7485;font-size:.75rem;margin:-.4rem 0 .6rem}
table{border-collapse:collapse;font-size:.78rem}
th,td{border:1px solid #d8dde6;padding:.2rem .3rem;text-align:right;vertical-align:top}
th{background:#eef1f6;font-weight:600}td:first-child,th:first-child{text-align:left}
td:first-child,th:first-child{position:sticky;left:0;background:#fff;z-index:1}
th:first-child{background:#eef1f6}
.ci{color:#6b7485;font-size:.68rem;white-space:nowrap}
.note{color:#4a5568;font-size:.9rem;overflow-wrap:anywhere}
.banner{background:#fff7e0;border:1px solid #f0d48a;padding:.5rem .8rem;border-radius:4px}
figure{margin:1rem 0}figure img{max-width:none;border:1px solid #e3e7ee;display:block}
figcaption{font-size:.85rem;color:#4a5568}dt{font-weight:600}dd{margin:0 0 .4rem 1.2rem}
table.errors td,table.errors th{text-align:left}.value{overflow-wrap:anywhere}
h1,h2,dd,.banner,figcaption{overflow-wrap:anywhere}
@media (max-width:1100px){body{margin:1rem auto;padding:0 .6rem}}
@media (max-width:700px){.more{display:block}}
"""

# No script may run and nothing may load: the page is data and inline pictures, so even a
# value that escaped escaping could not execute.
_CSP = ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "img-src data:; style-src 'unsafe-inline'\">")

_GLOSSARY = [
    ("docs, entities",
     "distinct documents and entity rows (one per scored leaf, every outcome) in the group."),
    ("no confidence",
     ("rows whose prediction carries no confidence: counted here and left out of AUROC, "
      "ECE, Brier and ECARB (never dropped silently).")),
    ("WOA",
     ("weighted overall accuracy: mean similarity of truth and prediction over TP, FD, FA "
      "and FN rows (partial credit for near misses).")),
    ("F1", "2 TP / (2 TP + 2 FD + FA + FN): a value is right or wrong, no partial credit."),
    ("AUROC",
     ("probability that a right prediction is more confident than a wrong one (ties 1/2; "
      "0.5 = chance). Ranking only.")),
    ("ECE",
     ("expected calibration error over equal-mass bins: does 0.8 mean right 80% of the "
      "time? 0 is perfect. The reliability panels show it beside the ECE of the uniform "
      "bins they draw.")),
    ("Brier", "mean squared difference of confidence and correctness; lower is better."),
    ("ECARB@b",
     ("errors caught by reviewing the least confident share b of predictions, relative to "
      "a random review of the same size (1 = no better than random).")),
    ("max@b",
     ("the best ECARB possible at that budget (every error less confident than every right "
      "prediction); on the HTML page, under the ECARB@b value.")),
]


def _entity_path(field: Any, truth_index: Any, pred_index: Any) -> str:
    """``LineItems[3].Rate`` (truth item 3), ``LineItems[pred 5].Rate`` for an invented item."""
    name = str(field)
    if "." not in name:
        return name
    items, sub = name.split(".", 1)
    if not is_missing(truth_index, blank=False):
        return f"{items}[{int(truth_index)}].{sub}"
    if not is_missing(pred_index, blank=False):
        return f"{items}[pred {int(pred_index)}].{sub}"
    return name


def _confident_errors(frame: pd.DataFrame, by: Sequence[str], limit: int) -> pd.DataFrame:
    """The ``limit`` most confident errors of each run, runs in order of first appearance."""
    conf = frame["confidence"]
    wrong = frame[conf.notna() & ~frame["correct"].astype(bool)]
    # confidence first, then a fixed order, so ties never depend on row order
    ordered = wrong.assign(_d=wrong["doc_id"].astype(str), _f=wrong["field"].astype(str)
                           ).sort_values(["confidence", "_d", "_f"],
                                         ascending=[False, True, True], kind="stable")
    if by:
        # runs numbered in order of first appearance, as in the runs table
        run = frame.groupby(list(by), sort=False, dropna=False, observed=True).ngroup()
        ordered = ordered.assign(_r=run.loc[ordered.index]).sort_values("_r", kind="stable")
        top = ordered.groupby("_r", sort=False).head(limit)
    else:
        top = ordered.head(limit)
    missing = pd.Series(pd.NA, index=top.index)
    out = top[list(dict.fromkeys([*by, "doc_id"]))].copy()
    out["field"] = [_entity_path(f, t, p) for f, t, p in zip(
        top["field"], top.get("truth_index", missing), top.get("pred_index", missing), strict=True)]
    for c in ("truth", "prediction"):
        if c in top:
            out[c] = ["(missing)" if is_missing(v) else v for v in top[c]]
    for c in by:
        out[c] = [missing_as_na(v) for v in top[c]]
    out["outcome"] = top["outcome"].astype(str)
    out["confidence"] = [f"{v:.3f}" for v in top["confidence"]]  # 3 decimals, as every table
    return out


def _run_key(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(None if is_missing(v, blank=False) else v for v in values)


def missing_as_na(value: Any) -> str:
    """A metadata value as text, ``n/a`` when it is missing (the one missing-value marker)."""
    return "n/a" if is_missing(value, blank=False) else str(value)


def _html_page(title: str, notes: Sequence[str], summary: str, tables: list[tuple[str, str]],
               figures: list[tuple[str, str, bytes, str]], errors: pd.DataFrame,
               n_errors: int, footer: str) -> str:
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        _CSP,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape_html(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>{escape_html(title)}</h1>",
    ]
    parts += [f'<p class="banner">{escape_html(n)}</p>' for n in notes]
    parts.append(f'<p class="note">{escape_html(summary)}</p>')
    for heading, table in tables:
        parts += [f"<h2>{escape_html(heading)}</h2>", _scrolling(table)]
    parts.append("<h2>What the columns mean</h2><dl>")
    parts += [f"<dt>{escape_html(t)}</dt><dd>{escape_html(d)}</dd>" for t, d in _GLOSSARY]
    parts.append("</dl>")
    for heading, name, png, caption in figures:
        data = base64.b64encode(png).decode("ascii")
        width, height = _png_size(png)
        # shown at its own size, never shrunk below it: the figure's smallest text (8 pt at
        # 100 dpi, 11 px) stays as large as the page's smallest; a wide figure scrolls in its box
        parts += [f"<h2>{escape_html(heading)}</h2>", "<figure>",
                  '<div class="scroll" role="region" tabindex="0" aria-label="figure; scrolls '
                  'sideways when wider than the page">'
                  f'<img alt="{escape_html(heading)}" width="{width}" height="{height}" '
                  f'src="data:image/png;base64,{data}"></div>',
                  f"<figcaption>{escape_html(caption)} ({escape_html(name)})</figcaption>",
                  "</figure>"]
    parts.append(f"<h2>Most confident errors (top {n_errors} per run)</h2>")
    parts.append('<p class="note">Wrong predictions with the highest confidence: what a '
                 "threshold on confidence would let through. Values are shown as extracted."
                 "</p>")
    parts.append(_scrolling(_errors_html(errors)) if len(errors) else
                 '<p class="note">No wrong prediction carries a confidence.</p>')
    parts += [f'<p class="note">{escape_html(footer)}</p>', "</body>", "</html>", ""]
    return "\n".join(parts)


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels, from a PNG's header chunk."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _markdown_page(title: str, notes: Sequence[str], summary: str,
                   tables: list[tuple[str, str]], figures: list[tuple[str, str, bytes, str]],
                   errors: pd.DataFrame, n_errors: int, footer: str) -> str:
    parts = [f"# {escape_text(title)}", ""]
    parts += [f"> {escape_text(n)}\n" for n in notes]
    parts += [escape_text(summary), ""]
    for heading, table in tables:
        parts += [f"## {escape_text(heading)}", "", table, ""]
    parts += ["## What the columns mean", ""]
    parts += [f"- **{escape_cell(t)}**: {escape_cell(d)}" for t, d in _GLOSSARY]
    parts.append("")
    for heading, name, _, caption in figures:
        # the figure is a file of the report folder, never a URL from the data
        parts += [f"## {escape_text(heading)}", "", f"![{escape_cell(heading)}]({name})", "",
                  escape_text(caption), ""]
    parts += [f"## Most confident errors (top {n_errors} per run)", ""]
    parts.append(to_markdown(errors) if len(errors) else
                 "No wrong prediction carries a confidence.")
    parts += ["", escape_text(footer), ""]
    return "\n".join(parts)


def check_destination(out: Path) -> None:
    """A report may go to a new folder, an empty one, or replace a previous report."""
    _check_folder(out, "report")


def staged_report(out: Path) -> AbstractContextManager[Path]:
    """A staging folder for a report, moved onto ``out`` (replacing only a previous
    report) when the block succeeds and removed when it fails."""
    return staged_folder(out, "report")


def write_report(entities: pd.DataFrame, out_dir: str | os.PathLike[str], *,
                 by: str | Sequence[str] | None = None,
                 budgets: Sequence[float] = DEFAULT_BUDGETS,
                 n_bins: int = 5, n_resamples: int = 1000, confidence_level: float = 0.95,
                 seed: int | None = 0, title: str = "confcal report",
                 notes: Sequence[str] = (), n_errors: int = 5, min_count: int = 30,
                 status: Callable[[str], None] | None = None,
                 progress: Callable[..., Any] | None = None, baseline: str | None = None,
                 baseline_on: str = "error", extra: Sequence[str] = (),
                 max_work: float = MAX_WORK) -> WrittenReport:
    """Write the comparison report of an entity table into a folder.

    Parameters
    ----------
    entities : pandas.DataFrame
        An entity table; several runs told apart by metadata columns.
    out_dir : path-like
        The report folder. It is written under a temporary name beside it and renamed into
        place at the end; an existing folder is replaced only if it is empty or holds
        nothing but what a previous report wrote, as its manifest
        (``.confcal-manifest.json``) lists it; anything else is an error naming the entry,
        and nothing is removed.
    by, budgets, n_bins, n_resamples, confidence_level, seed
        As in :func:`compare_runs` (here ``n_resamples`` defaults to 1000 bootstrap
        resamples).
    title : str
    notes : sequence of str
        Shown at the top of the report (e.g. "the data are synthetic").
    n_errors : int, default 5
        How many of the most confident wrong predictions to list for each run (each group
        of ``by``), so that one run's errors cannot fill the table.
    min_count : int, default 30
        Reliability bins holding fewer predictions are not drawn (their accuracy is noise);
        the figure says how many were hidden.
    status : callable, optional
        Called with a short message before each slow step (the CLI prints them).
    progress : callable, optional
        A progress-bar factory, called as ``progress(desc=..., total=...)`` at the start of
        each slow step (the metrics with their bootstrap, one tick per run; the figures,
        one tick each); it returns an object with ``update(n)`` and ``close()``, as
        ``tqdm.tqdm`` does.
    baseline : str, optional
        A value of the first ``by`` column (``"sim-calibrated"``): every other run is
        compared with the run that has it and the same values in the other ``by`` columns,
        on the documents they share, by :func:`compare_systems` (``n_resamples`` paired
        document resamples). The runs table gains ``<metric>_diff``, ``_diff_low``,
        ``_diff_high`` and ``_diff_p`` for WOA, F1, AUROC, ECE, the debiased and smooth
        ECE, Brier and ECARB at each budget (``attrs["differences"]`` names them), and the
        page a table of them. Needs ``n_resamples >= 1``.
    baseline_on : {"error", "intersection"}, default "error"
        What a document that only one of two compared runs has is: an error, or left out
        and counted (``on=`` of :func:`compare_systems`).
    extra : sequence of str, default ()
        More columns of the runs tables, from :data:`confcal.metrics.EXTRA_METRICS` (as
        ``extra=`` of :func:`compare_runs`).
    max_work : float, default MAX_WORK (2e10, about four minutes)
        The most work the runs tables may take (``max_work=`` of :func:`compare_runs`),
        checked before anything is computed or written.

    Returns
    -------
    WrittenReport

    See Also
    --------
    compare_runs : the table it renders.
    compare_systems : the paired differences of ``baseline=``.

    Notes
    -----
    The folder holds ``report.html`` (self-contained: figures embedded as base64 PNG, a
    Content-Security-Policy that forbids scripts and external loads), ``report.md``
    (figures by relative path), ``metrics.csv`` (the :func:`compare_runs` table, full
    precision; text cells a spreadsheet would run as a formula start with ``'``, see
    :mod:`confcal._markdown`) and ``reliability.png``, ``auroc_vs_woa.png``,
    ``ecarb_curve.png``, and ``.confcal-manifest.json`` listing them (with sizes and
    SHA-256), the entries a later report into the folder may replace. The reliability
    panels draw 10 uniform bins (hiding those with fewer than ``min_count`` predictions),
    so each panel's title names both ECEs side by side: the table's (``n_bins``
    equal-mass bins) and that of the bins drawn. When ``by`` has several columns a second
    table pools the runs by the first one. Every value from
    the entity table is escaped (HTML; Markdown and HTML in ``report.md``). Intervals of a
    run with fewer than 30 documents get a :class:`SmallSampleWarning` and a note at the
    top of the report. Needs matplotlib (the ``plot`` or ``cli`` extra).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from confcal.datasets import load_demo
    >>> entities = load_demo().score(tiers=["clean"]).entities
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     written = write_report(entities, pathlib.Path(tmp) / "report", by="model",
    ...                            n_resamples=0)
    ...     sorted(p.name for p in written.directory.iterdir())
    ['.confcal-manifest.json', 'auroc_vs_woa.png', 'ecarb_curve.png', 'metrics.csv',
    'reliability.png', 'report.html', 'report.md']
    """
    say = status or (lambda message: None)
    frame = check_entities(entities)
    by = check_by(by, frame)
    budgets = check_budgets(budgets)
    n_errors = check_positive_int(n_errors, "n_errors", 0)
    min_count = check_positive_int(min_count, "min_count", 0)
    _check_report_text(title, notes)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 0)
    n_bins = check_n_bins(n_bins)
    check_work(len(frame), len(_groups(frame, by)), n_resamples=n_resamples, n_bins=n_bins,
               n_budgets=len(budgets), max_work=max_work)  # before any work, as the folder
    if baseline is not None:  # before any work, as the folder
        baseline_on = _check_baseline(frame, by, baseline, baseline_on, n_resamples)
    out = Path(out_dir)
    check_destination(out)  # before any work, not after minutes of bootstrap
    _require_matplotlib()

    say(f"computing metrics for {len(frame):,} entities"
        + (f" with {n_resamples} bootstrap resamples" if n_resamples else ""))
    runs, pooled = _compare_runs_in_stages(
        frame, by, progress, budgets=budgets, n_bins=n_bins, n_resamples=n_resamples,
        confidence_level=confidence_level, seed=seed, extra=extra, max_work=max_work)
    # compare_runs warned (SmallSampleWarning) for these; the report says so at the top
    notes = [*notes, *_small_runs_note(runs, by, n_resamples)]
    differences: list[tuple[str, str, str]] = []  # heading, HTML, Markdown
    if baseline is not None:
        say(f"comparing every run with {by[0]}={baseline} on their shared documents "
            f"({n_resamples} paired resamples)")
        differences, diff_notes = _baseline_sections(
            frame, by, runs, baseline, budgets=budgets, n_bins=n_bins, n_resamples=n_resamples,
            confidence_level=confidence_level, seed=seed, on=baseline_on)
        notes = [*notes, *diff_notes]
    tables = _runs_sections(runs, pooled, by, _runs_html, [(h, t) for h, t, _ in differences])
    md_tables = _runs_sections(runs, pooled, by, lambda t: to_markdown(format_runs(t)),
                               [(h, t) for h, _, t in differences])

    say("drawing figures")
    figures = _draw_figures(frame, by, runs, progress, min_count=min_count, n_bins=n_bins,
                            n_resamples=n_resamples, seed=seed,
                            confidence_level=confidence_level)
    summary = _summary(frame, runs, by, n_resamples=n_resamples,
                       confidence_level=confidence_level)
    signature = table_signature(entities, binning="quantile", n_bins=n_bins, ties="expected")
    footer = (f"confcal {_version()}; ECE with {n_bins} equal-mass bins; budgets "
              f"{', '.join(f'{b:g}' for b in budgets)}; seed {seed}. Signature: {signature}")
    errors = _confident_errors(frame, by, n_errors)

    with staged_report(out) as staging:
        (staging / "report.html").write_text(
            _html_page(title, notes, summary, tables, figures, errors, n_errors, footer),
            encoding="utf-8")
        (staging / "report.md").write_text(
            _markdown_page(title, notes, summary, md_tables, figures, errors, n_errors,
                           footer), encoding="utf-8")
        # text cells that a spreadsheet would run as a formula get a quote (_markdown)
        write_csv(runs, staging / "metrics.csv")
        for _, name, png, _ in figures:
            (staging / name).write_bytes(png)
    return WrittenReport(directory=out, html=out / "report.html", markdown=out / "report.md",
                         metrics=out / "metrics.csv",
                         figures=tuple(out / name for _, name, _, _ in figures), runs=runs,
                         signature=signature)


def _check_report_text(title: Any, notes: Any) -> None:
    """The report's title is a string and its notes a sequence of strings."""
    if not isinstance(title, str):
        raise ValidationError(f"title must be a string; found {title!r}")
    if isinstance(notes, str) or not all(isinstance(n, str) for n in notes):
        raise ValidationError(f"notes must be a sequence of strings; found {notes!r}")


def _require_matplotlib() -> None:
    """Fail before any work, naming the extra to install, when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValidationError("write_report needs matplotlib; found it not installed (pip "
                              "install matplotlib, or pip install -e '.[cli]' in a clone of "
                              "confcal)") from None


@contextmanager
def _progress_stage(progress: Callable[..., Any] | None, desc: str,
                    total: int) -> Iterator[Callable[[int], Any] | None]:
    """One slow step's progress bar: its ``update`` (None without a factory), then closed."""
    bar = progress(desc=desc, total=total) if progress is not None else None
    try:
        yield None if bar is None else bar.update
    finally:
        if bar is not None:
            bar.close()


def _no_progress(n: int) -> None:
    """The progress tick when no progress bar is shown."""


def _compare_runs_in_stages(frame: pd.DataFrame, by: Sequence[str],
                            progress: Callable[..., Any] | None,
                            **options: Any) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The runs table and, when ``by`` has several columns, the runs pooled by the first.

    One progress bar for both, one tick per run.
    """
    n_runs = len(_groups(frame, by))
    n_pooled = len(_groups(frame, by[:1])) if len(by) > 1 else 0
    desc = "metrics" + (" and bootstrap" if options["n_resamples"] else "")
    with _progress_stage(progress, desc, n_runs + n_pooled) as tick:
        runs = compare_runs(frame, by=by, progress=tick, **options)
        pooled = compare_runs(frame, by=by[:1], progress=tick, **options) if n_pooled else None
    return runs, pooled


def _small_runs_note(runs: pd.DataFrame, by: Sequence[str], n_resamples: int) -> list[str]:
    """A note naming the runs whose bootstrap intervals rest on too few documents (or none)."""
    if not n_resamples:
        return []
    small = [_short(tuple(row)) for row in
             runs.loc[runs["n_documents"] < MIN_INTERVAL_DOCUMENTS, list(by)].itertuples(
                 index=False, name=None)]
    if not small:
        return []
    return [f"{len(small)} run{'s' if len(small) != 1 else ''} with fewer than "
            f"{MIN_INTERVAL_DOCUMENTS} documents, whose intervals are too narrow to "
            f"trust: {', '.join(small[:5])}{', ...' if len(small) > 5 else ''}."]


def _runs_sections(runs: pd.DataFrame, pooled: pd.DataFrame | None, by: Sequence[str],
                   render: Callable[[pd.DataFrame], str],
                   differences: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(heading, rendered table) of the runs, the differences from a baseline when there are
    some (already rendered), then the pooled runs when there are some."""
    sections = [("Runs" if by else "All entities", render(runs)), *differences]
    if pooled is not None:
        sections.append((f"Pooled by {by[0]}", render(pooled)))
    return sections


def _check_baseline(frame: pd.DataFrame, by: Sequence[str], baseline: str, baseline_on: str,
                    n_resamples: int) -> str:
    """The baseline names a run of the first ``by`` column and there are paired resamples to
    compare with it; returns the checked ``baseline_on``."""
    check_baseline(frame, by, baseline)
    if not n_resamples:
        raise ValidationError("baseline needs paired resamples: n_resamples must be >= 1 "
                              "with a baseline; found 0")
    return check_option(baseline_on, "baseline_on", ON_CHOICES)


def _baseline_sections(frame: pd.DataFrame, by: Sequence[str], runs: pd.DataFrame,
                       baseline: str, **options: Any
                       ) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Every run's paired differences from the baseline run, added to ``runs`` as columns
    (``<metric>_diff``, ...; ``attrs["differences"]`` names the metrics), and the
    (heading, HTML, Markdown) of their table with the notes the comparison left."""
    differences, notes = baseline_differences(frame, by, baseline, **options)
    names = list(dict.fromkeys(k[:-len("_diff")] for v in differences.values() for k in v
                               if k.endswith("_diff")))
    keys = [_run_key(row) for row in runs[list(by)].itertuples(index=False, name=None)]
    for m in names:
        for suffix in DIFFERENCE_SUFFIXES:
            runs[f"{m}{suffix}"] = [differences.get(k, {}).get(f"{m}{suffix}", np.nan)
                                    for k in keys]
    runs.attrs.update(differences=names, baseline=baseline, baseline_column=by[0])
    if not names:
        return [], notes
    level = options["confidence_level"]
    explain = (f"Each run minus the run of {by[0]}={baseline}"
               + (f" with the same {', '.join(by[1:])}" if len(by) > 1 else "")
               + f", on the documents both have: the difference, its {level:.0%} interval "
               "and the two-sided p-value of no difference, from "
               f"{options['n_resamples']} paired document resamples (every resample draws "
               "the same documents for both runs; p-value and interval from the centred "
               "differences, so 0 is outside the interval exactly when "
               f"p <= {1 - level:.2f}). ECARB: higher is better; ECE, Brier: lower is better.")
    section = (f"Differences from {by[0]}={baseline}",
               f'<p class="note">{escape_html(explain)}</p>\n' + _differences_html(runs),
               escape_text(explain) + "\n\n" + to_markdown(format_differences(runs)))
    return [section], notes


def _draw_figures(frame: pd.DataFrame, by: Sequence[str], runs: pd.DataFrame,
                  progress: Callable[..., Any] | None, *, min_count: int, n_bins: int,
                  n_resamples: int, seed: int | None, confidence_level: float
                  ) -> list[tuple[str, str, bytes, str]]:
    """(heading, file name, PNG, caption) of the three figures, one progress tick each."""
    with _progress_stage(progress, "figures", 3) as tick:
        step = tick or _no_progress
        with warnings.catch_warnings():
            # compare_runs has already warned about every undefined metric, naming its group
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            reliability, reliability_note = _reliability_figure(frame, by, runs, min_count,
                                                                n_resamples, seed)
            step(1)
            curves, curves_note = _ecarb_figure(frame, by)
            step(1)
            scatter = _auroc_figure(runs)
            step(1)
    return [
        ("Reliability diagrams", "reliability.png", reliability,
         f"Accuracy against confidence in {_DRAWN_BINS} uniform bins; the number above each "
         f"bar is how many predictions it holds; bins with fewer than {min_count} are hidden "
         "(their count is noted). Each panel names two ECEs: the table's, over "
         f"{n_bins} equal-mass bins, and that of the {_DRAWN_BINS} uniform bins drawn. "
         + (f"Brackets are {confidence_level:.0%} consistency bands: the accuracies a "
            "calibrated model shows in each bin, from "
            f"{n_resamples} redraws of the outcomes with the confidences as the "
            "probabilities and a document effect estimated from the data (errors of one "
            "document go together); the p-value under each title is the consistency test "
            "of the drawn bins (calibration_test). " if n_resamples else "")
         + reliability_note),
        ("AUROC vs. WOA", "auroc_vs_woa.png", scatter,
         "Extraction quality across, confidence ranking up; one point per run"
         + (", bars are bootstrap intervals." if n_resamples else ".")),
        ("ECARB vs. review budget", "ecarb_curve.png", curves,
         "How many times more errors a review of the least confident predictions catches "
         "than a random review of the same size; 1 (dotted) is random. " + curves_note),
    ]


def _summary(frame: pd.DataFrame, runs: pd.DataFrame, by: Sequence[str], *, n_resamples: int,
             confidence_level: float) -> str:
    """The sentence under the title: what was counted, and what the brackets are."""
    level = f"{confidence_level:.0%}"
    return (f"{len(frame):,} entities from {frame['doc_id'].nunique():,} documents in "
            f"{len(runs)} group{'s' if len(runs) != 1 else ''}"
            + (f" (by {', '.join(by)})" if by else "") + "; "
            f"{int(frame['confidence'].isna().sum()):,} rows carry no confidence. "
            + (f"Brackets are {level} intervals from {n_resamples} bootstrap resamples of "
               "documents." if n_resamples else "No bootstrap intervals (n_resamples=0)."))


def _version() -> str:
    from .._version import __version__

    return __version__
