"""Calibration metrics on arrays: can the confidence be trusted?

The layer that every other one reads. :mod:`confcal.metrics` holds the metric functions
(AUROC, ECE, MCE, Brier, ECARB, reliability bins, the one-sort
:func:`calibration_report`) and the estimators beyond the binned ECE (the debiased and the
smooth ECE, in the private ``_estimators`` module); :mod:`confcal.metrics.bootstrap` the
document-level bootstrap intervals and :mod:`confcal.metrics.sketch` the mergeable
calibration sketch. The shared sort lives in the private ``_ranking`` module. Nothing
here imports the scorer, the report, the command line or an extra (docs/architecture.md).
"""

from ._estimators import SMOOTH_ECE_MIN_BANDWIDTH, debiased_ece, smooth_ece
from ._metrics import (
    BINNINGS,
    DEFAULT_BUDGETS,
    TIES,
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

__all__ = [
    "BINNINGS",
    "DEFAULT_BUDGETS",
    "SMOOTH_ECE_MIN_BANDWIDTH",
    "TIES",
    "CalibrationReport",
    "auroc",
    "brier",
    "calibration_report",
    "debiased_ece",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "mce",
    "reliability_bins",
    "review_count",
    "smooth_ece",
]
