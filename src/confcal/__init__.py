"""confcal: can you trust the confidence of a document-extraction model?

Calibration metrics on arrays (AUROC, adaptive ECE, Brier, ECARB, reliability bins),
bootstrap intervals that resample documents, and (see the docs) extraction scoring.
"""

from __future__ import annotations

from .bootstrap import bootstrap_ci
from .exceptions import ConfcalError, UndefinedMetricWarning, ValidationError
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

__version__ = "0.1.0"

__all__ = [
    "CalibrationReport",
    "ConfcalError",
    "UndefinedMetricWarning",
    "ValidationError",
    "auroc",
    "bootstrap_ci",
    "brier",
    "calibration_report",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "mce",
    "reliability_bins",
    "review_count",
]
