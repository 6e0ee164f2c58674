"""Logistic stacking of confidence signals: the fit, document folds, cross-fitting, report.

Re-exported by :mod:`confcal.calibration.ensemble`, whose docstring describes the method.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._validation import (
    align_pandas,
    check_budgets,
    check_confidence,
    check_consistent_length,
    check_correct,
    check_groups,
    check_n_bins,
    check_option,
    check_positive_int,
    check_probability,
    check_sample_weight,
    check_seed,
    is_real,
)
from ..exceptions import ValidationError
from ..metrics._metrics import BINNINGS, DEFAULT_BUDGETS
from ..metrics._report import calibration_report
from ..metrics.bootstrap import bootstrap_ci
from ._calibrators import CalibrationWarning
from ._evaluation import group_folds

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "DEFAULT_EPS",
    "ENSEMBLE",
    "ConfidenceEnsemble",
    "CrossFittedEnsemble",
    "EnsembleReport",
    "cross_fit_ensemble",
    "ensemble_report",
]

DEFAULT_EPS = 1e-6
"""Confidences are read as clipped to [eps, 1 - eps] before the logit (|logit| <= 13.8).

A confidence of exactly 0 or 1 has an infinite logit, which no finite coefficient can
weigh, and verbalized confidences are often exactly 1.0. 1e-6 leaves every confidence up
to 0.999999 as it is, so a sharp token-probability signal keeps its ranking; the ranking
among confidences above 1 - 1e-6 is lost (pass a smaller eps for such a signal). A
verbalized signal in coarse steps wants a coarse eps instead (``eps={"verbalized":
0.01}``): at 1e-6 its 1.0 sits 11 logits above its 0.95. The rows clipped are counted
(``n_clipped``), and those exactly at 0 or 1 (``n_saturated``)."""

ENSEMBLE = "ensemble"
"""The ``signal`` of the ensemble's rows in :class:`EnsembleReport` (no input may take it)."""

_MAX_ITER = 100


# ---------------------------------------------------------------------------------------
# boundary checks
# ---------------------------------------------------------------------------------------
def _one_eps(eps: Any, name: str) -> float:
    if not is_real(eps) or not 0.0 < float(eps) < 0.5:
        raise ValidationError(f"{name} must be a number in (0, 0.5); found {eps!r}")
    return float(eps)


def check_eps(eps: Any, names: Sequence[str]) -> dict[str, float]:
    """eps per signal: one number in (0, 0.5) for all, or a mapping naming some signals
    (the others take :data:`DEFAULT_EPS`)."""
    if isinstance(eps, Mapping):
        unknown = sorted(set(eps) - set(names), key=str)
        if unknown:
            raise ValidationError(f"eps must name only the signals {sorted(names)}; found "
                                  f"{unknown}")
        return {k: _one_eps(eps.get(k, DEFAULT_EPS), f"eps[{k!r}]") for k in names}
    value = _one_eps(eps, "eps")
    return {k: value for k in names}


def check_l2(l2: Any) -> float:
    """The ridge strength: a finite number >= 0."""
    if not is_real(l2) or float(l2) < 0.0:
        raise ValidationError(f"l2 must be a finite number >= 0; found {l2!r}")
    return float(l2)


def check_signals(confidences: Any, n: int | None = None, *, minimum: int = 1,
                  name: str = "confidences") -> dict[str, np.ndarray]:
    """A mapping of signal name -> confidence array, each checked, all of one length.

    Names must be non-empty strings other than :data:`ENSEMBLE`; values finite and within
    [0, 1]. The caller's order is kept.
    """
    if not isinstance(confidences, Mapping):
        raise ValidationError(
            f"{name} must be a mapping of signal name -> confidence array (e.g. "
            f"{{'logprob': [...], 'verbalized': [...]}}); found {type(confidences).__name__}")
    if len(confidences) < minimum:
        raise ValidationError(f"{name} must hold at least {minimum} signals; found "
                              f"{len(confidences)}")
    out: dict[str, np.ndarray] = {}
    for key, values in confidences.items():
        if not isinstance(key, str) or not key:
            raise ValidationError(f"{name} must be keyed by non-empty strings; found {key!r}")
        if key == ENSEMBLE:
            raise ValidationError(f"{name} must not name a signal {ENSEMBLE!r}, the name of "
                                  "the combined score in the report; rename it")
        out[key] = check_confidence(values, f"{name}[{key!r}]")
    lengths = {f"{name}[{k!r}]": v for k, v in out.items()}
    if n is not None and any(v.shape[0] != n for v in out.values()):
        bad = next(k for k, v in lengths.items() if v.shape[0] != n)
        raise ValidationError(f"correct and {bad} must have the same length; correct has {n} "
                              f"and {bad} has {lengths[bad].shape[0]}")
    check_consistent_length(**lengths)
    return out


