"""Comparing runs and showing them: the ConfBench Table 3, the report, figures, degradation.

:func:`compare_runs` and friends build the runs table; :func:`write_report` renders it
(HTML, Markdown, CSV, figures); :mod:`~confcal.report.plots` draws and
:mod:`~confcal.report.degradation` measures what degradation does to extraction. Reads the
scoring and metrics layers, never the command line (docs/architecture.md).
"""

from ._report import (
    RunSummary,
    WrittenReport,
    compare_runs,
    compare_runs_sketched,
    format_runs,
    merge_summaries,
    runs_table,
    summarize_runs,
    to_html,
    to_markdown,
    write_report,
)

__all__ = [
    "RunSummary",
    "WrittenReport",
    "compare_runs",
    "compare_runs_sketched",
    "format_runs",
    "merge_summaries",
    "runs_table",
    "summarize_runs",
    "to_html",
    "to_markdown",
    "write_report",
]
