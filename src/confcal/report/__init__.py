"""Comparing runs and showing them: the ConfBench Table 3, the report, figures, degradation.

:func:`compare_runs` and friends build the runs table (``_runs``); :func:`write_report`
renders it (HTML, Markdown, CSV, figures; ``_render``); :mod:`~confcal.report.plots` draws and
:mod:`~confcal.report.degradation` measures what degradation does to extraction. Reads the
scoring and metrics layers, never the command line (docs/architecture.md).
"""

from . import degradation, plots  # noqa: I001  (the modules, for their __all__)
from ._render import WrittenReport, format_runs, to_html, to_markdown, write_report
from ._runs import (
    MIN_INTERVAL_DOCUMENTS,
    RunSummary,
    SmallSampleWarning,
    compare_runs,
    compare_runs_sketched,
    merge_summaries,
    runs_table,
    summarize_runs,
)
from .degradation import *  # noqa: F403
from .plots import *  # noqa: F403

__all__ = [
    *degradation.__all__,
    *plots.__all__,
    "MIN_INTERVAL_DOCUMENTS",
    "RunSummary",
    "SmallSampleWarning",
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
