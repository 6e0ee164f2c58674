"""Predicted leaves: a value, and the confidence the model attached to it (if any).

A predicted leaf takes one of three forms (docs/scoring.md, "Documents and predicted leaves"):

* a raw value, ``"ACME Media"``: no confidence;
* ``{"value": v, "confidence": c}``: ``c`` a number in [0, 1], or ``None``/absent;
* ``{"candidates": [{"value": v, "probability": p}, ...]}`` (verbalized top-K): the
  candidate with the highest probability is the prediction and its probability the
  confidence; equal probabilities are broken by list order (the first wins).

Values must be scalars (string, number, bool, date) or missing (``None``, ``""``, NaN,
``[]``). Anything else -- another key in the mapping, a confidence outside [0, 1] or given
as a string or bool, an empty or malformed candidates list -- is an error, never coerced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np

from .._validation import is_missing, shown
from ..exceptions import ValidationError

__all__ = ["Prediction", "parse_prediction"]

_NAN = math.nan
# Types accepted without further checks; the scorer meets them millions of times.
FAST_SCALARS = frozenset({str, int, float, bool, type(None)})
_SCALARS = (str, int, float, Decimal, date, np.generic)
_VALUE_KEYS = frozenset({"value", "confidence"})
_CANDIDATE_KEYS = frozenset({"value", "probability"})


class Prediction(NamedTuple):
    """A parsed predicted leaf.

    See Also
    --------
    parse_prediction : builds it.
    """

    value: Any
    """The predicted value (possibly missing)."""
    confidence: float | None
    """The model's confidence in it, or ``None`` when the leaf carries none."""


class LeafError(Exception):
    """A malformed leaf; the caller adds where it was (doc id and field path).

    ``part`` is the path of the offending part inside the leaf (``confidence``,
    ``candidates[1].probability``), None when it is the leaf itself.
    """

    def __init__(self, message: str, part: str | None = None) -> None:
        super().__init__(message)
        self.part = part


def _describe(value: Any) -> str:
    if isinstance(value, (Mapping, list, tuple, set)):
        return f"a {type(value).__name__} {value!r}"
    return repr(value)


def check_scalar(value: Any, what: str, part: str | None = None) -> None:
    if type(value) in FAST_SCALARS:
        return
    if isinstance(value, _SCALARS) and not isinstance(value, np.ndarray):
        return
    if is_missing(value):
        return
    raise LeafError(
        f"{what} must be a string, number, bool, date or missing; found {_describe(value)}",
        part,
    )


def _check_probability(value: Any, what: str) -> float:
    # ``what`` is also the part's path in the leaf ("confidence", "candidates[0].probability")
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise LeafError(f"{what} must be a number within [0, 1]; found {_describe(value)}", what)
    try:
        p = float(value)
    except OverflowError:  # an int of 310+ digits: outside [0, 1] whatever its value
        p = math.inf
    if not 0.0 <= p <= 1.0:  # False for NaN as well
        raise LeafError(f"{what} must be a number within [0, 1]; found {shown(value)}", what)
    return p


def _best_candidate(candidates: Any) -> tuple[Any, float]:
    if not isinstance(candidates, (list, tuple)):
        raise LeafError(f"candidates must be a list of {{value, probability}}; found "
                        f"{_describe(candidates)}",
                         "candidates")
    if len(candidates) == 0:
        raise LeafError("candidates must not be empty; found 0 candidates", "candidates")
    best_value: Any = None
    best_p = -1.0
    for i, cand in enumerate(candidates):
        if not isinstance(cand, Mapping):
            raise LeafError(
                f"candidates[{i}] must be a mapping with keys 'value' and 'probability'; "
                f"found {_describe(cand)}", f"candidates[{i}]"
            )
        if cand.keys() != _CANDIDATE_KEYS:
            raise LeafError(
                f"candidates[{i}] must have exactly the keys 'probability', 'value'; "
                f"found {sorted(map(str, cand))}", f"candidates[{i}]"
            )
        value = cand["value"]
        check_scalar(value, f"candidates[{i}].value", f"candidates[{i}].value")
        p = _check_probability(cand["probability"], f"candidates[{i}].probability")
        if p > best_p:  # strict: among equal probabilities the first listed wins
            best_value, best_p = value, p
    return best_value, best_p


def unwrap_leaf(leaf: Any) -> tuple[Any, float]:
    """(value, confidence) of a predicted leaf; confidence NaN when absent.

    Raises LeafError with the rule and what was found; the caller prefixes the location.
    """
    kind = type(leaf)
    if kind in FAST_SCALARS:
        return leaf, _NAN
    if kind is dict and len(leaf) == 2 and "value" in leaf and "confidence" in leaf:
        # The common {"value", "confidence"} leaf, decided without the generic checks.
        value, confidence = leaf["value"], leaf["confidence"]
        if type(value) in FAST_SCALARS and type(confidence) is float and 0.0 <= confidence <= 1.0:
            return value, confidence
    if isinstance(leaf, Mapping):
        if "candidates" in leaf:
            if len(leaf) != 1:
                raise LeafError(
                    "a candidates leaf must have only the key 'candidates'; found keys "
                    f"{sorted(map(str, leaf))}"
                )
            return _best_candidate(leaf["candidates"])
        if "value" in leaf:
            if not leaf.keys() <= _VALUE_KEYS:
                raise LeafError(
                    "a value leaf must have the key 'value' and optionally 'confidence'; found "
                    f"keys {sorted(map(str, leaf))}"
                )
            value = leaf["value"]
            check_scalar(value, "value", "value")
            confidence = leaf.get("confidence")
            if confidence is None:
                return value, _NAN
            return value, _check_probability(confidence, "confidence")
        raise LeafError(
            "a predicted leaf given as a mapping must have the key 'value' or 'candidates'; "
            f"found keys {sorted(map(str, leaf))}"
        )
    check_scalar(leaf, "a predicted value")
    return leaf, _NAN


def parse_prediction(leaf: Any) -> Prediction:
    """Parse one predicted leaf into its value and confidence.

    Parameters
    ----------
    leaf : Any
        A raw value, ``{"value": v, "confidence": c}`` or
        ``{"candidates": [{"value": v, "probability": p}, ...]}``.

    Returns
    -------
    Prediction
        ``(value, confidence)``; ``confidence`` is ``None`` when the leaf carries none.

    Raises
    ------
    ValidationError
        If the leaf is malformed (module docstring); its ``field`` attribute is the
        offending part of the leaf (``confidence``, ``candidates[1].probability``), None
        when it is the leaf as a whole.

    See Also
    --------
    Prediction : what it returns.
    score_documents : reads every leaf with it.

    Examples
    --------
    >>> parse_prediction("ACME Media")
    Prediction(value='ACME Media', confidence=None)
    >>> parse_prediction({"value": "1,234.50", "confidence": 0.92})
    Prediction(value='1,234.50', confidence=0.92)
    >>> parse_prediction({"candidates": [{"value": "A", "probability": 0.4},
    ...                                  {"value": "B", "probability": 0.4},
    ...                                  {"value": "C", "probability": 0.2}]})
    Prediction(value='A', confidence=0.4)
    >>> parse_prediction({"value": "A", "confidence": 1.5})
    Traceback (most recent call last):
    ...
    confcal.exceptions.ValidationError: prediction: confidence must be a number within [0, 1]; found
    1.5
    """
    try:
        value, confidence = unwrap_leaf(leaf)
    except LeafError as exc:
        raise ValidationError(f"prediction: {exc}", field=exc.part) from None
    return Prediction(value, None if math.isnan(confidence) else confidence)
