"""The four post-hoc calibrators, their JSON form and :data:`CALIBRATORS`.

Re-exported by :mod:`confcal.calibration.calibrators`, whose docstring describes them.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from .._files import read_json_object
from .._validation import (
    check_calibration_data,
    check_confidence,
    check_n_bins,
    check_option,
    first_bad,
    is_real,
)
from ..exceptions import ValidationError
from ..metrics._metrics import BINNINGS, ranking_bins
from ..metrics._ranking import Ranking

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "CALIBRATORS",
    "CalibrationWarning",
    "Calibrator",
    "HistogramBinning",
    "IsotonicCalibration",
    "PlattScaling",
    "TemperatureScaling",
    "calibrator_from_json",
]

_FORMAT = "confcal.calibrator"
_VERSION = 1
# The temperature is searched in [1e-3, 1e3]. Beyond it the map is a step at 0.5 or a
# constant 0.5 in all but name, and the optimum only runs there when the data is separable
# at p = 0.5 or confidence is not positively associated with correctness: both are
# reported with a warning rather than returned as an absurd temperature.
_T_MIN, _T_MAX = 1e-3, 1e3


class CalibrationWarning(UserWarning):
    """A calibrator was fitted, but part of the data could not inform it (see the message)."""


class Calibrator(Protocol):
    """What :func:`evaluate_transfer` and :func:`cross_validate_calibrator` need of a fitted
    calibrator: ``predict`` maps confidences in [0, 1] to calibrated values in [0, 1].

    See Also
    --------
    TemperatureScaling : one parameter on the logit scale.
    IsotonicCalibration : a monotone step function.
    cross_validate_calibrator : held-out metrics of a calibrator.
    """

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated confidences, one per input."""


_C = TypeVar("_C")


# ---------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------
def _prepare(correct: ArrayLike, confidence: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    y, c, _ = check_calibration_data(correct, confidence)
    return y, c


def _check_eps(eps: Any) -> float | None:
    if eps is None:
        return None
    if not is_real(eps) or not 0.0 < float(eps) < 0.5:
        raise ValidationError(f"eps must be None or a number in (0, 0.5); found {eps!r}")
    return float(eps)


def _check_real(value: Any, name: str, *, low: float | None = None,
                low_open: bool = False) -> float:
    ok = is_real(value)
    if ok and low is not None:
        ok = float(value) > low if low_open else float(value) >= low
    if not ok:
        rule = "a finite number" if low is None else (
            f"a finite number {'>' if low_open else '>='} {low:g}")
        raise ValidationError(f"{name} must be {rule}; found {value!r}")
    return float(value)


def _logit(c: np.ndarray, eps: float | None) -> np.ndarray:
    """logit(p) = log p - log(1 - p); ±inf at exactly 0 and 1 unless eps clips first."""
    from scipy.special import logit

    if eps is not None:
        c = np.clip(c, eps, 1.0 - eps)  # documented in fit: eps is an explicit request
    return np.asarray(logit(c), dtype=np.float64)


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return np.asarray(expit(x), dtype=np.float64)


def _saturated(y: np.ndarray, c: np.ndarray, eps: float | None, name: str) -> np.ndarray:
    """Mask of the rows the logit model can read; warns about the rows it cannot fix.

    Without eps, a confidence of exactly 0 or 1 has an infinite logit: σ(±∞ · anything
    positive) is 0 or 1, so the row is predicted unchanged whatever the parameters and adds
    the same term to the log-loss for every parameter value. Leaving it out of the fit
    therefore changes nothing when the term is finite (0 and wrong, 1 and right); when the
    row contradicts its label the term is infinite for every parameter, the calibrator cannot
    correct it, and the user is told.
    """
    if eps is not None:
        return np.ones(c.shape[0], dtype=bool)
    inside = (c > 0.0) & (c < 1.0)
    wrong_at_1 = int(np.count_nonzero((c == 1.0) & ~y))
    right_at_0 = int(np.count_nonzero((c == 0.0) & y))
    if wrong_at_1 or right_at_0:
        warnings.warn(
            f"{name}: {wrong_at_1} wrong predictions at confidence exactly 1 and {right_at_0} "
            f"right ones at exactly 0; their logit is infinite, so {name} maps them to 1 and 0 "
            "whatever it learns and cannot correct them. Pass eps to read them as 1 - eps "
            "and eps, or use IsotonicCalibration or HistogramBinning",
            CalibrationWarning, stacklevel=3)
    if not inside.any():
        raise ValidationError(
            f"confidence must hold at least one value strictly inside (0, 1) to fit {name} "
            f"(or pass eps); found all {c.shape[0]} at exactly 0 or 1")
    return inside


def _floats(values: Any, name: str) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValidationError(f"{name} must be a sequence of numbers; found {values!r}")
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(f"{name} must be a non-empty 1-D sequence; found {values!r:.80}")
    return tuple(_check_real(v, f"{name}[{i}]") for i, v in enumerate(values))


def _check_unit_interval(values: tuple[float, ...], name: str) -> None:
    arr = np.asarray(values)
    ok = (arr >= 0.0) & (arr <= 1.0)
    if not ok.all():
        raise ValidationError(f"{name} must be within [0, 1]; {first_bad(~ok, arr)}")


def _check_increasing(values: tuple[float, ...], name: str, strict: bool) -> None:
    arr = np.asarray(values)
    step = np.diff(arr)
    ok = step > 0 if strict else step >= 0
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0]) + 1
        rule = "strictly increasing" if strict else "non-decreasing"
        raise ValidationError(f"{name} must be {rule}; found {values[i]!r} after "
                              f"{values[i - 1]!r} at index {i}")


