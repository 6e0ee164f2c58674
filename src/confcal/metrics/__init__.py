"""Calibration metrics on arrays: can the confidence be trusted?

The layer that every other one reads. :mod:`confcal.metrics` holds the metric functions
(AUROC, ECE, MCE, Brier, ECARB, reliability bins, the one-sort
:func:`calibration_report`) and the tests on them (:func:`calibration_test`,
:func:`delong_test`); :mod:`confcal.metrics.bootstrap` the document-level bootstrap
intervals and :mod:`confcal.metrics.sketch` the mergeable calibration sketch. The shared
sort lives in the private ``_ranking`` module. Nothing here imports the scorer, the
report, the command line or an extra (docs/architecture.md).
"""

from ._inference import (
    CALIBRATION_STATISTICS,
    CalibrationTest,
    DeLongTest,
    calibration_test,
    delong_test,
)
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
    "CALIBRATION_STATISTICS",
    "DEFAULT_BUDGETS",
    "TIES",
    "CalibrationReport",
    "CalibrationTest",
    "DeLongTest",
    "auroc",
    "brier",
    "calibration_report",
    "calibration_test",
    "delong_test",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "mce",
    "reliability_bins",
    "review_count",
]
