"""Estimating and correcting confidence, and acting on it.

:mod:`~confcal.calibration.confidence` turns a model's output (token log-probabilities,
verbalized top-K) into confidences, :mod:`~confcal.calibration.calibrators` recalibrates
them post hoc, :mod:`~confcal.calibration.routing` picks thresholds and review budgets,
:mod:`~confcal.calibration.ensemble` combines several confidence signals for the same
extraction into one (logistic stacking, cross-fitted by document).
Reads the metrics and scoring layers (docs/architecture.md).
"""

from typing import TYPE_CHECKING

from .._lazy import facade

# imported on first use: the ensemble module is also a script (python -m
# confcal.calibration.ensemble), which runpy refuses to run once its package imported it
__getattr__, __dir__ = facade(__name__, ("calibrators", "confidence", "ensemble", "routing"))

if TYPE_CHECKING:
    from .calibrators import *  # noqa: F403
    from .confidence import *  # noqa: F403
    from .ensemble import *  # noqa: F403
    from .routing import *  # noqa: F403
