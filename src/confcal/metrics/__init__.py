"""Calibration metrics on arrays: can the confidence be trusted?

The layer that every other one reads. :mod:`confcal.metrics` holds the metric functions
(AUROC, ECE, MCE, Brier, ECARB, reliability bins, the one-sort
:func:`calibration_report`), the estimators beyond the binned ECE (the debiased and the
smooth ECE, the Brier decomposition, the calibration slope, log loss: the private
``_estimators`` module) and the curves over every threshold (risk–coverage and AURC, ROC,
precision–recall: ``_curves``); :mod:`confcal.metrics.bootstrap` the
document-level bootstrap intervals and :mod:`confcal.metrics.sketch` the mergeable
calibration sketch; the tests on them (:func:`calibration_test`, :func:`delong_test`) in
``_inference``. The shared sort lives in the private ``_ranking`` module. Nothing
here imports the scorer, the report, the command line or an extra (docs/architecture.md).
"""

from . import bootstrap, sketch  # noqa: I001  (the modules, for their __all__)
from ._curves import aurc, pr_curve_points, risk_coverage_curve, roc_curve_points
from ._estimators import (
    SMOOTH_ECE_MIN_BANDWIDTH,
    BrierDecomposition,
    CalibrationSlope,
    brier_decomposition,
    calibration_slope,
    debiased_ece,
    log_loss,
    smooth_ece,
)
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
    auroc,
    brier,
    ecarb,
    ecarb_ceiling,
    ecarb_curve,
    ece,
    mce,
    reliability_bins,
    review_count,
)
from ._report import EXTRA_METRICS, CalibrationReport, calibration_report
from .bootstrap import *  # noqa: F403
from .sketch import *  # noqa: F403

__all__ = [
    *bootstrap.__all__,
    *sketch.__all__,
    "BINNINGS",
    "CALIBRATION_STATISTICS",
    "DEFAULT_BUDGETS",
    "EXTRA_METRICS",
    "SMOOTH_ECE_MIN_BANDWIDTH",
    "TIES",
    "BrierDecomposition",
    "CalibrationReport",
    "CalibrationSlope",
    "CalibrationTest",
    "DeLongTest",
    "aurc",
    "auroc",
    "brier",
    "brier_decomposition",
    "calibration_report",
    "calibration_slope",
    "calibration_test",
    "debiased_ece",
    "delong_test",
    "ecarb",
    "ecarb_ceiling",
    "ecarb_curve",
    "ece",
    "log_loss",
    "mce",
    "pr_curve_points",
    "reliability_bins",
    "review_count",
    "risk_coverage_curve",
    "roc_curve_points",
    "smooth_ece",
]
