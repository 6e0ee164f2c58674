"""Comparing runs and showing them: the ConfBench Table 3, the report, figures, degradation.

:func:`compare_runs` and friends build the runs table (``_runs``); :func:`compare_systems`
compares systems on the same documents, paired (``_compare``); :func:`write_report`
renders them (HTML, Markdown, CSV, figures; ``_render``); :mod:`~confcal.report.plots` draws and
:mod:`~confcal.report.degradation` measures what degradation does to extraction. Reads the
scoring and metrics layers, never the command line (docs/architecture.md).
"""

from . import degradation, plots  # noqa: I001  (the modules, for their __all__)
from ._compare import COMPARE_METRICS, DocumentsDroppedWarning, compare_systems
from ._render import (
    WrittenReport,
    format_differences,
    format_runs,
    to_html,
    to_markdown,
    write_report,
)
from ._runs import (
    MAX_WORK,
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
    "COMPARE_METRICS",
    "MAX_WORK",
    "MIN_INTERVAL_DOCUMENTS",
    "RunSummary",
    "DocumentsDroppedWarning",
    "SmallSampleWarning",
    "WrittenReport",
    "compare_runs",
    "compare_runs_sketched",
    "compare_systems",
    "format_differences",
    "format_runs",
    "merge_summaries",
    "runs_table",
    "summarize_runs",
    "to_html",
    "to_markdown",
    "write_report",
]
