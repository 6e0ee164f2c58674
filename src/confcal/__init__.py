"""confcal: can you trust the confidence of a document-extraction model?

- Calibration metrics on arrays: :func:`auroc`, :func:`ece`, :func:`mce`, :func:`brier`,
  :func:`ecarb`, :func:`reliability_bins`, :func:`calibration_report`, and
  :func:`bootstrap_ci` intervals that resample documents.
- Extraction scoring: typed comparators (:class:`Text`, :class:`Number`, :class:`Date`,
  :class:`Exact`), schemas (:class:`Schema`, :class:`Field`, :class:`Items`), Hungarian
  line-item matching and :func:`score_documents`, which builds the entity table.
- Confidence: :mod:`confcal.confidence` (log-probabilities, verbalized top-K),
  :mod:`confcal.calibrators` (post-hoc calibration), :mod:`confcal.routing` (thresholds and
  review budgets).
"""

from __future__ import annotations

from . import calibrators, confidence, docqa, routing, schemas
from ._version import __version__
from .bootstrap import bootstrap_ci
from .calibrators import (
    HistogramBinning,
    IsotonicCalibration,
    PlattScaling,
    TemperatureScaling,
)
from .comparators import Date, Exact, Number, Text, parse_date, parse_number
from .confidence import aggregate_logprobs, parse_topk
from .datasets import load_demo
from .docqa import (
    LLMJudge,
    RuleJudge,
    Verdict,
    accuracy_table,
    judge_agreement,
    judge_records,
)
from .exceptions import ConfcalError, UndefinedMetricWarning, ValidationError
from .matching import match_items
from .metrics import (
    CalibrationReport,
    auroc,
    brier,
    calibration_report,
    ecarb,
    ecarb_ceiling,
    ecarb_curve,
    ece,
    mce,
    reliability_bins,
    review_count,
)
from .routing import budget_for_residual_error, threshold_for_accuracy
from .report import compare_runs, write_report
from .schema import Field, Items, Schema
from .sketch import CalibrationSketch
from .scoring import ExtractionResult, score_documents, score_documents_iter


__all__ = [
    "CalibrationReport",
    "CalibrationSketch",
    "ConfcalError",
    "Date",
    "Exact",
    "ExtractionResult",
    "Field",
    "HistogramBinning",
    "IsotonicCalibration",
    "Items",
    "LLMJudge",
    "Number",
    "PlattScaling",
    "RuleJudge",
    "Schema",
    "TemperatureScaling",
    "Text",
    "UndefinedMetricWarning",
    "ValidationError",
    "Verdict",
    "accuracy_table",
    "aggregate_logprobs",
    "auroc",
    "bootstrap_ci",
    "brier",
    "budget_for_residual_error",
    "calibration_report",
    "compare_runs",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "judge_agreement",
    "judge_records",
    "load_demo",
    "mce",
    "match_items",
    "parse_date",
    "parse_number",
    "parse_topk",
    "reliability_bins",
    "review_count",
    "score_documents",
    "score_documents_iter",
    "threshold_for_accuracy",
    "write_report",
]