def _dump(obj: Any) -> str:
    params = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        params[f.name] = list(value) if isinstance(value, tuple) else value
    # json writes floats with repr, the shortest string that reads back to the same float
    return json.dumps({"format": _FORMAT, "version": _VERSION, "type": type(obj).__name__,
                       "params": params}, allow_nan=False)


def _load_dict(text: Any) -> dict[str, Any]:
    data = read_json_object(text, where="text")
    if set(data) != {"format", "version", "type", "params"}:
        raise ValidationError("calibrator JSON must be an object with the keys 'format', "
                              f"'params', 'type', 'version'; found {sorted(data)}")
    if data["format"] != _FORMAT or data["version"] != _VERSION:
        raise ValidationError(f"calibrator JSON must have format {_FORMAT!r} and version "
                              f"{_VERSION}; found {data['format']!r} and {data['version']!r}")
    if not isinstance(data["params"], dict):
        raise ValidationError(f"calibrator JSON params must be an object; "
                              f"found {data['params']!r}")
    return data


def _build(cls: type[_C], data: dict[str, Any]) -> _C:
    if data["type"] != cls.__name__:
        raise ValidationError(f"calibrator JSON type must be {cls.__name__!r}; "
                              f"found {data['type']!r}")
    params = data["params"]
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    if set(params) != names:
        raise ValidationError(f"{cls.__name__} JSON params must be exactly {sorted(names)}; "
                              f"found {sorted(params)}")
    return cls(**params)


