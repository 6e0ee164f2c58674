"""Calibration metrics on arrays: can the confidence be trusted?

The layer that every other one reads. :mod:`confcal.metrics` holds the metric functions
(AUROC, ECE, MCE, Brier, ECARB, reliability bins, the one-sort
:func:`calibration_report`); :mod:`confcal.metrics.bootstrap` the document-level bootstrap
intervals and :mod:`confcal.metrics.sketch` the mergeable calibration sketch. The shared
sort lives in the private ``_ranking`` module. Nothing here imports the scorer, the
report, the command line or an extra (docs/architecture.md).
"""

from . import bootstrap, sketch  # noqa: I001  (the modules, for their __all__)
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
from .bootstrap import *  # noqa: F403
from .sketch import *  # noqa: F403

__all__ = [
    *bootstrap.__all__,
    *sketch.__all__,
    "BINNINGS",
    "DEFAULT_BUDGETS",
    "TIES",
    "CalibrationReport",
    "auroc",
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
