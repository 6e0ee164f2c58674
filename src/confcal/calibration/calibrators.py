"""Post-hoc calibrators: maps from a model's confidence to a calibrated probability.

Four calibrators, each a frozen dataclass holding only its fitted parameters. ``fit`` is a
classmethod that returns a fitted object, so there is no unfitted state to misuse:

>>> cal = TemperatureScaling.fit([1, 1, 1, 0], [0.9, 0.9, 0.9, 0.9])
>>> cal.predict([0.9]).tolist()   # T = log 9 / log 3 = 2: 0.9 -> 0.75, the accuracy
[0.75]

* :class:`TemperatureScaling`: σ(logit(p) / T), one parameter.
* :class:`PlattScaling`: σ(a · logit(p) + b) with a >= 0, two parameters.
* :class:`IsotonicCalibration`: the non-decreasing step-and-slope map of isotonic
  regression (scikit-learn's ``IsotonicRegression``), interpolated linearly.
* :class:`HistogramBinning`: the accuracy of each confidence bin, made non-decreasing.

Every calibrator is a **non-decreasing** map of [0, 1] into [0, 1], so it never reverses the
order of two predictions. Temperature and Platt scaling (slope > 0) are strictly
increasing: they leave AUROC and ECARB unchanged (up to two confidences that round to the
same float). Isotonic and histogram calibration may map different confidences to the same
value; each such tie gives the pairs it joins half credit in AUROC, the only way a
non-decreasing map can change it (on the data it was fitted on, isotonic calibration's
AUROC is that of the ROC convex hull, never lower than the original).

Every calibrator writes itself to JSON and reads itself back exactly (floats are written
with ``repr``, which round-trips every float64): ``type(cal).from_json(cal.to_json()) ==
cal``, and :func:`calibrator_from_json` reads any of them.

:func:`evaluate_transfer` asks ConfBench's open question (does a calibrator fitted on one
degradation tier transfer to another?) and :func:`cross_validate_calibrator` estimates how a
calibrator does on documents it has not seen.
"""

from __future__ import annotations

from ._calibrators import (
    CALIBRATORS,
    CalibrationWarning,
    Calibrator,
    HistogramBinning,
    IsotonicCalibration,
    PlattScaling,
    TemperatureScaling,
    calibrator_from_json,
)
from ._evaluation import cross_validate_calibrator, evaluate_transfer

__all__ = [
    "CALIBRATORS",
    "CalibrationWarning",
    "Calibrator",
    "HistogramBinning",
    "IsotonicCalibration",
    "PlattScaling",
    "TemperatureScaling",
    "calibrator_from_json",
    "cross_validate_calibrator",
    "evaluate_transfer",
]
