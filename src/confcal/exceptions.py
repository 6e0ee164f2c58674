"""Error and warning types raised by confcal.

Invalid input raises a :class:`ValidationError` (a :class:`ValueError`), whose message names
the argument, the rule it breaks, and what was found. A valid input that leaves a metric
undefined (one class for AUROC, no errors for ECARB) emits :class:`UndefinedMetricWarning` and
the metric is NaN.
"""

from __future__ import annotations

__all__ = ["ConfcalError", "ValidationError", "UndefinedMetricWarning"]


class ConfcalError(Exception):
    """Base class of every exception confcal raises on purpose."""


class ValidationError(ConfcalError, ValueError):
    """An argument breaks a documented rule (wrong shape, range, type or option).

    Subclasses :class:`ValueError`, so ``except ValueError`` keeps working.
    """


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for a valid input and is returned as NaN."""