def aligned_inputs(correct: Any, confidences: Any, sample_weight: Any = None,
                   groups: Any = None) -> tuple[Any, Any, Any, Any]:
    """The inputs with their pandas Series matched by index label to the first one
    (:func:`confcal._validation.align_pandas`), the signals' names in the messages as
    ``confidences['logprob']``."""
    if not isinstance(confidences, Mapping) or not all(isinstance(k, str) for k in confidences):
        return correct, confidences, sample_weight, groups  # check_signals says what is wrong
    names = [f"confidences[{k!r}]" for k in confidences]
    values = align_pandas(**{"correct": correct, **dict(zip(names, confidences.values(),
                                                             strict=True)),
                             "sample_weight": sample_weight, "groups": groups})
    signals = dict(zip(confidences, values[1:-2], strict=True))
    return values[0], signals, values[-2], values[-1]


def _check_groups(groups: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Group codes numbered in a canonical order of the labels, and the labels.

    Codes follow the sorted labels (or, for labels that do not sort together, their type
    name and repr), not the order of first appearance: the folds, and so every score,
    depend on which rows belong to which document, never on the order of the rows.
    """
    check_groups(groups, n)  # refuses missing ids, wrong shapes; names the first
    if groups is None:
        return np.arange(n, dtype=np.int64), np.arange(n)
    codes, labels = pd.factorize(np.asarray(groups), sort=False)
    labels = np.asarray(labels)
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # mixed types: a fixed order all the same
        order = np.array(sorted(range(labels.shape[0]), key=lambda i: (
            type(labels[i]).__name__, repr(labels[i]))), dtype=np.int64)
    rank = np.empty(labels.shape[0], dtype=np.int64)
    rank[order] = np.arange(labels.shape[0])
    return rank[codes].astype(np.int64), labels[order]


# ---------------------------------------------------------------------------------------
# the logistic fit
# ---------------------------------------------------------------------------------------
def logit_features(signals: Sequence[np.ndarray], eps: Sequence[float]) -> np.ndarray:
    """(n, k) logits of the signals, signal j clipped to [eps_j, 1 - eps_j] first."""
    cols = [np.clip(c, e, 1.0 - e) for c, e in zip(signals, eps, strict=True)]
    return np.column_stack([np.log(c) - np.log1p(-c) for c in cols])


def _expit(f: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return np.asarray(expit(f), dtype=np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float
                 ) -> tuple[np.ndarray, float]:
    """Coefficients and intercept minimizing Σ w·logloss + l2/2 · ||coef||².

    scikit-learn's ``LogisticRegression`` with ``C = 1/l2`` (``C = inf``, no penalty, at
    ``l2 = 0``; the intercept is never penalized) and its Newton-Cholesky solver, to a
    tolerance far below anything a report prints. Without a penalty, classes the signals
    separate have no finite optimum: the solver stops where the loss is flat, with every
    training row fitted to within 1e-6, and that is a :class:`CalibrationWarning`.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0 / l2 if l2 > 0 else math.inf, solver="newton-cholesky",
                               tol=1e-12, max_iter=_MAX_ITER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(x, y.astype(np.int64), sample_weight=w)
    coef, intercept = model.coef_[0].astype(np.float64), float(model.intercept_[0])
    fitted = _expit(x @ coef + intercept)
    separated = l2 == 0 and float(np.max(np.abs(fitted - y))) < 1e-6
    if separated or any(issubclass(c.category, ConvergenceWarning) for c in caught) \
            or not (np.all(np.isfinite(coef)) and math.isfinite(intercept)):
        warnings.warn(
            "ConfidenceEnsemble: the logistic fit did not converge (the classes may be "
            "separable by the signals; pass l2 > 0 to keep the coefficients finite)",
            CalibrationWarning, stacklevel=4)
    return coef, intercept


def _check_both_classes(y: np.ndarray, w: np.ndarray, where: str) -> None:
    right = float(np.dot(w, y))
    wrong = float(w.sum()) - right
    if right <= 0.0 or wrong <= 0.0:
        found = ("no correct prediction" if right <= 0.0 else "no incorrect prediction")
        raise ValidationError(f"{where} must hold correct and incorrect predictions (with "
                              f"positive weight) to fit a logistic combiner; found {found} "
                              f"among {y.shape[0]} rows")