# ---------------------------------------------------------------------------------------
# the calibrators
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureScaling:
    """σ(logit(p) / T): one temperature T > 0 (Guo et al., 2017).

    T > 1 softens overconfident confidences toward 0.5, T < 1 sharpens them. The map is
    strictly increasing on (0, 1) and fixes 0.5, so ranking metrics are unchanged.

    Parameters
    ----------
    temperature : float > 0
    eps : float in (0, 0.5), optional
        When given, confidences are clipped to [eps, 1 - eps] before the logit, in ``fit``
        and ``predict`` alike (see :meth:`fit`).

    See Also
    --------
    PlattScaling : a slope and an intercept on the logit scale.
    IsotonicCalibration : a monotone step function, no parametric form.
    HistogramBinning : one accuracy per bin.
    cross_validate_calibrator : held-out metrics of a calibrator.

    Examples
    --------
    >>> cal = TemperatureScaling(temperature=2.0)
    >>> [round(v, 12) for v in cal.predict([0.0, 0.5, 0.9, 1.0]).tolist()]  # 0.9: 9 -> 3
    [0.0, 0.5, 0.75, 1.0]
    >>> TemperatureScaling.from_json(cal.to_json()) == cal
    True
    """

    temperature: float
    eps: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "temperature",
                           _check_real(self.temperature, "temperature", low=0.0, low_open=True))
        object.__setattr__(self, "eps", _check_eps(self.eps))

    @classmethod
    def fit(cls, correct: ArrayLike, confidence: ArrayLike, *, eps: float | None = None
            ) -> TemperatureScaling:
        """The temperature that minimizes the log-loss of ``correct`` given the confidences.

        Parameters
        ----------
        correct : array-like of bool or {0, 1}, shape (n,)
        confidence : array-like of float in [0, 1], shape (n,)
        eps : float in (0, 0.5), optional
            Read confidences as clipped to [eps, 1 - eps] (fit and predict).

        Returns
        -------
        TemperatureScaling

        Warns
        -----
        CalibrationWarning
            When some confidences are exactly 1 and wrong (or exactly 0 and right), which no
            temperature can move, or when the best temperature lies outside [1e-3, 1e3]
            (data separable at p = 0.5, or confidence not positively associated with
            correctness); it is then set to the bound.

        Raises
        ------
        ValidationError
            Invalid input, or (without eps) no confidence strictly inside (0, 1).

        Notes
        -----
        **Confidences of exactly 0 or 1.** Their logit is infinite, and σ(±∞ / T) is 0 or 1
        for every T: temperature scaling maps 0 to 0 and 1 to 1. By default they are left
        out of the fit (they add the same term to the log-loss for every T, so the fitted
        T is unchanged) and predicted unchanged; the rows among them that are wrong are
        counted in a warning. Verbalized confidences are often exactly 1.0: to let the
        calibrator lower them, pass ``eps`` (e.g. 1e-3), which reads every confidence as
        clipped to [eps, 1 - eps]; this clipping is explicit and stored, so ``predict`` does
        the same. It makes all confidences >= 1 - eps one value (and all <= eps another):
        a non-decreasing rather than strictly increasing map. Or use
        :class:`IsotonicCalibration`, which needs no logit.

        The log-loss is convex in 1/T; its derivative is solved for by Brent's method to
        machine precision.

        Examples
        --------
        >>> # one confidence 0.9 (logit log 9), right 3 times out of 4: the fit must give
        >>> # σ(log 9 / T) = 0.75, i.e. log 9 / T = logit(0.75) = log 3, so T = 2
        >>> round(TemperatureScaling.fit([1, 1, 1, 0], [0.9] * 4).temperature, 9)
        2.0
        """
        from scipy.optimize import brentq

        y, c = _prepare(correct, confidence)
        eps = _check_eps(eps)
        use = _saturated(y, c, eps, "TemperatureScaling")
        z = _logit(c[use], eps)
        s = np.where(y[use], 1.0, -1.0)
        sz = s * z

        # NLL(β) = Σ softplus(-s·β·z) with β = 1/T is convex; its derivative
        # -Σ s·z·σ(-s·β·z) is increasing in β, so it has one root or the optimum is a bound.
        def slope(beta: float) -> float:
            return float(-np.sum(sz * _expit(-beta * sz)))

        lo, hi = 1.0 / _T_MAX, 1.0 / _T_MIN
        if slope(lo) >= 0.0:
            beta = lo
            _warn_bound("TemperatureScaling", f"temperature {_T_MAX:g}",
                        "confidence is not positively associated with correctness")
        elif slope(hi) <= 0.0:
            beta = hi
            _warn_bound("TemperatureScaling", f"temperature {_T_MIN:g}",
                        "right and wrong predictions are separated at confidence 0.5")
        else:
            beta = float(brentq(slope, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps,
                                maxiter=500))
        return cls(temperature=1.0 / beta, eps=eps)

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated confidences: σ(logit(p) / T) (p clipped to [eps, 1 - eps] if eps)."""
        c = check_confidence(confidence)
        return _expit(_logit(c, self.eps) / self.temperature)

    def to_json(self) -> str:
        """The calibrator as JSON; :meth:`from_json` reads it back exactly."""
        return _dump(self)

    @classmethod
    def from_json(cls, text: str) -> TemperatureScaling:
        """Read a calibrator written by :meth:`to_json`."""
        return _build(cls, _load_dict(text))


def _warn_bound(name: str, bound: str, reason: str) -> None:
    warnings.warn(f"{name}: the best fit lies at or beyond {bound}, where it was set; "
                  f"{reason} on this data", CalibrationWarning, stacklevel=3)


@dataclass(frozen=True)
class PlattScaling:
    """σ(a · logit(p) + b) with slope a >= 0 (Platt, 1999, on the logit of the confidence).

    With a > 0 the map is strictly increasing on (0, 1); a = 0 (the fit's bound, reached
    only when confidence is not positively associated with correctness) is the constant
    σ(b).

    Parameters
    ----------
    slope : float >= 0
    intercept : float
    eps : float in (0, 0.5), optional
        Clip confidences to [eps, 1 - eps] before the logit (see
        :meth:`TemperatureScaling.fit`).

    See Also
    --------
    TemperatureScaling : the slope alone.
    calibration_slope : the same logistic fit read as a diagnosis.
    cross_validate_calibrator : held-out metrics of a calibrator.

    Examples
    --------
    >>> cal = PlattScaling(slope=1.0, intercept=math.log(3))   # odds times 3
    >>> [round(v, 12) for v in cal.predict([0.0, 0.5, 1.0]).tolist()]
    [0.0, 0.75, 1.0]
    """

    slope: float
    intercept: float
    eps: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "slope", _check_real(self.slope, "slope", low=0.0))
        object.__setattr__(self, "intercept", _check_real(self.intercept, "intercept"))
        object.__setattr__(self, "eps", _check_eps(self.eps))

    @classmethod
    def fit(cls, correct: ArrayLike, confidence: ArrayLike, *, eps: float | None = None
            ) -> PlattScaling:
        """Fit a and b by maximum likelihood with Platt's smoothed targets.

        Platt's targets replace the labels 1 and 0 by (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2)
        (N₊, N₋ the right and wrong predictions in the fit). They keep the fit finite when
        right and wrong predictions are separable, where the plain maximum likelihood sends
        the slope to infinity. Those soft targets and the a >= 0 constraint (a monotone
        map) are why this uses ``scipy.optimize.minimize`` (L-BFGS-B, analytic gradient,
        convex objective) rather than scikit-learn's LogisticRegression, which takes
        neither.

        Confidences of exactly 0 and 1 are handled as in :meth:`TemperatureScaling.fit`:
        left out of the fit and predicted unchanged (when a > 0), with a warning counting
        those that contradict their label, unless ``eps`` is given.

        Warns
        -----
        CalibrationWarning
            Saturated confidences that contradict their label; a slope at its bound 0.

        Examples
        --------
        >>> # logits 0 (two predictions, one right) and log 9 (two right): N+ = 3, N- = 1,
        >>> # targets 4/5 and 1/3. Two parameters fit the two mean targets exactly:
        >>> # σ(b) = (4/5 + 1/3)/2 = 17/30 and σ(a·log 9 + b) = 4/5.
        >>> cal = PlattScaling.fit([1, 0, 1, 1], [0.5, 0.5, 0.9, 0.9])
        >>> [round(v, 6) for v in cal.predict([0.5, 0.9]).tolist()], round(17 / 30, 6)
        ([0.566667, 0.8], 0.566667)
        """
        from scipy.optimize import minimize

        y, c = _prepare(correct, confidence)
        eps = _check_eps(eps)
        use = _saturated(y, c, eps, "PlattScaling")
        z = _logit(c[use], eps)
        yu = y[use]
        n_pos = int(np.count_nonzero(yu))
        n_neg = yu.shape[0] - n_pos
        t = np.where(yu, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

        def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
            a, b = params
            f = a * z + b
            # t·softplus(-f) + (1-t)·softplus(f), per row, averaged: scale-free tolerances
            value = float(np.mean(t * np.logaddexp(0.0, -f) + (1.0 - t) * np.logaddexp(0.0, f)))
            r = _expit(f) - t
            return value, np.array([np.mean(r * z), np.mean(r)])

        prior = math.log((n_pos + 1.0) / (n_neg + 1.0))
        result = minimize(loss, np.array([1.0, prior]), jac=True, method="L-BFGS-B",
                          bounds=[(0.0, None), (None, None)],
                          options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 2000})
        a, b = (float(v) for v in result.x)
        if not result.success:
            warnings.warn(f"PlattScaling: the optimizer stopped early ({result.message}); "
                          "the fit may be inexact", CalibrationWarning, stacklevel=2)
        if a == 0.0:
            _warn_bound("PlattScaling", "slope 0 (a constant map)",
                        "confidence is not positively associated with correctness")
        return cls(slope=a, intercept=b, eps=eps)

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated confidences: σ(a · logit(p) + b)."""
        c = check_confidence(confidence)
        if self.slope == 0.0:  # 0 · ±∞ is NaN: the constant map is written out
            return np.full(c.shape[0], float(_expit(np.array(self.intercept))))
        return _expit(self.slope * _logit(c, self.eps) + self.intercept)

    def to_json(self) -> str:
        """The calibrator as JSON; :meth:`from_json` reads it back exactly."""
        return _dump(self)

    @classmethod
    def from_json(cls, text: str) -> PlattScaling:
        """Read a calibrator written by :meth:`to_json`."""
        return _build(cls, _load_dict(text))


