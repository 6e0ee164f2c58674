"""Error and warning types raised by confcal.

Invalid input raises a :class:`ValidationError` (a :class:`ValueError`), whose message names
the argument, the rule it breaks, and what was found. A valid input that leaves a metric
undefined (one class for AUROC, no errors for ECARB) emits :class:`UndefinedMetricWarning` and
the metric is NaN.
"""

from __future__ import annotations

__all__ = ["ConfcalError", "ModelError", "ModelResponseError", "UndefinedMetricWarning",
           "ValidationError"]


class ConfcalError(Exception):
    """Base class of every exception confcal raises on purpose."""


class ValidationError(ConfcalError, ValueError):
    """An argument breaks a documented rule (wrong shape, range, type or option).

    Subclasses :class:`ValueError`, so ``except ValueError`` keeps working.
    """


class ModelError(ConfcalError):
    """A chat model could not be asked or did not answer (:mod:`confcal.extras.models`)."""


class ModelResponseError(ModelError):
    """A 200 response without a reply text (invalid JSON, no choices, null content).

    Defined here, below every layer, so that the QA judge can tell a model that answered
    nothing usable from a failure of its own without importing an extra.
    """


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for a valid input and is returned as NaN."""
