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

from typing import TYPE_CHECKING

from .._lazy import facade

# imported on first use, module by module: a scalar metric loads _metrics (and _ranking)
# only, so `import confcal; confcal.auroc(...)` costs what numpy costs
__getattr__, __dir__ = facade(__name__, ("_metrics", "_report", "_estimators", "_curves",
                                         "_inference", "bootstrap", "sketch"))

if TYPE_CHECKING:
    from ._curves import *  # noqa: F403
    from ._estimators import *  # noqa: F403
    from ._inference import *  # noqa: F403
    from ._metrics import *  # noqa: F403
    from ._report import *  # noqa: F403
    from .bootstrap import *  # noqa: F403
    from .sketch import *  # noqa: F403
