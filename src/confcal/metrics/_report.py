"""The one-sort calibration report, and the estimators it can add as extra columns.

:func:`calibration_report` computes AUROC, ECE, MCE, Brier and ECARB from one sort of the
confidences; ``extra=`` adds any of :data:`EXTRA_METRICS` (the debiased and smooth ECE,
log loss, AURC, Murphy's Brier terms, the calibration slope and intercept, the p-value of
the consistency test), each by the public function of the same estimator, so a report's
number is the function's number. :attr:`CalibrationReport.signature` names every setting
behind them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from .._signature import calibration_signature
from .._validation import (
    check_budgets,
    check_calibration_data,
    check_n_bins,
    check_option,
    check_positive_int,
    check_seed,
)
from ..exceptions import ValidationError
from ._metrics import (
    BINNINGS,
    DEFAULT_BUDGETS,
    TIES,
    bins_frame,
    brier_value,
    ecarb_value,
    ece_from_bins,
    mce_from_bins,
    no_errors_value,
    ranked_auroc,
    ranking_bins,
    scaled_rows,
    undefined_metric,
    unscale_weights,
)
from ._ranking import Ranking

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["EXTRA_METRICS", "CalibrationReport", "calibration_report"]

EXTRA_METRICS = (
    "debiased_ece", "smooth_ece", "log_loss", "aurc", "e_aurc", "brier_reliability",
    "brier_resolution", "brier_uncertainty", "calibration_slope", "calibration_intercept",
    "calibration_p",
)
"""The estimators ``calibration_report(extra=...)`` (and ``compare_runs(extra=...)``) add.