def _interpolate(x: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Piecewise-linear through (x, y), constant beyond the ends, monotone in floats too.

    Each value is clamped into its segment's [y_j, y_j+1]: rounding in y_j + t·(y_j+1 − y_j)
    could otherwise overshoot y_j+1 by an ulp just below a knot and break monotonicity.
    """
    if x.shape[0] == 1:
        return np.full(c.shape[0], y[0])
    j = np.clip(np.searchsorted(x, c, side="right") - 1, 0, x.shape[0] - 2)
    x0, x1, y0, y1 = x[j], x[j + 1], y[j], y[j + 1]
    t = np.clip((c - x0) / (x1 - x0), 0.0, 1.0)
    return np.minimum(np.maximum(y0 + t * (y1 - y0), y0), y1)



def _set_monotone_map(obj: Any, knots: str, levels: str) -> None:
    """Check and store a monotone map given as knots (strictly increasing) and levels
    (non-decreasing), both within [0, 1] and of one length: the fitted state of the
    isotonic and histogram calibrators."""
    k, v = _floats(getattr(obj, knots), knots), _floats(getattr(obj, levels), levels)
    if len(k) != len(v):
        raise ValidationError(f"{knots}, {levels} must have the same length; {knots} has "
                              f"{len(k)} and {levels} has {len(v)}")
    _check_unit_interval(k, knots)
    _check_unit_interval(v, levels)
    _check_increasing(k, knots, strict=True)
    _check_increasing(v, levels, strict=False)
    object.__setattr__(obj, knots, k)
    object.__setattr__(obj, levels, v)

@dataclass(frozen=True)
class IsotonicCalibration:
    """Isotonic regression of correctness on confidence, interpolated linearly.

    The fit (scikit-learn's ``IsotonicRegression``, pool-adjacent-violators) is the
    non-decreasing function closest to the labels in squared error; ``predict`` joins its
    knots ``(x, y)`` by straight lines and is constant below the first and above the last.
    Runs of pooled predictions become ties: the map is non-decreasing, not strictly
    increasing.

    Parameters
    ----------
    x : sequence of float, strictly increasing, within [0, 1]
        Knot confidences.
    y : sequence of float, non-decreasing, within [0, 1]
        Calibrated values at the knots.

    See Also
    --------
    HistogramBinning : fixed bins instead of fitted steps.
    TemperatureScaling : one smooth parameter.
    cross_validate_calibrator : held-out metrics of a calibrator.

    Examples
    --------
    >>> # labels 0, 1, 0, 1 at 0.1..0.4: the violators (1, 0) pool to 0.5
    >>> cal = IsotonicCalibration.fit([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4])
    >>> cal.y
    (0.0, 0.5, 0.5, 1.0)
    >>> [round(v, 12) for v in cal.predict([0.0, 0.15, 0.25, 0.35, 1.0]).tolist()]
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_monotone_map(self, "x", "y")

    @classmethod
    def fit(cls, correct: ArrayLike, confidence: ArrayLike) -> IsotonicCalibration:
        """Fit by isotonic regression; equal confidences are pooled (one knot each).

        Exact 0 and 1 confidences need no special handling. With one class only the map is
        the constant 0 or 1.
        """
        from sklearn.isotonic import IsotonicRegression

        y, c = _prepare(correct, confidence)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(c, y.astype(np.float64))
        return cls(x=tuple(map(float, iso.X_thresholds_)), y=tuple(map(float, iso.y_thresholds_)))

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated confidences: linear between knots, constant beyond the ends."""
        c = check_confidence(confidence)
        return _interpolate(np.asarray(self.x), np.asarray(self.y), c)

    def to_json(self) -> str:
        """The calibrator as JSON; :meth:`from_json` reads it back exactly."""
        return _dump(self)

    @classmethod
    def from_json(cls, text: str) -> IsotonicCalibration:
        """Read a calibrator written by :meth:`to_json`."""
        return _build(cls, _load_dict(text))


@dataclass(frozen=True)
class HistogramBinning:
    """A step function: each confidence bin maps to the accuracy observed in it.

    Bins are those of :func:`confcal.ece` (same rules, same edges). Plain histogram binning
    (Zadrozny & Elkan, 2001) can map a higher bin to a lower value when a bin's accuracy
    dips; here the bin accuracies are made non-decreasing by isotonic regression weighted
    by bin counts (neighbouring bins that would invert pool their accuracy), so the map is
    non-decreasing. Bins whose values end equal are merged.

    Parameters
    ----------
    edges : sequence of float, strictly increasing, within [0, 1]
        Lower edge of each bin: a confidence c is in the last bin whose edge is <= c; the
        first bin also takes every confidence below its edge.
    values : sequence of float, non-decreasing, within [0, 1]
        The calibrated value of each bin.

    See Also
    --------
    IsotonicCalibration : fitted monotone steps.
    reliability_bins : the same bins as a table.
    cross_validate_calibrator : held-out metrics of a calibrator.

    Examples
    --------
    >>> # 2 equal-mass bins: {0.1, 0.2, 0.3} with 1 right and {0.7, 0.8, 0.9} with 2 right
    >>> cal = HistogramBinning.fit([0, 1, 0, 1, 0, 1], [0.1, 0.2, 0.3, 0.7, 0.8, 0.9],
    ...                            n_bins=2)
    >>> cal.edges, [round(v, 12) for v in cal.values]
    ((0.1, 0.7), [0.333333333333, 0.666666666667])
    >>> [round(v, 12) for v in cal.predict([0.0, 0.5, 0.7, 1.0]).tolist()]
    [0.333333333333, 0.333333333333, 0.666666666667, 0.666666666667]
    """

    edges: tuple[float, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_monotone_map(self, "edges", "values")

    @classmethod
    def fit(cls, correct: ArrayLike, confidence: ArrayLike, *, n_bins: int = 10,
            binning: str = "quantile") -> HistogramBinning:
        """Bin the confidences and map each bin to its (monotone-pooled) accuracy.

        Parameters
        ----------
        correct, confidence : array-like, shape (n,)
        n_bins : int, default 10
        binning : {"quantile", "uniform"}, default "quantile"
            As in :func:`confcal.ece`: equal-mass bins that never split a run of equal
            confidences (a bin's edge is its smallest confidence), or [i/M, (i+1)/M) with the
            last bin closed at 1.0. Empty bins are dropped: their range goes to the nearest
            non-empty bin below (or above, before the first).
        """
        from sklearn.isotonic import IsotonicRegression

        y, c = _prepare(correct, confidence)
        n_bins = check_n_bins(n_bins)
        binning = check_option(binning, "binning", BINNINGS)
        bins = ranking_bins(Ranking.from_arrays(y, c), n_bins, binning)
        accuracy = bins.correct / bins.weight
        pooled = IsotonicRegression(increasing=True).fit(
            np.arange(accuracy.shape[0], dtype=np.float64), accuracy,
            sample_weight=bins.weight).predict(np.arange(accuracy.shape[0], dtype=np.float64))
        keep = np.r_[True, pooled[1:] != pooled[:-1]]
        return cls(edges=tuple(map(float, bins.lower[keep])),
                   values=tuple(map(float, pooled[keep])))

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated confidences: the value of the bin each confidence falls in."""
        c = check_confidence(confidence)
        j = np.searchsorted(np.asarray(self.edges), c, side="right") - 1
        return np.asarray(self.values)[np.maximum(j, 0)]

    def to_json(self) -> str:
        """The calibrator as JSON; :meth:`from_json` reads it back exactly."""
        return _dump(self)

    @classmethod
    def from_json(cls, text: str) -> HistogramBinning:
        """Read a calibrator written by :meth:`to_json`."""
        return _build(cls, _load_dict(text))


CALIBRATORS: Mapping[str, Any] = MappingProxyType({
    "temperature": TemperatureScaling,
    "platt": PlattScaling,
    "isotonic": IsotonicCalibration,
    "histogram": HistogramBinning,
})
"""Calibrator classes by the names :func:`evaluate_transfer` accepts."""


def calibrator_from_json(
        text: str) -> TemperatureScaling | PlattScaling | IsotonicCalibration | HistogramBinning:
    """Read any calibrator written by its ``to_json``.

    See Also
    --------
    Calibrator : its ``to_json`` writes what this reads.

    Examples
    --------
    >>> calibrator_from_json(PlattScaling(slope=0.5, intercept=-0.25).to_json())
    PlattScaling(slope=0.5, intercept=-0.25, eps=None)
    """
    data = _load_dict(text)
    by_type = {cls.__name__: cls for cls in CALIBRATORS.values()}
    if data["type"] not in by_type:
        raise ValidationError(f"calibrator JSON type must be one of {sorted(by_type)}; "
                              f"found {data['type']!r}")
    return _build(by_type[data["type"]], data)
