"""Estimating and correcting confidence, and acting on it.

:mod:`~confcal.calibration.confidence` turns a model's output (token log-probabilities,
verbalized top-K) into confidences, :mod:`~confcal.calibration.calibrators` recalibrates
them post hoc, :mod:`~confcal.calibration.routing` picks thresholds and review budgets,
:mod:`~confcal.calibration.ensemble` combines several confidence signals for the same
extraction into one (logistic stacking, cross-fitted by document).
Reads the metrics and scoring layers (docs/architecture.md).
"""