``debiased_ece`` (:func:`confcal.debiased_ece` on the report's bins), ``smooth_ece``
(:func:`confcal.smooth_ece`, automatic bandwidth), ``log_loss``, ``aurc`` and ``e_aurc``
(:func:`confcal.aurc`, plain and excess), ``brier_reliability``, ``brier_resolution`` and
``brier_uncertainty`` (:func:`confcal.brier_decomposition` on the report's bins),
``calibration_slope`` and ``calibration_intercept`` (:func:`confcal.calibration_slope`),
``calibration_p`` (the p-value of :func:`confcal.calibration_test` with the ECE of the
report's bins, ``n_resamples`` redraws from ``seed``, and a document effect when ``groups``
is given).
"""


@dataclass(frozen=True)
class CalibrationReport:
    """Every calibration metric of one set of predictions, computed from one sort.

    Attributes
    ----------
    n, n_errors : int
    accuracy, auroc, ece, mce, brier : float
    ecarb, ecarb_ceiling : Mapping[float, float]
        Keyed by budget, in the order requested.
    bins : DataFrame
        The reliability table of the ECE bins (see :func:`reliability_bins`).
    n_bins, binning, ties : the options used.
    extra : Mapping[str, float]
        The estimators asked for with ``extra=`` (names of :data:`EXTRA_METRICS`), in the
        order asked; empty by default.
    n_resamples, seed, grouped : the consistency test's redraws, seed and whether it had a
        document effect (used by ``calibration_p`` only).
    signature : str
        The settings behind the numbers, for comparing reports: confcal's version, the ECE
        binning and bin count, and ECARB's tie rule
        (``confcal:0.1.0|ece:quantile-5|ecarb-ties:expected``); with extras also their
        names (``extra:debiased_ece,smooth_ece``), the smooth ECE's bandwidth rule and the
        consistency test's statistic, null, redraws and seed. Reports are comparable when
        their signatures are equal.

    See Also
    --------
    calibration_report : builds it.
    confcal.metrics.sketch.CalibrationSketch.report : builds it from merged sketches.
    """

    n: int
    n_errors: int
    accuracy: float
    auroc: float
    ece: float
    mce: float
    brier: float
    ecarb: Mapping[float, float]
    ecarb_ceiling: Mapping[float, float]
    bins: pd.DataFrame = field(repr=False, compare=False)
    n_bins: int = 5
    binning: str = "quantile"
    ties: str = "expected"
    extra: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    n_resamples: int = 1000
    seed: int | None = 0
    grouped: bool = False

    @property
    def signature(self) -> str:
        """The settings behind the numbers (class docstring)."""
        parts = [calibration_signature(binning=self.binning, n_bins=self.n_bins,
                                       ties=self.ties)]
        if self.extra:
            parts.append(f"extra:{','.join(self.extra)}")
        if "smooth_ece" in self.extra:
            parts.append("smooth-ece:auto-bandwidth")
        if "calibration_p" in self.extra:
            parts.append(f"test:consistency-ece-{self.binning}-{self.n_bins}"
                         f"|null:{'grouped' if self.grouped else 'independent'}"
                         f"|resamples:{self.n_resamples}|seed:{self.seed}")
        return "|".join(parts)

    def _scalars(self) -> dict[str, Any]:
        return {"n": self.n, "n_errors": self.n_errors, "accuracy": self.accuracy,
                "auroc": self.auroc, "ece": self.ece, "mce": self.mce, "brier": self.brier}

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready); bins as a list of row dicts."""
        return {
            "signature": self.signature, **self._scalars(),
            "ecarb": dict(self.ecarb), "ecarb_ceiling": dict(self.ecarb_ceiling),
            "extra": dict(self.extra),
            "bins": self.bins.to_dict(orient="records"),
            "n_bins": self.n_bins, "binning": self.binning, "ties": self.ties,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row: the scalar metrics, ``ecarb@b`` and ``ecarb_ceiling@b`` per budget, then
        the extras by name."""
        row = self._scalars()
        row.update({f"ecarb@{b:g}": v for b, v in self.ecarb.items()})
        row.update({f"ecarb_ceiling@{b:g}": v for b, v in self.ecarb_ceiling.items()})
        row.update(self.extra)
        import pandas as pd

        return pd.DataFrame([row])


def check_extra(extra: Any) -> tuple[str, ...]:
    """``extra`` as a tuple of distinct names of :data:`EXTRA_METRICS`."""
    if isinstance(extra, str) or not isinstance(extra, Sequence):
        raise ValidationError("extra must be a sequence of names from "
                              f"{', '.join(EXTRA_METRICS)}; found {extra!r}")
    names = tuple(check_option(name, f"extra[{i}]", EXTRA_METRICS)
                  for i, name in enumerate(extra))
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValidationError(f"extra[{i}] repeats {name!r}; give each estimator once")
    return names


def extra_values(names: Sequence[str], y: np.ndarray, c: np.ndarray, w: np.ndarray | None, *,
                 n_bins: int, binning: str, n_resamples: int, seed: int | None,
                 groups: np.ndarray | None) -> dict[str, float]:
    """The named estimators of checked data, each by its public function."""
    from ._curves import aurc
    from ._estimators import (
        CalibrationSlope,
        brier_decomposition,
        calibration_slope,
        debiased_ece,
        log_loss,
        smooth_ece,
    )
    from ._inference import calibration_test

    cache: dict[str, Any] = {}

    def once(key: str, compute: Callable[[], Any]) -> Any:
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def brier_terms() -> Any:
        return once("brier", lambda: brier_decomposition(y, c, n_bins=n_bins, binning=binning,
                                                         sample_weight=w))

    def slope() -> Any:
        def fit() -> Any:
            if ((c == 0) | (c == 1)).any():  # the function refuses them; a report goes on
                nan = undefined_metric("calibration_slope", "a confidence of exactly 0 or 1 "
                                       "has an infinite logit")
                return CalibrationSlope(slope=nan, intercept=nan)
            return calibration_slope(y, c, sample_weight=w)

        return once("slope", fit)

    compute: dict[str, Callable[[], float]] = {
        "debiased_ece": lambda: debiased_ece(y, c, n_bins=n_bins, binning=binning,
                                             sample_weight=w),
        "smooth_ece": lambda: smooth_ece(y, c, sample_weight=w),
        "log_loss": lambda: log_loss(y, c, sample_weight=w),
        "aurc": lambda: aurc(y, c, sample_weight=w),
        "e_aurc": lambda: aurc(y, c, excess=True, sample_weight=w),
        "brier_reliability": lambda: brier_terms().reliability,
        "brier_resolution": lambda: brier_terms().resolution,
        "brier_uncertainty": lambda: brier_terms().uncertainty,
        "calibration_slope": lambda: slope().slope,
        "calibration_intercept": lambda: slope().intercept,
        "calibration_p": lambda: calibration_test(
            y, c, groups=groups, n_bins=n_bins, binning=binning, n_resamples=n_resamples,
            seed=seed, sample_weight=w).p_value,
    }
    return {name: float(compute[name]()) for name in names}


def calibration_report(correct: ArrayLike, confidence: ArrayLike, *,
                       budgets: Sequence[float] = DEFAULT_BUDGETS, n_bins: int = 5,
                       binning: str = "quantile", ties: str = "expected",
                       sample_weight: ArrayLike | None = None, extra: Sequence[str] = (),
                       n_resamples: int = 1000, seed: int | None = 0,
                       groups: ArrayLike | None = None) -> CalibrationReport:
    """AUROC, ECE, MCE, Brier, ECARB and its ceiling at each budget, the bins, and any extra
    estimators asked for.

    One sort of the confidences feeds every order-dependent metric; the result equals
    calling each function on its own (with the same ``sample_weight``). Undefined metrics
    are NaN with one warning each.

    Parameters
    ----------
    correct, confidence : array-like, shape (n,)
    budgets : sequence of float in (0, 1], default (0.1, 0.3)
        :data:`DEFAULT_BUDGETS`.
    n_bins, binning : as in :func:`ece` (default: 5 equal-mass bins).
    ties : str, default "expected"
        ECARB's tie rule (:func:`ecarb`).
    sample_weight : array-like, optional
        Frequency weights: the metrics are the weighted ones (ECARB's as in :func:`ecarb`)
        and ``bins`` has a ``weight`` column; ``n`` and ``n_errors`` still count rows,
        those of zero weight included (which are in no metric and no bin).
    extra : sequence of str, default ()
        Names of :data:`EXTRA_METRICS` to add (``report.extra``), each computed by its own
        public function with this report's bins and weights. The calibration slope and
        intercept are NaN with an :class:`~confcal.exceptions.UndefinedMetricWarning` when a
        confidence is exactly 0 or 1 (:func:`calibration_slope` refuses them).
    n_resamples, seed, groups
        The redraws, their seed and the document of each row for ``calibration_p``
        (:func:`calibration_test`; with ``groups`` the null has a document effect). Unused
        without ``calibration_p``.

    Returns
    -------
    CalibrationReport

    See Also
    --------
    compare_runs : the same metrics for every run of an entity table.
    confcal.metrics.sketch.CalibrationSketch.report : the same report from merged sketches.

    Examples
    --------
    Four predictions in two equal-mass bins, {0.2, 0.4} and {0.6, 0.8}: bin accuracies 0.5
    and 1.0 against mean confidences 0.3 and 0.7, so ECE = (|0.5 - 0.3| + |1.0 - 0.7|) / 2
    = 0.25; the one error is the least confident, so AUROC is 1 and reviewing 25% (one
    prediction) catches it: ECARB = 1 / (1 × 0.25) = 4.

    >>> rep = calibration_report([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2, budgets=[0.25])
    >>> rep.auroc, round(rep.ece, 12), rep.ecarb[0.25], rep.ecarb_ceiling[0.25]
    (1.0, 0.25, 4.0, 4.0)

    Log loss adds −(log 0.8 + log 0.4 + log 0.6 + log 0.8) / 4 = 1.8734 / 4 = 0.4684:

    >>> rep = calibration_report([0, 1, 1, 1], [0.2, 0.4, 0.6, 0.8], n_bins=2,
    ...                          budgets=[0.25], extra=["log_loss"])
    >>> round(rep.extra["log_loss"], 4), rep.signature.split("|")[-1]
    (0.4684, 'extra:log_loss')
    """
    y, c, w = check_calibration_data(correct, confidence, sample_weight)
    budgets = check_budgets(budgets)
    n_bins = check_n_bins(n_bins)
    binning = check_option(binning, "binning", BINNINGS)
    ties = check_option(ties, "ties", TIES)
    names = check_extra(extra)
    n_resamples = check_positive_int(n_resamples, "n_resamples", 1)
    seed = check_seed(seed)
    docs = _check_groups(groups, len(y))
    r = Ranking.from_arrays(y, c, w)
    bins = ranking_bins(r, n_bins, binning)
    ecarbs, ceilings = {}, {}
    if r.neg_weight == 0:  # one warning for all budgets, not one per budget
        nan = no_errors_value(r)
        ecarbs = {b: nan for b in budgets}
        ceilings = dict(ecarbs)
    else:
        w_rows, unit = scaled_rows(w)
        for b in budgets:
            _, _, ecarbs[b], ceilings[b] = ecarb_value(r, b, ties, y, c, w_rows, unit)
    frame = bins_frame(bins, 0, weighted=w is not None)
    if w is not None:
        unscale_weights(frame, w)
    extras = extra_values(names, y, c, w, n_bins=n_bins, binning=binning,
                          n_resamples=n_resamples, seed=seed, groups=docs) if names else {}
    return CalibrationReport(
        n=r.n, n_errors=r.n_neg, accuracy=r.pos_weight / r.total_weight, auroc=ranked_auroc(r),
        ece=ece_from_bins(bins, r.total_weight), mce=mce_from_bins(bins),
        brier=brier_value(y, c, w), ecarb=MappingProxyType(ecarbs),
        ecarb_ceiling=MappingProxyType(ceilings), bins=frame,
        n_bins=n_bins, binning=binning, ties=ties, extra=MappingProxyType(extras),
        n_resamples=n_resamples, seed=seed, grouped=docs is not None,
    )


def _check_groups(groups: ArrayLike | None, n: int) -> np.ndarray | None:
    """The document of each row, as calibration_test reads it (None: no document effect)."""
    if groups is None:
        return None
    docs = np.asarray(groups, dtype=object)
    if docs.ndim != 1 or len(docs) != n:
        raise ValidationError(f"groups must hold one document id per row ({n}); found shape "
                              f"{docs.shape}")
    return docs
