"""The registry of metric cases shared by tests/test_common.py and tests/test_properties.py.

One entry per (metric, options) case: the fast function, its slow reference in confcal.testing
(written from the definitions in docs/metrics.md alone), and the invariants it promises.
tests/test_common.py runs the invariants shared by every metric over it; tests/test_properties.py
the metric-specific properties.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from _profiles import examples
from confcal.exceptions import UndefinedMetricWarning
from confcal.metrics import aurc, auroc, brier, ecarb, ece, log_loss, mce
from confcal.testing import (
    calibration_data,
    reference_aurc,
    reference_auroc,
    reference_brier,
    reference_ecarb,
    reference_ecarb_ceiling,
    reference_ece,
    reference_log_loss,
    reference_mce,
    weighted_calibration_data,
)

TOL = 1e-12
PROPERTY = settings(max_examples=examples(150), deadline=None)

TIE_MODES = ("some", "heavy", "none", "all")


def any_data(min_size: int = 1, max_size: int = 100, single_class: bool | None = None):
    """(correct, confidence) with every tie mode; extremes and single class included."""
    return st.one_of(
        [calibration_data(min_size, max_size, ties=t, single_class=single_class)
         for t in TIE_MODES]
    )


def normal_weights(weight: np.ndarray, smallest: float = 1e-300) -> bool:
    """No subnormal weight: below ~2.2e-308 a float keeps too few digits for any sum or
    product of weights to be compared with an exact answer (sklearn included)."""
    return bool(((weight == 0) | (weight >= smallest)).all())


def close(got: float, want: float, tol: float = TOL) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):  # log loss of a certain, wrong prediction
        return got == want
    return abs(got - want) <= tol


def single_class(correct: np.ndarray) -> bool:
    return bool(correct.all() or not correct.any())


def no_errors(correct: np.ndarray) -> bool:
    return bool(correct.all())


def never(correct: np.ndarray) -> bool:
    return False


# --------------------------------------------------------------------------------------
# Registry: one entry per (metric, options) case
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    fast: Callable[..., float]
    reference: Callable[..., float]
    undefined: Callable[[np.ndarray], bool] = never  # True -> warning + NaN expected
    weighted: bool = False  # accepts sample_weight
    scale_free: bool = True  # scaling every weight changes nothing (ECARB: K is whole)
    order_invariant: bool = True  # row order never changes the result
    monotone_invariant: bool = False  # depends on confidence only through its order
    max_n: int = 100  # the reference's cost limit
    upper: Callable[[np.ndarray], float] = field(default=lambda correct: 1.0)

    def __str__(self) -> str:
        return self.name


def _ecarb_case(ties: str, budget: float, max_n: int) -> Case:
    return Case(
        name=f"ecarb_{ties}_{budget}",
        fast=lambda y, c, **kw: ecarb(y, c, budget=budget, ties=ties, **kw),
        reference=lambda y, c, **kw: reference_ecarb(y, c, budget=budget, ties=ties, **kw),
        undefined=no_errors,
        weighted=True,
        scale_free=False,
        order_invariant=ties != "stable",
        monotone_invariant=True,
        max_n=max_n,
        upper=lambda correct: reference_ecarb_ceiling(correct, budget=budget),
    )


def _binned_case(fn, ref, n_bins: int, binning: str) -> Case:
    return Case(
        name=f"{fn.__name__}_{binning}_{n_bins}",
        fast=lambda y, c, **kw: fn(y, c, n_bins=n_bins, binning=binning, **kw),
        reference=lambda y, c, **kw: ref(y, c, n_bins=n_bins, binning=binning, **kw),
        weighted=True,
    )


CASES = [
    Case("auroc", auroc, reference_auroc, undefined=single_class, weighted=True,
         monotone_invariant=True),
    _binned_case(ece, reference_ece, 5, "quantile"),
    _binned_case(ece, reference_ece, 7, "quantile"),
    _binned_case(ece, reference_ece, 1, "quantile"),
    _binned_case(ece, reference_ece, 5, "uniform"),
    _binned_case(ece, reference_ece, 10, "uniform"),
    _binned_case(mce, reference_mce, 5, "quantile"),
    _binned_case(mce, reference_mce, 10, "uniform"),
    Case("brier", brier, reference_brier, weighted=True),
    _ecarb_case("expected", 0.3, max_n=8),
    _ecarb_case("expected", 0.5, max_n=8),
    _ecarb_case("expected", 0.29, max_n=8),  # b·n = 28.999999999999996 at n = 100
    _ecarb_case("stable", 0.3, max_n=100),
    _ecarb_case("pessimistic", 0.29, max_n=100),
    _ecarb_case("optimistic", 0.3, max_n=100),
    # AURC counts whole predictions (as ECARB does): not scale-free; ranking only
    Case("aurc", aurc, reference_aurc, weighted=True, scale_free=False,
         monotone_invariant=True),
    Case("e_aurc", lambda y, c, **kw: aurc(y, c, excess=True, **kw),
         lambda y, c, **kw: reference_aurc(y, c, excess=True, **kw), weighted=True,
         scale_free=False, monotone_invariant=True),
    Case("log_loss", log_loss, reference_log_loss, weighted=True,
         upper=lambda correct: math.inf),
]
WEIGHTED = [c for c in CASES if c.weighted]
ORDER_INVARIANT = [c for c in CASES if c.order_invariant]
MONOTONE = [c for c in CASES if c.monotone_invariant]


def call(case: Case, correct, confidence, **kwargs) -> float:
    """The fast metric; where the case is undefined, it must warn and return NaN."""
    if case.undefined(np.asarray(correct, dtype=bool)):
        with pytest.warns(UndefinedMetricWarning):
            value = case.fast(correct, confidence, **kwargs)
        assert math.isnan(value)
        return value
    return case.fast(correct, confidence, **kwargs)


def for_each_case(cases, check) -> None:
    """Run check(case) for every case; fail with the name and message of each that fails.

    One drawn dataset serves every case (drawing is the expensive part of these tests), and
    the failure names the metric case, so Hypothesis still shrinks to a minimal example.
    """
    failures = []
    for case in cases:
        try:
            check(case)
        except (Exception, pytest.fail.Exception) as error:  # noqa: BLE001 - report them all
            failures.append(f"{case}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)


def _undefined_weighted(case, correct, confidence, weight):
    # The rows left with positive weight are single-class: the weighted metric is undefined.
    with pytest.warns(UndefinedMetricWarning):
        value = case.fast(correct, confidence, sample_weight=weight)
    assert math.isnan(value)
    return value


def fast_weighted(case, correct, confidence, weight, *, undefined):
    """The fast weighted metric; where ``undefined``, it must warn and return NaN."""
    if undefined:
        return _undefined_weighted(case, correct, confidence, weight)
    return case.fast(correct, confidence, sample_weight=weight)


def weighted_any(max_size: int = 60):
    return st.one_of([weighted_calibration_data(max_size=max_size, ties=t, weights="integer",
                                                max_weight=4) for t in TIE_MODES])

