"""Reference implementations and Hypothesis strategies for property-based tests.

Two halves, both public so that other projects' test suites can use them:

* **Slow, obviously-correct references** of the calibration metrics (``reference_*``).
  They follow the definitions of docs/metrics.md line by line with explicit Python loops and
  exact rational arithmetic (:class:`fractions.Fraction`), so the only rounding is the final
  conversion to ``float``. They are O(n^2) or worse (ECARB with ``ties="expected"``
  enumerates every order of the tied rows) and meant for inputs of a few hundred rows at
  most. They are written from the specification alone, independently of
  :mod:`confcal.metrics`, so that checking one against the other means something.
  Undefined results are ``nan``; unlike the fast metrics, the references do not warn.
* **Hypothesis strategies** for ``(correct, confidence)`` arrays with explicit float ranges,
  the extremes 0.0 and 1.0, heavy ties and single-class cases. Hypothesis is imported inside
  the strategy functions, so this module imports without it.

Examples
--------
A property test in another project:

>>> from hypothesis import given, settings
>>> from confcal.testing import calibration_data, reference_brier
>>> @settings(max_examples=20, deadline=None)
... @given(calibration_data(max_size=30))
... def test_brier_is_a_probability(data):
...     correct, confidence = data
...     assert 0.0 <= reference_brier(correct, confidence) <= 1.0
>>> test_brier_is_a_probability()
"""

from __future__ import annotations

from ._references import (
    reference_aurc,
    reference_auroc,
    reference_bins,
    reference_brier,
    reference_delong,
    reference_ecarb,
    reference_ecarb_ceiling,
    reference_ece,
    reference_log_loss,
    reference_mce,
    reference_review_count,
)
from ._strategies import (
    calibration_data,
    grouped_calibration_data,
    review_budgets,
    weighted_calibration_data,
)

__all__ = [
    "calibration_data",
    "grouped_calibration_data",
    "reference_aurc",
    "reference_auroc",
    "reference_bins",
    "reference_brier",
    "reference_delong",
    "reference_ecarb",
    "reference_ecarb_ceiling",
    "reference_ece",
    "reference_log_loss",
    "reference_mce",
    "reference_review_count",
    "review_budgets",
    "weighted_calibration_data",
]