def clipped_mask(c: np.ndarray, eps: float) -> np.ndarray:
    """The confidences the logit reads as eps or 1 - eps."""
    return (c < eps) | (c > 1.0 - eps)


def _clip_counts(signals: Mapping[str, np.ndarray], eps: Mapping[str, float]
                 ) -> tuple[Mapping[str, int], Mapping[str, int]]:
    clipped = {k: int(np.count_nonzero(clipped_mask(c, eps[k]))) for k, c in signals.items()}
    saturated = {k: int(np.count_nonzero((c == 0.0) | (c == 1.0))) for k, c in signals.items()}
    return MappingProxyType(clipped), MappingProxyType(saturated)


# ---------------------------------------------------------------------------------------
# the fitted combiner
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConfidenceEnsemble:
    """σ(intercept + Σ_j coef_j · logit(p_j)): one confidence from several signals.

    Parameters
    ----------
    names : tuple of str
        The signals, sorted (a fit orders them so, whatever the order given).
    coef : tuple of float
        One coefficient per signal, in the order of ``names``.
    intercept : float
    eps : float in (0, 0.5), or one per name, default :data:`DEFAULT_EPS`
        Signal j's confidences are clipped to [eps_j, 1 - eps_j] before the logit; a
        number is used for every signal, and a mapping (name -> eps, the unnamed signals
        taking :data:`DEFAULT_EPS`) or a sequence in the order of ``names`` is stored as
        a tuple in that order.

    See Also
    --------
    cross_fit_ensemble : document-grouped cross-fitting of the ensemble.
    align_signals : the signals lined up per entity.

    Examples
    --------
    >>> ens = ConfidenceEnsemble(names=("a", "b"), coef=(0.5, 0.5), intercept=0.0)
    >>> # logit 0.9 = log 9 for both: 0.5·log 9 + 0.5·log 9 = log 9 -> 0.9
    >>> [round(v, 12) for v in ens.transform({"b": [0.9, 0.5], "a": [0.9, 0.9]}).tolist()]
    [0.9, 0.75]
    >>> ens.coefficients
    mappingproxy({'a': 0.5, 'b': 0.5})
    """

    names: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    eps: Any = DEFAULT_EPS

    def __post_init__(self) -> None:
        names = tuple(self.names) if isinstance(self.names, (list, tuple)) else None
        if not names or not all(isinstance(s, str) and s for s in names):
            raise ValidationError(f"names must be a non-empty tuple of non-empty strings; "
                                  f"found {self.names!r}")
        if len(set(names)) != len(names):
            raise ValidationError(f"names must not repeat a signal; found {list(names)}")
        coef = tuple(self.coef) if isinstance(self.coef, (list, tuple, np.ndarray)) else ()
        if len(coef) != len(names) or not all(is_real(v) for v in coef):
            raise ValidationError(f"coef must hold one finite number per name ({len(names)}); "
                                  f"found {self.coef!r}")
        if not is_real(self.intercept):
            raise ValidationError(f"intercept must be a finite number; found {self.intercept!r}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "coef", tuple(float(v) for v in coef))
        object.__setattr__(self, "intercept", float(self.intercept))
        eps = self.eps
        if isinstance(eps, (list, tuple, np.ndarray)):
            if len(eps) != len(names):
                raise ValidationError(f"eps must be a number, a mapping, or one number per "
                                      f"name ({len(names)}); found {self.eps!r}")
            values = tuple(_one_eps(e, f"eps[{i}]") for i, e in enumerate(eps))
        else:
            by_name = check_eps(eps, names)
            values = tuple(by_name[k] for k in names)
        object.__setattr__(self, "eps", values)

    @property
    def eps_by_signal(self) -> Mapping[str, float]:
        """Signal name -> the eps its confidences are clipped with."""
        return MappingProxyType(dict(zip(self.names, self.eps, strict=True)))

    @property
    def coef_(self) -> np.ndarray:
        """The coefficients as an array, in the order of :attr:`names` (as scikit-learn)."""
        return np.array(self.coef, dtype=np.float64)

    @property
    def intercept_(self) -> float:
        """The intercept (as scikit-learn names it)."""
        return self.intercept

    @property
    def coefficients(self) -> Mapping[str, float]:
        """Signal name -> coefficient."""
        return MappingProxyType(dict(zip(self.names, self.coef, strict=True)))

    @classmethod
    def fit(cls, correct: ArrayLike, confidences: Mapping[str, ArrayLike], *,
            sample_weight: ArrayLike | None = None,
            eps: float | Mapping[str, float] = DEFAULT_EPS, l2: float = 1.0
            ) -> ConfidenceEnsemble:
        """Logistic regression of ``correct`` on the logit of each signal, plus an intercept.

        Parameters
        ----------
        correct : array-like of bool or {0, 1}, shape (n,)
        confidences : mapping of str to array-like of float in [0, 1], shape (n,)
            One or more signals (one is logistic recalibration of that signal).
        sample_weight : array-like of float >= 0, shape (n,), optional
            Each row's log-loss counts with its weight.
        eps : float in (0, 0.5) or mapping of str to float, default :data:`DEFAULT_EPS`
            Clip signal j to [eps_j, 1 - eps_j] before its logit: one number for all, or
            a mapping naming some signals (the others take :data:`DEFAULT_EPS`). A
            verbalized signal reported in coarse steps (0.9, 0.95, 1.0) reads better with
            an eps near its step (0.01: 1.0 is read as 0.99) than with 1e-6, where every
            1.0 sits 11 logits above 0.95 and drags its coefficient down.
        l2 : float >= 0, default 1.0
            The ridge penalty l2/2 · Σ coef² added to the summed (weighted) log-loss;
            scikit-learn's ``LogisticRegression(C=1/l2)``. It keeps the fit finite when the
            signals separate right from wrong; 0 is plain maximum likelihood.

        Returns
        -------
        ConfidenceEnsemble
            Fitted in the sorted order of the names, so the fit does not depend on the
            order of the mapping.

        Raises
        ------
        ValidationError
            Invalid input, or the rows (with positive weight) hold one class only.

        Warns
        -----
        CalibrationWarning
            Newton's method did not converge (separable data with ``l2=0``).

        Examples
        --------
        >>> # a = 0.5 (logit 0): 1 right, 1 wrong; a = 0.9 (logit log 9): 3 right, 1 wrong.
        >>> # With l2 = 0 the fit reproduces both accuracies: σ(b) = 1/2, so b = 0, and
        >>> # σ(c·log 9) = 3/4, so c = log 3 / log 9 = 1/2
        >>> ens = ConfidenceEnsemble.fit([1, 0, 1, 1, 1, 0],
        ...                              {"a": [0.5, 0.5, 0.9, 0.9, 0.9, 0.9]}, l2=0.0)
        >>> round(ens.coef[0], 9), round(ens.intercept, 9)
        (0.5, 0.0)
        """
        correct, confidences, sample_weight, _ = aligned_inputs(correct, confidences,
                                                                 sample_weight)
        y = check_correct(correct)
        signals = check_signals(confidences, y.shape[0])
        w = (np.ones(y.shape[0]) if sample_weight is None
             else check_sample_weight(sample_weight, y.shape[0]))
        eps_by, l2 = check_eps(eps, list(signals)), check_l2(l2)
        _check_both_classes(y, w, "correct")
        return _fit(y, signals, w, eps_by, l2)

    def decision_function(self, confidences: Mapping[str, ArrayLike]) -> np.ndarray:
        """The combined logit: intercept + Σ coef_j · logit(clip(p_j, eps, 1 - eps))."""
        signals = self._signals(confidences)
        x = logit_features([signals[k] for k in self.names], self.eps)
        return np.asarray(x @ self.coef_ + self.intercept, dtype=np.float64)

    def transform(self, confidences: Mapping[str, ArrayLike]) -> np.ndarray:
        """The combined confidence σ(:meth:`decision_function`) of new rows.

        ``confidences`` must hold exactly the signals of :attr:`names` (in any order).
        """
        return _expit(self.decision_function(confidences))

    def _signals(self, confidences: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
        signals = check_signals(confidences)
        if set(signals) != set(self.names):
            missing = sorted(set(self.names) - set(signals))
            extra = sorted(set(signals) - set(self.names))
            raise ValidationError(f"confidences must hold exactly the signals {list(self.names)}"
                                  f"; found {missing} missing and {extra} not fitted")
        return signals


def _fit(y: np.ndarray, signals: Mapping[str, np.ndarray], w: np.ndarray,
         eps: Mapping[str, float], l2: float) -> ConfidenceEnsemble:
    names = tuple(sorted(signals))
    e = tuple(eps[k] for k in names)
    coef, intercept = fit_logistic(logit_features([signals[k] for k in names], e), y, w, l2)
    return ConfidenceEnsemble(names=names, coef=tuple(coef), intercept=intercept, eps=e)


# ---------------------------------------------------------------------------------------
# cross-fitting
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CrossFittedEnsemble:
    """Out-of-fold combined confidences, the combiner of each fold, and one on all rows.

    Attributes
    ----------
    names : tuple of str
        The signals, sorted (the order of every model's ``coef``).
    confidence : numpy.ndarray, shape (n,)
        Row i's combined confidence, from the combiner of its fold: fitted on the other
        folds, so on no row of row i's document.
    fold : numpy.ndarray of int, shape (n,)
        Row i's fold (0 .. folds - 1).
    fold_groups : tuple of tuple
        The documents (group labels, sorted) of each fold.
    models : tuple of ConfidenceEnsemble
        ``models[f]`` was fitted on the rows whose fold is not f and scored fold f.
    final : ConfidenceEnsemble
        Fitted on every row: the combiner to apply to new data (its out-of-sample quality
        is what the out-of-fold scores estimate).
    folds, seed, l2 : the settings.
    eps : Mapping[str, float]
        Per signal, the eps of its clip.
    n_clipped : Mapping[str, int]
        Per signal, the confidences outside [eps, 1 - eps], read as eps or 1 - eps.
    n_saturated : Mapping[str, int]
        Per signal, the confidences exactly 0 or 1 (counted in ``n_clipped`` too).

    See Also
    --------
    cross_fit_ensemble : builds it.
    """

    names: tuple[str, ...]
    confidence: np.ndarray = field(repr=False)
    fold: np.ndarray = field(repr=False)
    fold_groups: tuple[tuple[Any, ...], ...] = field(repr=False)
    models: tuple[ConfidenceEnsemble, ...]
    final: ConfidenceEnsemble
    folds: int
    seed: int | None
    eps: Mapping[str, float]
    l2: float
    n_clipped: Mapping[str, int]
    n_saturated: Mapping[str, int]


def prepare(correct: Any, confidences: Any, groups: Any, sample_weight: Any, minimum: int
            ) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                       np.ndarray | None]:
    """correct, signals, weights (ones if none), group codes, labels, the weights given;
    pandas Series matched by index label."""
    correct, confidences, sample_weight, groups = aligned_inputs(correct, confidences,
                                                                 sample_weight, groups)
    y = check_correct(correct)
    signals = check_signals(confidences, y.shape[0], minimum=minimum)
    given = None if sample_weight is None else check_sample_weight(sample_weight, y.shape[0])
    codes, labels = _check_groups(groups, y.shape[0])
    w = np.ones(y.shape[0]) if given is None else given
    return y, signals, w, codes, labels, given


def cross_fit(y: np.ndarray, signals: Mapping[str, np.ndarray], w: np.ndarray,
              codes: np.ndarray, labels: np.ndarray, folds: int, seed: int | None,
              eps: Mapping[str, float], l2: float) -> CrossFittedEnsemble:
    """The cross-fit on checked arrays (see :func:`cross_fit_ensemble`)."""
    n_groups = labels.shape[0]
    if folds > n_groups:
        raise ValidationError(f"folds must be at most the number of documents (distinct "
                              f"groups) ({n_groups}); found {folds}")
    fold_of_group = group_folds(n_groups, folds, seed)
    fold = fold_of_group[codes]
    names = tuple(sorted(signals))
    e = tuple(eps[k] for k in names)
    x = logit_features([signals[k] for k in names], e)
    out = np.empty(y.shape[0])
    models = []
    for f in range(folds):
        test = fold == f
        train = ~test
        try:
            _check_both_classes(y[train], w[train], f"the rows outside fold {f}")
        except ValidationError as exc:
            raise ValidationError(f"fitting fold {f} of {folds}: {exc}") from None
        coef, intercept = fit_logistic(x[train], y[train], w[train], l2)
        model = ConfidenceEnsemble(names=names, coef=tuple(coef), intercept=intercept, eps=e)
        out[test] = _expit(x[test] @ model.coef_ + model.intercept)
        models.append(model)
    _check_both_classes(y, w, "correct")
    coef, intercept = fit_logistic(x, y, w, l2)
    final = ConfidenceEnsemble(names=names, coef=tuple(coef), intercept=intercept, eps=e)
    clipped, saturated = _clip_counts(signals, eps)
    fold_groups = tuple(tuple(labels[fold_of_group == f].tolist()) for f in range(folds))
    return CrossFittedEnsemble(names=names, confidence=out, fold=fold, fold_groups=fold_groups,
                               models=tuple(models), final=final, folds=folds, seed=seed,
                               eps=MappingProxyType({k: eps[k] for k in names}), l2=l2,
                               n_clipped=clipped, n_saturated=saturated)


def cross_fit_ensemble(correct: ArrayLike, confidences: Mapping[str, ArrayLike], *,
                       groups: ArrayLike | None, folds: int = 5, seed: int | None = 0,
                       sample_weight: ArrayLike | None = None,
                       eps: float | Mapping[str, float] = DEFAULT_EPS, l2: float = 1.0
                       ) -> CrossFittedEnsemble:
    """Combined confidences by document-grouped K-fold cross-fitting of the combiner.

    The documents are put in a fixed order (their labels sorted), shuffled with ``seed``
    and dealt round-robin into ``folds`` folds (the rule of
    :func:`~confcal.calibration.calibrators.cross_validate_calibrator`). Each fold's rows
    are scored by a :class:`ConfidenceEnsemble` fitted on the rows of the other folds, so
    no row is scored by a combiner that saw any row of its document: the entities of one
    document share its scan and layout, and scoring them with a combiner fitted on their
    neighbours would flatter it.

    Parameters
    ----------
    correct : array-like of bool or {0, 1}, shape (n,)
    confidences : mapping of str to array-like of float in [0, 1], shape (n,)
        The signals, by name (one or more).
    groups : array-like, shape (n,), or None
        The document of each row (any hashable ids, none missing). Required: pass None
        explicitly to treat every row as its own document.
    folds : int >= 2, default 5
        At most the number of documents.
    seed : int or None, default 0
        Seeds the shuffle of documents; the same seed gives the same folds and scores.
    sample_weight : array-like of float >= 0, shape (n,), optional
        Weights of the log-loss in every fit.
    eps, l2 : as in :meth:`ConfidenceEnsemble.fit`.

    Returns
    -------
    CrossFittedEnsemble

    Raises
    ------
    ValidationError
        Invalid input; ``folds`` above the number of documents; the rows outside a fold
        (or all rows) holding one class only (the message names the fold).

    See Also
    --------
    ConfidenceEnsemble : the model fitted on each fold.
    ensemble_report : the ensemble against each signal alone.

    Notes
    -----
    The folds depend on which rows share a document and on ``seed``, not on the row
    order: permuting the rows permutes the scores (up to the last bits of the sums in
    each fit). A signal's position in the mapping does not matter either: fits use the
    sorted names.

    Examples
    --------
    >>> # two documents holding the same 6 rows: each is scored by the combiner fitted on
    >>> # the other, here the fit of the ConfidenceEnsemble.fit example (0.5 -> 1/2, 0.9 -> 3/4)
    >>> y, a = [1, 0, 1, 1, 1, 0], [0.5, 0.5, 0.9, 0.9, 0.9, 0.9]
    >>> cf = cross_fit_ensemble(y * 2, {"a": a * 2}, groups=["d1"] * 6 + ["d2"] * 6,
    ...                         folds=2, l2=0.0)
    >>> [round(v, 9) for v in cf.confidence[:6].tolist()]
    [0.5, 0.5, 0.75, 0.75, 0.75, 0.75]
    >>> sorted(cf.fold_groups)
    [('d1',), ('d2',)]
    """
    y, signals, w, codes, labels, _ = prepare(correct, confidences, groups, sample_weight, 1)
    folds = check_positive_int(folds, "folds", 2)
    seed = check_seed(seed)
    return cross_fit(y, signals, w, codes, labels, folds, seed, check_eps(eps, list(signals)),
                     check_l2(l2))


# ---------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------
_METRICS = ("auroc", "ece", "brier")


@dataclass(frozen=True, eq=False)
class EnsembleReport:
    """AUROC, ECE, Brier and ECARB of every input and of the cross-fitted ensemble.

    Attributes
    ----------
    table : DataFrame
        One row per score, columns ``signal, method, n, n_errors, auroc, ece, brier``,
        ``ecarb@b`` per budget, ``coef`` (on an input's raw row, its coefficient in the
        ensemble fitted on all rows; NaN elsewhere), ``n_clipped, n_saturated`` (on an
        input's rows, its confidences outside [eps, 1 - eps] and exactly at 0 or 1; on the
        ensemble's row, the rows where any signal is), and with ``n_resamples > 0`` a
        ``<metric>_low`` and ``<metric>_high`` column per metric.
        Rows: each input with ``method="raw"`` (its confidences as given), each input
        with ``method="recalibrated"`` (a one-signal logistic fit on its logit, cross-fitted
        on the same folds: what calibration alone achieves), then ``signal="ensemble",
        method="stacked"``.
    fit : CrossFittedEnsemble
        The cross-fit behind the ensemble row.
    budgets, n_bins, binning, n_resamples, confidence_level : the settings.

    See Also
    --------
    ensemble_report : builds it.
    """

    table: pd.DataFrame = field(repr=False)
    fit: CrossFittedEnsemble
    budgets: tuple[float, ...]
    n_bins: int
    binning: str
    n_resamples: int
    confidence_level: float

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`table`."""
        return self.table.copy()

    def value(self, metric: str, signal: str, method: str | None = None) -> float:
        """One cell: ``metric`` (a column) of ``signal`` (method ``"raw"`` for an input,
        ``"stacked"`` for the ensemble, unless given)."""
        if method is None:
            method = "stacked" if signal == ENSEMBLE else "raw"
        t = self.table
        rows = t[(t["signal"] == signal) & (t["method"] == method)]
        if metric not in t.columns or rows.empty:
            raise ValidationError(f"metric and signal must name a column and a row of the "
                                  f"table; found {metric!r}, {signal!r} (method {method!r})")
        return float(rows[metric].iloc[0])

    @property
    def auroc_gain(self) -> float:
        """The ensemble's AUROC minus the best AUROC of an input's raw confidences."""
        raw = self.table[self.table["method"] == "raw"]["auroc"]
        return self.value("auroc", ENSEMBLE) - float(raw.max())


def _score_row(y: np.ndarray, score: np.ndarray, given: np.ndarray | None, codes: np.ndarray,
               budgets: tuple[float, ...], n_bins: int, binning: str, n_resamples: int,
               level: float, seed: int | None) -> dict[str, Any]:
    rep = calibration_report(y, score, budgets=budgets, n_bins=n_bins, binning=binning,
                             sample_weight=given)
    row: dict[str, Any] = {"n": rep.n, "n_errors": rep.n_errors, "auroc": rep.auroc,
                           "ece": rep.ece, "brier": rep.brier}
    row.update({f"ecarb@{b:g}": v for b, v in rep.ecarb.items()})
    if n_resamples:
        for i, b in enumerate(budgets):
            ci = bootstrap_ci(y, score, groups=codes,
                              metrics=(*_METRICS, "ecarb") if i == 0 else ("ecarb",),
                              budget=b, n_bins=n_bins, binning=binning,
                              n_resamples=n_resamples, confidence_level=level, seed=seed,
                              sample_weight=given)
            for name, low, high in ci[["metric", "low", "high"]].itertuples(index=False):
                row[f"{name}_low"], row[f"{name}_high"] = float(low), float(high)
    return row


def ensemble_report(correct: ArrayLike, confidences: Mapping[str, ArrayLike], *,
                    groups: ArrayLike | None, folds: int = 5, seed: int | None = 0,
                    sample_weight: ArrayLike | None = None,
                    eps: float | Mapping[str, float] = DEFAULT_EPS, l2: float = 1.0,
                    budgets: Sequence[float] = DEFAULT_BUDGETS,
                    n_bins: int = 5, binning: str = "quantile", n_resamples: int = 0,
                    confidence_level: float = 0.95) -> EnsembleReport:
    """Is the ensemble worth it? Each input's metrics beside the cross-fitted ensemble's.

    Fits :func:`cross_fit_ensemble` on two or more signals and reports, for each input's
    raw confidences, for each input recalibrated alone (the same logistic fit on that one
    signal, cross-fitted on the same folds), and for the ensemble's out-of-fold
    confidences: AUROC, ECE, Brier and ECARB at each budget. Every number of a fitted
    score is out of sample: no row is scored by a fit that saw its document.

    Parameters
    ----------
    correct, confidences, groups, folds, seed, sample_weight, eps, l2
        As in :func:`cross_fit_ensemble`; ``confidences`` holds two or more signals.
        ``sample_weight`` weighs the fits and the metrics (ECARB's frequency weights).
    budgets : sequence of float in (0, 1], default (0.1, 0.3)
        ECARB's budgets (:data:`confcal.metrics.DEFAULT_BUDGETS`).
    n_bins, binning : ECE's bins, as in :func:`confcal.ece` (default 5 quantile bins).
    n_resamples : int >= 0, default 0
        With more than 0, document bootstrap intervals (:func:`confcal.bootstrap_ci`) for
        every metric, the same ``seed`` (so the same document draws) for every row. They
        resample the scored rows with the fitted combiners held fixed: the uncertainty of
        the evaluation, not of the fit.
    confidence_level : float in (0, 1), default 0.95

    Returns
    -------
    EnsembleReport

    See Also
    --------
    cross_fit_ensemble : the held-out confidences it compares.
    complementary_signals : which signals add information.

    Examples
    --------
    >>> # the cells of two signals a, b in {0.5, 0.9} hold (right, wrong): (a, b) =
    >>> # (.5, .5): 1, 1; (.9, .5): 3, 1; (.5, .9): 3, 1; (.9, .9): 9, 1. The logit-additive
    >>> # fit is exact: σ(0) = 1/2, σ(½ log 9) = 3/4, σ(log 9) = 9/10 (coefficients ½, ½).
    >>> cells = [(0.5, 0.5, 1, 1), (0.9, 0.5, 3, 1), (0.5, 0.9, 3, 1), (0.9, 0.9, 9, 1)]
    >>> a = [ca for ca, cb, r, w in cells for _ in range(r + w)]
    >>> b = [cb for ca, cb, r, w in cells for _ in range(r + w)]
    >>> y = [k < r for ca, cb, r, w in cells for k in range(r + w)]
    >>> # the same 20 rows in two documents: each scored by the fit on the other
    >>> rep = ensemble_report(y * 2, {"a": a * 2, "b": b * 2},
    ...                       groups=[1] * 20 + [2] * 20, folds=2, l2=0.0)
    >>> # AUROC of a: 16 right x 4 wrong pairs; a=.9 holds 12 right, 2 wrong, a=.5 4 and
    >>> # 2: (12·2 + ½·12·2 + ½·4·2) / 64 = 40/64. The ensemble's three levels give
    >>> # (9·3 + ½·9 + 6·1 + ½·6·2 + ½·1) / 64 = 44/64
    >>> rep.value("auroc", "a"), round(rep.value("auroc", "ensemble"), 12)
    (0.625, 0.6875)
    """
    y, signals, w, codes, labels, given = prepare(correct, confidences, groups, sample_weight,
                                                   2)
    folds = check_positive_int(folds, "folds", 2)
    seed = check_seed(seed)
    eps_by, l2 = check_eps(eps, list(signals)), check_l2(l2)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 0)
    level = check_probability(confidence_level, "confidence_level")
    fit = cross_fit(y, signals, w, codes, labels, folds, seed, eps_by, l2)

    def row(signal: str, method: str, score: np.ndarray, coef: float, clipped: int,
            saturated: int) -> dict[str, Any]:
        return {"signal": signal, "method": method,
                **_score_row(y, score, given, codes, budgets, n_bins, binning, n_resamples,
                             level, seed),
                "coef": coef, "n_clipped": clipped, "n_saturated": saturated}

    coefs = fit.final.coefficients
    rows = [row(k, "raw", c, coefs[k], fit.n_clipped[k], fit.n_saturated[k])
            for k, c in signals.items()]
    for k, c in signals.items():
        alone = cross_fit(y, {k: c}, w, codes, labels, folds, seed, eps_by, l2)
        rows.append(row(k, "recalibrated", alone.confidence, math.nan, fit.n_clipped[k],
                        fit.n_saturated[k]))
    # the ensemble's rows with at least one signal clipped (or saturated)
    any_clipped = np.zeros(y.shape[0], dtype=bool)
    any_saturated = np.zeros(y.shape[0], dtype=bool)
    for k, c in signals.items():
        any_clipped |= clipped_mask(c, eps_by[k])
        any_saturated |= (c == 0.0) | (c == 1.0)
    rows.append(row(ENSEMBLE, "stacked", fit.confidence, math.nan,
                    int(any_clipped.sum()), int(any_saturated.sum())))
    table = pd.DataFrame(rows)
    return EnsembleReport(table=table, fit=fit, budgets=budgets, n_bins=n_bins,
                          binning=binning, n_resamples=n_resamples, confidence_level=level)
